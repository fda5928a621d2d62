// fd.ops.asinh, acosh, lgamma, erfinv, is_neginf, is_posinf (compiler/
// frontend/special_math.cc) through the CPU reference, against <cmath> (and,
// for erfinv, an inverse of erfl found by bisection) over each domain, in
// float32 and double; their edge values; and real / imag / nextafter refused
// by name.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

std::vector<double> Eval(const std::string& op, const std::string& dtype, DataType t,
                         const std::vector<double>& x, DataType* out_t = nullptr) {
  const std::string text = absl::StrCat(
      "def f(fd : FusionDefinition) -> None :\n"
      "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.",
      dtype, ", is_cpu=False)\n    fd.add_output(fd.ops.", op, "(T0))\n");
  auto p = ParseReproScript(text, "s.py");
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  HostTensor h;
  h.dtype = t;
  h.shape = {static_cast<int64_t>(x.size())};
  for (double v : x) h.data.push_back(RoundTo(t, v));
  auto out = Evaluate(p->graph, {h});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->size() != 1) return {};
  if (out_t != nullptr) *out_t = (*out)[0].dtype;
  return (*out)[0].data;
}

// erfinv by bisection on erfl / erfcl (long double): the reference.
double ErfinvRef(double x) {
  if (x == 0) return 0;
  if (std::fabs(x) >= 1) return std::fabs(x) == 1 ? x * INFINITY : NAN;
  const long double a = std::fabs(static_cast<long double>(x));
  long double lo = 0, hi = 30;
  for (int i = 0; i < 200; ++i) {
    const long double mid = (lo + hi) / 2;
    const bool below = a < 0.5L ? std::erf(mid) < a : std::erfc(mid) > 1 - a;
    (below ? lo : hi) = mid;
  }
  return static_cast<double>(x < 0 ? -lo : lo);
}

struct Sweep {
  std::string op;
  std::vector<double> x;
  std::function<double(double)> f;
};

std::vector<double> Range(double lo, double hi, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(lo + (hi - lo) * (i + 0.37) / n);
  return v;
}

std::vector<double> LogRange(double lo, double hi, int n, bool both_signs) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    const double m = std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * i / (n - 1));
    v.push_back(m);
    if (both_signs) v.push_back(-m);
  }
  return v;
}

std::vector<Sweep> Sweeps() {
  std::vector<double> erf_x = Range(-0.999, 0.999, 4000);
  for (double e = 1e-3; e > 1e-16; e /= 3) {  // the tails, where (1 - x)(1 + x) is tiny
    erf_x.push_back(1 - e);
    erf_x.push_back(-1 + e);
  }
  std::vector<double> lg_x = Range(-50, 50, 8000);
  for (double v : LogRange(1e-6, 1e4, 400, false)) lg_x.push_back(v);
  std::vector<double> acosh_x = LogRange(1e-7, 1e30, 800, false);
  for (double& v : acosh_x) v += 1;
  return {
      {"asinh", LogRange(1e-30, 1e30, 800, true), [](double v) { return std::asinh(v); }},
      {"acosh", acosh_x, [](double v) { return std::acosh(v); }},
      {"lgamma", lg_x, [](double v) { return std::lgamma(v); }},
      {"erfinv", erf_x, ErfinvRef},
  };
}

// Largest error over the sweep: relative for asinh, acosh and erfinv;
// absolute over max(1, |lgamma|) for lgamma (its roots at 1 and 2).
double MaxError(const Sweep& s, DataType t, const std::string& dtype) {
  const std::vector<double> got = Eval(s.op, dtype, t, s.x);
  EXPECT_EQ(got.size(), s.x.size()) << s.op;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double x = RoundTo(t, s.x[i]);
    const double want = s.f(x);
    if (!std::isfinite(want)) continue;  // lgamma's poles: checked in EdgeValues
    const double scale = s.op == "lgamma" ? std::max(1.0, std::abs(want)) : std::abs(want);
    const double err = scale == 0 ? std::abs(got[i]) : std::abs(got[i] - want) / scale;
    EXPECT_FALSE(std::isnan(err)) << s.op << "(" << x << ") = " << got[i];
    worst = std::max(worst, err);
  }
  return worst;
}

