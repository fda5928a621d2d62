#include "compiler/passes/pow_constant.h"

#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

Graph PowGraph(DataType t, double exponent) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", t, {8, 4}));
  ValueId e = b.DefineConstant(exponent, DataType::kDouble);
  ValueId p = Must(b.Binary(OpKind::kPow, x, e));
  EXPECT_TRUE(b.AddOutput(p).ok());
  return g;
}

TEST(PowConstant, CubeIsTwoMultiplications) {
  Graph g = PowGraph(DataType::kFloat, 3.0);
  EXPECT_TRUE(RunPassForTest(RunPowConstant, g));
  EXPECT_EQ(CountOps(g, OpKind::kPow), 0);
  EXPECT_EQ(CountOps(g, OpKind::kMul), 2);
}

TEST(PowConstant, EighthPowerIsThreeSquarings) {
  Graph g = PowGraph(DataType::kFloat, 8.0);
  EXPECT_TRUE(RunPassForTest(RunPowConstant, g));
  EXPECT_EQ(CountOps(g, OpKind::kMul), 3);
}

TEST(PowConstant, NegativeIntegerAddsAReciprocal) {
  Graph g = PowGraph(DataType::kFloat, -2.0);
  EXPECT_TRUE(RunPassForTest(RunPowConstant, g));
  EXPECT_EQ(CountOps(g, OpKind::kMul), 1);
  EXPECT_EQ(CountOps(g, OpKind::kReciprocal), 1);
}

TEST(PowConstant, SixteenBitPowComputesInFloatAndRoundsOnce) {
  Graph g = PowGraph(DataType::kBFloat16, 2.0);
  EXPECT_TRUE(RunPassForTest(RunPowConstant, g));
  EXPECT_EQ(CountOps(g, OpKind::kCast), 2);
  const Node& mul = g.nodes[1];
  EXPECT_EQ(mul.op, OpKind::kMul);
  EXPECT_EQ(g.value(mul.outputs[0]).dtype, DataType::kFloat);
  EXPECT_EQ(g.value(g.outputs[0]).dtype, DataType::kBFloat16);
}

TEST(PowConstant, SpecialExponents) {
  Graph one = PowGraph(DataType::kFloat, 1.0);
  EXPECT_TRUE(RunPassForTest(RunPowConstant, one));
  EXPECT_TRUE(one.nodes.empty());
  EXPECT_EQ(one.outputs[0], one.inputs[0]);

  Graph zero = PowGraph(DataType::kFloat, 0.0);
  EXPECT_TRUE(RunPassForTest(RunPowConstant, zero));
  EXPECT_EQ(CountOps(zero, OpKind::kPow), 0);
  EXPECT_EQ(CountOps(zero, OpKind::kWhere), 1);

  Graph half = PowGraph(DataType::kFloat, 0.5);
  EXPECT_TRUE(RunPassForTest(RunPowConstant, half));
  EXPECT_EQ(CountOps(half, OpKind::kSqrt), 1);

  Graph rhalf = PowGraph(DataType::kFloat, -0.5);
  EXPECT_TRUE(RunPassForTest(RunPowConstant, rhalf));
  EXPECT_EQ(CountOps(rhalf, OpKind::kRsqrt), 1);
}

TEST(PowConstant, OtherExponentsStay) {
  for (double e : {2.5, 9.0, -5.0, 1.5}) {
    Graph g = PowGraph(DataType::kFloat, e);
    EXPECT_FALSE(RunPassForTest(RunPowConstant, g)) << e;
    EXPECT_EQ(CountOps(g, OpKind::kPow), 1) << e;
  }
}

}  // namespace
}  // namespace fusiond
