// Rows split over a thread-block cluster (HeuristicParams::cluster_rows,
// generator_cluster.cc): the blocks of a row combine each stage's totals
// through distributed shared memory, in rank order, instead of the
// workspace and a group barrier. Without a GPU: the kernel text, the launch
// (cooperative only for column reductions), the refusals, and sm_90 cubins
// without spills for the norm backward and forward of the corpus; and the
// staged layernorm forward of the same GPU variants. Their results are
// checked on the GPU (bench/gpu/variants/norm36.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/codegen_test_graphs.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/target.h"
#include "tests/random/random_graph.h"

#ifndef FUSIOND_CORPUS_DIR
#define FUSIOND_CORPUS_DIR "tests/corpus/fusions"
#endif

namespace fusiond {
namespace {

using namespace codegen_test;  // NOLINT: the shared test graphs

std::string Body(const GeneratedKernel& k) {
  return k.source.substr(k.source.find("extern \"C\""));
}

TEST(ClusterRows, PrintedAndHashedOnlyWhenSet) {
  HeuristicParams hp = InnerOuterParams(16);
  const std::string plain = hp.ToString();
  EXPECT_EQ(plain.find("cluster_rows"), std::string::npos);
  hp.cluster_rows = true;
  EXPECT_NE(hp.ToString().find(" cluster_rows=true"), std::string::npos);
  EXPECT_NE(hp.ToJson().find("\"cluster_rows\":true"), std::string::npos);
  HeuristicParams other = InnerOuterParams(16);
  EXPECT_NE(hp.Hash(), other.Hash());
  EXPECT_FALSE(hp == other);
}

// Column reductions keep the cooperative launch (the epilogue's grid
// barrier); the row's totals cross the cluster, not the workspace.
TEST(ClusterRows, InnerOuterKernelCombinesTotalsThroughTheCluster) {
  Graph g = ScaleAndColumnSum();
  HeuristicParams hp = InnerOuterParams(16);
  hp.grid_y = 2;
  auto split = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_NE(Body(*split).find("fz_group_sync(bar);"), std::string::npos);
  hp.cluster_rows = true;
  auto k = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string body = Body(*k);
  EXPECT_TRUE(k->cooperative);
  EXPECT_EQ(k->cluster_x, 1);  // the cluster runs along y: the grid needs no rounding
  EXPECT_NE(body.find("__cluster_dims__(1, 2, 1)"), std::string::npos);
  EXPECT_EQ(body.find("fz_group_sync(bar);"), std::string::npos);
  EXPECT_NE(body.find("fz_cr[0] = make_float4(acc0, 0.f, 0.f, 0.f);"), std::string::npos);
  EXPECT_NE(body.find("acc0 = fz_dsmem_ld4(fz_cr + 0, 0).x;"), std::string::npos);
  EXPECT_NE(body.find("acc0 = fz_comb<0, float>(acc0, fz_dsmem_ld4(fz_cr + 0, 1).x);"),
            std::string::npos);
  EXPECT_EQ(body.find("fz_dsmem_ld4(fz_cr + 0, 2)"), std::string::npos);
  // One barrier a stage and one before the blocks leave.
  EXPECT_EQ(Occurrences(body, "fz_cluster_sync();"), 2u);
  EXPECT_EQ(LaunchGrid(*k, 48, 0, WithSms(132))[1], "2");
}

// Two stages (var_mean's mean, then the squared deviations), four blocks a
// row: no column reductions, so no cooperative launch and no workspace.
TEST(ClusterRows, InnerPersistentKernelNeedsNoCooperativeLaunch) {
  Graph g = Normalize();
  HeuristicParams hp = SoftmaxParams(256, 1, 528);
  hp.outer_size = 2048;
  hp.inner_size = 8192;
  hp.grid_y = 4;
  hp.cluster_rows = true;
  auto k = GenerateKernel(g, Decided(g, hp, {{2048, 8192}}), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string body = Body(*k);
  EXPECT_FALSE(k->cooperative);
  EXPECT_FALSE(k->needs_workspace);
  EXPECT_NE(body.find("__cluster_dims__(1, 4, 1)"), std::string::npos);
  EXPECT_EQ(body.find("fz_group_sync"), std::string::npos);
  EXPECT_EQ(body.find("ws_row"), std::string::npos);
  EXPECT_NE(body.find("fz_dsmem_ld4(fz_cr + 0, 3)"), std::string::npos);
  EXPECT_EQ(Occurrences(body, "fz_cluster_sync();"), 3u);
  EXPECT_NE(body.find("fz_crow[2][1][1]"), std::string::npos);
}

// Double accumulators cross as their two 32-bit halves, bit for bit.
TEST(ClusterRows, DoubleTotalsCrossAsTwoWords) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kDouble, {64, 1024});
  ValueId s = *b.Reduce(OpKind::kSum, x, {1}, false);
  ValueId y = *b.Binary(OpKind::kDiv, x, *b.BroadcastInDim(s, g.value(x).shape, {0}));
  ASSERT_TRUE(b.AddOutput(y).ok());
  HeuristicParams hp = SoftmaxParams(64, 4, 64);
  hp.outer_size = 64;
  hp.inner_size = 1024;
  hp.vectorize = 2;
  hp.grid_y = 2;
  hp.cluster_rows = true;
  auto k = GenerateKernel(g, Decided(g, hp), CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(k->source.find("__int_as_float((int)(__double_as_longlong(acc0) >> 32))"),
            std::string::npos);
  EXPECT_NE(k->source.find("__longlong_as_double(((long long)(unsigned)__float_as_int("),
            std::string::npos);
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto bin = CompileWithNvrtc(k->source, k->name, NvrtcOptions{});
  ASSERT_TRUE(bin.ok()) << bin.status();
  EXPECT_EQ(bin->spill_bytes, 0);
}

TEST(ClusterRows, WhatClustersDoNotSupportIsRefused) {
  Graph g = ScaleAndColumnSum();
  HeuristicParams hp = InnerOuterParams(16);
  hp.grid_y = 2;
  hp.cluster_rows = true;
  for (auto bad :
       {std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.grid_y = 1; }),
        std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.grid_y = 3; }),
        std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.grid_y = 16; }),
        std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.cluster_x = 2; }),
        std::function<void(HeuristicParams&)>([](HeuristicParams& p) { p.multi_pass = true; })}) {
    HeuristicParams b = hp;
    bad(b);
    auto r = GenerateKernel(g, b, CodegenOptions{});
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << b.ToString();
  }
  CodegenOptions a100;
  a100.target = *LookupTarget("sm_80");
  auto r = GenerateKernel(g, hp, a100);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("sm_80"), std::string::npos) << r.status();
}

