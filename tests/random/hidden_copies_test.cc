// Reductions over axes their input does not vary along (a sum over both axes
// of a row broadcast to [rows, n]): the kernel loops over the varying axes
// only, so a sum must scale by the other reduced extents (k equal copies of
// each element). The GPU check's seeds 1374, 1392, 1415 and 1419 summed
// without that factor; max ignores the copies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/ir/builder.h"
#include "compiler/pipeline.h"
#include "tests/random/gpu_cases.h"

namespace fusiond {
namespace {

// The generated CUDA of every kernel of a compile, concatenated.
std::string Sources(const Graph& g, const std::vector<std::vector<int64_t>>& shapes) {
  absl::StatusOr<CompileResult> r = CompileFusion(g, shapes, CompileOptions{});
  EXPECT_TRUE(r.ok()) << r.status();
  std::string all;
  if (!r.ok()) return all;
  for (const SegmentResult& s : r->segments) {
    EXPECT_TRUE(s.kernel.has_value());
    if (s.kernel) all += s.kernel->cuda_source;
  }
  return all;
}

// op(broadcast(w [n] -> [rows, n]), dims=[0, 1]) as a [1, 1] output.
Graph ReduceBroadcastRow(OpKind op, int64_t rows, int64_t n) {
  Graph g;
  GraphBuilder b(&g);
  ValueId w = *b.DefineTensor("w", DataType::kFloat, {n});
  ValueId wb = *b.BroadcastInDim(w, {Extent::Static(rows), Extent::Static(n)}, {1});
  EXPECT_TRUE(b.AddOutput(*b.Reduce(op, wb, {0, 1}, true)).ok());
  return g;
}

TEST(HiddenCopies, PlanCountsTheReducedAxesTheInputDoesNotVaryAlong) {
  Graph g = ReduceBroadcastRow(OpKind::kSum, 5, 257);
  absl::StatusOr<KernelPlan> p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  const Node& sum = g.nodes.back();
  ASSERT_EQ(sum.op, OpKind::kSum);
  EXPECT_EQ(p->HiddenCount(g, sum), "(double)(5)");
  // A row sum of the same input sees every element once.
  Graph h;
  GraphBuilder b(&h);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {5, 257});
  ASSERT_TRUE(b.AddOutput(*b.Reduce(OpKind::kSum, x, {1}, false)).ok());
  absl::StatusOr<KernelPlan> q = PlanKernel(h, false);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->HiddenCount(h, h.nodes.back()), "");
}

TEST(HiddenCopies, SumScalesByTheCopiesProdTakesThePowerMaxDoesNot) {
  const std::string sum = Sources(ReduceBroadcastRow(OpKind::kSum, 5, 257), {{257}});
  EXPECT_NE(sum.find("* (float)((double)(5))"), std::string::npos) << sum;
  const std::string max = Sources(ReduceBroadcastRow(OpKind::kMax, 5, 257), {{257}});
  EXPECT_EQ(max.find("(double)(5)"), std::string::npos) << max;
  const std::string prod = Sources(ReduceBroadcastRow(OpKind::kProd, 5, 257), {{257}});
  EXPECT_NE(prod.find("pow((double)acc0, (double)(5))"), std::string::npos) << prod;
}

// y = x * rowsum(x) over [8, 16, 256] and colsum = sum(broadcast(w [8, 256]
// along axis 1), dims=[0, 1]): a column sum whose input repeats 16 times
// along rows the column loop walks.
Graph ColumnSumOfBroadcast() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("x", DataType::kFloat, {8, 16, 256});
  ValueId w = *b.DefineTensor("w", DataType::kFloat, {8, 256});
  ValueId rs = *b.Reduce(OpKind::kSum, x, {2}, true);
  ValueId rsb = *b.BroadcastInDim(rs, g.value(x).shape, {0, 1, 2});
  EXPECT_TRUE(b.AddOutput(*b.Binary(OpKind::kMul, x, rsb)).ok());
  ValueId wb = *b.BroadcastInDim(w, g.value(x).shape, {0, 2});
  EXPECT_TRUE(b.AddOutput(*b.Reduce(OpKind::kSum, wb, {0, 1}, false)).ok());
  return g;
}

// var over [0, 1] of a row broadcast to [5, 257]: 5 copies of each element.
Graph VarOfBroadcastRow() {
  Graph g;
  GraphBuilder b(&g);
  ValueId w = *b.DefineTensor("w", DataType::kFloat, {257});
  ValueId wb = *b.BroadcastInDim(w, {Extent::Static(5), Extent::Static(257)}, {1});
  Attrs a;
  a.dims = {0, 1};
  a.correction = 1;
  auto var = *b.AddNode(OpKind::kVar, {wb}, a);
  EXPECT_TRUE(b.AddOutput(var[0]).ok());
  return g;
}

// True when the optimized graph multiplies by the constant k (the
// trivial_reductions pass takes the copies out of a sum before any kernel).
bool ScaledInGraph(const Graph& g, double k) {
  for (const Node& n : g.nodes) {
    if (n.op != OpKind::kMul) continue;
    for (ValueId in : n.inputs) {
      if (g.value(in).constant && *g.value(in).constant == k) return true;
    }
  }
  return false;
}

TEST(HiddenCopies, ColumnSumAndVarCountTheCopies) {
  // The pass sums w over its axis 0 and multiplies by the 16 copies.
  absl::StatusOr<CompileResult> col =
      CompileFusion(ColumnSumOfBroadcast(), {{8, 16, 256}, {8, 256}}, CompileOptions{});
  ASSERT_TRUE(col.ok()) << col.status();
  EXPECT_TRUE(ScaledInGraph(col->optimized, 16));
  const std::string var = Sources(VarOfBroadcastRow(), {{257}});
  EXPECT_NE(var.find("(float)((double)(5)) * (float)rlen - 1)"), std::string::npos) << var;
}

// (1374's sum over both axes of a column broadcast to [31, 31] walks the
// copies as rows since kernel plans take the analysis' row domain for it:
// kernel_plan_test's ASumOverTheInnermostAxisOfACopyWalksTheCopies.)
TEST(HiddenCopies, GpuCheckSeedsScaleTheirSums) {
  // The kernel scales, or the pass did before it (1392).
  const std::vector<std::pair<int, int>> cases = {{1392, 3}, {1415, 2048}, {1419, 5}};
  for (const auto& [seed, factor] : cases) {
    RandomGraphCase c = GpuRandomCase(seed);
    ASSERT_TRUE(c.status.ok()) << "seed " << seed << ": " << c.status;
    const std::string src = Sources(c.graph, c.input_shapes);
    absl::StatusOr<CompileResult> r = CompileFusion(c.graph, c.input_shapes, CompileOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(src.find(absl::StrCat("* (float)((double)(", factor, "))")) != std::string::npos ||
                ScaledInGraph(r->optimized, factor))
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace fusiond
