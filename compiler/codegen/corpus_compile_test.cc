// The CI check of issue 4: every corpus fusion goes through the whole
// pipeline (passes, segmenter, schedulers, codegen, NVRTC) to sm_90 cubins,
// and ptxas reports no spills. Runs without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/codegen/manifest.h"
#include "compiler/frontend/frontend.h"
#include "compiler/nvrtc/nvrtc_cache.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/kernel_heuristics.h"
#include "compiler/util/hash.h"

namespace fusiond {
namespace {

class CorpusCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusCompile, CompilesToSm90CubinsWithoutSpills) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const std::string path = std::string(FUSIOND_CORPUS_DIR) + "/" + GetParam() + ".py";
  auto parsed = ParseReproFile(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.arch = "sm_90";
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->segments.empty());
  for (const SegmentResult& s : r->segments) {
    ASSERT_TRUE(s.kernel.has_value());
    const KernelArtifact& k = *s.kernel;
    EXPECT_FALSE(k.is_ptx);
    EXPECT_EQ(k.arch, "sm_90");
    ASSERT_GE(k.binary.size(), 4u);
    EXPECT_EQ(k.binary.substr(0, 4), std::string("\x7f"
                                                 "ELF",
                                                 4));
    EXPECT_EQ(k.spill_bytes, 0) << k.kernel_name << " " << s.params.ToString();
    EXPECT_GT(k.registers, 0);
    EXPECT_LE(k.registers, 255);
    EXPECT_NE(k.manifest_json.find("\"name\": \"" + k.kernel_name + "\""), std::string::npos);
  }
  const std::string m = FusionManifestJson(*r, GetParam());
  EXPECT_NE(m.find("\"manifest_version\": 3"), std::string::npos);
  EXPECT_NE(m.find("\"kernels\": ["), std::string::npos);
  EXPECT_EQ(m.find("\"workspace\": {"), std::string::npos);  // lifted to workspaces[]
  EXPECT_EQ(m.find("\"workspace2\": {"), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / ("fz_cg_" + GetParam());
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteArtifacts(*r, dir.string(), GetParam()).ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "manifest.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / (r->segments[0].kernel->kernel_name + ".cubin")));
  std::filesystem::remove_all(dir);
}

// The single segment of corpus fusion `stem`, scheduled (no code).
void ScheduleCorpusFusion(const std::string& stem, CompileResult* out) {
  auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/" + stem + ".py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 1u);
  *out = *std::move(r);
}

// Corpus fusion `stem`'s segment compiled with its heuristics edited.
void CompileEditedCorpusSegment(const std::string& stem,
                                const std::function<void(HeuristicParams&)>& edit,
                                KernelArtifact* out) {
  CompileResult r;
  ASSERT_NO_FATAL_FAILURE(ScheduleCorpusFusion(stem, &r));
  HeuristicParams hp = r.segments[0].params;
  edit(hp);
  auto k = CompileSegment(r.segments[0].graph, hp, SegmentCompileOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  *out = *std::move(k);
}

// Corpus fusion `stem` through the whole pipeline (sm_90) at other input
// sizes than its file's; one segment.
void CompileCorpusAt(const std::string& stem, const std::vector<std::vector<int64_t>>& shapes,
                     CompileResult* out) {
  auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/" + stem + ".py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.arch = "sm_90";
  auto r = CompileFusion(parsed->graph, shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 1u);
  *out = *std::move(r);
}

// The daemon's start-up compile: the prelude with a one-line kernel.
// The same with --general (CompileOptions::general_kernels): the kernels
// that keep their fallback loops compile without spills too, and their
// manifests require nothing.
TEST_P(CorpusCompile, GeneralKernelsCompileWithoutSpills) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/" + GetParam() + ".py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.general_kernels = true;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const SegmentResult& s : r->segments) {
    ASSERT_TRUE(s.kernel.has_value());
    EXPECT_EQ(s.kernel->spill_bytes, 0) << s.kernel->kernel_name << " " << s.params.ToString();
    EXPECT_EQ(s.kernel->manifest_json.find("\"requires\""), std::string::npos)
        << s.kernel->manifest_json;
    EXPECT_EQ(s.kernel->manifest_json.find("\"align\""), std::string::npos)
        << s.kernel->manifest_json;
  }
}

