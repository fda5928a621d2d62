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

// A reshape of an input that other nodes read too is no input view, and a
// reshape of a reshape no output view: its operand is copied, so the output
// is a reshape of a computed value.
TEST(OutputCopies, AReshapeOfAnUncomputedValueReshapesACopy) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {4, 8}));
  Attrs r;
  r.shape = {Extent::Static(8), Extent::Static(4)};
  ValueId view = Must(b.AddNode(OpKind::kReshape, {x}, r))[0];
  ASSERT_TRUE(b.AddOutput(view).ok());
  ASSERT_TRUE(b.AddOutput(Must(b.Unary(OpKind::kExp, x))).ok());
  EXPECT_TRUE(RunPassForTest(RunOutputCopies, g));
  const Node* out = g.def(g.outputs[0]);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->op, OpKind::kReshape);
  const Node* copy = g.def(out->inputs[0]);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->op, OpKind::kCast);
  EXPECT_EQ(copy->inputs, std::vector<ValueId>{x});
  EXPECT_EQ(g.nodes.size(), 3u);  // the copy, its reshape, exp: the old reshape is gone

  // A reshape of a reshape of an input (reshape_views' input view).
  Graph h;
  GraphBuilder c(&h);
  ValueId y = Must(c.DefineTensor("y", DataType::kFloat, {4, 8}));
  Attrs r3;
  r3.shape = {Extent::Static(4), Extent::Static(2), Extent::Static(4)};
  ValueId in_view = Must(c.AddNode(OpKind::kReshape, {y}, r3))[0];
  ASSERT_TRUE(c.AddOutput(Must(c.AddNode(OpKind::kReshape, {in_view}, r))[0]).ok());
  EXPECT_TRUE(RunPassForTest(RunOutputCopies, h));
  EXPECT_EQ(h.def(h.def(h.outputs[0])->inputs[0])->op, OpKind::kCast);
  // A reshape of a computed value is an output view already.
  EXPECT_FALSE(RunPassForTest(RunOutputCopies, h));
}

}  // namespace
}  // namespace fusiond
