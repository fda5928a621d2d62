// fd.ops.div of integers (truncating, as nvFuser's), truediv and signbit
// (arith_calls.cc), fd.ops.welford (welford_calls.cc) and the keep_dim
// keyword, evaluated by the CPU reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

// A definition over two [n] tensors T0, T1 of `dtype` and the body's lines.
std::string Script(const std::string& dtype, const std::string& body) {
  return absl::StrCat(
      "def f(fd : FusionDefinition) -> None :\n"
      "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.",
      dtype,
      ")\n"
      "    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.",
      dtype, ")\n", body);
}

HostTensor Tensor(DataType t, std::vector<double> v) {
  HostTensor h;
  h.dtype = t;
  h.shape = {static_cast<int64_t>(v.size())};
  h.data = std::move(v);
  return h;
}

std::vector<HostTensor> Eval(const std::string& text, const std::vector<HostTensor>& in) {
  auto p = ParseReproScript(text, "a.py");
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  auto out = Evaluate(p->graph, in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<HostTensor>{};
}

TEST(ArithCalls, IntegerTensorDivisionTruncatesAndKeepsTheType) {
  const std::vector<double> a = {7, -7, 7, -7, 9007199254740991, 5, -2048, -2049};
  const std::vector<double> b = {2, 2, -2, -2, 3, 0, 2048, 2048};
  for (const char* t : {"Int", "Int32"}) {
    const DataType dt = std::string(t) == "Int" ? DataType::kInt64 : DataType::kInt32;
    std::vector<double> aa = a;
    if (dt == DataType::kInt32) aa[4] = 2147483647;
    auto out = Eval(Script(t,
                           "    fd.add_output(fd.ops.div(T0, T1))\n"
                           "    fd.add_output(fd.ops.div(T0, 2048))\n"
                           "    fd.add_output(fd.ops.truediv(T0, T1))\n"),
                    {Tensor(dt, aa), Tensor(dt, b)});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].dtype, dt);
    EXPECT_EQ(out[1].dtype, dt);
    EXPECT_EQ(out[2].dtype, DataType::kFloat);
    for (size_t i = 0; i < a.size(); ++i) {
      // A divisor of 0 divides by 1 (nvFuser's result is undefined there).
      const double want = b[i] == 0 ? aa[i] : std::trunc(aa[i] / b[i]);
      EXPECT_EQ(out[0].data[i], want) << t << " " << aa[i] << " / " << b[i];
      EXPECT_EQ(out[1].data[i], std::trunc(aa[i] / 2048)) << t << " " << aa[i];
    }
    EXPECT_FLOAT_EQ(out[2].data[0], 3.5f);
  }
}

TEST(ArithCalls, FloatAndSizeDivisionsStayTheIrsDiv) {
  auto out = Eval(Script("Float",
                         "    S2 = fd.ops.div(T0.size(0), 2)\n"
                         "    S3 = fd.ops.truediv(T0.size(0), 2)\n"
                         "    T4 = fd.ops.mul(fd.ops.div(T0, T1), S2)\n"
                         "    fd.add_output(fd.ops.mul(T4, S3))\n"),
                  {Tensor(DataType::kFloat, {1, 2, 3}), Tensor(DataType::kFloat, {2, 4, 8})});
  ASSERT_EQ(out.size(), 1u);
  // size 3: div gives 1 (integer), truediv 1.5.
  EXPECT_FLOAT_EQ(out[0].data[0], 0.5f * 1 * 1.5f);
  EXPECT_FLOAT_EQ(out[0].data[2], 0.375f * 1 * 1.5f);
}

TEST(ArithCalls, SignbitSeesNegativeZero) {
  auto f = Eval(Script("Float", "    fd.add_output(fd.ops.signbit(T0))\n"),
                {Tensor(DataType::kFloat, {-1.5, -0.0, 0.0, 2, -INFINITY, NAN}),
                 Tensor(DataType::kFloat, {0, 0, 0, 0, 0, 0})});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].dtype, DataType::kBool);
  EXPECT_EQ(f[0].data, (std::vector<double>{1, 1, 0, 0, 1, 0}));
  auto i = Eval(Script("Int", "    fd.add_output(fd.ops.signbit(T0))\n"),
                {Tensor(DataType::kInt64, {-3, 0, 5}), Tensor(DataType::kInt64, {0, 0, 0})});
  ASSERT_EQ(i.size(), 1u);
  EXPECT_EQ(i[0].data, (std::vector<double>{1, 0, 0}));
}

