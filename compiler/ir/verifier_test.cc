#include "compiler/ir/verifier.h"

#include <gtest/gtest.h>

#include "compiler/ir/builder.h"
#include "compiler/ir/ir_proto.h"

namespace fusiond {
namespace {

Graph Small() {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {4, 8});
  ValueId e = *b.Unary(OpKind::kExp, x);
  ValueId s = *b.Reduce(OpKind::kSum, e, {1}, false);
  (void)b.AddOutput(s);
  return g;
}

TEST(Verifier, AcceptsBuiltGraph) { EXPECT_TRUE(VerifyGraph(Small()).ok()); }

TEST(Verifier, RejectsUseBeforeDefinition) {
  Graph g = Small();
  std::swap(g.nodes[0], g.nodes[1]);
  g.nodes[0].id = 0;
  g.nodes[1].id = 1;
  absl::Status s = VerifyGraph(g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("before it is defined"), std::string::npos) << s;
}

TEST(Verifier, RejectsWrongType) {
  Graph g = Small();
  g.values[g.nodes[1].outputs[0]].dtype = DataType::kHalf;
  EXPECT_FALSE(VerifyGraph(g).ok());
}

TEST(Verifier, RejectsDanglingOperand) {
  Graph g = Small();
  g.nodes[1].inputs[0] = 99;
  EXPECT_FALSE(VerifyGraph(g).ok());
}

// Attributes an op does not read are refused, in memory and on the wire
// (stray `dims` on an add were accepted silently).
TEST(Verifier, RejectsStrayAttributes) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {4, 8});
  ValueId y = *b.Binary(OpKind::kAdd, x, x);
  ValueId s = *b.Reduce(OpKind::kSum, y, {1}, true);
  (void)b.AddOutput(s);
  ASSERT_TRUE(VerifyGraph(g).ok());
  Graph bad = g;
  bad.nodes[0].attrs.dims = {0};
  absl::Status st = VerifyGraph(bad);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("node 0 (add): sets dims, which add does not read (it reads none)"),
            std::string::npos)
      << st;
  bad = g;
  bad.nodes[1].attrs.correction = 1;
  bad.nodes[1].attrs.axis = 2;
  st = VerifyGraph(bad);
  EXPECT_NE(st.message().find("sets correction, axis, which sum does not read (it reads dims, "
                              "keepdim, dtype)"),
            std::string::npos)
      << st;
}

TEST(Verifier, StrayAttributesPerOp) {
  Attrs a;
  EXPECT_EQ(StrayAttributes(OpKind::kAdd, a), "");
  a.dtype = DataType::kHalf;
  EXPECT_EQ(StrayAttributes(OpKind::kCast, a), "");
  EXPECT_NE(StrayAttributes(OpKind::kExp, a), "");
  a = Attrs{};
  a.correction = 1;
  a.dims = {1};
  EXPECT_EQ(StrayAttributes(OpKind::kVar, a), "");
  EXPECT_EQ(StrayAttributes(OpKind::kVarMean, a), "");
  EXPECT_NE(StrayAttributes(OpKind::kSum, a), "");
  a = Attrs{};
  a.is_broadcast_dim = {true, false};
  EXPECT_EQ(StrayAttributes(OpKind::kBroadcast, a), "");
  EXPECT_NE(StrayAttributes(OpKind::kBroadcastInDim, a), "");
  a = Attrs{};
  a.axis = 1;
  EXPECT_EQ(StrayAttributes(OpKind::kSize, a), "");
  EXPECT_NE(StrayAttributes(OpKind::kPermute, a), "");
}

TEST(Verifier, FromProtoRejectsStrayAttributes) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {4, 8});
  (void)b.AddOutput(*b.Binary(OpKind::kAdd, x, x));
  fusiond::v1::FusionGraph p = ToProto(g);
  ASSERT_TRUE(FromProto(p).ok());
  p.mutable_nodes(0)->add_dims(0);
  auto back = FromProto(p);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(back.status().message().find("node 0 (add): sets dims, which add does not read"),
            std::string::npos)
      << back.status();
}

TEST(Verifier, RejectsSizeSymbolCycles) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, -1});
  (void)b.AddOutput(*b.Unary(OpKind::kExp, x));
  ASSERT_EQ(g.symbols.size(), 2u);
  ASSERT_TRUE(VerifyGraph(g).ok());
  g.symbols[0].parent = 1;
  g.symbols[1].parent = 0;
  absl::Status s = VerifyGraph(g);
  EXPECT_NE(s.message().find("is its own ancestor"), std::string::npos) << s;
  g.symbols[1].parent = -7;
  EXPECT_NE(VerifyGraph(g).message().find("is malformed"), std::string::npos);
}

}  // namespace
}  // namespace fusiond
