// The front end on what nvFuser's repro printer and other front ends write
// beyond the corpus: float("inf") literals, inputs lists with .as_strided
// and torch.randint, integer arithmetic on sizes used as shapes, reshapes
// that split a symbolic axis, and permuted stride orders.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace fusiond {
namespace {

std::string Script(const std::string& body, const std::string& inputs = "") {
  return absl::StrCat(
      "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
      "def fusion(fd: FusionDefinition) -> None:\n",
      body, "\nwith FusionDefinition() as fd:\n    fusion(fd)\n", inputs);
}

ParsedFusion MustParse(const std::string& body, const std::string& inputs = "") {
  auto r = ParseReproScript(Script(body, inputs), "t.py");
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return ParsedFusion{};
  EXPECT_TRUE(VerifyGraph(r->graph).ok()) << PrintGraph(r->graph);
  return *std::move(r);
}

std::string ErrorOf(const std::string& body, const std::string& inputs = "") {
  auto r = ParseReproScript(Script(body, inputs), "t.py");
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

TEST(FrontendOps, FloatLiteralsForInfinityAndNaN) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)\n"
      "    S1 = fd.define_scalar(float(\"-inf\"), dtype=DataType.Double)\n"
      "    T2 = fd.ops.maximum(T0, S1)\n"
      "    T3 = fd.ops.add(T2, float('inf'))\n"
      "    T4 = fd.ops.where(fd.ops.gt(T0, 0.0), T3, float(\"nan\"))\n"
      "    T5 = fd.ops.mul(T4, float(\" 1e-05 \"))\n"
      "    fd.add_output(T5)\n");
  std::vector<double> constants;
  for (const Value& v : p.graph.values) {
    if (v.is_constant()) constants.push_back(*v.constant);
  }
  ASSERT_EQ(constants.size(), 5u);
  EXPECT_EQ(constants[0], -INFINITY);
  EXPECT_EQ(constants[1], INFINITY);  // constants[2] is the 0.0 of gt
  EXPECT_TRUE(std::isnan(constants[3]));
  EXPECT_EQ(constants[4], 1e-05);
  EXPECT_TRUE(absl::StrContains(
      ErrorOf("    T0 = fd.define_tensor(shape=[2], contiguity=[True], dtype=DataType.Float)\n"
              "    T1 = fd.ops.add(T0, float(\"infinite\"))\n    fd.add_output(T1)\n"),
      "float() of the string \"infinite\", which is not a number"));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf("    T0 = fd.define_tensor(shape=[2], contiguity=[True], dtype=DataType.Float)\n"
              "    T1 = fd.ops.add(T0, float(1, 2))\n    fd.add_output(T1)\n"),
      "float() takes exactly one argument"));
}

constexpr char kStridedBody[] =
    "    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], "
    "dtype=DataType.Float, is_cpu=False, stride_order=[1, 2, 0])\n"
    "    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)\n"
    "    S2 = fd.define_scalar(None, dtype=DataType.Double)\n"
    "    T3 = fd.ops.mul(T0, S2)\n"
    "    fd.add_output(T3)\n";

