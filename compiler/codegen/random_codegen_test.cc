// Random valid graphs through the whole pipeline with code generation: every
// segment must either compile with NVRTC or be refused with Unimplemented
// (a graph shape the generator does not handle); never Internal (generated
// source NVRTC rejects) or a crash.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "tests/random/random_graph.h"

namespace fusiond {
namespace {

// How many random graphs a test takes: FUSIOND_RANDOM_CODEGEN_SEEDS, or
// `fallback`.
int Seeds(int fallback) {
  const char* env = std::getenv("FUSIOND_RANDOM_CODEGEN_SEEDS");
  return env ? std::atoi(env) : fallback;
}

// A random graph through passes, segmenter and schedulers, without code.
absl::StatusOr<CompileResult> ScheduleRandomGraph(int seed) {
  RandomGraphCase c = RandomGraphWithShapes(seed);
  CompileOptions o;
  o.generate_code = false;
  return CompileFusion(c.graph, c.input_shapes, o);
}

TEST(RandomCodegen, GeneratedSourceAlwaysCompiles) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const int seeds = Seeds(6);
  int compiled = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(1000 + seed);
    auto r = CompileFusion(c.graph, c.input_shapes, CompileOptions{});
    if (!r.ok()) {
      EXPECT_NE(r.status().code(), absl::StatusCode::kInternal)
          << "seed " << 1000 + seed << ": " << r.status() << "\n"
          << PrintGraph(c.graph);
      continue;
    }
    for (const SegmentResult& s : r->segments) {
      ASSERT_TRUE(s.kernel.has_value());
      EXPECT_FALSE(s.kernel->binary.empty());
    }
    ++compiled;
  }
  EXPECT_GT(compiled, 0);
}

// The staged-rows path (smem_buffer) over the same kind of random graphs:
// every inner persistent / inner-outer segment regenerated with its rows in
// shared memory must compile (or be refused with Unimplemented), and a
// staged kernel must say how much shared memory it takes.
TEST(RandomCodegen, StagedRowsAlwaysCompile) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const int seeds = Seeds(16);
  int staged = 0, float_columns = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    auto r = ScheduleRandomGraph(2000 + seed);
    if (!r.ok()) continue;
    for (const SegmentResult& s : r->segments) {
      if (s.kind != SchedulerKind::kInnerPersistent &&
          s.kind != SchedulerKind::kInnerOuterPersistent)
        continue;
      HeuristicParams hp = s.params;
      hp.smem_buffer = true;
      hp.multi_pass = false;
      hp.smem_bytes = 160 * 1024;
      auto k = GenerateKernel(s.graph, hp, CodegenOptions{});
      if (!k.ok()) {
        EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented)
            << "seed " << 2000 + seed << ": " << k.status();
        continue;
      }
      if (k->dynamic_smem_bytes == 0) continue;  // chunks cp.async cannot copy: multi-pass
      auto bin = CompileWithNvrtc(k->source, k->name, NvrtcOptions{});
      EXPECT_TRUE(bin.ok()) << "seed " << 2000 + seed << ": " << bin.status() << "\n"
                            << PrintGraph(s.graph);
      EXPECT_LE(k->dynamic_smem_bytes, 160 * 1024);
      ++staged;
      float_columns += k->source.find("fz_elem<") != std::string::npos;
    }
  }
  EXPECT_GT(staged, 0) << "no random graph took the staged path; widen the seeds";
  std::printf("%d staged kernels compiled, %d with a float column\n", staged, float_columns);
}

// reread_rows over the same kind of random graphs: every inner persistent /
// inner-outer segment whose rows sit in registers, regenerated to load its
// rows again for the output pass with cache policies, must compile (dtypes
// and vector widths give 16- to 2-byte chunks), or be refused with
// InvalidArgument where code generation does not keep the rows in registers
// (rows too wide for the registers' chunks).
TEST(RandomCodegen, RereadRowsAlwaysCompile) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const int seeds = Seeds(16);
  int reread = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    auto r = ScheduleRandomGraph(3000 + seed);
    if (!r.ok()) continue;
    for (const SegmentResult& s : r->segments) {
      if (s.kind != SchedulerKind::kInnerPersistent &&
          s.kind != SchedulerKind::kInnerOuterPersistent)
        continue;
      if (s.params.smem_buffer || s.params.multi_pass) continue;
      // Graphs code generation refuses anyway (Unimplemented) are not this
      // test's.
      if (!GenerateKernel(s.graph, s.params, CodegenOptions{}).ok()) continue;
      HeuristicParams hp = s.params;
      hp.reread_rows = true;
      auto k = GenerateKernel(s.graph, hp, CodegenOptions{});
      if (!k.ok()) {
        EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument)
            << "seed " << 3000 + seed << ": " << k.status();
        continue;
      }
      auto bin = CompileWithNvrtc(k->source, k->name, NvrtcOptions{});
      EXPECT_TRUE(bin.ok()) << "seed " << 3000 + seed << ": " << bin.status() << "\n"
                            << PrintGraph(s.graph);
      reread += k->source.find("fz_ld_done<") != std::string::npos;
    }
  }
  EXPECT_GT(reread, 0) << "no random graph kept its rows in registers; widen the seeds";
  std::printf("%d kernels with reread rows compiled\n", reread);
}

// A persistent kernel's `fits` compares the row with a literal, the threads
// along a row times their chunks (codegen.cc): that literal is only right
// while the kernel is launched with the grid y extent it was generated for,
// a literal there too, and T = gridDim.y * block_x in the index math.
TEST(RandomCodegen, FitsBoundMatchesTheLaunchedThreads) {
  const std::string kFits = "const bool fits = vec_ok && rlen <= ";
  int checked = 0;
  for (int seed = 0; seed < 40; ++seed) {
    auto r = ScheduleRandomGraph(3000 + seed);
    if (!r.ok()) continue;
    for (const SegmentResult& s : r->segments) {
      auto k = GenerateKernel(s.graph, s.params, CodegenOptions{});
      if (!k.ok()) continue;
      const size_t at = k->source.find(kFits);
      if (at == std::string::npos) continue;
      const int64_t bound = std::stoll(k->source.substr(at + kFits.size()));
      ASSERT_FALSE(k->grid_y_expr.empty());
      ASSERT_EQ(k->grid_y_expr.find_first_not_of("0123456789"), std::string::npos)
          << "seed " << 3000 + seed << ": grid y '" << k->grid_y_expr << "' is not a literal";
      const int64_t threads = std::stoll(k->grid_y_expr) * k->block_x;
      EXPECT_NE(
          k->source.find("const i64 T = (i64)gridDim.y * " + std::to_string(k->block_x) + ";"),
          std::string::npos)
          << "seed " << 3000 + seed;
      EXPECT_EQ(bound % (threads * std::max(1, s.params.vectorize)), 0)
          << "seed " << 3000 + seed << ": bound " << bound << ", " << threads << " threads";
      ++checked;
    }
  }
  EXPECT_GT(checked, 5) << "too few persistent kernels among the random graphs; widen the seeds";
  std::printf("%d persistent kernels checked\n", checked);
}

}  // namespace
}  // namespace fusiond