TEST(CompileSegment, WarmUpCompilesThePrelude) {
  auto us = WarmUpNvrtc("sm_90");
  if (absl::IsUnavailable(us.status())) GTEST_SKIP() << "no NVRTC in this build";
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_GT(*us, 0);
  EXPECT_EQ(WarmUpNvrtc("gfx90a").status().code(), absl::StatusCode::kInvalidArgument);
}

// rmsnorm forward as 128 threads x 8 vectors: the register estimate lets the
// kernel ask for four blocks per SM, at which ptxas spills; CompileSegment
// then compiles it again asking for two.
TEST(CompileSegment, SpillingLaunchBoundsAreRelaxed) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  KernelArtifact k;
  ASSERT_NO_FATAL_FAILURE(CompileEditedCorpusSegment(
      "rmsnorm_fwd",
      [](HeuristicParams& hp) {
        hp.block_x = 128;
        hp.persistent_batch = 8;
        hp.grid_x = 2048;
      },
      &k));
  EXPECT_EQ(k.spill_bytes, 0);
  EXPECT_NE(k.cuda_source.find("__launch_bounds__(128, 2)"), std::string::npos);
}

// Layernorm backward with its column partials summed over clusters of four
// blocks (HeuristicParams::cluster_x): the DSMEM code compiles for sm_90.
TEST(CompileSegment, ClusterKernelCompilesForSm90) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  KernelArtifact k;
  ASSERT_NO_FATAL_FAILURE(CompileEditedCorpusSegment(
      "layernorm_bwd_thunder", [](HeuristicParams& hp) { hp.cluster_x = 4; }, &k));
  EXPECT_EQ(k.spill_bytes, 0);
  EXPECT_NE(k.cuda_source.find("__cluster_dims__(4, 1, 1)"), std::string::npos);
  EXPECT_NE(k.manifest_json.find("* 4)"), std::string::npos) << k.manifest_json;  // whole clusters
}

// reread_rows (rows loaded again evict-first for the output pass): the
// cache-policy loads compile for sm_90 at 16-, 8- and 4-byte chunks, for a
// row kernel and a norm backward, without spills.
TEST(CompileSegment, RereadRowsCompileForSm90) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  for (const char* stem : {"softmax_bwd", "rmsnorm_bwd_thunder"}) {
    for (int v : {8, 4, 2}) {
      KernelArtifact k;
      ASSERT_NO_FATAL_FAILURE(CompileEditedCorpusSegment(
          stem,
          [v](HeuristicParams& hp) {
            // The same row width: more vectors a thread while they stay
            // within 16, else more threads.
            const int scale = hp.vectorize / v;
            if (hp.persistent_batch * scale <= 16) {
              hp.persistent_batch *= scale;
            } else {
              hp.block_x *= scale;
            }
            hp.vectorize = v;
            hp.reread_rows = true;
          },
          &k));
      EXPECT_EQ(k.spill_bytes, 0) << stem << " vectorize " << v;
      EXPECT_NE(k.cuda_source.find(absl::StrCat("fz_ld_done<", 2 * v, ">(&pb_")), std::string::npos)
          << stem << " vectorize " << v;
    }
  }
}

