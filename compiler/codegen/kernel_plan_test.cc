// The kernel plan over hand-built graphs: row and column domains, stages.
#include "compiler/codegen/kernel_plan.h"

#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/codegen_test_graphs.h"
#include "compiler/codegen/manifest.h"
#include "compiler/codegen/prelude.h"
#include "compiler/ir/builder.h"
#include "compiler/scheduler/target.h"

namespace fusiond {
namespace {

using namespace codegen_test;  // NOLINT: the shared test graphs

TEST(KernelPlan, SoftmaxHasTwoStagesOverTheLastAxis) {
  Graph g = Softmax();
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->r_axes, std::vector<int>{1});
  EXPECT_EQ(p->i_axes, std::vector<int>{0});
  EXPECT_EQ(p->num_stages, 2);
  ASSERT_EQ(p->row_slots.size(), 2u);
  EXPECT_EQ(p->row_slots[0].stage, 0);
  EXPECT_EQ(p->row_slots[1].stage, 1);
  EXPECT_TRUE(p->col_reds.empty());
  EXPECT_EQ(p->domain[g.outputs[0]], Domain::kElem);
}

TEST(KernelPlan, ColumnReductionIsSeparatedFromRows) {
  Graph g = ScaleAndColumnSum();
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->col_reds.size(), 1u);
  EXPECT_EQ(p->row_slots.size(), 1u);
  EXPECT_EQ(p->domain[g.outputs[1]], Domain::kCol);
  EXPECT_TRUE(p->IsStatic());
}

TEST(KernelPlan, VarMeanTakesTwoStagesOrOneInOnePass) {
  Graph g = Normalize();
  auto two = PlanKernel(g, false);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->num_stages, 2);
  ASSERT_EQ(two->row_slots.size(), 2u);
  EXPECT_EQ(two->row_slots[1].stage, 1);
  EXPECT_FALSE(two->row_slots[0].one_pass);
  auto one = PlanKernel(g, false, /*one_pass_var=*/true);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->num_stages, 1);
  ASSERT_EQ(one->row_slots.size(), 2u);
  EXPECT_EQ(one->row_slots[0].stage, 0);
  EXPECT_EQ(one->row_slots[1].stage, 0);
  EXPECT_TRUE(one->row_slots[0].one_pass && one->row_slots[1].one_pass);
  EXPECT_TRUE(one->row_slots[1].second_moment);
}

// var_mean whose variance nobody uses: the mean alone is needed, and the
// reduction is still computed (it was "used before it is computed", an
// internal error, until scripts/fuzz.sh found it).
TEST(KernelPlan, VarMeanWithOnlyItsMeanNeededIsComputed) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {32, 64});
  Attrs a;
  a.dims = {1};
  auto vm = *b.AddNode(OpKind::kVarMean, {x}, a);
  ValueId mb = *b.BroadcastInDim(vm[1], g.value(x).shape, {0});
  ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kMul, mb, x)).ok());
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->needed[vm[0]]);
  ASSERT_FALSE(p->row_slots.empty());
  EXPECT_EQ(p->row_slots[0].node, g.def(vm[1])->id);
}

TEST(KernelPlan, PointwiseRejectsReductions) {
  Graph g = Softmax();
  auto p = PlanKernel(g, true);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
}

// A column sum of an input nothing else indexes along the summed axis
// (sum(T1, dims=[0]) broadcast back over [2, 32]): propagation leaves T1's
// axis 0 unknown; it goes on reference axis 0, as the scheduler's analysis
// places it (random GPU seed 1446 was refused with "cannot place axis 0").
TEST(KernelPlan, AReducedAxisNoOtherValueSharesIsPlacedByPosition) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {2, 32});
  ValueId y = *b.DefineTensor("T1", DataType::kFloat, {2, 32});
  ValueId s = *b.Reduce(OpKind::kSum, y, {0}, false);
  ValueId sb = *b.BroadcastInDim(s, g.value(x).shape, {1});
  ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kAdd, x, sb)).ok());
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->axis_map[y], (std::vector<int>{0, 1}));
  // The sum comes back to the elements: the summed axis is the rows' (strided).
  EXPECT_EQ(p->r_axes, std::vector<int>{0});
  EXPECT_EQ(p->row_slots.size(), 1u);
}

// An element axis reached only through a row broadcast of a row sum
// (random GPU seed 1406): rb's axis 1 goes on reference axis 1.
TEST(KernelPlan, AnAxisOnlyABroadcastMakesIsPlacedByPosition) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {16384, 2});
  ValueId r = *b.Reduce(OpKind::kSum, x, {1}, false);
  ValueId rb = *b.BroadcastInDim(r, g.value(x).shape, {0});
  ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kMul, rb, rb)).ok());
  ASSERT_TRUE(b.AddOutput(*b.Unary(OpKind::kAbs, x)).ok());
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->axis_map[rb], (std::vector<int>{0, 1}));
  EXPECT_EQ(p->r_axes, std::vector<int>{1});
}

