// (b) The passes preserve the reference results on 1,000 seeded random valid
// graphs (tests/random: pointwise chains, broadcasts, casts and round
// trips, pow with random exponents, identities, reductions over random
// axes). A failure prints the seed and the ShrinkGraph-minimized graph.
#include <gtest/gtest.h>

#include <cstdlib>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/optimize.h"
#include "compiler/reference/reference.h"
#include "tests/passes/pass_check.h"
#include "tests/random/random_graph.h"

namespace fusiond {
namespace {

void CheckSeeds(uint64_t first, uint64_t last, const PassOptions& options) {
  int failures = 0;
  for (uint64_t seed = first; seed < last && failures < 3; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    ASSERT_TRUE(c.status.ok()) << "seed " << seed << ": " << c.status;
    ASSERT_TRUE(VerifyGraph(c.graph).ok()) << "seed " << seed;
    const std::vector<HostTensor> inputs = RandomInputs(c.graph, c.input_shapes, seed);
    std::string why = CheckPassesPreserve(c.graph, inputs, options);
    if (why.empty()) continue;
    ++failures;
    Graph small = ShrinkGraph(
        c.graph, [&](const Graph& g) { return !CheckPassesPreserve(g, inputs, options).empty(); });
    ADD_FAILURE() << "seed " << seed << ": " << why << "\nsmallest failing graph:\n"
                  << PrintGraph(small)
                  << "its failure: " << CheckPassesPreserve(small, inputs, options);
  }
}

// FUSIOND_RANDOM_SEEDS=N runs N seeds instead of 1,000 (soak runs).
uint64_t SeedCount() {
  const char* env = std::getenv("FUSIOND_RANDOM_SEEDS");
  return env ? std::strtoull(env, nullptr, 10) : 1000;
}

TEST(RandomGraphs, PassesPreserveReferenceResults) { CheckSeeds(0, SeedCount(), {}); }

// With --allow-precision-increase the narrowing round trips go, which may
// change 16-bit intermediates: only the first seeds, and only that the
// passes succeed and keep every output's type and shape.
TEST(RandomGraphs, PassesSucceedWithAllowPrecisionIncrease) {
  PassOptions options;
  options.allow_precision_increase = true;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    Graph g = c.graph;
    std::vector<PassRecord> records;
    options.verify = true;
    ASSERT_TRUE(RunOptimizationPasses(g, options, &records).ok()) << "seed " << seed;
    ASSERT_EQ(g.outputs.size(), c.graph.outputs.size());
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      EXPECT_EQ(g.value(g.outputs[i]).dtype, c.graph.value(c.graph.outputs[i]).dtype);
    }
  }
}

}  // namespace
}  // namespace fusiond