TEST(FrontendOps, InputsAsTheReproPrinterWritesThem) {
  ParsedFusion p = MustParse(kStridedBody,
                             "inputs = [\n"
                             "    torch.randn(24, dtype=torch.float32, "
                             "device='cuda:0').as_strided((2, 3, 4), (12, 1, 3)),\n"
                             "    torch.randint(0, 10, (7,), dtype=torch.int64, device='cuda:0'),\n"
                             "    float(\"nan\"),\n"
                             "]\nfd.execute(inputs)\n");
  ASSERT_EQ(p.inputs.size(), 3u);
  EXPECT_EQ(p.inputs[0].shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(p.inputs[0].strides, (std::vector<int64_t>{12, 1, 3}));
  EXPECT_EQ(p.graph.value(p.graph.inputs[0]).stride_order, (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(p.inputs[1].shape, (std::vector<int64_t>{7}));
  EXPECT_EQ(p.inputs[1].generator, "make_tensor");
  EXPECT_EQ(p.inputs[1].offset, 0);
  EXPECT_EQ(p.inputs[1].scale, 10);
  EXPECT_EQ(p.inputs[2].generator, "scalar");
  EXPECT_TRUE(std::isnan(p.inputs[2].value));
  EXPECT_EQ(p.input_shapes[0], (std::vector<int64_t>{2, 3, 4}));

  // A view reaching past its flat tensor, and malformed calls.
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(kStridedBody,
              "inputs = [torch.randn(23, dtype=torch.float32).as_strided((2, 3, 4), (12, 1, 3)),"
              " torch.randint(0, 10, (7,)), 1.0]\n"),
      ".as_strided reads element 23 of a tensor of 23 elements"));
  EXPECT_TRUE(absl::StrContains(ErrorOf(kStridedBody,
                                        "inputs = [torch.randn(24).as_strided((2, 3, 4), (12, 1)), "
                                        "torch.randint(0, 10, (7,)), 1.0]\n"),
                                ".as_strided has 3 sizes but 2 strides"));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(kStridedBody, "inputs = [torch.randn(2, 3, 4), torch.randint(5, 5, (7,)), 1.0]\n"),
      "torch.randint range [5, 5) is empty"));
}

// Group norm's shapes: the channel axis split into groups by a size computed
// with fd.ops.div, the spatial axes merged by fd.ops.mul.
constexpr char kGroupNormBody[] =
    "    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], "
    "dtype=DataType.Float)\n"
    "    S1 = fd.ops.size(T0, dim=0)\n"
    "    S2 = fd.ops.div(T0.size(1), 32)\n"
    "    S3 = fd.ops.mul(T0.size(2), T0.size(3))\n"
    "    T4 = fd.ops.reshape(T0, new_shape=[S1, 32, S2, S3])\n"
    "    T5, T6 = fd.ops.var_mean(T4, dims=[2, 3], correction=0, keepdim=False)\n"
    "    fd.add_output(T5)\n"
    "    fd.add_output(T4)\n";

TEST(FrontendOps, SizeArithmeticKeepsIntegersAndShapesTakeItsValue) {
  ParsedFusion p =
      MustParse(kGroupNormBody, "inputs = [torch.randn((2, 64, 5, 7), dtype=torch.float32)]\n");
  const Graph& g = p.graph;
  for (const Node& n : g.nodes) {
    if (n.op == OpKind::kDiv || n.op == OpKind::kMul) {
      EXPECT_EQ(g.value(n.outputs[0]).dtype, DataType::kInt64) << OpName(n.op);
    }
  }
  const ValueId t5 = g.outputs[0], t4 = g.outputs[1];
  EXPECT_EQ(TypeString(g, t4), "float32[T0.size(0), 32, 2, 35]");
  EXPECT_EQ(TypeString(g, t5), "float32[T0.size(0), 32]");
  // The batch axis stays symbolic; the ones the arithmetic read are bound.
  EXPECT_FALSE(g.Canonical(g.value(g.inputs[0]).shape[0]).is_static());
  EXPECT_EQ(g.Canonical(g.value(g.inputs[0]).shape[1]).size, 64);

  // Other sizes than the ones the fusion was specialized to are refused.
  EXPECT_TRUE(
      absl::StrContains(ErrorOf(kGroupNormBody, "inputs = [torch.randn((2, 64, 5, 7)), 1]\n"),
                        "the inputs list has 2 entries but the definition takes 1 input"));
  // Without concrete sizes the computed size has no value.
  EXPECT_TRUE(absl::StrContains(ErrorOf(kGroupNormBody),
                                "S2 is computed from the symbolic size T0.size(1), whose value is "
                                "not known here"));
  // Sizes computed from a run-time scalar, or with other ops, are refused.
  EXPECT_TRUE(absl::StrContains(
      ErrorOf("    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n"
              "    S1 = fd.define_scalar(None, dtype=DataType.Int)\n"
              "    S2 = fd.ops.mul(T0.size(0), S1)\n"
              "    T3 = fd.ops.reshape(T0, new_shape=[S2])\n    fd.add_output(T3)\n",
              "inputs = [torch.randn(4), 1]\n"),
      "S2 reads the scalar input S1, whose value is known only at run time"));
}

