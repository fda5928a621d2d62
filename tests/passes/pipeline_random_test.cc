// The whole pipeline (passes, segmenter, schedulers) on 1,000 random valid
// graphs: it never fails with an internal error, every segment is a valid
// standalone graph, and every parameter set obeys the HeuristicParams
// invariants the code generator relies on.
#include <gtest/gtest.h>

#include <map>

#include "compiler/ir/binding.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/optimize.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "compiler/segmenter/segmenter.h"
#include "tests/random/random_graph.h"

namespace fusiond {
namespace {

void CheckParams(const HeuristicParams& p, const std::string& where) {
  EXPECT_GE(p.block_x, 1) << where;
  EXPECT_LE(p.block_x * p.block_y, 1024) << where;
  EXPECT_GE(p.grid_x, 1) << where;
  EXPECT_GE(p.grid_y, 1) << where;
  EXPECT_TRUE(p.vectorize == 1 || p.vectorize == 2 || p.vectorize == 4 || p.vectorize == 8)
      << where;
  // Vectors run along the kept columns, except in lanes kernels (outer
  // kinds with rows_per_block > 1), whose vectors are chunks of the reduced
  // rows (heuristics_outer_test checks that they divide the reduced length).
  const bool lanes =
      (p.kind == SchedulerKind::kOuterReduction || p.kind == SchedulerKind::kOuterPersistent) &&
      p.rows_per_block > 1;
  if (!lanes) {
    EXPECT_EQ(p.inner_size % p.vectorize, 0) << where << " " << p.ToString();
  }
  const bool persistent =
      p.kind == SchedulerKind::kInnerPersistent || p.kind == SchedulerKind::kInnerOuterPersistent;
  if (persistent && !p.multi_pass) {
    EXPECT_GE(int64_t{p.vectorize} * p.block_x * p.persistent_batch, p.inner_size) << where;
  }
}

TEST(PipelineOnRandomGraphs, SchedulesEveryGraphOrSaysWhyNot) {
  int segments = 0, split = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    CompileOptions options;
    options.generate_code = false;
    auto r = CompileFusion(c.graph, c.input_shapes, options);
    if (!r.ok()) {
      EXPECT_NE(r.status().code(), absl::StatusCode::kInternal)
          << "seed " << seed << ": " << r.status() << "\n"
          << PrintGraph(c.graph);
      continue;
    }
    ASSERT_FALSE(r->segments.empty()) << "seed " << seed;
    segments += static_cast<int>(r->segments.size());
    split += r->segments.size() > 1;
    for (size_t i = 0; i < r->segments.size(); ++i) {
      const SegmentResult& s = r->segments[i];
      const std::string where = "seed " + std::to_string(seed) + " segment " + std::to_string(i);
      EXPECT_TRUE(VerifyGraph(s.graph).ok()) << where << "\n" << PrintGraph(s.graph);
      EXPECT_EQ(s.params.kind, s.kind) << where;
      EXPECT_EQ(i > 0 && r->segments.size() > 1, !s.boundary_reason.empty() && i > 0) << where;
      CheckParams(s.params, where);
    }
  }
  EXPECT_GT(segments, 1000);
  RecordProperty("split_graphs", split);
}

TEST(PipelineOnRandomGraphs, EmptyAndHugeExtentsSchedule) {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{131072}, int64_t{1} << 20}) {
    Graph g;
    GraphBuilder b(&g);
    ValueId x = *b.DefineTensor("x", DataType::kBFloat16, {-1, -1});
    ValueId f = *b.Cast(x, DataType::kFloat);
    ValueId s = *b.Reduce(OpKind::kSum, f, {1}, true);
    ValueId y = *b.Binary(OpKind::kSub, f, s);
    ASSERT_TRUE(b.AddOutput(*b.Cast(y, DataType::kBFloat16)).ok());
    CompileOptions options;
    options.generate_code = false;
    auto r = CompileFusion(g, {{4, n}}, options);
    ASSERT_TRUE(r.ok()) << n << ": " << r.status();
    ASSERT_EQ(r->segments.size(), 1u);
    CheckParams(r->segments[0].params, "width " + std::to_string(n));
    if (n >= 131072) {
      EXPECT_TRUE(r->segments[0].params.multi_pass) << n;
    }
  }
}

// Running the segments one after another on the reference gives the
// fusion's results: every segment reads only values that exist by then and
// every output is produced.
TEST(PipelineOnRandomGraphs, SegmentsComposeToTheFusion) {
  const Target target = *LookupTarget("sm_90");
  int split = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed);
    Graph g = c.graph;
    std::vector<PassRecord> records;
    ASSERT_TRUE(RunOptimizationPasses(g, PassOptions{}, &records).ok()) << seed;
    auto sizes = BindShapes(g, c.input_shapes);
    ASSERT_TRUE(sizes.ok()) << seed;
    auto segments = SegmentFusion(g, *sizes, target);
    if (!segments.ok()) continue;  // (the other test checks the codes)
    if (segments->size() < 2) continue;
    ++split;
    const std::vector<HostTensor> inputs = RandomInputs(g, c.input_shapes, seed);
    auto whole = Evaluate(g, inputs);
    ASSERT_TRUE(whole.ok()) << seed;
    std::map<ValueId, HostTensor> env;
    for (size_t i = 0; i < g.inputs.size(); ++i) env[g.inputs[i]] = inputs[i];
    for (size_t k = 0; k < segments->size(); ++k) {
      const Segment& s = (*segments)[k];
      std::vector<HostTensor> ins;
      for (ValueId v : s.source_inputs) {
        ASSERT_TRUE(env.count(v)) << "seed " << seed << ": segment " << k << " reads "
                                  << ValueName(g, v) << " before any segment made it\n"
                                  << PrintGraph(g);
        ins.push_back(env[v]);
      }
      auto outs = Evaluate(s.graph, ins);
      ASSERT_TRUE(outs.ok()) << seed << ": " << outs.status();
      for (size_t j = 0; j < s.source_outputs.size(); ++j) env[s.source_outputs[j]] = (*outs)[j];
    }
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      ASSERT_TRUE(env.count(g.outputs[i]))
          << "seed " << seed << ": output " << i << " is made by no segment\n"
          << PrintGraph(g);
      EXPECT_EQ(MaxRelativeError(env[g.outputs[i]], (*whole)[i]), 0.0) << "seed " << seed;
    }
  }
  EXPECT_GT(split, 50);
}

}  // namespace
}  // namespace fusiond
