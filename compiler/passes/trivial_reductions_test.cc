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

// x[N] broadcast to [M, N] along axis 1 (M new): `dtype` and extents.
struct Repeated {
  Graph g;
  ValueId x = kNone, bx = kNone;
  Repeated(DataType dtype, int64_t m, int64_t n) {
    GraphBuilder b(&g);
    x = Must(b.DefineTensor("x", dtype, {n}));
    const Extent em = m < 0 ? Extent::Symbolic(g.value(x).shape[0].symbol) : Extent::Static(m);
    bx = Must(b.BroadcastInDim(x, {em, g.value(x).shape[0]}, {1}));
  }
  ValueId Reduce(OpKind op, std::vector<int64_t> dims, bool keepdim,
                 std::optional<DataType> dtype = std::nullopt) {
    GraphBuilder b(&g);
    ValueId r = Must(b.Reduce(op, bx, std::move(dims), keepdim, dtype));
    EXPECT_TRUE(b.AddOutput(r).ok());
    return r;
  }
  const Node* Def(int output = 0) const { return g.def(g.outputs[output]); }
};

// The constant a mul node multiplies by, or -1.
double MulConstant(const Graph& g, const Node* n) {
  if (n == nullptr || n->op != OpKind::kMul) return -1;
  const Value& k = g.value(n->inputs[1]);
  return k.constant ? *k.constant : -1;
}

TEST(TrivialReductions, SumOverABroadcastAxisMultipliesByItsExtent) {
  Repeated r(DataType::kFloat, 64, 128);
  r.Reduce(OpKind::kSum, {0}, false);
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, r.g));
  EXPECT_EQ(CountOps(r.g, OpKind::kSum), 0);
  EXPECT_EQ(MulConstant(r.g, r.Def()), 64);
  EXPECT_EQ(r.g.value(r.g.outputs[0]).shape.size(), 1u);
  EXPECT_EQ(r.g.value(r.g.def(r.g.outputs[0])->inputs[0]).dtype, DataType::kFloat);
}

TEST(TrivialReductions, Bf16SumMultipliesInFloatAndCastsBack) {
  Repeated r(DataType::kBFloat16, 64, 128);
  r.Reduce(OpKind::kSum, {0}, true);
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, r.g));
  const Node* cast = r.Def();
  ASSERT_EQ(cast->op, OpKind::kCast);
  EXPECT_EQ(r.g.value(r.g.outputs[0]).dtype, DataType::kBFloat16);
  const Node* mul = r.g.def(cast->inputs[0]);
  EXPECT_EQ(MulConstant(r.g, mul), 64);
  EXPECT_EQ(r.g.value(mul->outputs[0]).dtype, DataType::kFloat);
  // keepdim: [1, 128], as the sum gave.
  EXPECT_EQ(r.g.value(r.g.outputs[0]).shape[0], Extent::Static(1));
  EXPECT_EQ(r.g.value(r.g.outputs[0]).shape[1], Extent::Static(128));
}

TEST(TrivialReductions, IntegerSumStaysInteger) {
  Repeated r(DataType::kInt32, 6, 4);
  r.Reduce(OpKind::kSum, {0}, false);  // int32 -> int64
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, r.g));
  EXPECT_EQ(MulConstant(r.g, r.Def()), 6);
  EXPECT_EQ(r.g.value(r.g.outputs[0]).dtype, DataType::kInt64);
  EXPECT_EQ(CountOps(r.g, OpKind::kCast), 1);
}

TEST(TrivialReductions, SymbolicExtentIsASizeValue) {
  Repeated r(DataType::kFloat, -1, -1);  // [s0] to [s0, s0]
  r.Reduce(OpKind::kSum, {0}, false);
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, r.g));
  const Node* mul = r.Def();
  ASSERT_EQ(mul->op, OpKind::kMul);
  const Node* size = r.g.def(mul->inputs[1]);
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size->op, OpKind::kSize);
  EXPECT_EQ(size->inputs[0], r.g.inputs[0]);
}

TEST(TrivialReductions, MaxAndMinOverABroadcastAxisAreTheOperand) {
  for (OpKind op : {OpKind::kMax, OpKind::kMin}) {
    Repeated r(DataType::kBFloat16, 64, 128);
    r.Reduce(op, {0}, false, DataType::kFloat);
    EXPECT_TRUE(RunPassForTest(RunTrivialReductions, r.g));
    EXPECT_EQ(CountOps(r.g, op), 0);
    ASSERT_EQ(r.Def()->op, OpKind::kCast);
  }
}

TEST(TrivialReductions, MixedAxesReduceOnlyTheRealOnes) {
  // x[32, 128] broadcast to [64, 32, 128], summed over axes 0 and 2: x
  // summed over its axis 1, times 64.
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {32, 128}));
  ValueId bx = Must(
      b.BroadcastInDim(x, {Extent::Static(64), Extent::Static(32), Extent::Static(128)}, {1, 2}));
  ASSERT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, bx, {0, 2}, false))).ok());
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, g));
  const Node* mul = g.def(g.outputs[0]);
  EXPECT_EQ(MulConstant(g, mul), 64);
  const Node* sum = g.def(mul->inputs[0]);
  ASSERT_NE(sum, nullptr);
  ASSERT_EQ(sum->op, OpKind::kSum);
  EXPECT_EQ(sum->attrs.dims, std::vector<int64_t>{1});
  EXPECT_EQ(sum->inputs[0], x);  // over [32, 128], not [64, 32, 128]
}