TEST(FrontendOps, StaticSizeArithmeticNeedsNoInputs) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[6, 8], contiguity=[True, True], dtype=DataType.Float)\n"
      "    S1 = fd.ops.mul(T0.size(0), T0.size(1))\n"
      "    S2 = fd.ops.sub(fd.ops.add(S1, 2), 2)\n"
      "    T3 = fd.ops.reshape(T0, new_shape=[S2])\n"
      "    T4 = fd.ops.reshape(T3, new_shape=[fd.ops.div(S2, 16), 16])\n"
      "    fd.add_output(T4)\n");
  EXPECT_EQ(TypeString(p.graph, p.graph.outputs[0]), "float32[3, 16]");
}

TEST(FrontendOps, ReshapeSplitsASymbolicAxisByStaticFactors) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], "
      "dtype=DataType.BFloat16)\n"
      "    T1 = fd.ops.reshape(T0, [8, 16, T0.size(1), T0.size(2)])\n"
      "    T2 = fd.ops.reshape(T1, [128, T0.size(1), T0.size(2)])\n"
      "    fd.add_output(T2)\n",
      "inputs = [torch.randn((128, 4, 6), dtype=torch.bfloat16)]\n");
  const Graph& g = p.graph;
  EXPECT_EQ(g.Canonical(g.value(g.inputs[0]).shape[0]).size, 128);
  EXPECT_EQ(TypeString(g, g.outputs[0]), "bfloat16[128, T0.size(1), T0.size(2)]");
  // The inputs list must then give that size.
  EXPECT_TRUE(absl::StrContains(
      ErrorOf("    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
              "dtype=DataType.Float)\n"
              "    T1 = fd.ops.reshape(T0, [8, 16, T0.size(1)])\n    fd.add_output(T1)\n",
              "inputs = [torch.randn((64, 4))]\n"),
      "axis 0 is 64 in the list but the definition requires 128"));
  // Factors that do not divide stay an error.
  EXPECT_TRUE(absl::StrContains(
      ErrorOf("    T0 = fd.define_tensor(shape=[-1, 6], contiguity=[True, True], "
              "dtype=DataType.Float)\n"
              "    T1 = fd.ops.reshape(T0, [4, T0.size(0)])\n    fd.add_output(T1)\n"),
      "reshape: cannot reshape"));
}

// nvFuser infers one -1 in a reshape's new shape (x.view(-1, D) in
// hand-written definitions): from static sizes, or from the inputs list,
// binding the symbols it read.
TEST(FrontendOps, ReshapeInfersOneMinusOne) {
  ParsedFusion s = MustParse(
      "    T0 = fd.define_tensor(shape=[8, 1024], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T1 = fd.ops.reshape(T0, new_shape=[-1, 128])\n    fd.add_output(T1)\n");
  EXPECT_EQ(TypeString(s.graph, s.graph.outputs[0]), "float32[64, 128]");
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T1 = fd.ops.reshape(T0, new_shape=[4, -1, 128])\n    fd.add_output(T1)\n",
      "inputs = [torch.randn((64, 1024))]\n");
  const Graph& g = p.graph;
  EXPECT_EQ(TypeString(g, g.outputs[0]), "float32[4, 128, 128]");
  EXPECT_EQ(g.Canonical(g.value(g.inputs[0]).shape[0]).size, 64);
  EXPECT_EQ(g.Canonical(g.value(g.inputs[0]).shape[1]).size, 1024);
  const std::string sym =
      "    T0 = fd.define_tensor(shape=[-1, 12], contiguity=[True, True], "
      "dtype=DataType.Float)\n";
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(sym + "    T1 = fd.ops.reshape(T0, [-1, 5])\n    fd.add_output(T1)\n"),
      "reshape's -1 cannot be inferred: T0 has the symbolic size T0.size(0)"));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(sym + "    T1 = fd.ops.reshape(T0, [-1, 5])\n    fd.add_output(T1)\n",
              "inputs = [torch.randn((4, 12))]\n"),
      "48 elements are not a multiple of 5"));
  EXPECT_TRUE(absl::StrContains(
      ErrorOf(sym + "    T1 = fd.ops.reshape(T0, [-1, -1])\n    fd.add_output(T1)\n"),
      "two -1 entries"));
  // expand's -1 still keeps the axis.
  ParsedFusion e = MustParse(
      "    T0 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], "
      "dtype=DataType.Float)\n"
      "    T1 = fd.ops.expand(T0, shape=[-1, 6])\n    fd.add_output(T1)\n");
  EXPECT_EQ(TypeString(e.graph, e.graph.outputs[0]), "float32[T0.size(0), 6]");
}

