#include "compiler/ir/ir_proto.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace fusiond {
namespace {

TEST(IrProto, RoundTripSymbolic) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kBFloat16, {-1, -1});
  ValueId w = *b.DefineTensor("T1", DataType::kBFloat16, {-1});
  ValueId wb = *b.BroadcastInDim(w, g.value(x).shape, {1});
  g.value(wb).name = "T2";
  ValueId y = *b.Binary(OpKind::kMul, x, wb);
  g.value(y).name = "T3";
  ASSERT_TRUE(b.AddOutput(y).ok());
  auto p = ToProto(g);
  auto g2 = FromProto(p);
  ASSERT_TRUE(g2.ok()) << g2.status();
  EXPECT_TRUE(VerifyGraph(*g2).ok());
  EXPECT_EQ(PrintGraph(g), PrintGraph(*g2));
  EXPECT_EQ(p.SerializeAsString(), ToProto(*g2).SerializeAsString());
}

// A later op binds a symbol to a static size (broadcasting a [T0.size(1)]
// value to [4]); the wire form must keep the links that made the other
// input's extent equal to that symbol, so T1.size(0) is 4 after the round
// trip too (the attributes written as a static 4, the link was lost; found
// by fuzzing). The bound axes read back as static sizes.
TEST(IrProto, RoundTripKeepsSymbolsBoundByLaterOps) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, -1});
  ValueId w = *b.DefineTensor("T1", DataType::kFloat, {-1});
  ValueId wb = *b.BroadcastInDim(w, g.value(x).shape, {1});
  ValueId s = *b.Reduce(OpKind::kSum, *b.Binary(OpKind::kMul, x, wb), {0}, false);
  ASSERT_TRUE(b.AddOutput(*b.BroadcastInDim(s, {Extent::Static(4)}, {0})).ok());
  ASSERT_EQ(g.Canonical(g.value(w).shape[0]).size, 4);
  // Bound axes go out as their sizes (a segment may lack the op that bound them).
  const auto p = ToProto(g);
  EXPECT_EQ(p.inputs(1).sizes(0), 4);
  EXPECT_EQ(p.inputs(0).sizes(0), -1);
  auto g2 = FromProto(p);
  ASSERT_TRUE(g2.ok()) << g2.status();
  EXPECT_EQ(g2->Canonical(g2->value(g2->inputs[1]).shape[0]).size, 4) << PrintGraph(*g2);
  EXPECT_EQ(g2->Canonical(g2->value(g2->inputs[0]).shape[1]).size, 4);
  EXPECT_FALSE(g2->Canonical(g2->value(g2->inputs[0]).shape[0]).is_static());
}

// expand's -1 ("keep this axis") is recorded as the operand's extent: the
// marker names no input axis, so printing it read past the symbol table and
// the wire form wrote a garbage axis (fd.ops.expand(T, shape=[T0.size(0),
// T0.size(1), -1]) crashed fusionc parse and failed fusionc compile).
TEST(IrProto, ExpandKeepingAnAxisPrintsAndRoundTrips) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, -1});
  ValueId h = *b.DefineTensor("T1", DataType::kFloat, {-1});
  ValueId hb =
      *b.BroadcastInDim(h, {Extent::Static(1), Extent::Static(1), g.value(h).shape[0]}, {2});
  Attrs a;
  a.shape = {g.value(x).shape[0], g.value(x).shape[1], Extent{}};
  auto e = b.AddNode(OpKind::kExpand, {hb}, a);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_TRUE(b.AddOutput((*e)[0]).ok());
  const Node& n = g.nodes.back();
  EXPECT_EQ(g.Canonical(n.attrs.shape[2]), g.Canonical(g.value(h).shape[0]));
  EXPECT_NE(PrintGraph(g).find("T1.size(0)]"), std::string::npos) << PrintGraph(g);
  auto g2 = FromProto(ToProto(g));
  ASSERT_TRUE(g2.ok()) << g2.status();
  EXPECT_TRUE(VerifyGraph(*g2).ok());
  EXPECT_EQ(PrintGraph(g), PrintGraph(*g2));
}

