// Code generation over hand-built graphs: launch grids and bounds against the
// target, cooperative column reductions, clusters, staged rows, exact kernels
// and the manifest entry.
#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/codegen_test_graphs.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/codegen/manifest.h"
#include "compiler/codegen/prelude.h"
#include "compiler/ir/builder.h"
#include "compiler/scheduler/target.h"

namespace fusiond {
namespace {

using namespace codegen_test;  // NOLINT: the shared test graphs

// threads at 255 registers (8,192 a warp pair) fit four blocks by registers
// on every known target; 40,000 bytes of shared memory fit two on sm_86
// (100 KiB a SM) and five on sm_90 (228 KiB).
TEST(Codegen, LaunchGridReadsTheTargetsLimits) {
  Graph g = ScaleAndColumnSum();
  auto k = GenerateKernel(g, InnerOuterParams(1000), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_TRUE(k->cooperative);
  auto grid_cap = [&](const std::string& arch) {
    auto target = LookupTarget(arch);
    EXPECT_TRUE(target.ok()) << target.status();
    return LaunchGrid(*k, 255, 40000, *target)[0];
  };
  const std::string rows = "ceil_div(max(1, ceil_div(64, 1)), ceil_div(max(1, ceil_div(64, 1)), ";
  EXPECT_EQ(grid_cap("sm_86"), rows + "168))");   // 2 blocks x 84 SMs
  EXPECT_EQ(grid_cap("sm_89"), rows + "284))");   // 2 x 142
  EXPECT_EQ(grid_cap("sm_90"), rows + "528))");   // 4 x 132
  EXPECT_EQ(grid_cap("sm_100"), rows + "592))");  // 4 x 148
}

// Blocks per SM asked of ptxas follow the target: its register file for
// inner persistent kernels, its SM count for grids sized to be resident.
TEST(Codegen, LaunchBoundsReadTheTarget) {
  CodegenOptions quarter_registers;
  quarter_registers.target.registers_per_sm = DefaultTarget().registers_per_sm / 4;
  const HeuristicParams softmax = Decided(Softmax(), SoftmaxParams(256, 2, 100), {{4096, 16384}});
  auto two = GenerateKernel(Softmax(), softmax, CodegenOptions{});
  auto one = GenerateKernel(Softmax(), softmax, quarter_registers);
  ASSERT_TRUE(two.ok() && one.ok());
  EXPECT_EQ(two->min_blocks, 2);
  EXPECT_EQ(one->min_blocks, 1);

  HeuristicParams hp = OuterParams(64, 256 * 56 * 56, 8, 256);
  hp.multi_pass = true;
  hp.unroll = 4;
  hp.grid_x = 16;
  hp.grid_y = 16;  // 256 blocks: two a SM on 132 SMs, one on 264
  CodegenOptions more_sms;
  more_sms.target.sm_count = 264;
  const Graph image = ImageChannelCentering({256, 64, 56, 56});
  auto outer = GenerateKernel(image, Decided(image, hp, {}, more_sms.target), more_sms);
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_EQ(outer->min_blocks, 1);
}

TEST(Codegen, ColumnReductionIsCooperativeWithWorkspace) {
  Graph g = ScaleAndColumnSum();
  HeuristicParams hp = InnerOuterParams(1000);
  auto k = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_TRUE(k->cooperative);
  EXPECT_TRUE(k->needs_workspace);
  EXPECT_NE(k->source.find("fz_grid_sync(bar)"), std::string::npos);
  // Not an inner persistent kernel: plain stores.
  EXPECT_NE(k->source.find(">::st(out0"), std::string::npos);
  EXPECT_EQ(k->source.find(">::stcs(out0"), std::string::npos);
  // 64 threads at 48 registers: at most 21 blocks per SM by registers and
  // 32 by threads; the cap is the rows (64) here.
  auto grid = LaunchGrid(*k, 48, 0, WithSms(132));
  EXPECT_EQ(grid[0], "ceil_div(max(1, ceil_div(64, 1)), ceil_div(max(1, ceil_div(64, 1)), 1000))");
  grid = LaunchGrid(*k, 255, 0, WithSms(2));  // two SMs, few blocks each
  EXPECT_EQ(grid[0], "ceil_div(max(1, ceil_div(64, 1)), ceil_div(max(1, ceil_div(64, 1)), 8))");
  // Partial rows padded to a multiple of 4 floats (float4 reads).
  EXPECT_EQ(WorkspaceBytes(*k, "G"), "(G) * (0 + 4 * ceil_div(256, 4) * 4)");
  const std::string m = KernelManifestJson(*k, "k.cubin", 48, 0, DefaultTarget());
  EXPECT_NE(m.find("\"workspace\": {\"bytes\": \"4096\", \"zero\": true, \"keep\": true}"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("\"zero\": false}"), std::string::npos) << m;
  // 1000 partials of 64-thread blocks at the default (unknown) width: one
  // lane per tile, the other 63 threads' groups split the partials.
  EXPECT_NE(k->source.find("lane = tid % 1, grp = tid / 1;"), std::string::npos);
  EXPECT_NE(k->source.find("for (int q = tid; q < 4; q += 64)"), std::string::npos);
  // 8192 columns over four 32-thread blocks: 64-column tiles, each thread
  // finishes two columns of a tile.
  hp.block_x = 32;
  hp.grid_x = 4;
  hp.inner_size = 8192;
  k = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("for (int q = tid; q < 64; q += 32)"), std::string::npos);
  EXPECT_NE(k->source.find("__shfl_xor_sync(0xffffffffu, s0.x, 16)"), std::string::npos);
  // The partial rows are stored to stay in L2 until the epilogue reads them
  // (float4 stores when the vector width is a multiple of 4).
  EXPECT_NE(k->source.find("l += 4) fz_st_partial(wcol + "), std::string::npos);
  HeuristicParams narrow = hp;
  narrow.vectorize = 2;
  auto k2 = GenerateKernel(g, Decided(g, narrow), CodegenOptions{});
  ASSERT_TRUE(k2.ok()) << k2.status();
  EXPECT_EQ(k2->source.find("fz_st_partial(wcol + "), std::string::npos);
  // Persistent: the static row order. Multi-pass: row groups from the
  // counter in the barrier words, zeroed again after the grid barrier.
  EXPECT_EQ(k->source.find("atomicAdd(bar + 1, 1u)"), std::string::npos);
  EXPECT_NE(k->source.find("for (i64 it = 0; it < iters; ++it)"), std::string::npos);
  hp.multi_pass = true;
  k = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("fz_take = atomicAdd(bar + 1, 1u)"), std::string::npos);
  EXPECT_NE(k->source.find("for (unsigned it = 0; g0 < ngroups; ++it)"), std::string::npos);
  EXPECT_NE(k->source.find(
                "fz_grid_sync(bar);\n  if (blockIdx.x == 0 && tx == 0 && ty == 0) bar[1] = 0;"),
            std::string::npos);
}

TEST(Codegen, ClusterSumsColumnPartialsThroughSharedMemory) {
  Graph g = ScaleAndColumnSum();
  HeuristicParams hp = InnerOuterParams(16);
  auto plain = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->cluster_x, 1);
  EXPECT_EQ(plain->source.find("__cluster_dims__"), std::string::npos);
  EXPECT_NE(plain->source.find("const int P = gridDim.x * 1;"), std::string::npos);
  EXPECT_EQ(plain->source.find("fz_dsmem_ld4"), std::string::npos);  // helpers only where used
  hp.cluster_x = 4;
  auto k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->cluster_x, 4);
  EXPECT_NE(k->source.find("__launch_bounds__(64, 1) __cluster_dims__(4, 1, 1)"),
            std::string::npos);
  EXPECT_NE(k->source.find("__device__ __forceinline__ float4 fz_dsmem_ld4("), std::string::npos);
  // The accumulators (one float4 per thread here) in shared memory, the
  // cluster's four blocks summed in rank order into the cluster's row.
  EXPECT_EQ(k->dynamic_smem_bytes, 64 * 4 * 4);
  EXPECT_NE(k->source.find("fz_cs[0 + (k * 1 + l / 4) * 64 + tx] = make_float4(cacc0[k * 4 + l]"),
            std::string::npos);
  EXPECT_NE(k->source.find("const int per = 16, rank = blockIdx.x % 4;"), std::string::npos);
  EXPECT_NE(k->source.find("fz_dsmem_ld4(fz_cs + 0 + q, 0);"), std::string::npos);
  EXPECT_NE(k->source.find("fz_dsmem_ld4(fz_cs + 0 + q, 3);"), std::string::npos);
  EXPECT_EQ(k->source.find("fz_dsmem_ld4(fz_cs + 0 + q, 4);"), std::string::npos);
  // The cluster's row is stored to stay in L2 until the epilogue.
  EXPECT_NE(
      k->source.find("fz_st_partial(wcol + ((i64)(blockIdx.x / 4) * 1 + 0) * wstride + j, s0);"),
      std::string::npos);
  // Two cluster barriers: the stores before the reads, the reads before exit.
  EXPECT_EQ(Occurrences(k->source, "    fz_cluster_sync();"), 2u);
  // The epilogue sums one partial row per cluster when the rows fit (the
  // fallback paths still write one per block).
  EXPECT_NE(k->source.find("const int P = fits ? (int)gridDim.x / 4 : (int)gridDim.x;"),
            std::string::npos);
  // Whole clusters: the balanced grid rounded up to a multiple of 4, at most
  // the largest multiple of 4 that is one wave.
  EXPECT_EQ(LaunchGrid(*k, 48, 0, WithSms(132))[0],
            "min(16, ceil_div(ceil_div(max(1, ceil_div(64, 1)), ceil_div(max(1, ceil_div(64, 1)), "
            "16)), 4) * 4)");
  hp.grid_x = 18;
  k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(LaunchGrid(*k, 48, 0, WithSms(132))[0],
            "min(16, ceil_div(ceil_div(max(1, ceil_div(64, 1)), ceil_div(max(1, ceil_div(64, 1)), "
            "18)), 4) * 4)");
  // What clusters do not support is an error, not a silent fallback.
  for (auto bad :
       {std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.cluster_x = 3; }),
        std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.cluster_x = 16; }),
        std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.block_y = 2; }),
        std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.multi_pass = true; }),
        std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.vectorize = 2; })}) {
    HeuristicParams b = hp;
    bad(b);
    auto r = GenerateKernel(g, b, CodegenOptions{});
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << b.ToString();
  }
}

