#include "compiler/passes/algebra.h"

#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(Algebra, IdentitiesGo) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4}));
  ValueId one = b.DefineConstant(1.0, DataType::kDouble);
  ValueId zero = b.DefineConstant(0.0, DataType::kDouble);
  ValueId v = Must(b.Binary(OpKind::kMul, x, one));
  v = Must(b.Binary(OpKind::kAdd, zero, v));
  v = Must(b.Binary(OpKind::kSub, v, zero));
  v = Must(b.Binary(OpKind::kDiv, v, one));
  v = Must(b.Unary(OpKind::kNeg, v));
  v = Must(b.Unary(OpKind::kNeg, v));
  v = Must(b.Unary(OpKind::kReciprocal, v));
  v = Must(b.Unary(OpKind::kReciprocal, v));
  ASSERT_TRUE(b.AddOutput(v).ok());
  EXPECT_TRUE(RunPassForTest(RunAlgebra, g));
  EXPECT_TRUE(g.nodes.empty());
  EXPECT_EQ(g.outputs[0], g.inputs[0]);
}

TEST(Algebra, KeepsOpsThatChangeTypeOrShape) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kInt32, {4}));
  ValueId one = b.DefineConstant(1.0, DataType::kDouble);  // int * 1.0 is float
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {1}));
  ValueId z = Must(b.DefineTensor("z", DataType::kFloat, {4}));
  ValueId zero = b.DefineConstant(0.0, DataType::kDouble);
  ValueId w = Must(b.Binary(OpKind::kMul, y, z));  // not an identity at all
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kMul, x, one))).ok());
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kAdd, w, zero))).ok());
  EXPECT_TRUE(RunPassForTest(RunAlgebra, g));  // w + 0 goes
  EXPECT_EQ(CountOps(g, OpKind::kMul), 2);
  EXPECT_EQ(CountOps(g, OpKind::kAdd), 0);
}

}  // namespace
}  // namespace fusiond
