#include "compiler/passes/cse.h"

#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(Cse, MergesEqualNodesAndCommutedOperands) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4, 8}));
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {4, 8}));
  ValueId c1 = b.DefineConstant(2.0, DataType::kDouble);
  ValueId c2 = b.DefineConstant(2.0, DataType::kDouble);
  ValueId a = Must(b.Binary(OpKind::kMul, x, y));
  ValueId a2 = Must(b.Binary(OpKind::kMul, y, x));
  ValueId s1 = Must(b.Binary(OpKind::kSub, a, c1));
  ValueId s2 = Must(b.Binary(OpKind::kSub, a2, c2));
  ValueId r1 = Must(b.Reduce(OpKind::kSum, s1, {1}, false));
  ValueId r2 = Must(b.Reduce(OpKind::kSum, s2, {1}, false));
  ValueId r3 = Must(b.Reduce(OpKind::kSum, s2, {0}, false));
  ASSERT_TRUE(b.AddOutput(r1).ok());
  ASSERT_TRUE(b.AddOutput(r2).ok());
  ASSERT_TRUE(b.AddOutput(r3).ok());
  EXPECT_TRUE(RunPassForTest(RunCse, g));
  EXPECT_EQ(CountOps(g, OpKind::kMul), 1);
  EXPECT_EQ(CountOps(g, OpKind::kSub), 1);
  EXPECT_EQ(CountOps(g, OpKind::kSum), 2);  // different axes stay apart
  EXPECT_EQ(g.outputs[0], g.outputs[1]);
}

TEST(Cse, SubtractionOperandsAreOrdered) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4}));
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {4}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kSub, x, y))).ok());
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kSub, y, x))).ok());
  EXPECT_FALSE(RunPassForTest(RunCse, g));
  EXPECT_EQ(CountOps(g, OpKind::kSub), 2);
}

}  // namespace
}  // namespace fusiond