// Thunder's floor_divide of integers: truncation corrected where the signs
// differ and the remainder is not 0.
TEST(ArithCalls, ThundersFloorDivideOfIntegers) {
  auto out = Eval(
      Script("Int",
             "    T2 = fd.ops.ne(fd.ops.signbit(T0), fd.ops.signbit(T1))\n"
             "    T3 = fd.ops.ne(fd.ops.fmod(T0, T1), 0)\n"
             "    T4 = fd.ops.sub(fd.ops.div(T0, T1), fd.ops.logical_and(T2, T3))\n"
             "    fd.add_output(T4)\n"),
      {Tensor(DataType::kInt64, {7, -7, 7, -7, -6}), Tensor(DataType::kInt64, {2, 2, -2, -2, 3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, (std::vector<double>{3, -4, -4, 3, -2}));
}

// Names of nvFuser IR ops the direct-bindings printer writes.
TEST(ArithCalls, DirectPrinterNames) {
  auto out = Eval(Script("Float",
                         "    fd.add_output(fd.ops.fmax(T0, T1))\n"
                         "    fd.add_output(fd.ops.fmin(T0, T1))\n"
                         "    fd.add_output(fd.ops.frac(T0))\n"
                         "    fd.add_output(fd.ops.isneginf(T0))\n"
                         "    fd.add_output(fd.ops.isposinf(T1))\n"
                         "    fd.add_output(fd.ops.mod(T0, T1))\n"),
                  {Tensor(DataType::kFloat, {NAN, 1, -2.5, -INFINITY}),
                   Tensor(DataType::kFloat, {3, NAN, 2, INFINITY})});
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].data[0], 3);
  EXPECT_EQ(out[0].data[1], 1);
  EXPECT_EQ(out[0].data[2], 2);
  EXPECT_EQ(out[1].data[0], 3);
  EXPECT_EQ(out[1].data[2], -2.5);
  EXPECT_EQ(out[2].data[2], -0.5);
  EXPECT_EQ(out[3].data, (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(out[4].data, (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(out[5].data[2], -0.5);  // fmod(-2.5, 2): the dividend's sign
}

// nvfuser_direct's printer: welford's (mean, var_sum, count), and keep_dim.
TEST(ArithCalls, WelfordGivesMeanSumOfSquaresAndCount) {
  const std::string text =
      "def f(fd : FusionDefinition) -> None :\n"
      "    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    tv1, tv2, tv3 = fd.ops.welford(tv0, dims=[-1])\n"
      "    fd.add_output(tv1)\n    fd.add_output(tv2)\n    fd.add_output(tv3)\n"
      "    fd.add_output(fd.ops.sum(tv0, dims=[1], keep_dim=True, dtype=DataType.Float))\n";
  HostTensor x;
  x.dtype = DataType::kFloat;
  x.shape = {2, 4};
  x.data = {1, 2, 3, 6, -1, -1, -1, -1};
  auto out = Eval(text, {x});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].data, (std::vector<double>{3, -1}));
  EXPECT_NEAR(out[1].data[0], 14, 1e-5);  // 4 + 1 + 0 + 9
  EXPECT_EQ(out[1].data[1], 0);
  EXPECT_EQ(out[2].dtype, DataType::kInt64);
  EXPECT_EQ(out[2].data, (std::vector<double>{4, 4}));
  EXPECT_EQ(out[3].shape, (std::vector<int64_t>{2, 1}));
  auto bad = ParseReproScript(
      "def f(fd : FusionDefinition) -> None :\n"
      "    tv0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)\n"
      "    tv1, tv2, tv3 = fd.ops.welford(tv0, dims=[0])\n    fd.add_output(tv1)\n",
      "w.py");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fd.ops.welford of"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace fusiond