TEST(TrivialReductions, AnOperandAxisOfExtentOneMovesInsteadOfASqueeze) {
  // y[1] broadcast to [64, 128] along axis 0, summed over axis 0: y
  // broadcast to [128] (its axis now on the kept one), times 64.
  Graph g;
  GraphBuilder b(&g);
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {1}));
  ValueId by = Must(b.BroadcastInDim(y, {Extent::Static(64), Extent::Static(128)}, {0}));
  ASSERT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, by, {0}, false))).ok());
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, g));
  EXPECT_EQ(CountOps(g, OpKind::kSqueeze), 0);
  const Node* bcast = g.def(g.def(g.outputs[0])->inputs[0]);
  ASSERT_NE(bcast, nullptr);
  ASSERT_EQ(bcast->op, OpKind::kBroadcastInDim);
  EXPECT_EQ(bcast->attrs.broadcast_dims, std::vector<int64_t>{0});
}

TEST(TrivialReductions, WithNoAxisToMoveToTheResultIsSqueezed) {
  // y[1, 1] to [64, 128] summed over axis 1: y's two axes cannot both stay
  // in a [64]; y to [64, 1] times 128, squeezed.
  Graph g;
  GraphBuilder b(&g);
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {1, 1}));
  ValueId by = Must(b.BroadcastInDim(y, {Extent::Static(64), Extent::Static(128)}, {0, 1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, by, {1}, false))).ok());
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, g));
  const Node* squeeze = g.def(g.outputs[0]);
  ASSERT_EQ(squeeze->op, OpKind::kSqueeze);
  EXPECT_EQ(squeeze->attrs.dims, std::vector<int64_t>{1});
  EXPECT_EQ(MulConstant(g, g.def(squeeze->inputs[0])), 128);
  EXPECT_EQ(CountOps(g, OpKind::kSum), 0);
}

TEST(TrivialReductions, VarOverABroadcastAxisIsZero) {
  Repeated r(DataType::kFloat, 64, 128);
  GraphBuilder b(&r.g);
  Attrs a;
  a.dims = {0};
  a.correction = 1;
  auto vm = Must(b.AddNode(OpKind::kVarMean, {r.bx}, a));
  ASSERT_TRUE(b.AddOutput(vm[0]).ok());
  ASSERT_TRUE(b.AddOutput(vm[1]).ok());
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, r.g));
  EXPECT_EQ(CountOps(r.g, OpKind::kVarMean), 0);
  EXPECT_EQ(r.Def(0)->op, OpKind::kSub);  // x - x: 0, NaN where x is NaN or infinite
  EXPECT_EQ(r.g.outputs[1], r.g.inputs[0]);
}

TEST(TrivialReductions, ThroughPointwiseOpsOfBroadcasts) {
  // exp(bx) * y[1, 128] repeats along axis 0 too (keepdim: y keeps its extent 1 there).
  Repeated r(DataType::kFloat, 64, 128);
  GraphBuilder b(&r.g);
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {1, 128}));
  ValueId p = Must(b.Binary(OpKind::kMul, Must(b.Unary(OpKind::kExp, r.bx)), y));
  ASSERT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, p, {0}, true))).ok());
  EXPECT_TRUE(RunPassForTest(RunTrivialReductions, r.g));
  EXPECT_EQ(CountOps(r.g, OpKind::kSum), 0);
  EXPECT_EQ(MulConstant(r.g, r.Def()), 64);
}

TEST(TrivialReductions, LeftAloneWhereTheRewriteWouldChangeResults) {
  {  // An empty broadcast axis: the sum is 0 and the max -inf, whatever x is.
    Repeated r(DataType::kFloat, 0, 128);
    r.Reduce(OpKind::kMax, {0}, false);
    EXPECT_FALSE(RunPassForTest(RunTrivialReductions, r.g));
  }
  {  // var with a correction as large as the count: 0 / 0.
    Repeated r(DataType::kFloat, 2, 128);
    GraphBuilder b(&r.g);
    Attrs a;
    a.dims = {0};
    a.correction = 2;
    ASSERT_TRUE(b.AddOutput(Must(b.AddNode(OpKind::kVar, {r.bx}, a))[0]).ok());
    EXPECT_FALSE(RunPassForTest(RunTrivialReductions, r.g));
  }
  {  // A float summed into an integer.
    Repeated r(DataType::kFloat, 4, 128);
    r.Reduce(OpKind::kSum, {0}, false, DataType::kInt64);
    EXPECT_FALSE(RunPassForTest(RunTrivialReductions, r.g));
  }
  {  // A one-element result stays a reduction.
    Repeated r(DataType::kFloat, 4, 1);
    r.Reduce(OpKind::kSum, {0, 1}, true);
    EXPECT_FALSE(RunPassForTest(RunTrivialReductions, r.g));
  }
  {  // prod would be a power.
    Repeated r(DataType::kFloat, 4, 128);
    r.Reduce(OpKind::kProd, {0}, false);
    EXPECT_FALSE(RunPassForTest(RunTrivialReductions, r.g));
  }
}

}  // namespace
}  // namespace fusiond