// The corpus's norm backward (register rows; layernorm staged) and
// layernorm forward split over clusters of two and four, as the GPU
// variants run them: sm_90 cubins without spills.
TEST(ClusterRows, CorpusNormsCompileWithoutSpills) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  struct Case {
    const char* file;
    std::function<void(HeuristicParams&)> set;
  };
  const Case cases[] = {
      {"rmsnorm_bwd_thunder",
       [](HeuristicParams& p) { p.block_x = 256, p.grid_y = 2, p.grid_x = 132; }},
      {"rmsnorm_bwd_manual",
       [](HeuristicParams& p) { p.block_x = 128, p.grid_y = 4, p.grid_x = 132; }},
      {"layernorm_bwd_thunder",
       [](HeuristicParams& p) {
         p.block_x = 256, p.grid_y = 2, p.grid_x = 132, p.cluster_x = 1, p.smem_bytes = 65536;
       }},
      {"layernorm_fwd",
       [](HeuristicParams& p) { p.block_x = 256, p.persistent_batch = 2, p.grid_y = 2; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    auto parsed = ParseReproFile(absl::StrCat(FUSIOND_CORPUS_DIR, "/", c.file, ".py"));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    CompileOptions o;
    o.arch = "sm_90";
    o.generate_code = false;
    auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->segments.size(), 1u);
    const SegmentResult& seg = r->segments[0];
    HeuristicParams hp = seg.params;
    c.set(hp);
    hp.cluster_rows = true;
    SizeBinding binding{seg.symbol_sizes};
    DecideKernelForm(AnalyzeFusion(seg.graph, binding), DefaultTarget(), &hp);
    SegmentCompileOptions so;
    so.kernel_name = absl::StrCat("fz_", c.file);
    so.symbol_sizes = seg.symbol_sizes;
    auto k = CompileSegment(seg.graph, hp, so);
    ASSERT_TRUE(k.ok()) << k.status() << " " << hp.ToString();
    EXPECT_NE(k->cuda_source.find("__cluster_dims__(1, "), std::string::npos);
    EXPECT_FALSE(k->binary.empty());
    EXPECT_EQ(k->spill_bytes, 0) << hp.ToString();
  }
}

