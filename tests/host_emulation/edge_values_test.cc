// The new pointwise ops' kernels at the values random inputs never reach
// (signed zeros, infinities, NaN, halfway points, shifts past the width,
// int32 wrap, zero divisors, the fp8 formats' edges), emulated against the
// CPU reference: outputs whose values are discrete (predicates, sign,
// round, trunc, clamp, bitwise ops, shifts, casts) bit for bit, the others
// (log2, log10, atan2, remainder) with the corpus limits, which hold NaN and
// infinity positions exactly.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/frontend/frontend.h"
#include "tests/host_emulation/emu_cases.h"
#include "tests/host_emulation/emu_check.h"

namespace fusiond {
namespace host_emulation {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct EdgeCase {
  const char* name;
  const char* dtype;                     // DataType of both inputs
  std::vector<double> x, y;              // T0, T1 (same length)
  std::vector<std::string> exact, near;  // outputs over T0 and T1
};

// One fusion of the case's outputs over two 1-d inputs.
absl::StatusOr<EmuCase> MakeCase(const EdgeCase& e) {
  std::string s =
      "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
      "def fusion(fd: FusionDefinition) -> None:\n";
  for (int i = 0; i < 2; ++i) {
    absl::StrAppend(&s, "    T", i,
                    " = fd.define_tensor(shape=[-1], contiguity=[True], dtype=", "DataType.",
                    e.dtype, ")\n");
  }
  for (const auto* list : {&e.exact, &e.near}) {
    for (const std::string& out : *list) absl::StrAppend(&s, "    fd.add_output(", out, ")\n");
  }
  absl::StrAppend(&s, "\nwith FusionDefinition() as fd:\n    fusion(fd)\n");
  auto p = ParseReproScript(s, absl::StrCat(e.name, ".py"));
  if (!p.ok()) return p.status();
  EmuCase c;
  c.name = absl::StrCat("edge_", e.name);
  c.origin = absl::StrCat("edge_values_test.cc ", e.name);
  c.graph = p->graph;
  for (const std::vector<double>* v : {&e.x, &e.y}) {
    HostTensor t;
    t.dtype = c.graph.value(c.graph.inputs[c.inputs.size()]).dtype;
    t.shape = {static_cast<int64_t>(v->size())};
    for (double d : *v) t.data.push_back(RoundTo(t.dtype, d));
    c.shapes.push_back(t.shape);
    c.inputs.push_back(std::move(t));
  }
  c.exact.assign(e.exact.size(), true);
  c.exact.resize(e.exact.size() + e.near.size(), false);
  return c;
}

const std::vector<EdgeCase>& EdgeCases() {
  static const auto* cases = new std::vector<EdgeCase>{
      {"float",
       "Float",
       {-2.5, -0.5, 0.5, 1.5, 2.5, -0.0, 0.0, kInf, -kInf, kNaN, 1e-40, 3.4e38, -7.25, 0.49999997,
        8388609, 1.0},
       {3, 3, -3, -3, 2, 0, -2, 1, 2, 5, kInf, -kInf, 0.5, kNaN, -1.5, 0},
       {"fd.ops.sign(T0)", "fd.ops.round(T0)", "fd.ops.trunc(T0)", "fd.ops.isnan(T0)",
        "fd.ops.isinf(T0)", "fd.ops.isfinite(T0)", "fd.ops.clamp(T0, -1.0, 2.0)",
        "fd.ops.clamp(T0, T1, 3.0)"},
       {"fd.ops.log2(T0)", "fd.ops.log10(T0)", "fd.ops.atan2(T0, T1)", "fd.ops.remainder(T0, T1)"}},
      {"half",
       "Half",
       {-2.5, -0.5, 0.5, 1.5, 2.5, -0.0, kInf, -kInf, kNaN, 65504, 6e-8, -3.75},
       {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
       {"fd.ops.sign(T0)", "fd.ops.round(T0)", "fd.ops.trunc(T0)", "fd.ops.isnan(T0)",
        "fd.ops.isinf(T0)", "fd.ops.isfinite(T0)"},
       {}},
      // -2^62, not INT64_MIN: the reference holds int64 values as doubles,
      // so INT64_MIN's complement (INT64_MAX, 2^63 as a double) comes back
      // wrapped to INT64_MIN there, while the kernel gives INT64_MAX.
      {"int64",
       "Int",
       {12, -1, 5, -9, 1, -5, 5, -5, 7, 0, -4611686018427387904.0, -3},
       {10, 3, 1, 65, 63, 3, -3, 0, 7, 64, 1, 2},
       {"fd.ops.bitwise_and(T0, T1)", "fd.ops.bitwise_or(T0, T1)", "fd.ops.bitwise_xor(T0, T1)",
        "fd.ops.bitwise_not(T0)", "fd.ops.bitwise_left_shift(T0, T1)",
        "fd.ops.bitwise_right_shift(T0, T1)", "fd.ops.remainder(T0, T1)", "fd.ops.sign(T0)",
        "fd.ops.clamp(T0, T1, 8)"},
       {}},
      {"int32",
       "Int32",
       {1, 3, -3, -2147483648.0, 2147483647, -7, 7, 0},
       {31, 40, 2, 1, 1, 0, -2, 32},
       {"fd.ops.bitwise_left_shift(T0, T1)", "fd.ops.bitwise_right_shift(T0, T1)",
        "fd.ops.remainder(T0, T1)", "fd.ops.bitwise_xor(T0, T1)", "fd.ops.sign(T0)"},
       {}},
      {"bool",
       "Bool",
       {0, 1, 1, 0},
       {0, 0, 1, 1},
       {"fd.ops.bitwise_and(T0, T1)", "fd.ops.bitwise_or(T0, T1)", "fd.ops.bitwise_xor(T0, T1)",
        "fd.ops.bitwise_not(T0)"},
       {}},
      // fp8: each format's largest, the values past it, subnormals, ties
      // (even and odd), signed zero, infinities and NaN.
      {"fp8",
       "Float",
       {448,
        464,
        480,
        500,
        -448,
        57344,
        61440,
        65536,
        0.001953125,
        0.0009765625,
        0.0029296875,
        1.0625,
        1.1875,
        3.0e-5,
        -0.0,
        kInf,
        -kInf,
        kNaN,
        1.52587890625e-05,
        7.62939453125e-06},
       std::vector<double>(20, 1.0),
       {"fd.ops.cast(T0, dtype=DataType.Float8_e4m3fn)",
        "fd.ops.cast(T0, dtype=DataType.Float8_e5m2)",
        "fd.ops.cast(fd.ops.cast(T0, dtype=DataType.Float8_e4m3fn), dtype=DataType.Float)",
        "fd.ops.cast(fd.ops.cast(T0, dtype=DataType.Float8_e5m2), dtype=DataType.BFloat16)"},
       {}},
  };
  return *cases;
}

TEST(HostEmulationEdges, NewPointwiseOpsAtTheEdgesMatchTheReference) {
  std::vector<EmuCase> cases;
  for (const EdgeCase& e : EdgeCases()) {
    ASSERT_EQ(e.x.size(), e.y.size()) << e.name;
    auto c = MakeCase(e);
    ASSERT_TRUE(c.ok()) << e.name << ": " << c.status();
    cases.push_back(*std::move(c));
  }
  const CaseSetResult r = EmulateCases(std::move(cases), "host emulation, ops at the edges");
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.failures.empty()) << absl::StrJoin(r.failures, "\n");
  EXPECT_EQ(r.passed, static_cast<int>(EdgeCases().size()));
}

}  // namespace
}  // namespace host_emulation
}  // namespace fusiond
