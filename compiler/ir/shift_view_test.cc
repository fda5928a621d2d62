#include "compiler/ir/shift_view.h"

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace {

// x [4, 8] f32 (T0), read only by slices whose results a cat joins; y = cat
// * 2 and a row sum of x read as well when `direct`.
struct Rotary {
  Graph g;
  ValueId x, left, right, neg, cat, out, sum = kNone;
};

Rotary MakeRotary(bool direct) {
  Rotary r;
  GraphBuilder b(&r.g);
  r.x = *b.DefineTensor("T0", DataType::kFloat, {4, 8});
  EXPECT_TRUE(b.Size(r.x, 1).ok());  // an extent use: not a read
  Attrs lo, hi;
  lo.offsets = {0, 0, 4, 4, 1, 1};
  hi.offsets = {0, 4, 4, 8, 1, 1};
  r.left = (*b.AddNode(OpKind::kSlice, {r.x}, lo))[0];
  r.right = (*b.AddNode(OpKind::kSlice, {r.x}, hi))[0];
  r.neg = *b.Unary(OpKind::kNeg, r.right);
  Attrs cat;
  cat.axis = 1;
  r.cat = (*b.AddNode(OpKind::kCat, {r.neg, r.left}, cat))[0];
  r.out = *b.Binary(OpKind::kMul, r.cat, b.DefineConstant(2, DataType::kFloat));
  EXPECT_TRUE(b.AddOutput(r.out).ok());
  if (direct) {
    r.sum = *b.Reduce(OpKind::kSum, r.x, {1}, false);
    EXPECT_TRUE(b.AddOutput(r.sum).ok());
  }
  return r;
}

TEST(ShiftView, ValuesReadOnlyAtShiftedIndices) {
  Rotary r = MakeRotary(false);
  const std::vector<bool> only = ShiftedOnly(r.g);
  EXPECT_TRUE(only[r.x]);  // its size() read does not count
  EXPECT_TRUE(only[r.left]);
  EXPECT_TRUE(only[r.right]);
  EXPECT_TRUE(only[r.neg]);
  EXPECT_FALSE(only[r.cat]);
  EXPECT_FALSE(only[r.out]);
  Rotary d = MakeRotary(true);
  EXPECT_FALSE(ShiftedOnly(d.g)[d.x]);  // the sum reads it in place
  EXPECT_TRUE(ShiftedOnly(d.g)[d.neg]);
}

TEST(ShiftView, TheSchedulersGraphHasTheShiftResultsAsInputs) {
  Rotary r = MakeRotary(false);
  const Graph v = ShiftFreeView(r.g);
  for (const Node& n : v.nodes) {
    EXPECT_FALSE(IsShift(n.op)) << PrintGraph(v);
    EXPECT_NE(n.op, OpKind::kNeg) << PrintGraph(v);  // read only shifted: left out
  }
  // x: a scalar standing for its name; its extent read: a scalar input; the
  // cat's result: a fresh f32[4, 8].
  ASSERT_EQ(v.inputs.size(), 3u) << PrintGraph(v);
  EXPECT_FALSE(v.value(v.inputs[0]).is_tensor);
  EXPECT_FALSE(v.value(v.inputs[1]).is_tensor);
  EXPECT_EQ(v.value(v.inputs[2]).name, "%" + std::to_string(r.cat) + "_shifted");
  EXPECT_EQ(TypeString(v, v.inputs[2]), "float32[4, 8]");
  ASSERT_EQ(v.outputs.size(), 1u);
  EXPECT_EQ(TypeString(v, v.outputs[0]), "float32[4, 8]");
  // A graph without shift ops is its own view.
  Graph plain;
  GraphBuilder b(&plain);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {4, 8});
  ASSERT_TRUE(b.AddOutput(*b.Unary(OpKind::kExp, x)).ok());
  EXPECT_EQ(PrintGraph(ShiftFreeView(plain)), PrintGraph(plain));
}

TEST(ShiftView, AReductionReadShiftedIsNamed) {
  EXPECT_EQ(ShiftReadProblem(MakeRotary(true).g), "");
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {4, 8});
  ValueId s = *b.Reduce(OpKind::kSum, x, {0}, false);
  g.value(s).name = "T1";
  Attrs a;
  a.offsets = {2, 8, 1};
  ValueId t = (*b.AddNode(OpKind::kSlice, {*b.Unary(OpKind::kExp, s)}, a))[0];
  g.value(t).name = "T3";
  ASSERT_TRUE(b.AddOutput(t).ok());
  const std::string why = ShiftReadProblem(g);
  EXPECT_TRUE(absl::StrContains(why, "slice T3 reads T1, a sum result, at shifted indices")) << why;
  EXPECT_TRUE(absl::StrContains(why, "must come from memory")) << why;
}

}  // namespace
}  // namespace fusiond
