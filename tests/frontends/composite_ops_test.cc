// The nvFuser ops the front end lowers to IR ops (compiler/frontend/
// composite_calls.cc, math_calls.cc): set, segment_set, lerp, addcmul,
// threshold, silu and the trigonometric and hyperbolic ops, against values
// computed by hand or by <cmath>; and the out-of-scope ops refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

// A definition over two [4] tensors T0, T1 of `dtype` and the body's lines.
std::string Script(const std::string& dtype, const std::string& body) {
  return absl::StrCat(
      "def f(fd : FusionDefinition) -> None :\n"
      "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.",
      dtype,
      ", is_cpu=False)\n"
      "    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.",
      dtype, ", is_cpu=False)\n", body);
}

HostTensor Tensor(DataType t, std::vector<double> v) {
  HostTensor h;
  h.dtype = t;
  h.shape = {static_cast<int64_t>(v.size())};
  for (double& x : v) x = RoundTo(t, x);
  h.data = std::move(v);
  return h;
}

std::vector<HostTensor> EvalScript(const std::string& text, const std::vector<HostTensor>& in) {
  auto p = ParseReproScript(text, "c.py");
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  auto out = Evaluate(p->graph, in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<HostTensor>{};
}

// ATen's lerp, in double.
double Lerp(double s, double e, double w) {
  return std::abs(w) < 0.5 ? s + w * (e - s) : e - (e - s) * (1 - w);
}

TEST(CompositeOps, LerpTakesAtensTwoBranches) {
  const std::vector<double> s = {0, 1, -2, 1e4}, e = {1, 3, 2, 1e4 + 1};
  for (double w : {0.1, 0.75, -0.6}) {
    auto out = EvalScript(
        Script("Float", absl::StrCat("    fd.add_output(fd.ops.lerp(T0, T1, ", w, "))\n")),
        {Tensor(DataType::kFloat, s), Tensor(DataType::kFloat, e)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype, DataType::kFloat);
    for (size_t i = 0; i < s.size(); ++i) {
      EXPECT_NEAR(out[0].data[i], Lerp(s[i], e[i], w), 1e-6 * (1 + std::abs(e[i])))
          << w << " " << i;
    }
  }
}

TEST(CompositeOps, LerpOfBFloat16ComputesInFloat) {
  // bf16 operands are computed in float and rounded once: the result's
  // dtype is bf16 and its values the exact lerp rounded to bf16.
  const std::vector<double> s = {1, 3, -5, 100}, e = {1.0078125, 5, 7, 104};
  auto out = EvalScript(Script("BFloat16", "    fd.add_output(fd.ops.lerp(T0, T1, 0.3))\n"),
                        {Tensor(DataType::kBFloat16, s), Tensor(DataType::kBFloat16, e)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DataType::kBFloat16);
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(out[0].data[i], RoundTo(DataType::kBFloat16, Lerp(s[i], e[i], 0.3))) << i;
  }
}

TEST(CompositeOps, AddcmulAndItsDefaultValue) {
  const std::vector<double> a = {1, -2, 0.5, 4}, b = {3, 5, -1, 0.25};
  auto out = EvalScript(Script("Float",
                               "    fd.add_output(fd.ops.addcmul(T0, T1, T1, 0.5))\n"
                               "    fd.add_output(fd.ops.addcmul(T0, T0, T1))\n"),
                        {Tensor(DataType::kFloat, a), Tensor(DataType::kFloat, b)});
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_DOUBLE_EQ(out[0].data[i], a[i] + 0.5 * b[i] * b[i]) << i;
    EXPECT_DOUBLE_EQ(out[1].data[i], a[i] + a[i] * b[i]) << i;
  }
}

TEST(CompositeOps, ThresholdKeepsNaNAndSetIsTheValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x = {-1, 0, 0.5, nan}, y = {2, 3, 4, 5};
  auto out = EvalScript(Script("Float",
                               "    fd.add_output(fd.ops.threshold(T0, 0.0, -7.0))\n"
                               "    fd.add_output(fd.ops.set(fd.ops.segment_set(T1)))\n"),
                        {Tensor(DataType::kFloat, x), Tensor(DataType::kFloat, y)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data[0], -7);
  EXPECT_EQ(out[0].data[1], -7);
  EXPECT_EQ(out[0].data[2], 0.5);
  EXPECT_TRUE(std::isnan(out[0].data[3]));
  EXPECT_EQ(out[1].data, y);
}

TEST(CompositeOps, OutOfScopeOpsAreRefusedByName) {
  for (const char* call :
       {"fd.ops.matmul(T0, T1)", "fd.ops.linear(T0, T1)", "fd.ops.index_select(T0, T1, 0)",
        "fd.ops.sdpfa_fwd(T0, T1, T1)", "fd.ops.grouped_mm(T0, T1, T1)", "fd.ops.cumsum(T0, 0)"}) {
    auto p = ParseReproScript(Script("Float", absl::StrCat("    T2 = ", call, "\n")), "c.py");
    ASSERT_FALSE(p.ok()) << call;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string op = std::string(call).substr(7, std::string(call).find('(') - 7);
    EXPECT_TRUE(
        absl::StrContains(p.status().message(), absl::StrCat("fd.ops.", op, " is out of scope")))
        << p.status();
  }
}

TEST(CompositeOps, ShapeAtStrideOrderAndPrinterKeywords) {
  // Recent printers: sizes through fd.ops.shape / at, stride_order as an op
  // and on outputs, squeeze's squeeze_expanded.
  const std::string body =
      "    T2 = fd.ops.broadcast(T0, is_broadcast_dim=[True, False])\n"
      "    T3 = fd.ops.squeeze(T2, dims=[0], squeeze_expanded=False)\n"
      "    V4 = fd.ops.shape(T1)\n"
      "    S5 = fd.ops.at(V4, index=-1)\n"
      "    T6 = fd.ops.broadcast_in_dim(T3, shape=[S5, 2], broadcast_dims=[0])\n"
      "    T7 = fd.ops.stride_order(T6, stride_order=[0, 1])\n"
      "    fd.add_output(T7, stride_order=[0, 1])\n";
  const std::vector<double> x = {1, 2, 3, 4};
  auto out =
      EvalScript(Script("Float", body), {Tensor(DataType::kFloat, x), Tensor(DataType::kFloat, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(out[0].data, (std::vector<double>{1, 1, 2, 2, 3, 3, 4, 4}));
  for (const char* bad : {"    S2 = fd.ops.at(fd.ops.shape(T0), index=1)\n",
                          "    T2 = fd.ops.stride_order(T0, stride_order=[1])\n",
                          "    fd.add_output(T0, stride_order=[0, 0])\n",
                          "    T2 = fd.ops.squeeze(T0, dims=[0], squeeze_expanded=1)\n"}) {
    auto p = ParseReproScript(Script("Float", bad), "c.py");
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(p.status().message(), "c.py:4:")) << p.status();
  }
}

TEST(CompositeOps, WrongArgumentsAreLocated) {
  auto p = ParseReproScript(Script("Float", "    T2 = fd.ops.lerp(T0, T1)\n"), "c.py");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::StrContains(p.status().message(), "c.py:4:")) << p.status();
  EXPECT_TRUE(absl::StrContains(p.status().message(), "weight")) << p.status();
}

// fd.ops.<name> and <cmath>'s function of it, in double.
struct MathCase {
  const char* name;
  double (*f)(double);
};
double Silu(double x) { return x / (1 + std::exp(-x)); }
const MathCase kMathCases[] = {
    {"silu", Silu},
    {"atan", [](double x) { return std::atan(x); }},
    {"tan", [](double x) { return std::tan(x); }},
    {"sinh", [](double x) { return std::sinh(x); }},
    {"cosh", [](double x) { return std::cosh(x); }},
    {"asin", [](double x) { return std::asin(x); }},
    {"acos", [](double x) { return std::acos(x); }},
    {"atanh", [](double x) { return std::atanh(x); }},
};

TEST(CompositeOps, MathOpsMatchCmathInFloat) {
  // Small arguments (no cancellation in sinh, asin, atanh) and ones near the
  // ends of the domains.
  const std::vector<double> x = {-0.999, -3e-5, 0.4, 0.9995};
  for (const MathCase& c : kMathCases) {
    auto out =
        EvalScript(Script("Float", absl::StrCat("    fd.add_output(fd.ops.", c.name, "(T0))\n")),
                   {Tensor(DataType::kFloat, x), Tensor(DataType::kFloat, x)});
    ASSERT_EQ(out.size(), 1u) << c.name;
    EXPECT_EQ(out[0].dtype, DataType::kFloat) << c.name;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = c.f(RoundTo(DataType::kFloat, x[i]));
      EXPECT_NEAR(out[0].data[i], want, 2e-6 * std::abs(want) + 1e-30)
          << c.name << "(" << x[i] << ")";
    }
  }
}

TEST(CompositeOps, MathOpsRoundReducedFloatsOnceAndPromoteIntegers) {
  const std::vector<double> x = {-2, 0.5, 1.5, 3};
  for (const MathCase& c : {kMathCases[0], kMathCases[1], kMathCases[3], kMathCases[4]}) {
    auto half =
        EvalScript(Script("BFloat16", absl::StrCat("    fd.add_output(fd.ops.", c.name, "(T0))\n")),
                   {Tensor(DataType::kBFloat16, x), Tensor(DataType::kBFloat16, x)});
    ASSERT_EQ(half.size(), 1u);
    EXPECT_EQ(half[0].dtype, DataType::kBFloat16) << c.name;
    auto ints = EvalScript(
        Script("Int32", absl::StrCat("    fd.add_output(fd.ops.", c.name, "(T0))\n")),
        {Tensor(DataType::kInt32, {-2, 0, 1, 3}), Tensor(DataType::kInt32, {-2, 0, 1, 3})});
    ASSERT_EQ(ints.size(), 1u);
    EXPECT_EQ(ints[0].dtype, DataType::kFloat) << c.name;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = c.f(x[i]);
      EXPECT_NEAR(half[0].data[i], want, std::abs(want) / 128) << c.name << "(" << x[i] << ")";
      EXPECT_EQ(half[0].data[i], RoundTo(DataType::kBFloat16, half[0].data[i]));
      const double wi = c.f(std::vector<double>{-2, 0, 1, 3}[i]);
      EXPECT_NEAR(ints[0].data[i], wi, 2e-6 * std::abs(wi)) << c.name;
    }
  }
}

TEST(CompositeOps, MathOpsOutsideTheirDomainGiveNaNAndTakeScalars) {
  auto out = EvalScript(
      Script("Float",
             "    fd.add_output(fd.ops.asin(T0))\n"
             "    fd.add_output(fd.ops.acos(T0))\n"
             "    fd.add_output(fd.ops.atanh(T0))\n"
             "    S2 = fd.ops.atan(fd.define_scalar(1.0, dtype=DataType.Double))\n"
             "    fd.add_output(fd.ops.mul(T1, S2))\n"),
      {Tensor(DataType::kFloat, {2, -1, 1, -1.5}), Tensor(DataType::kFloat, {4, 4, 4, 4})});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(std::isnan(out[0].data[0]) && std::isnan(out[1].data[0]) &&
              std::isnan(out[2].data[0]));
  EXPECT_TRUE(std::isnan(out[0].data[3]) && std::isnan(out[1].data[3]) &&
              std::isnan(out[2].data[3]));
  EXPECT_NEAR(out[1].data[1], M_PI, 1e-6);
  EXPECT_EQ(out[1].data[2], 0);
  EXPECT_EQ(out[2].data[1], -INFINITY);
  EXPECT_EQ(out[2].data[2], INFINITY);
  EXPECT_NEAR(out[3].data[0], M_PI, 1e-6);  // 4 * atan(1)
  auto p = ParseReproScript(Script("Float", "    T2 = fd.ops.tan(T0, T1)\n"), "c.py");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::StrContains(p.status().message(), "c.py:4:")) << p.status();
}

}  // namespace
}  // namespace fusiond