// An int32 constant of -1e34 has no int64 value (converting it was undefined
// behavior in code generation; found by fuzzing).
TEST(IrProto, RejectsIntegerConstantsOutOfRange) {
  fusiond::v1::FusionGraph p;
  p.set_version(1);
  auto* c = p.add_constants();
  c->set_dtype(fusiond::v1::INT32);
  c->set_value(-1.03846e34);
  p.add_outputs(0);
  auto g = FromProto(p);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("within the int64 range"), std::string::npos) << g.status();
}

TEST(IrProto, RejectsBadReference) {
  fusiond::v1::FusionGraph p;
  p.set_version(1);
  auto* in = p.add_inputs();
  in->set_dtype(fusiond::v1::FLOAT32);
  in->set_is_tensor(true);
  in->add_sizes(4);
  auto* n = p.add_nodes();
  n->set_op(fusiond::v1::EXP);
  n->add_operands(7);
  p.add_outputs(1);
  auto g = FromProto(p);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("node 0 (exp)"), std::string::npos) << g.status();
}

// A scalar broadcast to a shape of one extent `e`.
fusiond::v1::FusionGraph BroadcastTo(const fusiond::v1::Extent& e) {
  fusiond::v1::FusionGraph p;
  p.set_version(1);
  auto* c = p.add_constants();
  c->set_dtype(fusiond::v1::FLOAT32);
  c->set_value(1);
  auto* n = p.add_nodes();
  n->set_op(fusiond::v1::BROADCAST_IN_DIM);
  n->add_operands(0);
  *n->add_shape() = e;
  p.add_outputs(1);
  return p;
}

// An extent with neither kind set was read as a static 0; a static 0 set
// explicitly is still one.
TEST(IrProto, ExtentSetsOneKind) {
  auto unset = FromProto(BroadcastTo(fusiond::v1::Extent()));
  EXPECT_EQ(unset.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      unset.status().message().find(
          "node 0 (broadcast_in_dim): shape extent 0 sets neither static_size nor input_axis"),
      std::string::npos)
      << unset.status();
  fusiond::v1::Extent zero;
  zero.set_static_size(0);
  auto g = FromProto(BroadcastTo(zero));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->value(g->outputs[0]).shape[0].size, 0);
}

TEST(IrProto, ContiguityIsOneZeroOrMinusOne) {
  fusiond::v1::FusionGraph p;
  p.set_version(1);
  auto* in = p.add_inputs();
  in->set_name("T0");
  in->set_dtype(fusiond::v1::FLOAT32);
  in->set_is_tensor(true);
  in->add_sizes(4);
  in->add_sizes(1);
  auto* n = p.add_nodes();
  n->set_op(fusiond::v1::NEG);
  n->add_operands(0);
  p.add_outputs(1);
  for (int c : {1, 0}) {
    for (int d : {1, 0, -1}) {
      in->clear_contiguity();
      in->add_contiguity(c);
      in->add_contiguity(d);
      EXPECT_TRUE(FromProto(p).ok()) << c << ", " << d << ": " << FromProto(p).status();
    }
  }
  in->clear_contiguity();
  in->add_contiguity(5);
  in->add_contiguity(-7);
  auto g = FromProto(p);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("input 0 (T0): contiguity[0] is 5; each is 1 (contiguous)"),
            std::string::npos)
      << g.status();
  in->set_contiguity(0, 1);
  EXPECT_NE(FromProto(p).status().message().find("contiguity[1] is -7"), std::string::npos);
}

TEST(IrProto, RejectsNewerVersion) {
  fusiond::v1::FusionGraph p;
  p.set_version(2);
  EXPECT_EQ(FromProto(p).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fusiond
