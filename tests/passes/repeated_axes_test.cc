// Reductions over axes their operand repeats along (a sum over the rows of a
// row broadcast to [rows, n]) leave those axes to the trivial_reductions
// pass, which reduces the operand once and multiplies (sums) or takes it as
// it is (max, min, var_mean's mean). Checked here against the CPU reference
// on hand-built graphs (bf16, integers, symbolic sizes, NaN and infinities)
// and on random graphs, whose GPU-check cases must all still compile.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "compiler/codegen/codegen.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/optimize.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "tests/passes/pass_check.h"
#include "tests/random/gpu_cases.h"
#include "tests/random/random_graph.h"

namespace fusiond {
namespace {

// Reductions whose operand is a broadcast_in_dim adding a reduced axis of an
// extent other than 1, with a result of more than one element (one-element
// results stay reductions).
int ReductionsOfBroadcasts(const Graph& g) {
  int n = 0;
  for (const Node& r : g.nodes) {
    if (!IsReduction(r.op)) continue;
    const Node* b = g.def(r.inputs[0]);
    if (b == nullptr || b->op != OpKind::kBroadcastInDim) continue;
    bool one_element = true;
    for (const Extent& e : g.value(r.outputs[0]).shape) {
      one_element &= g.Canonical(e).is_static() && g.Canonical(e).size == 1;
    }
    if (one_element) continue;
    const auto& shape = g.value(r.inputs[0]).shape;
    for (int64_t d : r.attrs.dims) {
      const int64_t a = d < 0 ? d + static_cast<int64_t>(shape.size()) : d;
      const Extent e = g.Canonical(shape[a]);
      bool added = true;
      for (int64_t k : b->attrs.broadcast_dims) added &= k != a;
      if (added && !(e.is_static() && e.size == 1)) {
        ++n;
        break;
      }
    }
  }
  return n;
}

Graph Optimized(const Graph& g) {
  Graph o = g;
  PassOptions options;
  options.verify = true;
  std::vector<PassRecord> records;
  EXPECT_TRUE(RunOptimizationPasses(o, options, &records).ok());
  return o;
}

// x [4, n] (`dtype`, n symbolic when `symbolic`) broadcast to [4, 6, n] and
// reduced by `op` over `dims`, with `keepdim`.
Graph ReduceOfBroadcast(DataType dtype, OpKind op, std::vector<int64_t> dims, bool keepdim,
                        bool symbolic, std::optional<DataType> out = std::nullopt) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", dtype, {4, symbolic ? -1 : 5});
  const Extent n = g.value(x).shape[1];
  ValueId bx = *b.BroadcastInDim(x, {Extent::Static(4), Extent::Static(6), n}, {0, 2});
  std::vector<ValueId> r;
  if (op == OpKind::kVarMean) {
    Attrs a;
    a.dims = dims;
    a.keepdim = keepdim;
    a.correction = 1;
    r = *b.AddNode(op, {bx}, a);
  } else {
    r = {*b.Reduce(op, bx, dims, keepdim, out)};
  }
  for (ValueId v : r) EXPECT_TRUE(b.AddOutput(v).ok());
  return g;
}

TEST(RepeatedAxes, HandBuiltGraphsKeepTheReferenceResults) {
  struct Case {
    DataType dtype;
    OpKind op;
    std::vector<int64_t> dims;
    bool keepdim;
    bool symbolic;
    std::optional<DataType> out;
  };
  const std::vector<Case> cases = {
      {DataType::kFloat, OpKind::kSum, {1}, false, false, {}},
      {DataType::kBFloat16, OpKind::kSum, {1}, true, false, {}},
      {DataType::kBFloat16, OpKind::kSum, {1, 2}, false, false, DataType::kFloat},
      {DataType::kHalf, OpKind::kSum, {0, 1}, true, true, {}},
      {DataType::kInt32, OpKind::kSum, {1}, false, false, {}},
      {DataType::kInt32, OpKind::kSum, {1, 2}, false, true, DataType::kInt32},
      {DataType::kDouble, OpKind::kSum, {1}, false, true, DataType::kFloat},
      {DataType::kBFloat16, OpKind::kMax, {1}, false, false, {}},
      {DataType::kFloat, OpKind::kMin, {0, 1}, true, true, {}},
      {DataType::kFloat, OpKind::kVarMean, {1}, false, false, {}},
      {DataType::kBFloat16, OpKind::kVarMean, {1}, true, false, {}},
  };
  for (const Case& c : cases) {
    const Graph g = ReduceOfBroadcast(c.dtype, c.op, c.dims, c.keepdim, c.symbolic, c.out);
    SCOPED_TRACE(PrintGraph(g));
    EXPECT_EQ(ReductionsOfBroadcasts(g), 1);
    EXPECT_EQ(ReductionsOfBroadcasts(Optimized(g)), 0);
    std::vector<HostTensor> inputs = RandomInputs(g, {{4, 5}}, 7);
    if (IsFloatingPoint(c.dtype)) {  // NaN and infinities keep their results
      inputs[0].data[0] = NAN;
      inputs[0].data[3] = INFINITY;
      inputs[0].data[7] = -INFINITY;
    } else {  // large integers: the product wraps as the sum would
      inputs[0].data[1] = 2147483000;
    }
    EXPECT_EQ(CheckPassesPreserve(g, inputs), "");
  }
}

// The tests/random graphs (more reductions than by default): every pass
// keeps the reference's results, and no reduction of a broadcast along an
// axis it adds is left.
TEST(RepeatedAxes, RandomGraphsKeepTheirValuesAndLoseTheRepeatedAxes) {
  RandomGraphOptions options;
  options.extra_reductions = 3;
  int targeted = 0;
  for (uint64_t seed = 0; seed < 600; ++seed) {
    RandomGraphCase c = RandomGraphWithShapes(seed, options);
    ASSERT_TRUE(c.status.ok()) << "seed " << seed << ": " << c.status;
    targeted += ReductionsOfBroadcasts(c.graph) > 0;
    const Graph o = Optimized(c.graph);
    EXPECT_EQ(ReductionsOfBroadcasts(o), 0) << "seed " << seed << "\n" << PrintGraph(o);
    const std::vector<HostTensor> inputs = RandomInputs(c.graph, c.input_shapes, seed);
    EXPECT_EQ(CheckPassesPreserve(c.graph, inputs), "") << "seed " << seed;
  }
  EXPECT_GT(targeted, 40) << targeted;  // the sweep reaches the rewrite
  std::cerr << targeted << " of 600 graphs reduce a broadcast along an axis it adds\n";
}

// The GPU check's cases (realistic sizes) compile through passes, segmenter,
// schedulers and code generation (no NVRTC) as they did before the rewrite.
TEST(RepeatedAxes, GpuCasesCompileWithoutRefusals) {
  int targeted = 0;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    const RandomGraphCase c = GpuRandomCase(seed);
    ASSERT_TRUE(c.status.ok()) << "seed " << seed << ": " << c.status;
    targeted += ReductionsOfBroadcasts(c.graph) > 0;
    CompileOptions options;
    options.generate_code = false;
    absl::StatusOr<CompileResult> r = CompileFusion(c.graph, c.input_shapes, options);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.status();
    for (const SegmentResult& s : r->segments) {
      absl::StatusOr<GeneratedKernel> k = GenerateKernel(s.graph, s.params, CodegenOptions{});
      EXPECT_TRUE(k.ok()) << "seed " << seed << ": " << k.status();
    }
  }
  EXPECT_GT(targeted, 20) << targeted;
  std::cerr << targeted << " of 500 GPU cases reduce a broadcast along an axis it adds\n";
}

}  // namespace
}  // namespace fusiond