// Exact kernels (a block a row, no row loop, warp 0 combining the
// partials): the pipeline's softmax backward at 16384x4096, 8192x8192 and
// 4096x16384, and with reread_rows forced, forwards whose stages reduce
// with max, sum and a second moment and read column operands; all compile
// for sm_90 without spills.
TEST(CompileSegment, ExactRereadKernelsCompileForSm90) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  for (int64_t width : {4096, 8192, 16384}) {
    const int64_t rows = 65536 * 1024 / width;
    CompileResult r;
    ASSERT_NO_FATAL_FAILURE(CompileCorpusAt("softmax_bwd", {{rows, width}, {rows, width}}, &r));
    const HeuristicParams& hp = r.segments[0].params;
    EXPECT_TRUE(hp.reread_rows) << hp.ToString();
    ASSERT_TRUE(r.segments[0].kernel.has_value());
    const KernelArtifact& k = *r.segments[0].kernel;
    EXPECT_EQ(k.spill_bytes, 0) << width;
    EXPECT_EQ(k.cuda_source.find("rg < rows"), std::string::npos) << width;
    // Rows of 16384 at 1024 threads, two blocks a SM.
    if (width == 16384) {
      EXPECT_NE(k.cuda_source.find("__launch_bounds__(1024, 2)"), std::string::npos);
    }
    EXPECT_NE(k.manifest_json.find("min(2147483647, max(1, ceil_div(s0, 1)))"), std::string::npos)
        << k.manifest_json;
  }
  // Specialized to the corpus sizes (softmax forward's 4096x16384 as
  // 16384x4096: three chunks a thread at most).
  for (const char* stem : {"softmax_fwd", "layernorm_fwd", "rmsnorm_fwd"}) {
    CompileResult r;
    ASSERT_NO_FATAL_FAILURE(ScheduleCorpusFusion(stem, &r));
    HeuristicParams hp = r.segments[0].params;
    SegmentCompileOptions o;
    o.symbol_sizes = r.segments[0].symbol_sizes;
    if (hp.inner_size > 12288) {
      std::swap(hp.inner_size, hp.outer_size);
      for (int64_t& n : o.symbol_sizes) n = n == 16384 ? 4096 : n == 4096 ? 16384 : n;
    }
    hp.block_x = 512;
    hp.block_y = 1;
    hp.rows_per_block = 1;
    hp.vectorize = 8;
    hp.persistent_batch = static_cast<int>(hp.inner_size / (512 * 8));
    hp.grid_x = hp.outer_size;
    hp.smem_columns = false;
    hp.reread_rows = true;
    // Code generation's choices (the exact form among them) follow the edit.
    DecideKernelForm(AnalyzeFusion(r.segments[0].graph, SizeBinding{o.symbol_sizes}),
                     DefaultTarget(), &hp);
    auto k = CompileSegment(r.segments[0].graph, hp, o);
    ASSERT_TRUE(k.ok()) << stem << ": " << k.status();
    EXPECT_EQ(k->spill_bytes, 0) << stem;
    const KernelArtifact& k2 = *k;
    EXPECT_EQ(k2.cuda_source.find("jj < rlen"), std::string::npos) << stem;
    EXPECT_EQ(k2.cuda_source.find("rg < rows"), std::string::npos) << stem;
    EXPECT_NE(k2.cuda_source.find("if (tx < 32) {"), std::string::npos) << stem;
  }
}

// Rmsnorm backward at 512x65536: rows too wide for one block run split over
// eight blocks (SplitWideRows), staged, one kernel without spills.
TEST(CompileSegment, WideNormBackwardSplitsRowsOverBlocks) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  CompileResult r;
  ASSERT_NO_FATAL_FAILURE(
      CompileCorpusAt("rmsnorm_bwd_manual", {{512, 65536}, {512, 1}, {512, 65536}, {65536}}, &r));
  const HeuristicParams& hp = r.segments[0].params;
  EXPECT_EQ(hp.grid_y, 8) << hp.ToString();
  EXPECT_FALSE(hp.multi_pass);
  EXPECT_TRUE(hp.smem_buffer);
  ASSERT_TRUE(r.segments[0].kernel.has_value());
  EXPECT_EQ(r.segments[0].kernel->spill_bytes, 0);
  // Two blocks per SM planned (grid_x x grid_y = 2 x 132), and asked of ptxas.
  EXPECT_EQ(hp.grid_x * hp.grid_y, 2 * 132);
  EXPECT_NE(r.segments[0].kernel->cuda_source.find("__launch_bounds__(256, 2)"), std::string::npos);
  EXPECT_LE(r.segments[0].kernel->registers, 128);
}

