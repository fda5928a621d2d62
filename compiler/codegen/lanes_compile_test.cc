// Outer reductions over adjacent columns (generator_lanes.cc) through the
// whole pipeline to sm_90 cubins: the definitions of bench/gpu/fusions
// (softmax forward and backward, sums and a batch norm over dim 0, odd
// sizes) and a symbolic softmax over dim 0. Without a GPU: the kernels
// take the lanes form, compile without spills at the registers they ask
// for, and launch cooperatively exactly when blocks share a column group.
// Their results are checked on the GPU (bench/gpu/outer_check.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/kernel_heuristics.h"
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

// Kept chunks (lanes_in_registers): the first pass keeps each thread's
// elements in registers and the later passes read them there, at the
// shapes of issue 34 and a few splits a column group. Static kernels fold
// the memory paths away (kfit is a literal test): one pass of loads from
// memory, no spills at the registers asked for.
struct KeptCase {
  const char* stem;
  int64_t split, groups;
  bool smem = false;  // the kept words in shared memory (smem_buffer)
};

class LanesKept : public ::testing::TestWithParam<KeptCase> {};

TEST_P(LanesKept, KeepsTheColumnInRegisters) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const KeptCase& c = GetParam();
  auto parsed = ParseReproFile(std::string(FUSIOND_BENCH_FUSIONS_DIR) + "/" + c.stem + ".py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 1u);
  const SegmentResult& s = r->segments[0];
  HeuristicParams hp = s.params;
  ASSERT_EQ(hp.rows_per_block, 32) << hp.ToString();
  EXPECT_FALSE(hp.lanes_in_registers) << "the pipeline's choice stays the streaming form";
  hp.lanes_in_registers = true;
  hp.grid_x = c.split;
  hp.grid_y = c.groups;
  hp.grid_reduction = c.split > 1;
  hp.smem_buffer = c.smem;
  DecideKernelForm(AnalyzeFusion(s.graph, SizeBinding{s.symbol_sizes}), DefaultTarget(), &hp);
  SCOPED_TRACE(hp.ToString());
  // The chunks of 8 rows a thread keeps: the column over split x 16 lane groups.
  EXPECT_EQ(hp.persistent_batch, (hp.inner_size / 8 + c.split * 16 - 1) / (c.split * 16));
  EXPECT_NE(hp.ToString().find("lanes_in_registers=true"), std::string::npos);
  HeuristicParams streaming = hp;
  streaming.lanes_in_registers = false;
  EXPECT_NE(hp.Hash(), streaming.Hash());
  SegmentCompileOptions so;
  so.kernel_name = "fz_kept";
  so.symbol_sizes = s.symbol_sizes;
  auto art = CompileSegment(s.graph, hp, so);
  ASSERT_TRUE(art.ok()) << art.status();
  EXPECT_EQ(art->spill_bytes, 0);
  EXPECT_LE(art->registers, DefaultTarget().registers_per_sm / (512 * hp.blocks_per_sm));
  const std::string& src = art->cuda_source;
  EXPECT_NE(src.find(absl::StrCat("const bool kfit = vec_ok && rlen <= ",
                                  hp.persistent_batch * 8 * c.split * 16, "LL;")),
            std::string::npos)
      << src.substr(src.find("extern"));
  // Every full input is loaded into its words once (kl_) and read there after.
  EXPECT_NE(src.find("kl_in0(kp_in0, l, j + l)"), std::string::npos);
  EXPECT_NE(src.find("Ty<5>::get(kp_in0, l)"), std::string::npos);
  // Shared memory: a bf16 chunk of 8 rows is 4 words a thread of 512.
  const int64_t inputs = std::string(c.stem).find("bwd") != std::string::npos ? 2 : 1;
  const int64_t smem = c.smem ? inputs * hp.persistent_batch * 4 * 512 * 4 : 0;
  EXPECT_NE(art->manifest_json.find(absl::StrCat("\"smem_bytes\": \"", smem, "\"")),
            std::string::npos)
      << art->manifest_json;
  EXPECT_EQ(src.find("extern __shared__ __align__(16) u32 fz_kept_smem[];") != std::string::npos,
            c.smem);
}

INSTANTIATE_TEST_SUITE_P(Outer, LanesKept,
                         ::testing::Values(KeptCase{"softmax_dim0_fwd_2048x8192", 2, 66},
                                           KeptCase{"softmax_dim0_fwd_2048x8192", 4, 66},
                                           KeptCase{"softmax_dim0_bwd_2048x8192", 8, 33},
                                           KeptCase{"softmax_dim0_fwd_8192x2048", 16, 16},
                                           KeptCase{"softmax_dim0_bwd_8192x2048", 16, 8},
                                           KeptCase{"softmax_dim0_fwd_65536x1024", 64, 4},
                                           KeptCase{"softmax_dim0_bwd_65536x1024", 128, 2},
                                           KeptCase{"softmax_dim0_fwd_2048x8192", 1, 132, true},
                                           KeptCase{"softmax_dim0_bwd_2048x8192", 2, 66, true},
                                           KeptCase{"softmax_dim0_fwd_8192x2048", 4, 33, true},
                                           KeptCase{"softmax_dim0_fwd_65536x1024", 32, 4, true}));

