// Random valid graphs through the whole pipeline with code generation: every
// segment must either compile with NVRTC or be refused with Unimplemented
// (a graph shape the generator does not handle); never Internal (generated
// source NVRTC rejects) or a crash.
#include <gtest/gtest.h>

#include <cstdlib>

#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/ir/printer.h"
#include "tests/random/random_graph.h"

namespace fusiond {
namespace {

TEST(RandomCodegen, GeneratedSourceAlwaysCompiles) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const char* env = std::getenv("FUSIOND_RANDOM_CODEGEN_SEEDS");
  const int seeds = env ? std::atoi(env) : 6;
  int compiled = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(1000 + seed);
    auto r = CompileFusion(c.graph, c.input_shapes, CompileOptions{});
    if (!r.ok()) {
      EXPECT_NE(r.status().code(), absl::StatusCode::kInternal)
          << "seed " << 1000 + seed << ": " << r.status() << "\n" << PrintGraph(c.graph);
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

}  // namespace
}  // namespace fusiond