// Rmsnorm forward at 16384x4096: two warps a row, two rows a block, the
// weight kept in shared memory (HeuristicParams::smem_columns) so the row
// batch of eight stays in registers without spills.
TEST(CompileSegment, RmsnormForwardKeepsItsWeightInSharedMemory) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  CompileResult r;
  ASSERT_NO_FATAL_FAILURE(CompileCorpusAt("rmsnorm_fwd", {{16384, 4096}, {4096}}, &r));
  const HeuristicParams& hp = r.segments[0].params;
  EXPECT_TRUE(hp.smem_columns) << hp.ToString();
  EXPECT_EQ(hp.block_x, 64);
  ASSERT_TRUE(r.segments[0].kernel.has_value());
  const KernelArtifact& k = *r.segments[0].kernel;
  EXPECT_EQ(k.spill_bytes, 0);
  EXPECT_LT(k.registers, 128);
  EXPECT_GE(k.static_smem_bytes, 8192);  // the weight: 4096 bf16
  EXPECT_NE(k.cuda_source.find("u32 cs_in1[2048]"), std::string::npos);
}

// Layernorm forward at 16384x4096: rmsnorm forward's layout with the weight
// and the bias in shared memory, and six blocks of 128 threads a SM asked of
// ptxas, which it meets without spills.
TEST(CompileSegment, LayernormForwardAsksForSixBlocksWithBothColumnsInSharedMemory) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  CompileResult r;
  ASSERT_NO_FATAL_FAILURE(CompileCorpusAt("layernorm_fwd", {{16384, 4096}, {4096}, {4096}}, &r));
  const HeuristicParams& hp = r.segments[0].params;
  EXPECT_TRUE(hp.smem_columns) << hp.ToString();
  EXPECT_EQ(hp.block_x * hp.block_y, 128);
  ASSERT_TRUE(r.segments[0].kernel.has_value());
  const KernelArtifact& k = *r.segments[0].kernel;
  EXPECT_NE(k.cuda_source.find("__launch_bounds__(128, 6)"), std::string::npos);
  EXPECT_EQ(k.spill_bytes, 0);
  EXPECT_LE(k.registers, 85);             // 65536 / (6 x 128)
  EXPECT_GE(k.static_smem_bytes, 16384);  // weight and bias: 2 x 4096 bf16
}

// Softmax forward at its file's 4096x16384: 256 threads a row, eight
// vectors each, and three blocks a SM asked of ptxas (no prefetch buffer,
// kRegisterMargin to spare), which it meets without spills.
TEST(CompileSegment, WideSoftmaxRowsRunThreeBlocksOf256) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  CompileResult r;
  ASSERT_NO_FATAL_FAILURE(CompileCorpusAt("softmax_fwd", {{4096, 16384}}, &r));
  const HeuristicParams& hp = r.segments[0].params;
  EXPECT_EQ(hp.block_x, 256) << hp.ToString();
  EXPECT_EQ(hp.persistent_batch, 8);
  ASSERT_TRUE(r.segments[0].kernel.has_value());
  const KernelArtifact& k = *r.segments[0].kernel;
  EXPECT_NE(k.cuda_source.find("__launch_bounds__(256, 3)"), std::string::npos);
  EXPECT_EQ(k.spill_bytes, 0);
  EXPECT_LE(k.registers, 85);  // 65536 / (3 x 256)
}

