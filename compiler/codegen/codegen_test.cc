// Code generation over hand-built graphs: the plan's domains and stages, the
// generated source's parameters, and the manifest entry.
#include "compiler/codegen/codegen.h"

#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/codegen/manifest.h"
#include "compiler/codegen/prelude.h"
#include "compiler/ir/builder.h"
#include "compiler/scheduler/target.h"

namespace fusiond {
namespace {

// The default target with another SM count (launch grids scale with it).
Target WithSms(int sm_count) {
  Target t = DefaultTarget();
  t.sm_count = sm_count;
  return t;
}

// How many times `needle` occurs in `text`.
size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// softmax over the last axis of a symbolic [M, N] bf16 input.
Graph Softmax() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {-1, -1});
  ValueId xf = *b.Cast(x, DataType::kFloat);
  ValueId m = *b.Reduce(OpKind::kMax, xf, {1}, false);
  ValueId mb = *b.BroadcastInDim(m, g.value(x).shape, {0});
  ValueId e = *b.Unary(OpKind::kExp, *b.Binary(OpKind::kSub, xf, mb));
  ValueId s = *b.Reduce(OpKind::kSum, e, {1}, false);
  ValueId sb = *b.BroadcastInDim(s, g.value(x).shape, {0});
  ValueId y = *b.Cast(*b.Binary(OpKind::kDiv, e, sb), DataType::kBFloat16);
  EXPECT_TRUE(b.AddOutput(y).ok());
  return g;
}

// out = x * w (w broadcast along rows), and colsum = sum(x, rows).
Graph ScaleAndColumnSum() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {64, 256});
  ValueId w = *b.DefineTensor("w", DataType::kFloat, {256});
  ValueId wb = *b.BroadcastInDim(w, g.value(x).shape, {1});
  ValueId rs = *b.Reduce(OpKind::kSum, x, {1}, false);
  ValueId rsb = *b.BroadcastInDim(rs, g.value(x).shape, {0});
  ValueId y = *b.Binary(OpKind::kMul, *b.Binary(OpKind::kMul, x, wb), rsb);
  ValueId cs = *b.Reduce(OpKind::kSum, x, {0}, false);
  EXPECT_TRUE(b.AddOutput(y).ok());
  EXPECT_TRUE(b.AddOutput(cs).ok());
  return g;
}

TEST(KernelPlan, SoftmaxHasTwoStagesOverTheLastAxis) {
  Graph g = Softmax();
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->r_axes, std::vector<int>{1});
  EXPECT_EQ(p->i_axes, std::vector<int>{0});
  EXPECT_EQ(p->num_stages, 2);
  ASSERT_EQ(p->row_slots.size(), 2u);
  EXPECT_EQ(p->row_slots[0].stage, 0);
  EXPECT_EQ(p->row_slots[1].stage, 1);
  EXPECT_TRUE(p->col_reds.empty());
  EXPECT_EQ(p->domain[g.outputs[0]], Domain::kElem);
}

TEST(KernelPlan, ColumnReductionIsSeparatedFromRows) {
  Graph g = ScaleAndColumnSum();
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->col_reds.size(), 1u);
  EXPECT_EQ(p->row_slots.size(), 1u);
  EXPECT_EQ(p->domain[g.outputs[1]], Domain::kCol);
  EXPECT_TRUE(p->IsStatic());
}

// layernorm's statistics: var_mean over the last axis of a symbolic [M, N]
// bf16 input, y = (x - mean) * rsqrt(var).
Graph Normalize() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {-1, -1});
  ValueId xf = *b.Cast(x, DataType::kFloat);
  Attrs a;
  a.dims = {1};
  auto vm = *b.AddNode(OpKind::kVarMean, {xf}, a);
  ValueId vb = *b.BroadcastInDim(vm[0], g.value(x).shape, {0});
  ValueId mb = *b.BroadcastInDim(vm[1], g.value(x).shape, {0});
  ValueId y =
      *b.Binary(OpKind::kMul, *b.Binary(OpKind::kSub, xf, mb), *b.Unary(OpKind::kRsqrt, vb));
  EXPECT_TRUE(b.AddOutput(*b.Cast(y, DataType::kBFloat16)).ok());
  return g;
}

