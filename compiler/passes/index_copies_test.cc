#include "compiler/passes/index_copies.h"

#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

// The node defining v's operand k.
const Node& OperandDef(const Graph& g, ValueId v, int k) { return *g.def(g.def(v)->inputs[k]); }

TEST(IndexCopies, AnIotaBroadcastAlongRowsAndColumnsGetsTwoCopies) {
  // A causal mask: iota(8) broadcast along each axis of [8, 8], compared.
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {8, 8}));
  Attrs iota;
  iota.shape = {Extent::Static(8)};
  iota.dtype = DataType::kInt64;
  ValueId i = Must(b.AddNode(
      OpKind::kIota, {b.DefineConstant(0, DataType::kInt64), b.DefineConstant(1, DataType::kInt64)},
      iota))[0];
  ValueId c = Must(b.Cast(i, DataType::kFloat));
  ValueId rows = Must(b.BroadcastInDim(c, {Extent::Static(8), Extent::Static(8)}, {0}));
  ValueId cols = Must(b.BroadcastInDim(c, {Extent::Static(8), Extent::Static(8)}, {1}));
  ValueId keep = Must(b.Binary(OpKind::kGe, rows, cols));
  ASSERT_TRUE(b.AddOutput(Must(b.Where(keep, x, b.DefineConstant(0, DataType::kDouble)))).ok());
  EXPECT_TRUE(RunPassForTest(RunIndexCopies, g));
  const ValueId ge = g.def(g.outputs[0])->inputs[0];
  const Node& r = OperandDef(g, ge, 0);
  const Node& s = OperandDef(g, ge, 1);
  ASSERT_EQ(r.op, OpKind::kBroadcastInDim);
  ASSERT_EQ(s.op, OpKind::kBroadcastInDim);
  // Each broadcast reads its own cast of its own iota.
  EXPECT_NE(r.inputs[0], s.inputs[0]);
  EXPECT_NE(g.def(r.inputs[0])->inputs[0], g.def(s.inputs[0])->inputs[0]);
  EXPECT_EQ(g.def(g.def(s.inputs[0])->inputs[0])->op, OpKind::kIota);
  int iotas = 0;
  for (const Node& n : g.nodes) iotas += n.op == OpKind::kIota;
  EXPECT_EQ(iotas, 2);
  EXPECT_FALSE(RunPassForTest(RunIndexCopies, g));  // nothing shared is left
}

TEST(IndexCopies, ValuesReadFromInputsAndUnbroadcastIndicesStay) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {8}));
  Attrs u;
  u.shape = {Extent::Static(8)};
  u.dtype = DataType::kFloat;
  ValueId r = Must(
      b.AddNode(OpKind::kUniform,
                {b.DefineConstant(0, DataType::kDouble), b.DefineConstant(1, DataType::kDouble),
                 b.DefineConstant(0, DataType::kInt64), b.DefineConstant(0, DataType::kInt64)},
                u))[0];
  // A dropout mask read twice element-wise: one random draw, no copies.
  ValueId keep = Must(b.Binary(OpKind::kLt, r, b.DefineConstant(0.9, DataType::kDouble)));
  ASSERT_TRUE(b.AddOutput(Must(b.Where(keep, x, b.DefineConstant(0, DataType::kDouble)))).ok());
  ASSERT_TRUE(b.AddOutput(keep).ok());
  // An input broadcast along both axes is not an index value.
  ValueId rows = Must(b.BroadcastInDim(x, {Extent::Static(8), Extent::Static(8)}, {0}));
  ValueId cols = Must(b.BroadcastInDim(x, {Extent::Static(8), Extent::Static(8)}, {1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kSub, rows, cols))).ok());
  EXPECT_FALSE(RunPassForTest(RunIndexCopies, g));
}

TEST(IndexCopies, AnIndexValueReadThroughAPermuteGetsItsOwnCopy) {
  // iota broadcast along the rows, compared with its own transpose.
  Graph g;
  GraphBuilder b(&g);
  Attrs iota;
  iota.shape = {Extent::Static(8)};
  iota.dtype = DataType::kInt64;
  ValueId i = Must(b.AddNode(
      OpKind::kIota, {b.DefineConstant(0, DataType::kInt64), b.DefineConstant(1, DataType::kInt64)},
      iota))[0];
  ValueId rows = Must(b.BroadcastInDim(i, {Extent::Static(8), Extent::Static(8)}, {0}));
  Attrs perm;
  perm.dims = {1, 0};
  ValueId cols = Must(b.AddNode(OpKind::kPermute, {rows}, perm))[0];
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kGe, rows, cols))).ok());
  EXPECT_TRUE(RunPassForTest(RunIndexCopies, g));
  const Node& ge = *g.def(g.outputs[0]);
  const Node& p = *g.def(ge.inputs[1]);
  ASSERT_EQ(p.op, OpKind::kPermute);
  EXPECT_NE(p.inputs[0], ge.inputs[0]);  // the permute reads a copy of the broadcast
  EXPECT_NE(g.def(p.inputs[0])->inputs[0], g.def(ge.inputs[0])->inputs[0]);
}

}  // namespace
}  // namespace fusiond