// The 4-D batch norm backward (bench/gpu/fusions; 205 MB of x and dy): the
// multi-pass rounds of 16 channels, 16 blocks of 256 threads a channel, two
// a SM asked of ptxas, which meets them without spills, and a grid of
// 16 x 16 that the launch keeps (LaunchGrid's cap from the 128 registers).
TEST(CompileSegment, FourDBatchNormRunsTwoBlocksASmWithoutSpills) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  for (const char* stem : {"batchnorm_bwd_4d", "batchnorm_bwd_4d_symbolic"}) {
    auto parsed = ParseReproFile(std::string(FUSIOND_BENCH_FUSIONS_DIR) + "/" + stem + ".py");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto r = CompileFusion(parsed->graph, parsed->input_shapes, CompileOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->segments.size(), 1u) << stem;
    const HeuristicParams& hp = r->segments[0].params;
    EXPECT_TRUE(hp.multi_pass) << hp.ToString();
    EXPECT_EQ(hp.block_x * hp.block_y, 256);
    EXPECT_EQ(hp.grid_y, 16);  // channels a round
    EXPECT_EQ(hp.grid_x, 16);  // blocks a channel
    ASSERT_TRUE(r->segments[0].kernel.has_value());
    const KernelArtifact& k = *r->segments[0].kernel;
    EXPECT_NE(k.cuda_source.find("__launch_bounds__(256, 2)"), std::string::npos) << stem;
    EXPECT_EQ(k.spill_bytes, 0) << stem;
    EXPECT_LE(k.registers, 128) << stem;
    EXPECT_NE(k.manifest_json.find("\"grid\": [\"min(16, "), std::string::npos) << k.manifest_json;
    EXPECT_NE(k.manifest_json.find("\", \"16\", \"1\"]"), std::string::npos) << k.manifest_json;
  }
}

// Layernorm backward's weight kept in shared memory as float where a thread
// keeps two chunks a row (kMaxFloatColumnBatch: 2048x8192 512 x 2, 16384x4096
// 256 x 2), as bf16 at 4096x16384 (512 x 4); the general kernel's fallback
// loops read the same body from packed words (fz_elem's other overload).
TEST(CompileSegment, LayerNormBackwardKeepsItsWeightAsFloatAtTwoChunksAThread) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto parsed =
      ParseReproFile(std::string(FUSIOND_BENCH_FUSIONS_DIR) + "/layernorm_bwd_symbolic.py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  for (auto [rows, width, as_float] :
       {std::tuple{2048, 8192, true}, {16384, 4096, true}, {4096, 16384, false}}) {
    for (bool general : {false, true}) {
      CompileOptions o;
      o.general_kernels = general;
      auto r = CompileFusion(parsed->graph,
                             {{rows, width}, {rows, width}, {width}, {rows, 1}, {rows, 1}}, o);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->segments.size(), 1u);
      const HeuristicParams& hp = r->segments[0].params;
      ASSERT_TRUE(hp.smem_buffer) << hp.ToString();
      ASSERT_TRUE(r->segments[0].kernel.has_value());
      const KernelArtifact& k = *r->segments[0].kernel;
      const std::string where = absl::StrCat(rows, "x", width, general ? " general" : "");
      EXPECT_EQ(k.cuda_source.find("(const float*)sw_in2") != std::string::npos, as_float) << where;
      EXPECT_EQ(k.cuda_source.find("fz_elem<5>(w_in2, l)") != std::string::npos, as_float) << where;
      // The float copy takes four bytes a column beside two rows of x and dy.
      const int64_t weight = int64_t{as_float ? 4 : 2} * width;
      EXPECT_NE(k.manifest_json.find(
                    absl::StrCat("\"smem_bytes\": \"", weight + 2 * 2 * 2 * width, "\"")),
                std::string::npos)
          << where << " " << k.manifest_json;
      EXPECT_EQ(k.spill_bytes, 0) << where;
    }
  }
}