TEST(KernelPlan, VarMeanTakesTwoStagesOrOneInOnePass) {
  Graph g = Normalize();
  auto two = PlanKernel(g, false);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->num_stages, 2);
  ASSERT_EQ(two->row_slots.size(), 2u);
  EXPECT_EQ(two->row_slots[1].stage, 1);
  EXPECT_FALSE(two->row_slots[0].one_pass);
  auto one = PlanKernel(g, false, /*one_pass_var=*/true);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->num_stages, 1);
  ASSERT_EQ(one->row_slots.size(), 2u);
  EXPECT_EQ(one->row_slots[0].stage, 0);
  EXPECT_EQ(one->row_slots[1].stage, 0);
  EXPECT_TRUE(one->row_slots[0].one_pass && one->row_slots[1].one_pass);
  EXPECT_TRUE(one->row_slots[1].second_moment);
}

// var_mean whose variance nobody uses: the mean alone is needed, and the
// reduction is still computed (it was "used before it is computed", an
// internal error, until scripts/fuzz.sh found it).
TEST(KernelPlan, VarMeanWithOnlyItsMeanNeededIsComputed) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {32, 64});
  Attrs a;
  a.dims = {1};
  auto vm = *b.AddNode(OpKind::kVarMean, {x}, a);
  ValueId mb = *b.BroadcastInDim(vm[1], g.value(x).shape, {0});
  ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kMul, mb, x)).ok());
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->needed[vm[0]]);
  ASSERT_FALSE(p->row_slots.empty());
  EXPECT_EQ(p->row_slots[0].node, g.def(vm[1])->id);
}

TEST(KernelPlan, PointwiseRejectsReductions) {
  Graph g = Softmax();
  auto p = PlanKernel(g, true);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
}

// Softmax at [4096, 16384] bf16 as inner persistent: block_x threads x
// `batch` vectors of 8 per row, grid_x blocks.
HeuristicParams SoftmaxParams(int block_x = 128, int batch = 16, int64_t grid_x = 264) {
  HeuristicParams hp;
  hp.kind = SchedulerKind::kInnerPersistent;
  hp.outer_size = 4096;
  hp.inner_size = 16384;
  hp.vectorize = 8;
  hp.block_x = block_x;
  hp.persistent_batch = batch;
  hp.grid_x = grid_x;
  return hp;
}

TEST(Codegen, OnlyMultiPassKernelsMergeVarInOnePass) {
  Graph g = Normalize();
  HeuristicParams hp = SoftmaxParams(256, 4, 2048);  // rows in registers
  auto persistent = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(persistent.ok()) << persistent.status();
  EXPECT_EQ(persistent->source.find("fz_warp_chan(wn"), std::string::npos);
  hp.kind = SchedulerKind::kInnerReduction;
  hp.multi_pass = true;
  hp.persistent_batch = 1;
  hp.unroll = 4;
  auto multi = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(multi.ok()) << multi.status();
  EXPECT_NE(multi->source.find("fz_warp_chan(wn"), std::string::npos);
  // The count takes a third shared-memory entry per warp.
  EXPECT_NE(multi->source.find("fz_red[2][1][3][8]"), std::string::npos);
  // One streamed input, re-read by the last pass: streaming stores keep the
  // output from evicting it.
  EXPECT_NE(multi->source.find("::stcs(out0"), std::string::npos);
}

