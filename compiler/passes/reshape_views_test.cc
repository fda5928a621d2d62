#include "compiler/passes/reshape_views.h"

#include "compiler/ir/reshape_views.h"
#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

std::vector<Extent> S(std::initializer_list<int64_t> sizes) {
  std::vector<Extent> s;
  for (int64_t n : sizes) s.push_back(Extent::Static(n));
  return s;
}

std::vector<int64_t> Sizes(const Graph& g, ValueId v) {
  std::vector<int64_t> out;
  for (const Extent& e : g.value(v).shape) out.push_back(g.Canonical(e).size);
  return out;
}

// Group norm's shape: x [2, 8, 3] split to [2, 4, 2, 3], a sum over the
// group's (2, 3), broadcast back, reshaped back and scaled by a weight [8].
TEST(ReshapeViews, SplitReachesEveryTensorOfTheAxis) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {2, 8, 3}));
  ValueId w = Must(b.DefineTensor("w", DataType::kFloat, {8}));
  Attrs r;
  r.shape = S({2, 4, 2, 3});
  ValueId x4 = Must(b.AddNode(OpKind::kReshape, {x}, r))[0];
  Attrs sum;
  sum.dims = {2, 3};
  ValueId s = Must(b.AddNode(OpKind::kSum, {x4}, sum))[0];
  ValueId sb = Must(b.BroadcastInDim(s, S({2, 4, 2, 3}), {0, 1}));
  ValueId d = Must(b.AddNode(OpKind::kSub, {x4, sb}, {}))[0];
  Attrs back;
  back.shape = S({2, 8, 3});
  ValueId y = Must(b.AddNode(OpKind::kReshape, {d}, back))[0];
  ValueId wb = Must(b.BroadcastInDim(w, S({2, 8, 3}), {1}));
  ASSERT_TRUE(b.AddOutput(Must(b.AddNode(OpKind::kMul, {y, wb}, {}))[0]).ok());
  ASSERT_TRUE(b.AddOutput(s).ok());
  EXPECT_TRUE(RunPassForTest(RunReshapeViews, g));
  // Reshapes: one view per input, one into the [2, 8, 3] output.
  const auto uses = g.Uses();
  int inputs = 0, outputs = 0;
  for (const Node& n : g.nodes) {
    if (n.op != OpKind::kReshape) continue;
    inputs += IsInputView(g, n, uses);
    outputs += IsOutputView(g, n, uses);
  }
  EXPECT_EQ(inputs, 2);
  EXPECT_EQ(outputs, 1);
  // The weight is read as [4, 2]; the product is computed as [2, 4, 2, 3].
  for (const Node& n : g.nodes) {
    if (n.op == OpKind::kReshape && n.inputs[0] == g.inputs[1]) {
      EXPECT_EQ(Sizes(g, n.outputs[0]), std::vector<int64_t>({4, 2}));
    }
    if (n.op == OpKind::kMul) {
      EXPECT_EQ(Sizes(g, n.outputs[0]), std::vector<int64_t>({2, 4, 2, 3}));
    }
  }
  EXPECT_EQ(Sizes(g, g.outputs[0]), std::vector<int64_t>({2, 8, 3}));
  EXPECT_FALSE(RunPassForTest(RunReshapeViews, g));  // settled
}

// [4, 6] -> [2, 2, 6] and a merge [2, 2, 6] -> [4, 6] of the same value
// refine to one factorization; keepdim over a split axis becomes a sum and
// a broadcast.
TEST(ReshapeViews, KeepdimOverASplitAxis) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4, 6}));
  ValueId e = Must(b.AddNode(OpKind::kExp, {x}, {}))[0];
  Attrs r;
  r.shape = S({2, 2, 6});
  ValueId e3 = Must(b.AddNode(OpKind::kReshape, {e}, r))[0];
  ValueId n3 = Must(b.AddNode(OpKind::kNeg, {e3}, {}))[0];
  Attrs sum;
  sum.dims = {0};
  sum.keepdim = true;
  ValueId s = Must(b.AddNode(OpKind::kSum, {e}, sum))[0];  // [1, 6]
  ASSERT_TRUE(b.AddOutput(n3).ok());
  ASSERT_TRUE(b.AddOutput(s).ok());
  EXPECT_TRUE(RunPassForTest(RunReshapeViews, g));
  EXPECT_EQ(Sizes(g, g.outputs[0]), std::vector<int64_t>({2, 2, 6}));
  EXPECT_EQ(Sizes(g, g.outputs[1]), std::vector<int64_t>({1, 6}));
  int sums = 0;
  for (const Node& n : g.nodes) {
    if (n.op != OpKind::kSum) continue;
    ++sums;
    EXPECT_EQ(n.attrs.dims, std::vector<int64_t>({0, 1}));
    EXPECT_FALSE(n.attrs.keepdim);
  }
  EXPECT_EQ(sums, 1);
}

