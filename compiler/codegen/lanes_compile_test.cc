// Outer reductions over adjacent columns (generator_lanes.cc) through the
// whole pipeline to sm_90 cubins: the definitions of bench/gpu/fusions
// (softmax forward and backward, sums and a batch norm over dim 0, odd
// sizes) and a symbolic softmax over dim 0. Without a GPU: the kernels
// take the lanes form, compile without spills at the registers they ask
// for, and launch cooperatively exactly when blocks share a column group.
// Their results are checked on the GPU (bench/gpu/outer_check.sh).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "tests/random/random_graph.h"

namespace fusiond {
namespace {

void ExpectLanesKernel(const CompileResult& r, const std::string& what) {
  ASSERT_EQ(r.segments.size(), 1u) << what;
  const SegmentResult& s = r.segments[0];
  SCOPED_TRACE(absl::StrCat(what, ": ", s.params.ToString()));
  EXPECT_EQ(s.params.rows_per_block, 32);
  EXPECT_TRUE(s.params.kind == SchedulerKind::kOuterPersistent ||
              s.params.kind == SchedulerKind::kOuterReduction);
  ASSERT_TRUE(s.kernel.has_value());
  const KernelArtifact& k = *s.kernel;
  EXPECT_EQ(k.spill_bytes, 0);
  EXPECT_GT(k.registers, 0);
  EXPECT_LE(k.registers, 64);  // two blocks of 512 threads a SM
  EXPECT_NE(k.cuda_source.find("const int tx = fz_lin / 32, ty = fz_lin % 32;"), std::string::npos);
  // No warp shuffles across a warp's lanes: they are different columns.
  const std::string body = k.cuda_source.substr(k.cuda_source.find("extern \"C\""));
  EXPECT_EQ(body.find("fz_warp_reduce"), std::string::npos);
  const bool coop = k.manifest_json.find("\"cooperative\": true") != std::string::npos;
  EXPECT_EQ(coop, s.params.grid_x > 1);
}

class LanesCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(LanesCompile, CompilesWithoutSpills) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto parsed = ParseReproFile(std::string(FUSIOND_BENCH_FUSIONS_DIR) + "/" + GetParam() + ".py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.arch = "sm_90";
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectLanesKernel(*r, GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Outer, LanesCompile,
    ::testing::Values("softmax_dim0_fwd_2048x8192", "softmax_dim0_bwd_2048x8192",
                      "softmax_dim0_fwd_65536x1024", "softmax_dim0_bwd_8192x2048",
                      "sum_dim0_2048x8192", "sum_dim0_65536x1024", "sum_dim0_333x16x77",
                      "softmax_dim0_fwd_300x1000", "batchnorm1d_fwd_8192x512"));

constexpr char kSymbolicSoftmax[] = R"(
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.max(T1, dims=[0], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=T0.shape(), broadcast_dims=[1])
    T4 = fd.ops.sub(T1, T3)
    T5 = fd.ops.exp(T4)
    T6 = fd.ops.sum(T5, dims=[0], keepdim=False, dtype=DataType.Null)
    T7 = fd.ops.broadcast_in_dim(T6, shape=T0.shape(), broadcast_dims=[1])
    T8 = fd.ops.div(T5, T7)
    T9 = fd.ops.cast(T8, dtype=DataType.BFloat16)
    fd.add_output(T9)


with FusionDefinition() as fd:
    f(fd)

inputs = [
    torch.randn((4096, 4096), dtype=torch.bfloat16, device="cuda:0"),
]
fd.execute(inputs)
)";

TEST(LanesCompile, SymbolicSoftmaxOverDimZeroTakesItsSizesAtRunTime) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto parsed = ParseReproScript(kSymbolicSoftmax, "symbolic_softmax_dim0.py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.arch = "sm_90";
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectLanesKernel(*r, "symbolic");
  // Sizes are parameters (no literal row length): the vector path tests
  // the run-time extent, the element loop takes the rest.
  const std::string& src = r->segments[0].kernel->cuda_source;
  EXPECT_NE(src.find("const bool vec_ok = (s0) % 8 == 0;"), std::string::npos)
      << src.substr(src.find("extern"));
}

// Six double partials in one stage at 512 threads pass the static shared
// memory a lanes kernel's block reduction may take: the heuristics take
// fewer lane groups, and code generation refuses the wide block with
// Unimplemented and the sizes, never a kernel NVRTC rejects.
constexpr char kSixDoubleColumns[] = R"(
import torch
from nvfuser import FusionDefinition, DataType


def f(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[4096, 1024], contiguity=[True, True], dtype=DataType.Double, is_cpu=False)
    T1 = fd.ops.mul(T0, T0)
    T2 = fd.ops.sum(T0, dims=[0], keepdim=True, dtype=DataType.Null)
    T3 = fd.ops.max(T0, dims=[0], keepdim=True, dtype=DataType.Null)
    T4 = fd.ops.min(T0, dims=[0], keepdim=True, dtype=DataType.Null)
    T5 = fd.ops.sum(T1, dims=[0], keepdim=True, dtype=DataType.Null)
    T6 = fd.ops.max(T1, dims=[0], keepdim=True, dtype=DataType.Null)
    T7 = fd.ops.min(T1, dims=[0], keepdim=True, dtype=DataType.Null)
    T8 = fd.ops.add(T2, T3)
    T9 = fd.ops.add(T8, T4)
    T10 = fd.ops.add(T9, T5)
    T11 = fd.ops.add(T10, T6)
    T12 = fd.ops.add(T11, T7)
    T13 = fd.ops.broadcast_in_dim(T12, shape=[4096, 1024], broadcast_dims=[0, 1])
    T14 = fd.ops.add(T0, T13)
    fd.add_output(T14)


with FusionDefinition() as fd:
    f(fd)
)";

TEST(LanesCompile, BlockReductionsBeyondTheStaticSharedMemoryAreRefused) {
  auto parsed = ParseReproScript(kSixDoubleColumns, "six_double_columns.py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 1u);
  const SegmentResult& s = r->segments[0];
  ASSERT_EQ(s.params.rows_per_block, 32) << s.params.ToString();
  // The heuristics count three partials a reduction: four lane groups.
  EXPECT_EQ(s.params.block_x, 4);
  EXPECT_TRUE(GenerateKernel(s.graph, s.params, CodegenOptions{}).ok());
  HeuristicParams wide = s.params;
  wide.block_x = 16;
  auto k = GenerateKernel(s.graph, wide, CodegenOptions{});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented) << k.status();
  EXPECT_NE(k.status().message().find("49152 bytes of shared memory"), std::string::npos)
      << k.status();
}

// Random graphs whose segments the outer kinds schedule, regenerated as lanes
// kernels (rows_per_block 32, with and without blocks sharing a column
// group): every one compiles, or is refused with Unimplemented (a graph
// shape the plan does not place), never Internal.
// FUSIOND_RANDOM_CODEGEN_SEEDS sets the count (default 100).
TEST(LanesCompile, RandomOuterSegmentsCompileAsLanesKernels) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const char* env = std::getenv("FUSIOND_RANDOM_CODEGEN_SEEDS");
  const int seeds = env ? std::atoi(env) : 100;
  int compiled = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(5000 + seed);
    CompileOptions o;
    o.generate_code = false;
    auto r = CompileFusion(c.graph, c.input_shapes, o);
    if (!r.ok()) continue;
    for (const SegmentResult& s : r->segments) {
      if (s.kind != SchedulerKind::kOuterPersistent && s.kind != SchedulerKind::kOuterReduction)
        continue;
      for (int64_t split : {1, 2}) {
        HeuristicParams hp = s.params;
        hp.rows_per_block = 32;
        hp.block_x = 4;
        hp.block_y = 1;
        hp.vectorize = 2;
        hp.unroll = 2;
        hp.multi_pass = true;
        hp.smem_bytes = 0;
        hp.grid_x = split;
        hp.grid_y = 8;
        hp.grid_reduction = split > 1;
        auto k = GenerateKernel(s.graph, hp, CodegenOptions{});
        if (!k.ok()) {
          EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented)
              << "seed " << 5000 + seed << ": " << k.status();
          continue;
        }
        EXPECT_NE(k->source.find("fz_lin / 32"), std::string::npos);
        auto bin = CompileWithNvrtc(k->source, k->name, NvrtcOptions{});
        EXPECT_TRUE(bin.ok()) << "seed " << 5000 + seed << ": " << bin.status() << "\n"
                              << PrintGraph(s.graph);
        ++compiled;
      }
    }
  }
  EXPECT_GT(compiled, 0) << "no random graph took an outer kind; widen the seeds";
  std::printf("%d lanes kernels of random graphs compiled\n", compiled);
}

}  // namespace
}  // namespace fusiond
