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

}  // namespace
}  // namespace fusiond