// q, k, v of a fused projection split into heads: x [2, 12] sliced [4, 8)
// on its last axis, the slice reshaped to [2, 2, 2]. The window starts on a
// multiple of the head size 2, so x is read as [2, 6, 2] and the slice takes
// [2, 4) of its middle axis; a window off the heads keeps the reshape.
Graph SlicedHeads(int64_t start) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {2, 12}));
  Attrs sl;
  sl.offsets = {0, start, 2, start + 4, 1, 1};
  ValueId q = Must(b.AddNode(OpKind::kSlice, {x}, sl))[0];
  Attrs r;
  r.shape = S({2, 2, 2});
  ValueId h = Must(b.AddNode(OpKind::kReshape, {q}, r))[0];
  EXPECT_TRUE(b.AddOutput(Must(b.AddNode(OpKind::kExp, {h}, {}))[0]).ok());
  return g;
}

TEST(ReshapeViews, SliceOnHeadBoundariesSplitsItsWindow) {
  Graph g = SlicedHeads(4);
  EXPECT_TRUE(RunPassForTest(RunReshapeViews, g));
  const auto uses = g.Uses();
  for (const Node& n : g.nodes) {
    if (n.op == OpKind::kReshape) EXPECT_TRUE(IsInputView(g, n, uses));
    if (n.op != OpKind::kSlice) continue;
    EXPECT_EQ(Sizes(g, n.inputs[0]), std::vector<int64_t>({2, 6, 2}));
    EXPECT_EQ(n.attrs.offsets, std::vector<int64_t>({0, 2, 0, 2, 4, INT64_MAX, 1, 1, 1}));
    EXPECT_EQ(Sizes(g, n.outputs[0]), std::vector<int64_t>({2, 2, 2}));
  }
  EXPECT_EQ(CountOps(g, OpKind::kSlice), 1);
  EXPECT_EQ(Sizes(g, g.outputs[0]), std::vector<int64_t>({2, 2, 2}));

  Graph off = SlicedHeads(3);
  PassLog log;
  EXPECT_FALSE(RunPassForTest(RunReshapeViews, off, {}, &log));
  ASSERT_EQ(log.notes.size(), 1u);
  EXPECT_NE(log.notes[0].find("slice"), std::string::npos) << log.notes[0];
}

// A slice keeping an axis whole passes its split through: rows [1, 3) of
// x [4, 12] reshaped to [2, 3, 4] read x as [4, 3, 4].
TEST(ReshapeViews, SliceKeepingAnAxisWholeSplitsIt) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4, 12}));
  Attrs sl;
  sl.offsets = {1, 0, 3, 12, 1, 1};
  ValueId rows = Must(b.AddNode(OpKind::kSlice, {x}, sl))[0];
  Attrs r;
  r.shape = S({2, 3, 4});
  ValueId h = Must(b.AddNode(OpKind::kReshape, {rows}, r))[0];
  ASSERT_TRUE(b.AddOutput(Must(b.AddNode(OpKind::kExp, {h}, {}))[0]).ok());
  EXPECT_TRUE(RunPassForTest(RunReshapeViews, g));
  ASSERT_EQ(CountOps(g, OpKind::kSlice), 1);
  for (const Node& n : g.nodes) {
    if (n.op != OpKind::kSlice) continue;
    EXPECT_EQ(Sizes(g, n.inputs[0]), std::vector<int64_t>({4, 3, 4}));
    EXPECT_EQ(n.attrs.offsets, std::vector<int64_t>({1, 0, 0, 3, INT64_MAX, INT64_MAX, 1, 1, 1}));
  }
  EXPECT_EQ(Sizes(g, g.outputs[0]), std::vector<int64_t>({2, 3, 4}));
}

TEST(ReshapeViews, NoCommonRefinementKeepsTheGraphWithANote) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {6, 4}));
  ValueId e = Must(b.AddNode(OpKind::kExp, {x}, {}))[0];
  Attrs r;
  r.shape = S({4, 6});
  ValueId y = Must(b.AddNode(OpKind::kReshape, {e}, r))[0];
  ASSERT_TRUE(b.AddOutput(Must(b.AddNode(OpKind::kExp, {y}, {}))[0]).ok());
  PassLog log;
  EXPECT_FALSE(RunPassForTest(RunReshapeViews, g, {}, &log));
  ASSERT_EQ(log.notes.size(), 1u);
  EXPECT_NE(log.notes[0].find("no common refinement"), std::string::npos) << log.notes[0];
}

}  // namespace
}  // namespace fusiond