TEST(SpecialMath, MatchesTheReferenceOverTheDomain) {
  // The bounds special_math.cc documents, per op: float32, double.
  const std::vector<std::pair<double, double>> bounds = {
      {2e-7, 1e-15}, {2e-7, 1e-15}, {3e-6, 1e-14}, {5e-7, 1e-15}};
  const std::vector<Sweep> sweeps = Sweeps();
  for (size_t k = 0; k < sweeps.size(); ++k) {
    const double f32 = MaxError(sweeps[k], DataType::kFloat, "Float");
    const double f64 = MaxError(sweeps[k], DataType::kDouble, "Double");
    RecordProperty(sweeps[k].op + "_float_max_error", absl::StrCat(f32));
    RecordProperty(sweeps[k].op + "_double_max_error", absl::StrCat(f64));
    EXPECT_LE(f32, bounds[k].first) << sweeps[k].op << " in float32";
    EXPECT_LE(f64, bounds[k].second) << sweeps[k].op << " in double";
  }
}

TEST(SpecialMath, EdgeValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  auto lg = Eval("lgamma", "Float", DataType::kFloat, {0, -3, inf, -inf, nan, 1, 2, -2.5});
  ASSERT_EQ(lg.size(), 8u);
  EXPECT_EQ(lg[0], inf);
  EXPECT_EQ(lg[1], inf);
  EXPECT_EQ(lg[2], inf);
  EXPECT_EQ(lg[3], inf);
  EXPECT_TRUE(std::isnan(lg[4]));
  EXPECT_NEAR(lg[5], 0, 1e-6);
  EXPECT_NEAR(lg[6], 0, 1e-6);
  EXPECT_NEAR(lg[7], std::lgamma(-2.5), 2e-6);
  auto ei = Eval("erfinv", "Double", DataType::kDouble, {1, -1, 1.5, -2, nan, 0});
  ASSERT_EQ(ei.size(), 6u);
  EXPECT_EQ(ei[0], inf);
  EXPECT_EQ(ei[1], -inf);
  EXPECT_TRUE(std::isnan(ei[2]) && std::isnan(ei[3]) && std::isnan(ei[4]));
  EXPECT_EQ(ei[5], 0);
  auto as = Eval("asinh", "Float", DataType::kFloat, {-inf, inf, 0, 3e38, nan});
  ASSERT_EQ(as.size(), 5u);
  EXPECT_EQ(as[0], -inf);
  EXPECT_EQ(as[1], inf);
  EXPECT_EQ(as[2], 0);
  EXPECT_NEAR(as[3], std::asinh(3e38), 1e-5);
  EXPECT_TRUE(std::isnan(as[4]));
  auto ac = Eval("acosh", "Float", DataType::kFloat, {0.5, -2, 1, inf});
  ASSERT_EQ(ac.size(), 4u);
  EXPECT_TRUE(std::isnan(ac[0]) && std::isnan(ac[1]));
  EXPECT_EQ(ac[2], 0);
  EXPECT_EQ(ac[3], inf);
  DataType t = DataType::kFloat;
  auto ni = Eval("is_neginf", "Float", DataType::kFloat, {-inf, inf, -1, nan}, &t);
  EXPECT_EQ(t, DataType::kBool);
  EXPECT_EQ(ni, (std::vector<double>{1, 0, 0, 0}));
  auto pi = Eval("is_posinf", "Float", DataType::kFloat, {-inf, inf, 1e38, nan});
  EXPECT_EQ(pi, (std::vector<double>{0, 1, 0, 0}));
}