TEST(Codegen, SymbolicKernelTakesSizesAsParameters) {
  Graph g = Softmax();
  HeuristicParams hp = SoftmaxParams(256, 2, 100);
  CodegenOptions o;
  o.kernel_name = "softmax_k";
  auto k = GenerateKernel(g, hp, o);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("extern \"C\" __global__ void __launch_bounds__(256, 2) softmax_k("),
            std::string::npos);
  // Small row buffers, 256 threads: two blocks per SM; 512 threads: one.
  hp.block_x = 512;
  hp.persistent_batch = 1;
  auto k512 = GenerateKernel(g, hp, o);
  ASSERT_TRUE(k512.ok()) << k512.status();
  EXPECT_NE(k512->source.find("__launch_bounds__(512, 1) softmax_k("), std::string::npos);
  EXPECT_NE(k->source.find("i64 s0, i64 s1"), std::string::npos);
  // bf16-only outputs: exp on the SFU with denormals flushed, and the output
  // rounded two elements per cvt.
  EXPECT_NE(k->source.find("fz_exp_approx("), std::string::npos);
  EXPECT_EQ(k->source.find("__expf("), std::string::npos);
  EXPECT_NE(k->source.find("Ty<5>::template pack<VV>(wo0, fo0)"), std::string::npos);
  // One streamed input: the output stores carry the streaming hint.
  EXPECT_NE(k->source.find("Chunk<VV * 2>::stcs(out0 + ro_out0(j), wo0);"), std::string::npos);
  // Block reductions: one barrier each, partials in alternating buffers
  // (softmax has two reductions per row).
  EXPECT_EQ(Occurrences(k->source, "fz_rb ^= 1;"), 2u);
  // float accumulators exchange float partials (no double round trip).
  EXPECT_NE(k->source.find("__shared__ __align__(16) float fz_red[2][1][1][8];"),
            std::string::npos);
  EXPECT_NE(k->source.find("fz_red[fz_rb][ty][0][tx >> 5] = (float)acc0;"), std::string::npos);
  EXPECT_EQ(k->source.find("#include"), std::string::npos);  // no toolkit headers
  EXPECT_FALSE(k->cooperative);
  ASSERT_EQ(k->params.size(), 4u);
  EXPECT_EQ(k->params[0].kind, "input");
  EXPECT_EQ(k->params[1].kind, "output");
  EXPECT_EQ(k->params[2].symbol, "s0");
  EXPECT_EQ(k->params[3].symbol, "s1");
  const std::string m = KernelManifestJson(*k, "softmax_k.cubin", 40, 128, DefaultTarget());
  EXPECT_NE(m.find("\"grid\": [\"ceil_div(max(1, ceil_div(s0, 1)), ceil_div(max(1, ceil_div(s0, "
                   "1)), 100))\", \"1\", \"1\"]"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("{\"kind\": \"size\", \"symbol\": \"s1\"}"), std::string::npos);
}