TEST(Codegen, EpilogueTilesFitTheShape) {
  // rmsnorm backward 2048x8192: one 64-column tile per block of 512 threads.
  EXPECT_EQ(EpilogueLanes(8192, 132, 132, 512), 16);
  // 1024 columns, 132 blocks of 4 rows: 64-column tiles would leave 116
  // blocks idle and take nine round trips; 8-column tiles two.
  EXPECT_EQ(EpilogueLanes(1024, 528, 132, 512), 2);
  // 4096 columns, 264 blocks of 256 threads: 16-column tiles, two trips.
  EXPECT_EQ(EpilogueLanes(4096, 264, 264, 256), 4);
  EXPECT_EQ(EpilogueLanes(1, 1, 1, 32), 16);  // degenerate sizes
}

TEST(Codegen, StagedRowsUseCpAsyncRingSizedByTheBudget) {
  Graph g = Softmax();
  HeuristicParams hp = SoftmaxParams();
  hp.smem_buffer = true;
  const int64_t row_bytes = 2 * 128 * 16 * 8;  // bf16 x threads x batch x vectorize
  hp.smem_bytes = 3 * row_bytes + 100;         // three rows fit
  auto k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->dynamic_smem_bytes, 3 * row_bytes);
  EXPECT_NE(k->source.find("fz_cp_async<16>("), std::string::npos);
  EXPECT_NE(k->source.find("fz_cp_wait<2>();"), std::string::npos);  // two rows in flight
  EXPECT_EQ(k->source.find("u32 pb_in0"), std::string::npos);        // no register row buffer
  const std::string m = KernelManifestJson(*k, "k.cubin", 64, 0, DefaultTarget());
  EXPECT_NE(m.find(absl::StrCat("\"smem_bytes\": \"", 3 * row_bytes, "\"")), std::string::npos)
      << m;

  // More than four rows of budget still makes a ring of four.
  k = WithSmemBudget(g, hp, 10 * row_bytes);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->dynamic_smem_bytes, 4 * row_bytes);

  // Less than a row: the multi-pass loop, no shared memory.
  k = WithSmemBudget(g, hp, row_bytes - 1);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->dynamic_smem_bytes, 0);
  EXPECT_EQ(k->source.find("fz_cp_async<"), std::string::npos);
}