// Full-rank values first: [1, 16] broadcast to [16, 16] times a [16] column
// broadcast along axis 1. The product's axis 0 goes on reference axis 0 (its
// position) before the [16] operand is placed, which then follows it; placed
// first by its own position (counted from the right) it would take axis 1 and
// the product would have both axes on axis 1.
TEST(KernelPlan, FullRankValuesArePlacedBeforeTheirLowerRankOperands) {
  Graph g;
  GraphBuilder b(&g);
  ValueId t = *b.DefineTensor("T0", DataType::kFloat, {1, 16});
  ValueId v = *b.DefineTensor("T1", DataType::kFloat, {16});
  const std::vector<Extent> full = {Extent::Static(16), Extent::Static(16)};
  ValueId tb = *b.BroadcastInDim(t, full, {0, 1});
  ValueId vb = *b.BroadcastInDim(v, full, {0});
  ValueId prod = *b.Binary(OpKind::kMul, tb, vb);
  ASSERT_TRUE(b.AddOutput(prod).ok());
  auto p = PlanKernel(g, true);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->axis_map[prod], (std::vector<int>{0, 1}));
  EXPECT_EQ(p->axis_map[v], std::vector<int>{0});
}

// Sums over both axes of [512, 512] and of a row broadcast to it (random GPU
// seed 1448): both walk the whole row domain, so one R serves both.
TEST(KernelPlan, RowReductionsOverAllAxesOfBroadcastsShareTheRowDomain) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {512, 512});
  ValueId v = *b.DefineTensor("T1", DataType::kDouble, {512});
  ValueId vb = *b.BroadcastInDim(v, g.value(x).shape, {1});
  ASSERT_TRUE(b.AddOutput(*b.Reduce(OpKind::kSum, vb, {0, 1}, true)).ok());
  ASSERT_TRUE(b.AddOutput(*b.Reduce(OpKind::kSum, x, {0, 1}, true)).ok());
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->r_axes, (std::vector<int>{0, 1}));
  EXPECT_EQ(p->row_slots.size(), 2u);
  EXPECT_TRUE(p->col_reds.empty());
  // Each walks every element of the row, broadcast copies included.
  for (const ReductionSlot& sl : p->row_slots) EXPECT_EQ(p->HiddenCount(g, g.node(sl.node)), "");
  // Row sums over different axes still do not share a kernel.
  Graph h;
  GraphBuilder c(&h);
  ValueId y = *c.DefineTensor("T0", DataType::kFloat, {64, 32});
  ASSERT_TRUE(c.AddOutput(*c.Reduce(OpKind::kSum, y, {1}, false)).ok());
  ASSERT_TRUE(c.AddOutput(*c.Reduce(OpKind::kSum, y, {0, 1}, false)).ok());
  EXPECT_EQ(PlanKernel(h, false).status().code(), absl::StatusCode::kUnimplemented);
}

// A keepdim sum's 1 broadcast to another extent links nothing: x[4, 8]
// summed over 8 and broadcast to [4, 16] must not be read as if its axis 1
// were the 16 one (a wrong kernel); no axis of extent 8 exists, so the plan
// refuses.
TEST(KernelPlan, AKeepdimOneBroadcastToAnotherExtentLinksNothing) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {4, 8});
  ValueId y = *b.DefineTensor("T1", DataType::kFloat, {4, 16});
  ValueId r = *b.Reduce(OpKind::kSum, x, {1}, true);
  ValueId rb = *b.BroadcastInDim(r, g.value(y).shape, {0, 1});
  ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kAdd, rb, y)).ok());
  auto p = PlanKernel(g, false);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented) << p.status();
}

// The same with symbolic sizes: a summed axis of its own symbol is not the
// reference axis of another symbol, whatever sizes they have when compiled.
TEST(KernelPlan, ASummedAxisOfItsOwnSymbolIsNotAnotherSymbolsAxis) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = *b.DefineTensor("T0", DataType::kFloat, {-1, -1});
  ValueId y = *b.DefineTensor("T1", DataType::kFloat, {-1, -1});
  ValueId r = *b.Reduce(OpKind::kSum, y, {1}, true);
  ValueId rb = *b.BroadcastInDim(r, g.value(x).shape, {0, 1});
  ASSERT_TRUE(b.AddOutput(*b.Binary(OpKind::kAdd, rb, x)).ok());
  auto p = PlanKernel(g, false);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented) << p.status();
}

// A sum over both axes of a column broadcast to [31, 31] (its input varies
// along axis 0 only), with an element output beside it (random GPU seeds 97
// and 1374): the scheduler's analysis takes it as a row reduction over both
// axes (one row of 961), so the plan's row domain is both axes and the loop
// walks the copies (no hidden count). Taken as a column sum over axis 0, its
// result broadcast to the elements was refused.
TEST(KernelPlan, ASumOverTheInnermostAxisOfACopyWalksTheCopies) {
  Graph g;
  GraphBuilder b(&g);
  ValueId c = *b.DefineTensor("T0", DataType::kFloat, {31, 1});
  const std::vector<Extent> full = {Extent::Static(31), Extent::Static(31)};
  ValueId cb = *b.BroadcastInDim(c, full, {0, 1});
  ValueId s = *b.Reduce(OpKind::kSum, cb, {0, 1}, true);
  ASSERT_TRUE(b.AddOutput(s).ok());
  ASSERT_TRUE(b.AddOutput(*b.BroadcastInDim(s, full, {0, 1})).ok());
  auto p = PlanKernel(g, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->r_axes, (std::vector<int>{0, 1}));
  EXPECT_TRUE(p->col_reds.empty());
  ASSERT_EQ(p->row_slots.size(), 1u);
  EXPECT_EQ(p->HiddenCount(g, g.node(p->row_slots[0].node)), "");
}

}  // namespace
}  // namespace fusiond