TEST(SpecialMath, ReducedFloatsRoundOnceAndIntegersPromote) {
  const std::vector<double> x = {-0.75, 0.25, 0.5, 0.875};
  for (const char* op : {"erfinv", "lgamma", "asinh"}) {
    DataType t = DataType::kFloat;
    auto half = Eval(op, "BFloat16", DataType::kBFloat16, x, &t);
    EXPECT_EQ(t, DataType::kBFloat16) << op;
    auto f = Eval(op, "Float", DataType::kFloat, x);
    ASSERT_EQ(half.size(), x.size());
    ASSERT_EQ(f.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(half[i], RoundTo(DataType::kBFloat16, f[i])) << op << "(" << x[i] << ")";
    }
  }
  DataType t = DataType::kInt64;
  auto ints = Eval("lgamma", "Int", DataType::kInt64, {1, 2, 3, 5}, &t);
  EXPECT_EQ(t, DataType::kFloat);
  ASSERT_EQ(ints.size(), 4u);
  EXPECT_NEAR(ints[3], std::log(24.0), 2e-6);
}

TEST(SpecialMath, TriuAndTrilOfABatchOfMatrices) {
  // [2, 3, 4] of bf16 (each batch its own values) and an int matrix.
  auto p = ParseReproScript(
      "def f(fd : FusionDefinition) -> None :\n"
      "    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], "
      "dtype=DataType.BFloat16, is_cpu=False)\n"
      "    T1 = fd.define_tensor(shape=[3, 3], contiguity=[True, True], dtype=DataType.Int, "
      "is_cpu=False)\n"
      "    fd.add_output(fd.ops.triu(T0, diagonal=1))\n"
      "    fd.add_output(fd.ops.tril(T0, -1))\n"
      "    fd.add_output(fd.ops.triu(T1))\n",
      "t.py");
  ASSERT_TRUE(p.ok()) << p.status();
  HostTensor x;
  x.dtype = DataType::kBFloat16;
  x.shape = {2, 3, 4};
  for (int i = 0; i < 24; ++i) x.data.push_back(i + 1);
  HostTensor m;
  m.dtype = DataType::kInt64;
  m.shape = {3, 3};
  for (int i = 0; i < 9; ++i) m.data.push_back(-i - 1);
  auto out = Evaluate(p->graph, {x, m});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].dtype, DataType::kBFloat16);
  EXPECT_EQ((*out)[2].dtype, DataType::kInt64);
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 4; ++c) {
        const int i = b * 12 + r * 4 + c;
        EXPECT_EQ((*out)[0].data[i], c - r >= 1 ? i + 1 : 0) << b << r << c;
        EXPECT_EQ((*out)[1].data[i], c - r <= -1 ? i + 1 : 0) << b << r << c;
      }
    }
  }
  EXPECT_EQ((*out)[2].data, (std::vector<double>{-1, -2, -3, 0, -5, -6, 0, 0, -9}));
  auto bad = ParseReproScript(
      "def f(fd : FusionDefinition) -> None :\n"
      "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, "
      "is_cpu=False)\n"
      "    fd.add_output(fd.ops.triu(T0))\n",
      "t.py");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "rank 2 or more")) << bad.status();
}

TEST(SpecialMath, ComplexAndBitSteppingOpsAreRefusedByName) {
  for (const char* op : {"real", "imag", "nextafter"}) {
    auto p =
        ParseReproScript(absl::StrCat("def f(fd : FusionDefinition) -> None :\n"
                                      "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], "
                                      "dtype=DataType.Float, is_cpu=False)\n"
                                      "    fd.add_output(fd.ops.",
                                      op, "(T0))\n"),
                         "s.py");
    ASSERT_FALSE(p.ok()) << op;
    EXPECT_TRUE(absl::StrContains(p.status().message(), absl::StrCat("fd.ops.", op, " is out")))
        << p.status();
  }
}

}  // namespace
}  // namespace fusiond