// nvfuser_direct's printer leaves slice normalization as scalar ops on
// sizes (min, max, where, comparisons) and writes the flags as booleans.
TEST(FrontendOps, DirectPrinterSliceBoundsAreComputedSizes) {
  ParsedFusion p = MustParse(
      "    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    i1 = fd.ops.size(tv0, dim=0)\n"
      "    i2 = fd.ops.size(tv0, dim=1)\n"
      "    i3 = fd.ops.maximum(8, fd.ops.minimum(i2, 24))\n"
      "    i4 = fd.ops.where(fd.ops.lt(-4, 0), fd.ops.add(-4, i1), -4)\n"
      "    tv5 = fd.ops.slice(tv0, start_indices=[0, 8], end_indices=[i4, i3], strides=[1, 1], "
      "manual_normalization=True)\n"
      "    tv6 = fd.ops.cat([tv5, tv5], dim=1, manual_padding=True)\n"
      "    fd.add_output(tv6)\n",
      "inputs = [torch.randn((10, 20))]\n");
  EXPECT_EQ(TypeString(p.graph, p.graph.outputs[0]), "float32[6, 24]");
  EXPECT_TRUE(absl::StrContains(
      ErrorOf("    tv0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n"
              "    tv1 = fd.ops.slice(tv0, start_indices=[0], end_indices=[2], strides=[1], "
              "manual_normalization=2.0)\n    fd.add_output(tv1)\n"),
      "manual_normalization is"));
  // DataType.Index (nvFuser's index type) in its casts: int64 here.
  ParsedFusion c = MustParse(
      "    tv0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int32)\n"
      "    fd.add_output(fd.ops.cast(tv0, dtype=DataType.Index))\n");
  EXPECT_EQ(TypeString(c.graph, c.graph.outputs[0]), "int64[tv0.size(0)]");
}

// nvFuser's printer before mid-2023: reshape(T, original_shape=, new_shape=)
// (or three positional arguments) and squeeze(T, original_shape=, dims=),
// with concrete new shapes for symbolic operands.
constexpr char kLegacyReshapeBody[] =
    "    T0 = fd.define_tensor(symbolic_sizes=[-1, -1, -1], contiguous=[True, True, True], "
    "dtype=DataType.Half)\n"
    "    T1 = fd.define_tensor(symbolic_sizes=[-1, 1, 1, -1], contiguous=[True, True, True, "
    "True], dtype=DataType.Half)\n"
    "    T2 = fd.ops.reshape(T0, original_shape=[6, 4, 5], new_shape=[2, 3, 4, 5])\n"
    "    T3 = fd.ops.squeeze(T1, original_shape=[2, 1, 1, 5], dims=[1, 2])\n"
    "    T4 = fd.ops.broadcast_in_dim(T3, output_shape=[2, 3, 4, 5], broadcast_dims=[0, 3])\n"
    "    T5 = fd.ops.add(T2, T4)\n"
    "    T6 = fd.ops.reshape(T5, [2, 3, 4, 5], [6, 4, 5])\n"
    "    fd.add_output(T6)\n";