// A persistent kernel is for the shape class it was compiled for: no
// fallback loops, its row extents are the literals compiled for (the row
// count stays a parameter), and what it needs (those extents, vector
// pointers aligned) goes to the manifest for the runtimes to check.
// CodegenOptions::specialize = false keeps the loops instead.
TEST(Codegen, PersistentKernelsAreSpecializedToTheirShapeClass) {
  Graph g = Softmax();
  HeuristicParams hp = SoftmaxParams();  // 128 threads x 16 chunks x 8 = 16384
  CodegenOptions o;
  o.symbol_sizes = {4096, 16384};  // the sizes compiled for: [M, N]
  auto k = GenerateKernel(g, hp, o);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->source.find("VW<1>()"), std::string::npos);        // no element loop
  EXPECT_EQ(k->source.find("if (vec_ok) {"), std::string::npos);  // no vector loop from memory
  ASSERT_EQ(k->requirements.size(), 1u);
  EXPECT_EQ(k->requirements[0].expr, "s1");
  EXPECT_EQ(k->requirements[0].kind, Requirement::Kind::kEquals);
  EXPECT_EQ(k->requirements[0].n, 16384);
  EXPECT_NE(k->source.find(", i64 s0, i64 s1_arg) {\n"), std::string::npos) << k->source;
  EXPECT_NE(k->source.find("  constexpr i64 s1 = 16384;"), std::string::npos);
  EXPECT_EQ(k->source.find("constexpr i64 s0"), std::string::npos);
  EXPECT_EQ(k->params[0].align, 16);  // bf16 x 8
  EXPECT_EQ(k->params[1].align, 16);
  const std::string m = KernelManifestJson(*k, "k.cubin", 40, 0, DefaultTarget());
  EXPECT_NE(m.find("\"requires\": [{\"expr\": \"s1\", \"equals\": 16384}]"), std::string::npos)
      << m;
  EXPECT_NE(m.find("{\"kind\": \"size\", \"symbol\": \"s1\"}"), std::string::npos) << m;
  EXPECT_NE(m.find("{\"kind\": \"input\", \"index\": 0, \"align\": 16}"), std::string::npos) << m;

  CodegenOptions general = o;
  general.specialize = false;
  auto gk = GenerateKernel(g, hp, general);
  ASSERT_TRUE(gk.ok()) << gk.status();
  EXPECT_NE(gk->source.find("VW<1>()"), std::string::npos);
  EXPECT_NE(gk->source.find("if (vec_ok) {"), std::string::npos);
  EXPECT_TRUE(gk->requirements.empty());
  EXPECT_EQ(gk->params[0].align, 0);
  const std::string gm = KernelManifestJson(*gk, "k.cubin", 40, 0, DefaultTarget());
  EXPECT_EQ(gm.find("requires"), std::string::npos) << gm;
  EXPECT_EQ(gm.find("align"), std::string::npos) << gm;

  // A multi-pass kernel runs every shape as it is: nothing to require.
  HeuristicParams mp = hp;
  mp.multi_pass = true;
  mp.persistent_batch = 1;
  auto mk = GenerateKernel(g, mp, o);
  ASSERT_TRUE(mk.ok()) << mk.status();
  EXPECT_TRUE(mk->requirements.empty());
  EXPECT_NE(mk->source.find("VW<1>()"), std::string::npos);
  // Nor is a kernel specialized whose own sizes would miss the class (a row
  // the vector width does not divide, one wider than the buffers), or
  // whose sizes are unknown.
  for (const std::vector<int64_t>& sizes :
       {std::vector<int64_t>{4096, 16380}, std::vector<int64_t>{4096, 16392},
        std::vector<int64_t>{}}) {
    CodegenOptions other = o;
    other.symbol_sizes = sizes;
    auto ok = GenerateKernel(g, hp, other);
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_TRUE(ok->requirements.empty()) << sizes.size();
    EXPECT_NE(ok->source.find("VW<1>()"), std::string::npos) << sizes.size();
  }
}

TEST(Codegen, DoubleAccumulatorsKeepDoublePartials) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kDouble, {-1, -1});
  ValueId s = *b.Reduce(OpKind::kSum, x, {1}, false);
  ValueId sb = *b.BroadcastInDim(s, g.value(x).shape, {0});
  ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kDiv, x, sb)).ok());
  HeuristicParams hp = SoftmaxParams(256, 1, 100);
  hp.vectorize = 2;
  CodegenOptions o;
  o.kernel_name = "k";
  auto k = GenerateKernel(g, hp, o);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("__shared__ __align__(16) double fz_red["), std::string::npos);
  EXPECT_NE(k->source.find("= (double)acc0;"), std::string::npos);
}

// The kernel generated with smem_bytes = `budget` (the rest of hp as given).
absl::StatusOr<GeneratedKernel> WithSmemBudget(const Graph& g, HeuristicParams hp, int64_t budget) {
  hp.smem_bytes = budget;
  return GenerateKernel(g, hp, CodegenOptions{});
}

// x - sum(x) over the channels of a float [n, 4, 64] (reductions over 0
// and 2, batch norm's pattern), and outer persistent parameters with two
// blocks sharing each channel.
Graph ChannelCentering(int64_t n = 8) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {n, 4, 64});
  ValueId s = *b.Reduce(OpKind::kSum, x, {0, 2}, false);
  ValueId sb = *b.BroadcastInDim(s, g.value(x).shape, {1});
  EXPECT_TRUE(b.AddOutput(*b.Binary(OpKind::kSub, x, sb)).ok());
  return g;
}

HeuristicParams OuterParams(int64_t channels, int64_t per_channel, int vectorize, int block_x) {
  HeuristicParams hp;
  hp.kind = SchedulerKind::kOuterPersistent;
  hp.outer_size = channels;
  hp.inner_size = per_channel;
  hp.vectorize = vectorize;
  hp.block_x = block_x;
  hp.grid_x = 2;
  hp.grid_y = channels;
  hp.grid_reduction = true;
  return hp;
}
HeuristicParams ChannelParams(int64_t n = 8) { return OuterParams(4, n * 64, 4, 64); }

