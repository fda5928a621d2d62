#include "compiler/passes/rewrite.h"

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(Rewrite, CompactRestoresTopologicalOrderAndDropsDeadCode) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {-1, 4}));
  ValueId unused = b.DefineConstant(7.0, DataType::kDouble);
  (void)unused;
  ValueId e = Must(b.Unary(OpKind::kExp, x));
  ValueId dead = Must(b.Unary(OpKind::kLog, x));
  (void)dead;
  ASSERT_TRUE(b.AddOutput(e).ok());
  // A node appended at the end now feeds the first node.
  ValueId n = Must(AddOp(g, OpKind::kNeg, {x}));
  g.nodes[0].inputs[0] = n;
  EXPECT_FALSE(VerifyGraph(g).ok());  // read before defined
  EXPECT_TRUE(Compact(g));
  ASSERT_TRUE(VerifyGraph(g).ok()) << PrintGraph(g);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, OpKind::kNeg);
  EXPECT_EQ(g.nodes[1].op, OpKind::kExp);
  EXPECT_EQ(g.values.size(), 3u);  // x, neg, exp: the constant and log are gone
  EXPECT_EQ(g.symbols[0].input, g.inputs[0]);
  EXPECT_FALSE(Compact(g));  // nothing left to remove
}

TEST(Rewrite, ReplaceAllUsesCoversOutputs) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4}));
  ValueId c = Must(b.Cast(x, DataType::kFloat));
  ValueId e = Must(b.Unary(OpKind::kExp, c));
  ASSERT_TRUE(b.AddOutput(c).ok());
  ASSERT_TRUE(b.AddOutput(e).ok());
  ReplaceAllUses(g, c, x);
  EXPECT_EQ(g.outputs[0], x);
  EXPECT_EQ(g.node(1).inputs[0], x);
  Compact(g);
  EXPECT_TRUE(VerifyGraph(g).ok());
  EXPECT_EQ(g.nodes.size(), 1u);
}

TEST(Rewrite, MakeConstantReusesEqualConstants) {
  Graph g;
  GraphBuilder b(&g);
  ValueId one = b.DefineConstant(1.0, DataType::kFloat);
  EXPECT_EQ(MakeConstant(g, 1.0, DataType::kFloat), one);
  EXPECT_NE(MakeConstant(g, 1.0, DataType::kDouble), one);
  EXPECT_NE(MakeConstant(g, -0.0, DataType::kFloat), MakeConstant(g, 0.0, DataType::kFloat));
}

}  // namespace
}  // namespace fusiond