// Columns too wide for static shared memory are refused with the reason.
TEST(CompileSegment, SmemColumnsBeyondTheStaticLimitAreRefused) {
  CompileResult r;
  ASSERT_NO_FATAL_FAILURE(ScheduleCorpusFusion("layernorm_fwd", &r));
  HeuristicParams hp = r.segments[0].params;
  hp.smem_columns = true;
  hp.block_x = 1024;
  hp.persistent_batch = 2;  // 16384 columns of two bf16 operands: 64 KB
  auto k = CompileSegment(r.segments[0].graph, hp, SegmentCompileOptions{});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("smem_columns needs 65536 bytes"), std::string::npos)
      << k.status();
}

// A staged ring that fits the per-block maximum alone but not beside the
// kernel's static shared memory is refused at compile time, with the sizes,
// instead of failing at every launch. Three rows deep (224 KiB of the 227)
// fits since the epilogue's tiles reuse the ring; in a cluster kernel,
// whose tiles keep their own 4 KiB, it does not.
TEST(CompileSegment, SharedMemoryOverTheBlockMaximumIsRefused) {
  CompileResult r;
  ASSERT_NO_FATAL_FAILURE(CompileCorpusAt("rmsnorm_bwd_manual",
                                          {{4096, 16384}, {4096, 1}, {4096, 16384}, {16384}}, &r));
  HeuristicParams hp = r.segments[0].params;
  ASSERT_TRUE(hp.smem_buffer) << hp.ToString();
  EXPECT_EQ(hp.smem_bytes, 163840);  // weight 32 KiB + x and dy two rows deep
  hp.smem_bytes = 229376;
  auto three = CompileSegment(r.segments[0].graph, hp, SegmentCompileOptions{});
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_LT(three->static_smem_bytes, 4096);
  hp.cluster_x = 2;
  auto k = CompileSegment(r.segments[0].graph, hp, SegmentCompileOptions{});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("229376 of dynamic shared memory a block, over the 232448"),
            std::string::npos)
      << k.status();
}

// A symbolic definition at another batch size is another cache record (the
// heuristics' parameters hold the sizes) but, sizes being kernel arguments,
// the same kernel text: with an NvrtcOutputCache it is compiled once.
TEST(CompileSegment, NewBatchSizeReusesTheCompiledKernelText) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/rmsnorm_bwd_manual.py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  NvrtcOutputCache cache;
  CompileOptions o;
  o.nvrtc_cache = &cache;
  std::vector<KernelArtifact> kernels;
  for (int64_t rows : {2048, 3000, 2048}) {
    auto r = CompileFusion(parsed->graph, {{rows, 8192}, {rows, 1}, {rows, 8192}, {8192}}, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->segments.size(), 1u);
    EXPECT_EQ(r->segments[0].params.outer_size, rows);
    kernels.push_back(*r->segments[0].kernel);
  }
  EXPECT_FALSE(kernels[0].nvrtc_reused);
  for (int i : {1, 2}) {
    EXPECT_TRUE(kernels[i].nvrtc_reused) << i;
    EXPECT_EQ(kernels[i].binary, kernels[0].binary);
    EXPECT_EQ(kernels[i].registers, kernels[0].registers);
    EXPECT_EQ(kernels[i].manifest_json, kernels[0].manifest_json);
  }
  EXPECT_EQ(cache.Stats().misses, 1u);
  EXPECT_EQ(cache.Stats().hits, 2u);
  // Without the cache every compile runs NVRTC.
  auto r = CompileFusion(parsed->graph, {{3000, 8192}, {3000, 1}, {3000, 8192}, {8192}},
                         CompileOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->segments[0].kernel->nvrtc_reused);
  EXPECT_EQ(r->segments[0].kernel->binary, kernels[0].binary);
}

