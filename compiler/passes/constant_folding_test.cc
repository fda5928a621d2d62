#include "compiler/passes/constant_folding.h"

#include "compiler/passes/rewrite.h"
#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(ConstantFolding, FoldsScalarExpressionsAndStaticSizes) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {16, 8192}));
  ValueId n = b.DefineConstant(8192.0, DataType::kDouble);
  ValueId r = Must(b.Unary(OpKind::kReciprocal, n));
  ValueId size = Must(b.Size(x, 1));
  ValueId rs = Must(b.Unary(OpKind::kReciprocal, size));
  ValueId m = Must(b.Binary(OpKind::kMul, x, r));
  ValueId m2 = Must(b.Binary(OpKind::kMul, m, rs));
  ASSERT_TRUE(b.AddOutput(m2).ok());
  EXPECT_TRUE(RunPassForTest(RunConstantFolding, g));
  ASSERT_EQ(g.nodes.size(), 2u);
  for (const Node& node : g.nodes) {
    auto c = ConstantOf(g, node.inputs[1]);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(*c, 1.0 / 8192.0);
  }
}

TEST(ConstantFolding, SymbolicSizesStay) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {-1, -1}));
  ValueId size = Must(b.Size(x, 1));
  ValueId rs = Must(b.Unary(OpKind::kReciprocal, size));
  ValueId m = Must(b.Binary(OpKind::kMul, x, rs));
  ASSERT_TRUE(b.AddOutput(m).ok());
  EXPECT_FALSE(RunPassForTest(RunConstantFolding, g));
  EXPECT_EQ(CountOps(g, OpKind::kSize), 1);
}

TEST(ConstantFolding, RoundsToTheResultType) {
  Attrs none;
  EXPECT_EQ(*FoldScalar(OpKind::kDiv, {1, 3}, {DataType::kFloat, DataType::kFloat},
                        DataType::kFloat, none),
            static_cast<double>(1.0f / 3.0f));
  Attrs cast;
  cast.dtype = DataType::kInt64;
  EXPECT_EQ(*FoldScalar(OpKind::kCast, {-2.7}, {DataType::kDouble}, DataType::kInt64, cast), -2.0);
  EXPECT_FALSE(FoldScalar(OpKind::kAdd, {1, 2}, {DataType::kBFloat16, DataType::kBFloat16},
                          DataType::kBFloat16, none)
                   .has_value());
}

}  // namespace
}  // namespace fusiond