TEST(Codegen, LoopingGridIsCappedAtOneWave) {
  Graph g = Softmax();
  HeuristicParams hp = SoftmaxParams();
  auto k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_TRUE(k->one_wave);  // 264 blocks for 4096 rows
  // 128 threads at 128 registers: 4 blocks per SM fit, 264 < 4 x 132.
  EXPECT_EQ(LaunchGrid(*k, 128, 0, WithSms(132))[0],
            "ceil_div(max(1, ceil_div(s0, 1)), ceil_div(max(1, ceil_div(s0, 1)), 264))");
  // At 255 registers only 2 fit: one wave is 264 still; on 100 SMs, 200.
  EXPECT_EQ(LaunchGrid(*k, 255, 0, WithSms(100))[0],
            "ceil_div(max(1, ceil_div(s0, 1)), ceil_div(max(1, ceil_div(s0, 1)), 200))");
  // Registers unknown: the heuristics' grid.
  EXPECT_EQ(LaunchGrid(*k, -1, 0, WithSms(100))[0],
            "ceil_div(max(1, ceil_div(s0, 1)), ceil_div(max(1, ceil_div(s0, 1)), 264))");
  // A block per row does not loop: no cap.
  hp.grid_x = 4096;
  k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_FALSE(k->one_wave);
  EXPECT_EQ(LaunchGrid(*k, 255, 0, WithSms(100))[0], "min(4096, max(1, ceil_div(s0, 1)))");
}