// Row loops: kernels without a grid barrier stop after their last row group
// (no 64-bit division per block); cooperative ones keep a common count.
TEST(CompileSegment, OnlyCooperativeRowLoopsCountIterations) {
  int cooperative = 0;
  for (const char* stem : {"softmax_fwd", "rmsnorm_bwd_manual"}) {
    CompileResult r;
    ASSERT_NO_FATAL_FAILURE(ScheduleCorpusFusion(stem, &r));
    CodegenOptions o;
    o.symbol_sizes = r.segments[0].symbol_sizes;
    auto k = GenerateKernel(r.segments[0].graph, r.segments[0].params, o);
    ASSERT_TRUE(k.ok()) << k.status();
    const bool counted =
        k->source.find("const i64 iters = (rows + rstride - 1) / rstride;") != std::string::npos;
    const bool strided = k->source.find("; rg < rows; rg += rstride, ++it) {") != std::string::npos;
    EXPECT_EQ(counted, k->cooperative) << stem;
    EXPECT_EQ(strided, !k->cooperative) << stem;
    cooperative += k->cooperative;
  }
  EXPECT_EQ(cooperative, 1);  // one of each
}

// Everything the compiler hands out for the corpus, pinned: every kernel's
// source and the fusion manifest (launch recipe, workspaces, requirements,
// ptxas' registers) of each corpus fusion compiled whole (passes,
// segmentation, heuristics, spill retries, shared-memory paths) both
// specialized and --general, and rmsnorm backward at 512x65536 with rows
// split over blocks. Kernel names and canonical hashes are left out (they
// follow the graph). The cache key changes with the compiler's sources by
// itself (compiler/version); this pin shows a change of the output in
// review: when it fails, check that the change is intended and pin the hash
// printed below.
TEST(GeneratedCorpus, KernelsAndManifestsArePinned) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  constexpr uint64_t kOutputHash = 0x2ab677387477c3f9ull;
  std::string all;
  auto add = [&all](const std::string& stem, const std::vector<std::vector<int64_t>>* shapes,
                    bool general) {
    auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/" + stem + ".py");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    CompileOptions o;
    o.general_kernels = general;
    auto r = CompileFusion(parsed->graph, shapes ? *shapes : parsed->input_shapes, o);
    ASSERT_TRUE(r.ok()) << stem << ": " << r.status();
    std::vector<std::pair<std::string, std::string>> names;
    for (size_t i = 0; i < r->segments.size(); ++i) {
      if (r->segments[i].kernel.has_value()) {
        names.push_back({r->segments[i].kernel->kernel_name, absl::StrCat("KERNEL", i)});
      }
    }
    names.push_back({r->canonical_hash, "HASH"});
    all += absl::StrReplaceAll(absl::StrCat(EmittedCuda(*r), FusionManifestJson(*r, stem)), names);
  };
  for (const char* stem : {"bias_gelu_fwd", "softmax_fwd", "softmax_bwd", "rmsnorm_fwd",
                           "layernorm_fwd", "rmsnorm_bwd_manual", "rmsnorm_bwd_thunder",
                           "layernorm_bwd_thunder", "batchnorm_bwd_thunder"}) {
    ASSERT_NO_FATAL_FAILURE(add(stem, nullptr, false));
    ASSERT_NO_FATAL_FAILURE(add(stem, nullptr, true));
  }
  const std::vector<std::vector<int64_t>> wide = {{512, 65536}, {512, 1}, {512, 65536}, {65536}};
  ASSERT_NO_FATAL_FAILURE(add("rmsnorm_bwd_manual", &wide, true));
  const uint64_t h = Fnv1a64(all);
  EXPECT_EQ(h, kOutputHash) << "the generated kernels or manifests changed (hash 0x" << std::hex
                            << h << "): if that is intended, pin the new hash here";
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusCompile,
                         ::testing::Values("bias_gelu_fwd", "softmax_fwd", "softmax_bwd",
                                           "rmsnorm_fwd", "layernorm_fwd", "rmsnorm_bwd_manual",
                                           "rmsnorm_bwd_thunder", "layernorm_bwd_thunder",
                                           "batchnorm_bwd_thunder"));

}  // namespace
}  // namespace fusiond