TEST(FrontendOps, LegacyReshapeAndSqueezeWithOriginalShape) {
  ParsedFusion p = MustParse(kLegacyReshapeBody,
                             "inputs = [torch.randn((6, 4, 5), dtype=torch.float16), "
                             "torch.randn((2, 1, 1, 5), dtype=torch.float16)]\n");
  const Graph& g = p.graph;
  // The symbols the concrete new shape does not name take the list's sizes.
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(g.Canonical(g.value(g.inputs[0]).shape[a]).size, (std::vector<int>{6, 4, 5})[a]);
  }
  EXPECT_EQ(TypeString(g, g.outputs[0]), "float16[6, 4, 5]");
  // Without concrete sizes the reshape cannot relate the symbols.
  EXPECT_TRUE(absl::StrContains(ErrorOf(kLegacyReshapeBody), "reshape: cannot reshape 3-d"));
  // original_shape must be the operand's shape.
  EXPECT_TRUE(absl::StrContains(
      ErrorOf("    T0 = fd.define_tensor(shape=[6, 4], contiguity=[True, True])\n"
              "    T1 = fd.ops.reshape(T0, original_shape=[6, 5], new_shape=[24])\n"
              "    fd.add_output(T1)\n"),
      "fd.ops.reshape's original_shape [6, 5] is not the shape of the tensor T0"));
  EXPECT_TRUE(
      absl::StrContains(ErrorOf("    T0 = fd.define_tensor(shape=[6, 1], contiguity=[True, None])\n"
                                "    T1 = fd.ops.squeeze(T0, original_shape=[6], dims=[1])\n"
                                "    fd.add_output(T1)\n"),
                        "fd.ops.squeeze's original_shape [6] is not the shape of the tensor T0"));
  EXPECT_TRUE(
      absl::StrContains(ErrorOf("    T0 = fd.define_tensor(shape=[6, 1], contiguity=[True, None])\n"
                                "    T1 = fd.ops.squeeze(T0, original_shape=[6, 1])\n"
                                "    fd.add_output(T1)\n"),
                        "fd.ops.squeeze is missing argument 'dims'"));
}

// Static-trace printers (Thunder) write symbolic define_tensor shapes but
// concrete slice indices, pad widths and cat extents: the axes those ops
// move take the inputs list's sizes; slice indices may also be sizes.
constexpr char kStaticIndicesBody[] =
    "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)\n"
    "    T1 = fd.ops.slice(T0, start_indices=[0, 0], end_indices=[T0.size(0), 4], "
    "strides=[1, 1], manual_normalization=0)\n"
    "    T2 = fd.ops.slice(T0, start_indices=[0, 4], end_indices=[3, 8], strides=[1, 1])\n"
    "    T3 = fd.ops.cat([T2, T1], dim=-1, manual_padding=0)\n"
    "    T4 = fd.ops.pad(T3, [0, 0, 1, 0], 0.0)\n"
    "    fd.add_output(T4)\n";

TEST(FrontendOps, StaticIndicesOnSymbolicInputsSpecializeTheirAxes) {
  ParsedFusion p = MustParse(kStaticIndicesBody, "inputs = [torch.randn((3, 8))]\n");
  const Graph& g = p.graph;
  EXPECT_EQ(g.Canonical(g.value(g.inputs[0]).shape[0]).size, 3);
  EXPECT_EQ(g.Canonical(g.value(g.inputs[0]).shape[1]).size, 8);
  EXPECT_EQ(TypeString(g, g.outputs[0]), "float32[4, 8]");
  // Without an inputs list the moved axes have no size to take.
  EXPECT_TRUE(absl::StrContains(ErrorOf(kStaticIndicesBody),
                                "is computed from the symbolic size T0.size(0)"));
  // A slice index that is neither an integer nor a size.
  EXPECT_TRUE(absl::StrContains(
      ErrorOf("    T0 = fd.define_tensor(shape=[4], contiguity=[True], dtype=DataType.Float)\n"
              "    S1 = fd.define_scalar(None, dtype=DataType.Double)\n"
              "    T2 = fd.ops.slice(T0, [0], [S1], [1])\n    fd.add_output(T2)\n"),
      "S1 is not a size"));
}

}  // namespace
}  // namespace fusiond