// Random graphs' inner persistent and inner-outer segments, their rows split
// over a cluster of two (half the threads a block): the kernel compiles
// (every dtype's totals cross the cluster), or code generation refuses it
// with InvalidArgument or Unimplemented, never Internal.
TEST(ClusterRows, RandomInnerSegmentsCompile) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const char* env = std::getenv("FUSIOND_RANDOM_CODEGEN_SEEDS");
  const int seeds = env ? std::atoi(env) : 16;
  int clustered = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(3000 + seed);
    CompileOptions o;
    o.generate_code = false;
    auto r = CompileFusion(c.graph, c.input_shapes, o);
    if (!r.ok()) continue;
    for (const SegmentResult& s : r->segments) {
      if ((s.kind != SchedulerKind::kInnerPersistent &&
           s.kind != SchedulerKind::kInnerOuterPersistent) ||
          s.params.multi_pass || s.params.grid_y > 1)
        continue;
      if (!GenerateKernel(s.graph, s.params, CodegenOptions{}).ok()) continue;
      HeuristicParams hp = s.params;
      hp.block_x = std::max(32, hp.block_x / 2);
      hp.grid_y = 2;
      hp.cluster_x = 1;
      hp.cluster_rows = true;
      hp.exact_tiling = false;
      auto k = GenerateKernel(s.graph, hp, CodegenOptions{});
      if (!k.ok()) {
        EXPECT_TRUE(k.status().code() == absl::StatusCode::kInvalidArgument ||
                    k.status().code() == absl::StatusCode::kUnimplemented)
            << "seed " << 3000 + seed << ": " << k.status();
        continue;
      }
      auto bin = CompileWithNvrtc(k->source, k->name, NvrtcOptions{});
      EXPECT_TRUE(bin.ok()) << "seed " << 3000 + seed << ": " << bin.status() << "\n"
                            << PrintGraph(s.graph);
      clustered += k->source.find("fz_dsmem_ld4(fz_cr") != std::string::npos;
    }
  }
  EXPECT_GT(clustered, 0) << "no random graph took the cluster split; widen the seeds";
  std::printf("%d kernels with rows split over a cluster compiled\n", clustered);
}

// Staged rows of a kernel with two 16-bit column operands (the layernorm
// forward's weight and bias) at two chunks a thread: both are widened to
// float in shared memory, each in a scope of its own (generator_staging.cc).
TEST(StagedColumns, TwoFloatColumnsCompile) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto parsed = ParseReproFile(absl::StrCat(FUSIOND_CORPUS_DIR, "/layernorm_fwd.py"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.arch = "sm_90";
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 1u);
  const SegmentResult& seg = r->segments[0];
  HeuristicParams hp = seg.params;
  hp.block_x = 512;
  hp.persistent_batch = 2;
  hp.smem_buffer = true;
  hp.smem_bytes = 131072;  // four stages of 16 KiB and two float columns of 32 KiB
  hp.grid_x = 132;
  SizeBinding binding{seg.symbol_sizes};
  DecideKernelForm(AnalyzeFusion(seg.graph, binding), DefaultTarget(), &hp);
  SegmentCompileOptions so;
  so.kernel_name = "fz_layernorm_fwd";
  so.symbol_sizes = seg.symbol_sizes;
  auto k = CompileSegment(seg.graph, hp, so);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(Occurrences(k->cuda_source, "u32 cw[4], fw[8];"), 2u);
  EXPECT_EQ(k->spill_bytes, 0);
}

// trust_alignment: a specialized kernel's alignment test is `true` (the
// runtimes keep the manifest's align); a general kernel keeps its test.
TEST(TrustAlignment, OnlySpecializedKernelsDropTheAlignmentTest) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto parsed = ParseReproFile(absl::StrCat(FUSIOND_CORPUS_DIR, "/softmax_bwd.py"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.arch = "sm_90";
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 1u);
  const SegmentResult& seg = r->segments[0];
  HeuristicParams hp = seg.params;
  EXPECT_FALSE(hp.trust_alignment);  // not the pipeline's choice
  hp.trust_alignment = true;
  EXPECT_NE(hp.ToString().find(" trust_alignment=true"), std::string::npos);
  for (bool specialize : {true, false}) {
    SegmentCompileOptions so;
    so.kernel_name = "fz_softmax_bwd";
    so.symbol_sizes = seg.symbol_sizes;
    so.specialize = specialize;
    auto k = CompileSegment(seg.graph, hp, so);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ(k->cuda_source.find("const bool vec_ok = true;") != std::string::npos, specialize);
    EXPECT_EQ(k->spill_bytes, 0);
  }
}

}  // namespace
}  // namespace fusiond
