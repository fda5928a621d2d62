// fp8 (e4m3fn, e5m2): the CPU reference's rounding at the formats' edges,
// and the amax/scale fusions of fp8 training parsed, evaluated and compiled
// with NVRTC (the kernels carry the fp8 prelude only when they use fp8).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

TEST(Fp8, ReferenceRoundsToNearestEvenAtTheFormatsEdges) {
  const DataType e4 = DataType::kFloat8E4M3, e5 = DataType::kFloat8E5M2;
  EXPECT_EQ(RoundTo(e4, 448), 448);
  EXPECT_EQ(RoundTo(e4, 460), 448);
  EXPECT_EQ(RoundTo(e4, 464), 448);           // a tie: 448's significand is even
  EXPECT_TRUE(std::isnan(RoundTo(e4, 465)));  // rounds to 480, which e4m3fn lacks
  EXPECT_TRUE(std::isnan(RoundTo(e4, INFINITY)));
  EXPECT_EQ(RoundTo(e4, -1.0625), -1);  // tie between 1 and 1.125
  EXPECT_EQ(RoundTo(e4, 1.1875), 1.25);
  EXPECT_EQ(RoundTo(e4, std::ldexp(1.0, -9)), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_EQ(RoundTo(e4, std::ldexp(1.0, -10)), 0);                   // a tie with 0
  EXPECT_EQ(RoundTo(e4, 3 * std::ldexp(1.0, -11)), std::ldexp(1.0, -9));
  EXPECT_EQ(RoundTo(e5, 57344), 57344);
  EXPECT_EQ(RoundTo(e5, 61439), 57344);
  EXPECT_EQ(RoundTo(e5, 61440), INFINITY);  // a tie, to the even infinity
  EXPECT_EQ(RoundTo(e5, 1.125), 1);
  EXPECT_EQ(RoundTo(e5, 1.375), 1.5);
  EXPECT_EQ(RoundTo(e5, std::ldexp(1.0, -16)), std::ldexp(1.0, -16));
  EXPECT_TRUE(std::isnan(RoundTo(e5, NAN)));
  EXPECT_EQ(DataTypeSize(e4), 1);
  EXPECT_TRUE(IsLosslessCast(e4, DataType::kHalf));
  EXPECT_TRUE(IsLosslessCast(e5, DataType::kBFloat16));
  EXPECT_FALSE(IsLosslessCast(e5, e4));
  EXPECT_FALSE(IsLosslessCast(DataType::kHalf, e5));
}

// Per-tensor scaling to e4m3fn (amax, 448 / amax, clamp, cast), and back.
constexpr char kScaleScript[] =
    "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
    "def fusion(fd: FusionDefinition) -> None:\n"
    "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)\n"
    "    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
    "dtype=DataType.Float8_e5m2)\n"
    "    T2 = fd.ops.cast(T0, dtype=DataType.Float)\n"
    "    T3 = fd.ops.max(fd.ops.abs(T2), dims=[0, 1], keepdim=False, dtype=DataType.Null)\n"
    "    T4 = fd.ops.div(448.0, T3)\n"
    "    T5 = fd.ops.clamp(fd.ops.mul(T2, T4), -448.0, 448.0)\n"
    "    T6 = fd.ops.cast(T5, dtype=DataType.Float8_e4m3fn)\n"
    "    T7 = fd.ops.cast(fd.ops.mul(fd.ops.cast(T1, dtype=DataType.Float), 0.5), "
    "dtype=DataType.BFloat16)\n"
    "    fd.add_output(T6)\n    fd.add_output(T3)\n    fd.add_output(T7)\n"
    "\nwith FusionDefinition() as fd:\n    fusion(fd)\n"
    "inputs = [torch.randn((64, 96), dtype=torch.bfloat16), "
    "torch.randn((64, 96), dtype=torch.bfloat16).to(torch.float8_e5m2)]\n";

TEST(Fp8, AmaxScaleCastEvaluatesAndCompiles) {
  auto p = ParseReproScript(kScaleScript, "fp8.py");
  ASSERT_TRUE(p.ok()) << p.status();
  const Graph& g = p->graph;
  EXPECT_EQ(g.value(g.outputs[0]).dtype, DataType::kFloat8E4M3);
  std::vector<HostTensor> in(2);
  in[0].dtype = DataType::kBFloat16;
  in[0].shape = {2, 3};
  in[0].data = {0.5, -1, 2, -4, 0.25, 3};
  in[1].dtype = DataType::kFloat8E5M2;
  in[1].shape = {2, 3};
  in[1].data = {1.25, -3, 0.5, 57344, 2, 1};
  auto out = Evaluate(g, in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].data, (std::vector<double>{4}));  // amax
  // x * 112, rounded to e4m3fn: 56, -112, 224, -448, 28, 336 (all exact).
  EXPECT_EQ((*out)[0].data, (std::vector<double>{56, -112, 224, -448, 28, 320}));
  EXPECT_EQ((*out)[2].data, (std::vector<double>{0.625, -1.5, 0.25, 28672, 1, 0.5}));
  if (NvrtcVersion() == "none") return;
  auto compiled = CompileFusion(g, p->input_shapes, CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.status() << "\n" << PrintGraph(g);
  for (const SegmentResult& s : compiled->segments) {
    ASSERT_TRUE(s.kernel.has_value());
    EXPECT_FALSE(s.kernel->binary.empty());
    EXPECT_TRUE(absl::StrContains(s.kernel->cuda_source, "fz_f32_to_e4m3"));
  }
}

}  // namespace
}  // namespace fusiond
