// Pointwise ops front ends print beyond the corpus's set (sign, round,
// trunc, log2, log10, isnan, isinf, isfinite, atan2, remainder, clamp,
// bitwise and/or/xor/not and shifts): each parsed from a repro script,
// evaluated by the CPU reference against values worked out by hand, and
// compiled through the whole pipeline (NVRTC accepts the generated kernel).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Case {
  std::string call;   // the op call over T0 (and T1)
  std::string dtype;  // DataType of the inputs
  int inputs;         // 1 or 2
  std::vector<double> x, y, want;
};

std::string Script(const Case& c) {
  std::string s =
      "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
      "def fusion(fd: FusionDefinition) -> None:\n";
  for (int i = 0; i < c.inputs; ++i) {
    absl::StrAppend(&s, "    T", i,
                    " = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.", c.dtype,
                    ")\n");
  }
  absl::StrAppend(&s, "    T2 = ", c.call, "\n    fd.add_output(T2)\n",
                  "\nwith FusionDefinition() as fd:\n    fusion(fd)\n");
  return s;
}

void Check(const Case& c) {
  SCOPED_TRACE(c.call + " over " + c.dtype);
  auto p = ParseReproScript(Script(c), "op.py");
  ASSERT_TRUE(p.ok()) << p.status();
  const Graph& g = p->graph;
  std::vector<HostTensor> in;
  std::vector<std::vector<int64_t>> shapes;
  for (int i = 0; i < c.inputs; ++i) {
    HostTensor t;
    t.dtype = g.value(g.inputs[i]).dtype;
    t.data = i == 0 ? c.x : c.y;
    t.shape = {static_cast<int64_t>(t.data.size())};
    shapes.push_back(t.shape);
    in.push_back(std::move(t));
  }
  auto out = Evaluate(g, in);
  ASSERT_TRUE(out.ok()) << out.status() << "\n" << PrintGraph(g);
  const HostTensor& r = (*out)[0];
  ASSERT_EQ(r.data.size(), c.want.size());
  for (size_t k = 0; k < c.want.size(); ++k) {
    if (std::isnan(c.want[k])) {
      EXPECT_TRUE(std::isnan(r.data[k])) << "element " << k << " is " << r.data[k];
    } else {
      EXPECT_EQ(r.data[k], c.want[k]) << "element " << k;
    }
  }
  if (NvrtcVersion() == "none") return;
  auto compiled = CompileFusion(g, shapes, CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.status() << "\n" << PrintGraph(g);
  ASSERT_FALSE(compiled->segments.empty());
  for (const SegmentResult& s : compiled->segments) {
    ASSERT_TRUE(s.kernel.has_value());
    EXPECT_FALSE(s.kernel->binary.empty());
    EXPECT_TRUE(absl::StrContains(s.kernel->cuda_source, "__global__")) << s.kernel->cuda_source;
  }
}

const std::vector<double> kSpecial = {-2.5, -0.5, 0.5, 1.5, 2.5, -0.0, kInf, -kInf, kNaN};

TEST(PointwiseOps, FloatUnary) {
  Check({"fd.ops.sign(T0)", "Float", 1, kSpecial, {}, {-1, -1, 1, 1, 1, 0, 1, -1, 0}});
  Check(
      {"fd.ops.round(T0)", "Float", 1, kSpecial, {}, {-2, -0.0, 0, 2, 2, -0.0, kInf, -kInf, kNaN}});
  Check({"fd.ops.trunc(T0)",
         "Double",
         1,
         kSpecial,
         {},
         {-2, -0.0, 0, 1, 2, -0.0, kInf, -kInf, kNaN}});
  Check({"fd.ops.isnan(T0)", "BFloat16", 1, kSpecial, {}, {0, 0, 0, 0, 0, 0, 0, 0, 1}});
  Check({"fd.ops.isinf(T0)", "Half", 1, kSpecial, {}, {0, 0, 0, 0, 0, 0, 1, 1, 0}});
  Check({"fd.ops.isfinite(T0)", "Float", 1, kSpecial, {}, {1, 1, 1, 1, 1, 1, 0, 0, 0}});
  Check({"fd.ops.log2(T0)", "Float", 1, {1, 8, 0.5, 0}, {}, {0, 3, -1, -kInf}});
  Check(
      {"fd.ops.log10(T0)", "Double", 1, {1, 100, 0.001, -1}, {}, {0, 2, std::log10(0.001), kNaN}});
  // Integer operands: log2 promotes to float; the predicates are constant.
  Check({"fd.ops.log2(T0)", "Int", 1, {4, 1}, {}, {2, 0}});
  Check({"fd.ops.isfinite(T0)", "Int", 1, {4, -1}, {}, {1, 1}});
  Check({"fd.ops.sign(T0)", "Int32", 1, {-7, 0, 3}, {}, {-1, 0, 1}});
}

TEST(PointwiseOps, FloatBinaryAndClamp) {
  Check({"fd.ops.atan2(T0, T1)",
         "Double",
         2,
         {1, -1, 0},
         {1, -1, -1},
         {std::atan2(1.0, 1.0), std::atan2(-1.0, -1.0), std::atan2(0.0, -1.0)}});
  Check({"fd.ops.remainder(T0, T1)",
         "Float",
         2,
         {5, -5, 5, -5, 5.5, 1},
         {3, 3, -3, -3, 2, 0},
         {2, 1, -1, -2, 1.5, kNaN}});
  Check({"fd.ops.clamp(T0, -1.0, 2.0)",
         "Float",
         1,
         kSpecial,
         {},
         {-1, -0.5, 0.5, 1.5, 2, -0.0, 2, -1, kNaN}});
  Check({"fd.ops.clamp(T0, T1, 3)", "Int", 2, {-5, 2, 9}, {0, 0, 0}, {0, 2, 3}});
}

TEST(PointwiseOps, IntegerBitwiseAndShifts) {
  const std::vector<double> a = {12, -1, 5, 1}, b = {10, 3, 1, 65};
  Check({"fd.ops.bitwise_and(T0, T1)", "Int", 2, a, b, {8, 3, 1, 1}});
  Check({"fd.ops.bitwise_or(T0, T1)", "Int", 2, a, b, {14, -1, 5, 65}});
  Check({"fd.ops.bitwise_xor(T0, T1)", "Int", 2, a, b, {6, -4, 4, 64}});
  Check({"fd.ops.bitwise_not(T0)", "Int", 1, a, {}, {-13, 0, -6, -2}});
  Check({"fd.ops.bitwise_left_shift(T0, T1)", "Int", 2, a, b, {12288, -8, 10, 0}});
  Check({"fd.ops.bitwise_right_shift(T0, T1)", "Int", 2, {12, -1, 5, -9}, b, {0, -1, 2, -1}});
  // int32 wraps to its width: 1 << 31 is INT32_MIN, 3 << 40 keeps no bits.
  Check({"fd.ops.bitwise_left_shift(T0, T1)",
         "Int32",
         2,
         {1, 3, -3},
         {31, 40, 2},
         {-2147483648.0, 0, -12}});
  Check({"fd.ops.remainder(T0, T1)",
         "Int",
         2,
         {5, -5, 5, -5, 7},
         {3, 3, -3, 0, 7},
         {2, 1, -1, 0, 0}});
  // Bools: and/or/xor/not are the logical ones.
  Check({"fd.ops.bitwise_xor(T0, T1)", "Bool", 2, {0, 1, 1, 0}, {0, 0, 1, 1}, {0, 1, 0, 1}});
  Check({"fd.ops.bitwise_and(T0, T1)", "Bool", 2, {0, 1, 1, 0}, {0, 0, 1, 1}, {0, 0, 1, 0}});
  Check({"fd.ops.bitwise_not(T0)", "Bool", 1, {0, 1}, {}, {1, 0}});
}

// Constant folding of the new ops: clamp is not where, integer scalars
// divide toward zero, and a division by zero is left to the kernel.
TEST(PointwiseOps, ConstantFoldingOfClampAndIntegerDivision) {
  const std::vector<DataType> d3(3, DataType::kDouble), i2(2, DataType::kInt64);
  EXPECT_EQ(FoldScalar(OpKind::kClamp, {5, 0, 3}, d3, DataType::kDouble, {}), 3);
  EXPECT_EQ(FoldScalar(OpKind::kClamp, {-5, 0, 3}, d3, DataType::kDouble, {}), 0);
  EXPECT_TRUE(std::isnan(*FoldScalar(OpKind::kClamp, {1, kNaN, 3}, d3, DataType::kDouble, {})));
  EXPECT_EQ(FoldScalar(OpKind::kDiv, {7, -2}, i2, DataType::kInt64, {}), -3);
  EXPECT_EQ(FoldScalar(OpKind::kDiv, {7, 0}, i2, DataType::kInt64, {}), std::nullopt);
}

std::string ErrorOf(const Case& c) {
  auto p = ParseReproScript(Script(c), "op.py");
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : std::string(p.status().message());
}

TEST(PointwiseOps, ClearErrorsForOperandsAnOpDoesNotTake) {
  EXPECT_TRUE(
      absl::StrContains(ErrorOf({"fd.ops.bitwise_and(T0, T1)", "Float", 2, {}, {}, {}}),
                        "bitwise_and: an operand is float32; bitwise ops take integers or bools"));
  EXPECT_TRUE(
      absl::StrContains(ErrorOf({"fd.ops.bitwise_left_shift(T0, T1)", "Bool", 2, {}, {}, {}}),
                        "bitwise_left_shift: an operand is bool; shifts take integers"));
  EXPECT_TRUE(absl::StrContains(ErrorOf({"fd.ops.bitwise_not(T0)", "Half", 1, {}, {}, {}}),
                                "bitwise_not: operand is floating point"));
  EXPECT_TRUE(absl::StrContains(ErrorOf({"fd.ops.clamp(T0, T1, T1)", "Bool", 2, {}, {}, {}}),
                                "clamp: the operands are bool"));
  EXPECT_TRUE(absl::StrContains(ErrorOf({"fd.ops.frexp(T0)", "Float", 1, {}, {}, {}}),
                                "unknown op fd.ops.frexp"));
}

}  // namespace
}  // namespace fusiond
