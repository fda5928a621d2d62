#include "compiler/passes/output_copies.h"

#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(OutputCopies, AnInputReturnedAsAnOutputIsCopied) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kDouble, {16, 16}));
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {16, 16}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kAdd, y, y))).ok());
  ASSERT_TRUE(b.AddOutput(x).ok());
  EXPECT_TRUE(RunPassForTest(RunOutputCopies, g));
  const ValueId copy = g.outputs[1];
  EXPECT_NE(copy, x);
  ASSERT_NE(g.def(copy), nullptr);
  EXPECT_EQ(g.def(copy)->op, OpKind::kCast);
  EXPECT_EQ(g.def(copy)->inputs, std::vector<ValueId>{x});
  EXPECT_EQ(g.value(copy).dtype, DataType::kDouble);
  EXPECT_EQ(g.value(copy).shape, g.value(x).shape);
}

TEST(OutputCopies, ComputedOutputsStay) {
  Graph g;
  GraphBuilder b(&g);
  ValueId y = Must(b.DefineTensor("y", DataType::kFloat, {8}));
  ASSERT_TRUE(b.AddOutput(Must(b.Unary(OpKind::kExp, y))).ok());
  EXPECT_FALSE(RunPassForTest(RunOutputCopies, g));
}

}  // namespace
}  // namespace fusiond
