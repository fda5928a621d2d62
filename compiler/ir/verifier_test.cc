#include "compiler/ir/verifier.h"

#include <gtest/gtest.h>

#include "compiler/ir/builder.h"

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

}  // namespace
}  // namespace fusiond
