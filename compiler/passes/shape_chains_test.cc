#include "compiler/passes/shape_chains.h"

#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

std::vector<Extent> S(std::initializer_list<int64_t> sizes) {
  std::vector<Extent> s;
  for (int64_t n : sizes) s.push_back(Extent::Static(n));
  return s;
}

TEST(ShapeChains, BroadcastChainsCompose) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {128}));
  ValueId b1 = Must(b.BroadcastInDim(x, S({1, 128, 1}), {1}));
  ValueId b2 = Must(b.BroadcastInDim(b1, S({16, 128, 768}), {0, 1, 2}));
  ASSERT_TRUE(b.AddOutput(b2).ok());
  EXPECT_TRUE(RunPassForTest(RunShapeChains, g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);
  EXPECT_EQ(g.nodes[0].attrs.broadcast_dims, std::vector<int64_t>({1}));
}

TEST(ShapeChains, SqueezeThenBroadcastBackIsOneBroadcast) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {64, 1}));
  Attrs sq;
  sq.dims = {1};
  ValueId s = Must(b.AddNode(OpKind::kSqueeze, {x}, sq))[0];
  ValueId b1 = Must(b.BroadcastInDim(s, S({64, 1}), {0}));
  ValueId b2 = Must(b.BroadcastInDim(b1, S({64, 32}), {0, 1}));
  ASSERT_TRUE(b.AddOutput(b2).ok());
  EXPECT_TRUE(RunPassForTest(RunShapeChains, g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::kBroadcastInDim);
  EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);
  EXPECT_EQ(g.nodes[0].attrs.broadcast_dims, std::vector<int64_t>({0, 1}));
}

TEST(ShapeChains, IdentityBroadcastAndExpandForms) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4, 1}));
  ValueId same = Must(b.BroadcastInDim(x, S({4, 1}), {0, 1}));
  Attrs ex;
  ex.shape = S({4, 8});
  ValueId e = Must(b.AddNode(OpKind::kExpand, {same}, ex))[0];
  ASSERT_TRUE(b.AddOutput(e).ok());
  EXPECT_TRUE(RunPassForTest(RunShapeChains, g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::kBroadcastInDim);
  EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);
}

TEST(ShapeChains, ReshapeChainsCompose) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4, 6}));
  Attrs r1, r2;
  r1.shape = S({24});
  r2.shape = S({2, 12});
  ValueId a = Must(b.AddNode(OpKind::kReshape, {x}, r1))[0];
  ValueId c = Must(b.AddNode(OpKind::kReshape, {a}, r2))[0];
  ASSERT_TRUE(b.AddOutput(c).ok());
  EXPECT_TRUE(RunPassForTest(RunShapeChains, g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);
}

}  // namespace
}  // namespace fusiond
