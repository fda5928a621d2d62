#include "compiler/passes/cast_chains.h"

#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(CastChains, LosslessRoundTripBecomesTheInput) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kBFloat16, {4, 8}));
  ValueId f = Must(b.Cast(x, DataType::kFloat));
  ValueId back = Must(b.Cast(f, DataType::kBFloat16));
  ValueId y = Must(b.Binary(OpKind::kAdd, back, back));
  ASSERT_TRUE(b.AddOutput(y).ok());
  EXPECT_TRUE(RunPassForTest(RunCastChains, g));
  EXPECT_EQ(CountOps(g, OpKind::kCast), 0);
  EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);
}

TEST(CastChains, NoOpCastDisappears) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4}));
  ValueId c = Must(b.Cast(x, DataType::kFloat));
  ValueId y = Must(b.Unary(OpKind::kExp, c));
  ASSERT_TRUE(b.AddOutput(y).ok());
  EXPECT_TRUE(RunPassForTest(RunCastChains, g));
  EXPECT_EQ(CountOps(g, OpKind::kCast), 0);
}

TEST(CastChains, KeepsTheNarrowestTypeOfALosslessChain) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kBFloat16, {4}));
  ValueId f = Must(b.Cast(x, DataType::kFloat));
  ValueId d = Must(b.Cast(f, DataType::kDouble));
  ASSERT_TRUE(b.AddOutput(d).ok());
  EXPECT_TRUE(RunPassForTest(RunCastChains, g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::kCast);
  EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);
  EXPECT_EQ(*g.nodes[0].attrs.dtype, DataType::kDouble);
}

Graph NarrowingRoundTripThroughBroadcast() {
  Graph g;
  GraphBuilder b(&g);
  ValueId r = Must(b.DefineTensor("r", DataType::kFloat, {16, 1}));
  ValueId h = Must(b.Cast(r, DataType::kBFloat16));
  ValueId bc = Must(b.BroadcastInDim(h, {Extent::Static(16), Extent::Static(32)}, {0, 1}));
  ValueId f = Must(b.Cast(bc, DataType::kFloat));
  EXPECT_TRUE(b.AddOutput(f).ok());
  return g;
}

TEST(CastChains, NarrowingRoundTripIsKeptAndReported) {
  Graph g = NarrowingRoundTripThroughBroadcast();
  PassLog log;
  RunPassForTest(RunCastChains, g, {}, &log);
  EXPECT_EQ(CountOps(g, OpKind::kCast), 2);
  ASSERT_FALSE(log.notes.empty());
  EXPECT_NE(log.notes[0].find("kept the narrowing"), std::string::npos);
}

TEST(CastChains, NarrowingRoundTripGoesWithAllowPrecisionIncrease) {
  Graph g = NarrowingRoundTripThroughBroadcast();
  PassOptions options;
  options.allow_precision_increase = true;
  PassLog log;
  EXPECT_TRUE(RunPassForTest(RunCastChains, g, options, &log));
  EXPECT_EQ(CountOps(g, OpKind::kCast), 0);
  EXPECT_EQ(CountOps(g, OpKind::kBroadcastInDim), 1);
  ASSERT_FALSE(log.notes.empty());
  EXPECT_NE(log.notes[0].find("removed the narrowing"), std::string::npos);
}

TEST(CastChains, LossyChainsStay) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kDouble, {4}));
  ValueId f = Must(b.Cast(x, DataType::kFloat));
  ValueId h = Must(b.Cast(f, DataType::kBFloat16));  // double rounding: keep
  ASSERT_TRUE(b.AddOutput(h).ok());
  EXPECT_FALSE(RunPassForTest(RunCastChains, g));
  EXPECT_EQ(CountOps(g, OpKind::kCast), 2);
}

}  // namespace
}  // namespace fusiond