TEST(Codegen, BadLaunchParametersAreInvalidArgument) {
  Graph g = Softmax();
  HeuristicParams hp;
  hp.kind = SchedulerKind::kInnerPersistent;
  hp.block_x = 48;
  EXPECT_EQ(GenerateKernel(g, hp, CodegenOptions{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// reread_rows: the row buffers fill with fz_ld_keep and the output pass
// loads each chunk again with fz_ld_done; only where rows sit in registers.
TEST(Codegen, RereadRowsLoadTheRowTwiceWithCachePolicies) {
  Graph g = Softmax();
  HeuristicParams hp = SoftmaxParams(256, 8, 4096);
  auto plain = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->source.find("fz_ld_keep"), std::string::npos);
  hp.reread_rows = true;
  auto k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("createpolicy.fractional.L2::evict_first"), std::string::npos);
  EXPECT_NE(k->source.find("if (jj < rlen) fz_ld_keep<16>(&pb_in0[k * 4], in0 + ro_in0(jj));"),
            std::string::npos);
  EXPECT_NE(
      k->source.find("if (active && jj < rlen) fz_ld_done<16>(&pb_in0[k * 4], in0 + ro_in0(jj));"),
      std::string::npos);
  hp.multi_pass = true;
  EXPECT_EQ(GenerateKernel(g, hp, CodegenOptions{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  hp.multi_pass = false;
  hp.smem_buffer = true;
  EXPECT_EQ(GenerateKernel(g, hp, CodegenOptions{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Exact kernels: a specialized reread_rows kernel whose row is exactly its
// threads' chunks (up to three a thread) has no row loop, no next-row
// prefetch and no in-row guards, reduces its warps' partials in warp 0, and
// launches a block for every row group however many rows come.
TEST(Codegen, ExactRereadKernelsTakeABlockARowWithoutLoop) {
  Graph g = Softmax();
  HeuristicParams hp = SoftmaxParams(512, 1, 16384);  // 16384x4096
  hp.outer_size = 16384;
  hp.inner_size = 4096;
  hp.reread_rows = true;
  CodegenOptions o;
  o.symbol_sizes = {16384, 4096};
  auto k = GenerateKernel(g, Decided(g, hp, {{16384, 4096}}), o);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->source.find("rg < rows"), std::string::npos) << k->source;
  EXPECT_EQ(k->source.find("nb_in0"), std::string::npos);
  EXPECT_EQ(k->source.find("jj < rlen"), std::string::npos);
  EXPECT_NE(k->source.find("  const i64 t = tx;\n  constexpr i64 T = 512;\n"), std::string::npos);
  EXPECT_NE(k->source.find("    row = (i64)blockIdx.x * 1 + ty;\n    active = row < rows;\n"),
            std::string::npos);
  EXPECT_NE(k->source.find("if (tx < 32) {"), std::string::npos);
  EXPECT_NE(k->source.find("if (active && true) fz_ld_done<16>(&pb_in0[k * 4], in0 + ro_in0(jj));"),
            std::string::npos);
  EXPECT_FALSE(k->one_wave);
  // The grid is every row group, for any row count.
  EXPECT_EQ(LaunchGrid(*k, 32, 0, WithSms(132))[0], "min(2147483647, max(1, ceil_div(s0, 1)))");

  // Not exact: a row that is not the threads' chunks (a general kernel, a
  // wider row than compiled for), or four chunks a thread (4096x16384 ran
  // slower without the loop's form).
  CodegenOptions general = o;
  general.specialize = false;
  auto gk = GenerateKernel(g, hp, general);
  ASSERT_TRUE(gk.ok()) << gk.status();
  EXPECT_NE(gk->source.find("rg < rows"), std::string::npos);
  CodegenOptions narrow = o;
  narrow.symbol_sizes = {16384, 2048};
  auto nk = GenerateKernel(g, hp, narrow);
  ASSERT_TRUE(nk.ok()) << nk.status();
  EXPECT_NE(nk->source.find("jj < rlen"), std::string::npos);
  hp.inner_size = 16384;
  hp.persistent_batch = 4;
  o.symbol_sizes = {4096, 16384};
  auto wide = GenerateKernel(g, Decided(g, hp, {{16384, 4096}}), o);
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_NE(wide->source.find("rg < rows"), std::string::npos);
  EXPECT_NE(wide->source.find("jj < rlen"), std::string::npos);
}

}  // namespace
}  // namespace fusiond