// Column groups split over a thread-block cluster (cluster_rows, sm_90):
// the blocks of a group combine their totals through distributed shared
// memory instead of the workspace and a group barrier, so the launch is not
// cooperative; with and without kept chunks.
TEST(LanesKept, ClusterSplitCombinesWithoutGroupBarriers) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto parsed =
      ParseReproFile(std::string(FUSIOND_BENCH_FUSIONS_DIR) + "/softmax_dim0_bwd_2048x8192.py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  const SegmentResult& s = r->segments[0];
  for (bool kept : {false, true}) {
    for (int64_t split : {4, 8}) {
      HeuristicParams hp = s.params;
      hp.lanes_in_registers = kept;
      hp.cluster_rows = true;
      hp.grid_x = split;
      hp.grid_y = 264 / split;
      DecideKernelForm(AnalyzeFusion(s.graph, SizeBinding{s.symbol_sizes}), DefaultTarget(), &hp);
      SCOPED_TRACE(hp.ToString());
      SegmentCompileOptions so;
      so.kernel_name = "fz_cluster";
      so.symbol_sizes = s.symbol_sizes;
      auto art = CompileSegment(s.graph, hp, so);
      ASSERT_TRUE(art.ok()) << art.status();
      EXPECT_EQ(art->spill_bytes, 0);
      const std::string& src = art->cuda_source;
      EXPECT_NE(src.find(absl::StrCat("__cluster_dims__(1, ", split, ", 1)")), std::string::npos);
      EXPECT_EQ(src.find("fz_group_sync(bar)"), std::string::npos);
      EXPECT_NE(src.find("fz_dsmem_ld4(fz_cr + 0, 1)"), std::string::npos);
      EXPECT_EQ(src.find("kl_in0(kp_in0") != std::string::npos, kept);
      EXPECT_NE(art->manifest_json.find("\"cooperative\": false"), std::string::npos);
    }
  }
  // Column sums split over a cluster: no workspace at all.
  auto sum = ParseReproFile(std::string(FUSIOND_BENCH_FUSIONS_DIR) + "/sum_dim0_8192x2048.py");
  ASSERT_TRUE(sum.ok()) << sum.status();
  auto rs = CompileFusion(sum->graph, sum->input_shapes, o);
  ASSERT_TRUE(rs.ok()) << rs.status();
  HeuristicParams sp = rs->segments[0].params;
  ASSERT_EQ(sp.kind, SchedulerKind::kOuterReduction);
  ASSERT_GT(sp.grid_x, 1) << sp.ToString();
  sp.cluster_rows = true;
  SegmentCompileOptions sso;
  sso.kernel_name = "fz_cluster_sum";
  auto sart = CompileSegment(rs->segments[0].graph, sp, sso);
  ASSERT_TRUE(sart.ok()) << sart.status();
  EXPECT_EQ(sart->manifest_json.find("\"kind\": \"workspace\""), std::string::npos)
      << sart->manifest_json;
  EXPECT_NE(sart->manifest_json.find("\"cooperative\": false"), std::string::npos);
  // Two inputs of eight chunks a thread (64 words) pass the 48 kept words.
  HeuristicParams wide = s.params;
  wide.lanes_in_registers = true;
  wide.grid_x = 2;
  DecideKernelForm(AnalyzeFusion(s.graph, SizeBinding{s.symbol_sizes}), DefaultTarget(), &wide);
  EXPECT_EQ(wide.persistent_batch, 8);
  auto w = GenerateKernel(s.graph, wide, CodegenOptions{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << w.status();
  HeuristicParams sixteen = s.params;
  sixteen.cluster_rows = true;
  sixteen.grid_x = 16;
  auto k = GenerateKernel(s.graph, sixteen, CodegenOptions{});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument) << k.status();
}

// Kept chunks are for lanes outer persistent kernels: a column sum (one
// pass, nothing to keep) and a batch of more than 16 chunks a thread are
// refused with InvalidArgument, never a kernel that spills or is wrong.
TEST(LanesKept, RefusedWhereNothingIsKeptOrTooMuch) {
  for (const char* stem : {"sum_dim0_2048x8192", "softmax_dim0_fwd_65536x1024"}) {
    auto parsed = ParseReproFile(std::string(FUSIOND_BENCH_FUSIONS_DIR) + "/" + stem + ".py");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    CompileOptions o;
    o.generate_code = false;
    auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
    ASSERT_TRUE(r.ok()) << r.status();
    HeuristicParams hp = r->segments[0].params;
    hp.lanes_in_registers = true;
    hp.persistent_batch = 64;  // 65536 rows over 8 blocks of 16 lane groups
    auto k = GenerateKernel(r->segments[0].graph, hp, CodegenOptions{});
    ASSERT_FALSE(k.ok()) << stem;
    EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument) << k.status();
    EXPECT_NE(k.status().message().find("lanes_in_registers"), std::string::npos) << k.status();
  }
}

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
      for (int64_t split : {1, 2, 3}) {
        HeuristicParams hp = s.params;
        hp.rows_per_block = 32;
        hp.block_x = 4;
        hp.block_y = 1;
        hp.vectorize = 2;
        hp.unroll = 2;
        hp.multi_pass = true;
        hp.smem_bytes = 0;
        // Split 3: two blocks a group, with kept chunks (lanes_in_registers)
        // where the segment is an outer persistent one.
        hp.grid_x = std::min<int64_t>(split, 2);
        hp.grid_y = 8;
        hp.grid_reduction = split > 1;
        hp.lanes_in_registers = split == 3 && s.kind == SchedulerKind::kOuterPersistent;
        hp.persistent_batch = 2;
        auto k = GenerateKernel(s.graph, hp, CodegenOptions{});
        if (!k.ok()) {
          // Kept chunks refuse inputs contiguous along the column and column
          // reductions (InvalidArgument).
          EXPECT_EQ(k.status().code(),
                    hp.lanes_in_registers && k.status().code() == absl::StatusCode::kInvalidArgument
                        ? absl::StatusCode::kInvalidArgument
                        : absl::StatusCode::kUnimplemented)
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