TEST(Codegen, BlocksSharingARowSyncOnlyWithTheirGroup) {
  // grid_x blocks share a channel and exchange their partials behind their
  // group's barrier.
  Graph g = ChannelCentering();
  HeuristicParams hp = ChannelParams();
  auto k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_TRUE(k->cooperative);
  const std::string body = k->source.substr(k->source.find("extern \"C\""));
  EXPECT_NE(body.find("fz_group_sync(bar);"), std::string::npos);
  EXPECT_EQ(body.find("fz_grid_sync(bar);"), std::string::npos);
  // The prelude's group words fit the barrier workspace.
  EXPECT_NE(
      std::string(DevicePrelude()).find(absl::StrCat("#define FZ_GROUP_WORDS ", kMaxBarrierGroups)),
      std::string::npos);
  EXPECT_LE(128 + 32 * kMaxBarrierGroups, kBarrierBytes);
}

TEST(Codegen, TwoPassKernelKeepsItsFirstChunksInSharedMemory) {
  // Multi-pass: the statistics pass copies each thread's first iterations
  // of x to shared memory, as many as smem_bytes holds, and the final pass
  // walks each thread's iterations backwards, the kept ones last, from there.
  // 96 x 64 elements a channel: three iterations of 2 blocks x 64 threads x
  // 4 chunks of 4 floats.
  Graph g = ChannelCentering(96);
  HeuristicParams hp = ChannelParams(96);
  hp.multi_pass = true;
  hp.unroll = 4;
  const int64_t iteration = 4 * 4 * 4 * 64;  // unroll x words of a float4 x threads x 4 bytes
  hp.smem_bytes = 2 * iteration + 100;
  auto k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->dynamic_smem_bytes, 2 * iteration);
  const std::string body = k->source.substr(k->source.find("extern \"C\""));
  EXPECT_NE(body.find("for (i64 c0 = t; active && c0 * 4 < rlen; c0 += (i64)T * 4, ++fz_ki)"),
            std::string::npos);
  EXPECT_NE(body.find("if (fz_ki < 2) {"), std::string::npos);
  EXPECT_NE(
      body.find("((u32*)fz_smem)[((fz_ki * 4 + u) * 4 + 3) * 64 + ty * 64 + tx] = w_in0[u][3];"),
      std::string::npos);
  EXPECT_NE(body.find("for (; active && fz_ki >= 2; --fz_ki)"), std::string::npos);
  EXPECT_NE(body.find("w_in0[3] = ((u32*)fz_smem)[((fz_ki * 4 + u) * 4 + 3) * 64 + ty * 64 + tx];"),
            std::string::npos);
  EXPECT_NE(
      KernelManifestJson(*k, "k.cubin", 64, 0, DefaultTarget()).find("\"smem_bytes\": \"8192\""),
      std::string::npos);

  // More budget than the channel has iterations: all three kept.
  k = WithSmemBudget(g, hp, 10 * iteration);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->dynamic_smem_bytes, 3 * iteration);

  // Less than an iteration of budget: nothing kept, the row walked from its end.
  k = WithSmemBudget(g, hp, iteration - 1);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->dynamic_smem_bytes, 0);
  EXPECT_EQ(k->source.find("fz_smem"), std::string::npos);
  EXPECT_NE(k->source.find("const i64 jj = rlen - 4 - (c0 + (i64)u * T) * 4;"), std::string::npos);
}

// bf16 x - sum(x) over the channels of an [N, C, H, W] `shape` (-1:
// symbolic), reductions over 0, 2 and 3.
Graph ImageChannelCentering(const std::vector<int64_t>& shape) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kBFloat16, shape);
  ValueId xf = *b.Cast(x, DataType::kFloat);
  ValueId s = *b.Reduce(OpKind::kSum, xf, {0, 2, 3}, false);
  ValueId sb = *b.BroadcastInDim(s, g.value(x).shape, {1});
  EXPECT_TRUE(b.AddOutput(*b.Cast(*b.Binary(OpKind::kSub, xf, sb), DataType::kBFloat16)).ok());
  return g;
}

