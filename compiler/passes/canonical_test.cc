#include "compiler/passes/canonical.h"

#include "compiler/ir/printer.h"
#include "compiler/passes/test_util.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

// x*w then y*w, outputs (sum(x*w), y*w); `swap` defines the two products in
// the other order, `names` picks the names.
Graph Build(bool swap, const char* prefix, double constant = 2.0, int axis = 1) {
  Graph g;
  GraphBuilder b(&g);
  std::string p = prefix;
  ValueId x = Must(b.DefineTensor(p + "x", DataType::kFloat, {-1, -1}));
  ValueId y = Must(b.DefineTensor(p + "y", DataType::kFloat, {-1, -1}));
  ValueId c = b.DefineConstant(constant, DataType::kDouble, p + "c");
  ValueId a, d;
  if (swap) {
    d = Must(b.Binary(OpKind::kMul, c, y));
    a = Must(b.Binary(OpKind::kMul, x, c));
  } else {
    a = Must(b.Binary(OpKind::kMul, x, c));
    d = Must(b.Binary(OpKind::kMul, y, c));
  }
  g.value(a).name = p + "a";
  ValueId s = Must(b.Reduce(OpKind::kSum, a, {axis}, false));
  EXPECT_TRUE(b.AddOutput(s).ok());
  EXPECT_TRUE(b.AddOutput(d).ok());
  return g;
}

TEST(Canonical, NamesAndIndependentOrderDoNotMatter) {
  Graph a = Build(false, "T");
  Graph b = Build(true, "renamed_");
  EXPECT_EQ(CanonicalHash(a), CanonicalHash(b));
  EXPECT_EQ(CanonicalHashHex(a).size(), 16u);
  EXPECT_EQ(PrintGraph(CanonicalForm(a)), PrintGraph(CanonicalForm(b)));
}

TEST(Canonical, DifferentGraphsDiffer) {
  Graph a = Build(false, "T");
  EXPECT_NE(CanonicalHash(a), CanonicalHash(Build(false, "T", 3.0)));
  EXPECT_NE(CanonicalHash(a), CanonicalHash(Build(false, "T", 2.0, 0)));
  Graph swapped_outputs = a;
  std::swap(swapped_outputs.outputs[0], swapped_outputs.outputs[1]);
  EXPECT_NE(CanonicalHash(a), CanonicalHash(swapped_outputs));
}

TEST(Canonical, Fnv1aKnownValue) { EXPECT_EQ(Fnv1a("a", 1), 0xaf63dc4c8601ec8cull); }

}  // namespace
}  // namespace fusiond
