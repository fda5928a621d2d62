#include "compiler/scheduler/scheduler.h"

#include "compiler/ir/builder.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

template <typename T>
T Must(absl::StatusOr<T> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return *std::move(v);
}

std::vector<Extent> S(std::initializer_list<int64_t> sizes) {
  std::vector<Extent> s;
  for (int64_t n : sizes) s.push_back(Extent::Static(n));
  return s;
}

FusionAnalysis Analyze(const Graph& g) {
  std::vector<std::vector<int64_t>> shapes;
  for (ValueId in : g.inputs) {
    std::vector<int64_t> s;
    for (const Extent& e : g.value(in).shape) s.push_back(e.size);
    shapes.push_back(s);
  }
  SizeBinding b = Must(BindShapes(g, shapes));
  return AnalyzeFusion(g, b);
}

SchedulerKind Choose(const Graph& g) {
  ScheduleChoice c = ChooseScheduler(Analyze(g), Must(LookupTarget("sm_90")));
  EXPECT_TRUE(c.accepted) << c.reason;
  return c.kind;
}

// y = x - sum(x, 1) broadcast back; optionally a column sum of x too.
Graph RowGraph(int64_t m, int64_t n, bool column_sum) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kBFloat16, {m, n}));
  ValueId f = Must(b.Cast(x, DataType::kFloat));
  ValueId r = Must(b.Reduce(OpKind::kSum, f, {1}, false));
  ValueId rb = Must(b.BroadcastInDim(r, S({m, n}), {0}));
  ValueId y = Must(b.Binary(OpKind::kSub, f, rb));
  EXPECT_TRUE(b.AddOutput(Must(b.Cast(y, DataType::kBFloat16))).ok());
  if (column_sum) {
    EXPECT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, f, {0}, false))).ok());
  }
  return g;
}

TEST(Scheduler, RowReductionIsInnerPersistent) {
  EXPECT_EQ(Choose(RowGraph(64, 1024, false)), SchedulerKind::kInnerPersistent);
}

TEST(Scheduler, RowsTooWideFallBackToInnerReduction) {
  Graph g = RowGraph(4, 1 << 18, false);
  EXPECT_EQ(Choose(g), SchedulerKind::kInnerReduction);
  ScheduleChoice c = ChooseScheduler(Analyze(g), Must(LookupTarget("sm_90")));
  EXPECT_TRUE(c.params.multi_pass);
  EXPECT_NE(c.reason.find("does not fit"), std::string::npos) << c.reason;
}

TEST(Scheduler, RowAndColumnReductionsAreInnerOuter) {
  EXPECT_EQ(Choose(RowGraph(64, 1024, true)), SchedulerKind::kInnerOuterPersistent);
}

TEST(Scheduler, ColumnSumIsOuterReduction) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {256, 64}));
  ASSERT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, x, {0}, false))).ok());
  EXPECT_EQ(Choose(g), SchedulerKind::kOuterReduction);
}

TEST(Scheduler, BatchNormPatternIsOuterPersistent) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {16, 8, 32}));
  ValueId s = Must(b.Reduce(OpKind::kSum, x, {0, 2}, false));
  ValueId sb = Must(b.BroadcastInDim(s, S({16, 8, 32}), {1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kSub, x, sb))).ok());
  FusionAnalysis a = Analyze(g);
  EXPECT_EQ(a.outer_size, 8);
  EXPECT_EQ(a.inner_size, 16 * 32);
  EXPECT_EQ(a.reduced_contiguous, 32);
  EXPECT_EQ(Choose(g), SchedulerKind::kOuterPersistent);
}

TEST(Scheduler, ReductionOfAReductionIsRefusedWithAReason) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kFloat, {64, 128}));
  ValueId r = Must(b.Reduce(OpKind::kSum, x, {1}, false));
  ValueId e = Must(b.Unary(OpKind::kExp, r));
  ASSERT_TRUE(b.AddOutput(Must(b.Reduce(OpKind::kSum, e, {0}, false))).ok());
  ScheduleChoice c = ChooseScheduler(Analyze(g), Must(LookupTarget("sm_90")));
  EXPECT_FALSE(c.accepted);
  EXPECT_NE(c.reason.find("only part of the iteration space"), std::string::npos) << c.reason;
}

TEST(Scheduler, PointwiseWithBroadcastBias) {
  Graph g;
  GraphBuilder b(&g);
  ValueId x = Must(b.DefineTensor("x", DataType::kBFloat16, {128, 256}));
  ValueId bias = Must(b.DefineTensor("b", DataType::kBFloat16, {256}));
  ValueId bb = Must(b.BroadcastInDim(bias, S({128, 256}), {1}));
  ASSERT_TRUE(b.AddOutput(Must(b.Binary(OpKind::kAdd, x, bb))).ok());
  FusionAnalysis a = Analyze(g);
  EXPECT_EQ(a.inner_size, 256);  // the broadcast stops the axes from merging
  EXPECT_EQ(a.outer_size, 128);
  EXPECT_EQ(Choose(g), SchedulerKind::kPointwise);
}

TEST(Target, UnknownArchListsKnownOnes) {
  auto t = LookupTarget("sm_70");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("sm_90"), std::string_view::npos);
  EXPECT_EQ(Must(LookupTarget("sm_90")).sm_count, 132);
  EXPECT_EQ(Must(LookupTarget("sm_80")).sm_count, 108);
}

}  // namespace
}  // namespace fusiond
