#include "compiler/passes/trivial_reductions.h"

#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(TrivialReductions, SumOverSizeOneAxisIsASqueeze) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {64, 1}));
  ValueId s = Must(b.Reduce(OpKind::kSum, x, {1}, false));
  ASSERT_TRUE(b.AddOutput(s).ok());
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::kSqueeze);
}

TEST(TrivialReductions, KeepdimAndResultTypeGiveACast) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kBFloat16, {64, 1}));
  ValueId s = Must(b.Reduce(OpKind::kMax, x, {1}, true, DataType::kFloat));
  ASSERT_TRUE(b.AddOutput(s).ok());
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::kCast);
}

TEST(TrivialReductions, RealReductionsStay) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {64, 2}));
  ASSERT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, x, {1}, false))).ok());
  EXPECT_FALSE(RunPassForTest(RunTrivialReductions, g));
  EXPECT_EQ(CountOps(g, OpKind::kSum), 1);
}

}  // namespace
}  // namespace fusiond