TEST(Codegen, ThreePassKernelReadsItsKeptChunksFirst) {
  // Softmax over 16384 columns, multi-pass (max, sum, final): the max pass
  // keeps, the other two read the kept iterations forwards, then memory.
  HeuristicParams hp = SoftmaxParams(512, 1, 4096);
  hp.kind = SchedulerKind::kInnerReduction;
  hp.multi_pass = true;
  hp.unroll = 4;
  const int64_t iteration = 4 * 4 * 4 * 512;  // unroll x words of 8 bf16 x threads x 4 bytes
  hp.smem_bytes = iteration;                  // of a row's 16384 / (8 x 512 x 4) = 1 iteration
  auto k = GenerateKernel(Softmax(), hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->dynamic_smem_bytes, iteration);
  EXPECT_EQ(Occurrences(k->source, "if (fz_ki < 1) {"), 1u);
  EXPECT_EQ(Occurrences(k->source, "for (; active && fz_ki < 1; ++fz_ki) {"), 2u);
  EXPECT_EQ(
      Occurrences(k->source, "for (i64 c0 = t + fz_ki * (i64)T * 4; active && c0 * 8 < rlen;"), 2u);
  EXPECT_EQ(k->source.find("--fz_ki"), std::string::npos);
}

TEST(Codegen, OuterPersistentGridsAskForTheBlocksASmTheyWereSizedFor) {
  // The multi-pass rounds of the 4-D batch norm: 16 channels in flight, 16
  // blocks of 256 each = two a SM of the H200's 132, so ptxas is asked for
  // two (128 registers); eight blocks each fit one a SM and ask for one.
  Graph g = ImageChannelCentering({256, 64, 56, 56});
  HeuristicParams hp = OuterParams(64, 256 * 56 * 56, 8, 256);
  hp.multi_pass = true;
  hp.unroll = 4;
  hp.grid_x = 16;
  hp.grid_y = 16;
  auto k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("__launch_bounds__(256, 2)"), std::string::npos);
  EXPECT_EQ(k->min_blocks, 2);
  hp.grid_x = 8;
  k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("__launch_bounds__(256, 1)"), std::string::npos);
  // Blocks of 128 threads, 32 a channel: four a SM (the same 128 registers).
  hp.block_x = 128;
  hp.grid_x = 32;
  k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("__launch_bounds__(128, 4)"), std::string::npos);
}

TEST(Codegen, RunTimeExtentsDivideByMultiplyHighInTheVectorPaths) {
  // Symbolic: offsets divide by H and W. The vector paths (vec_ok, which
  // now needs fz_q32) use FzDiv, the element loop the 64-bit division.
  Graph g = ImageChannelCentering({-1, -1, -1, -1});
  HeuristicParams hp = OuterParams(64, 256 * 56 * 56, 8, 512);
  hp.multi_pass = true;
  hp.unroll = 4;
  auto k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& src = k->source;
  EXPECT_NE(src.find("struct FzDiv"), std::string::npos);
  EXPECT_EQ(Occurrences(src, "fz_div_make("), 3u);  // the prelude's and H's and W's
  EXPECT_NE(src.find("&& fz_q32;"), std::string::npos);
  EXPECT_NE(src.find("auto ro64_in0"), std::string::npos);
  // The vector paths add the offset up in 32 bits, where fz_q32 checks that
  // the largest one (the last element of the tensor) fits.
  EXPECT_NE(src.find("auto ro_in0 = [&](i64 j) -> i64 { u32 q = (u32)j; u32 o = 0;"),
            std::string::npos);
  EXPECT_NE(src.find("((i64)(s3) - 1) * (i64)(1) <= 0xffffffffLL;"), std::string::npos);
  EXPECT_NE(src.find("Chunk<16>::ld(w_in0[u], in0 + ro_in0(jj));"), std::string::npos);
  EXPECT_NE(src.find("Chunk<2>::ld(w_in0, in0 + ro64_in0(jj));"), std::string::npos);
  EXPECT_NE(src.find("(VV == 1 ? ro64_out0(j) : ro_out0(j))"), std::string::npos);

  // Static extents: divisions by literals, no FzDiv.
  k = GenerateKernel(ImageChannelCentering({16, 64, 56, 56}), hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->source.find("FzDiv"), std::string::npos);
  EXPECT_EQ(k->source.find("ro64_"), std::string::npos);

  // Pointwise: the row is the whole tensor, which may pass 2^32 elements,
  // so its vector path keeps the 64-bit division (x + bias, symbolic).
  Graph pw;
  GraphBuilder b(&pw);
  ValueId x = *b.DefineTensor("x", DataType::kBFloat16, {-1, -1});
  ValueId bias = *b.DefineTensor("bias", DataType::kBFloat16, {-1});
  ValueId sum =
      *b.Binary(OpKind::kAdd, *b.Cast(x, DataType::kFloat),
                *b.BroadcastInDim(*b.Cast(bias, DataType::kFloat), pw.value(x).shape, {1}));
  ASSERT_TRUE(b.AddOutput(*b.Cast(sum, DataType::kBFloat16)).ok());
  HeuristicParams pp;
  pp.kind = SchedulerKind::kPointwise;
  pp.vectorize = 8;
  pp.block_x = 128;
  pp.grid_x = 1024;
  pp.unroll = 4;
  k = GenerateKernel(pw, pp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->source.find("FzDiv"), std::string::npos);
  EXPECT_NE(k->source.find("q % (i64)("), std::string::npos);
}

