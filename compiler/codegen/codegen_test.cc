// Code generation over hand-built graphs: the generated source's parameters,
// specialization, kept chunks and run-time divisions.
#include "compiler/codegen/codegen.h"

#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen_test_graphs.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/codegen/manifest.h"
#include "compiler/codegen/prelude.h"
#include "compiler/ir/builder.h"
#include "compiler/scheduler/target.h"

namespace fusiond {
namespace {

using namespace codegen_test;  // NOLINT: the shared test graphs

TEST(Codegen, OnlyMultiPassKernelsMergeVarInOnePass) {
  Graph g = Normalize();
  HeuristicParams hp = SoftmaxParams(256, 4, 2048);  // rows in registers
  const std::vector<std::vector<int64_t>> shapes = {{4096, 16384}};
  auto persistent = GenerateKernel(g, Decided(g, hp, shapes), CodegenOptions{});
  ASSERT_TRUE(persistent.ok()) << persistent.status();
  EXPECT_EQ(persistent->source.find("fz_warp_chan(wn"), std::string::npos);
  hp.kind = SchedulerKind::kInnerReduction;
  hp.multi_pass = true;
  hp.persistent_batch = 1;
  hp.unroll = 4;
  auto multi = GenerateKernel(g, Decided(g, hp, shapes), CodegenOptions{});
  ASSERT_TRUE(multi.ok()) << multi.status();
  EXPECT_NE(multi->source.find("fz_warp_chan(wn"), std::string::npos);
  // The count and the plain sum (the mean's) take a third and a fourth
  // shared-memory entry per warp.
  EXPECT_NE(multi->source.find("fz_red[2][1][4][8]"), std::string::npos);
  // One streamed input, re-read by the last pass: streaming stores keep the
  // output from evicting it.
  EXPECT_NE(multi->source.find("::stcs(out0"), std::string::npos);
}

TEST(Codegen, SymbolicKernelTakesSizesAsParameters) {
  Graph g = Softmax();
  HeuristicParams hp = SoftmaxParams(256, 2, 100);
  CodegenOptions o;
  o.kernel_name = "softmax_k";
  auto k = GenerateKernel(g, Decided(g, hp, {{4096, 16384}}), o);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("extern \"C\" __global__ void __launch_bounds__(256, 2) softmax_k("),
            std::string::npos);
  // Small row buffers, 256 threads: two blocks per SM; 512 threads: one.
  hp.block_x = 512;
  hp.persistent_batch = 1;
  auto k512 = GenerateKernel(g, Decided(g, hp, {{4096, 16384}}), o);
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
  auto k = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("__launch_bounds__(256, 2)"), std::string::npos);
  EXPECT_EQ(k->min_blocks, 2);
  hp.grid_x = 8;
  k = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("__launch_bounds__(256, 1)"), std::string::npos);
  // Blocks of 128 threads, 32 a channel: four a SM (the same 128 registers).
  hp.block_x = 128;
  hp.grid_x = 32;
  k = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
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

}  // namespace
}  // namespace fusiond