// ScaleAndColumnSum as an inner-outer persistent kernel of 64-thread
// blocks, float4 vectors.
HeuristicParams InnerOuterParams(int64_t grid_x) {
  HeuristicParams hp;
  hp.kind = SchedulerKind::kInnerOuterPersistent;
  hp.vectorize = 4;
  hp.block_x = 64;
  hp.grid_x = grid_x;
  return hp;
}

// The co-residency bound of a cooperative grid comes from the target: 64
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
  auto two = GenerateKernel(Softmax(), SoftmaxParams(256, 2, 100), CodegenOptions{});
  auto one = GenerateKernel(Softmax(), SoftmaxParams(256, 2, 100), quarter_registers);
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
  auto outer = GenerateKernel(ImageChannelCentering({256, 64, 56, 56}), hp, more_sms);
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_EQ(outer->min_blocks, 1);
}

TEST(Codegen, ColumnReductionIsCooperativeWithWorkspace) {
  Graph g = ScaleAndColumnSum();
  HeuristicParams hp = InnerOuterParams(1000);
  auto k = GenerateKernel(g, hp, CodegenOptions{});
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
  k = GenerateKernel(g, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("for (int q = tid; q < 64; q += 32)"), std::string::npos);
  EXPECT_NE(k->source.find("__shfl_xor_sync(0xffffffffu, s0.x, 16)"), std::string::npos);
  // The partial rows are stored to stay in L2 until the epilogue reads them
  // (float4 stores when the vector width is a multiple of 4).
  EXPECT_NE(k->source.find("l += 4) fz_st_partial(wcol + "), std::string::npos);
  HeuristicParams narrow = hp;
  narrow.vectorize = 2;
  auto k2 = GenerateKernel(g, narrow, CodegenOptions{});
  ASSERT_TRUE(k2.ok()) << k2.status();
  EXPECT_EQ(k2->source.find("fz_st_partial(wcol + "), std::string::npos);
  // Persistent: the static row order. Multi-pass: row groups from the
  // counter in the barrier words, zeroed again after the grid barrier.
  EXPECT_EQ(k->source.find("atomicAdd(bar + 1, 1u)"), std::string::npos);
  EXPECT_NE(k->source.find("for (i64 it = 0; it < iters; ++it)"), std::string::npos);
  hp.multi_pass = true;
  k = GenerateKernel(g, hp, CodegenOptions{});
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
  auto k = GenerateKernel(g, hp, o);
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
  auto wide = GenerateKernel(g, hp, o);
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_NE(wide->source.find("rg < rows"), std::string::npos);
  EXPECT_NE(wide->source.find("jj < rlen"), std::string::npos);
}

}  // namespace
}  // namespace fusiond
