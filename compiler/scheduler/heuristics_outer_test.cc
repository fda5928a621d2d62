// Outer reductions over adjacent columns (softmax and sums over dim 0):
// the lanes form of OuterLanesHeuristics.
#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/scheduler/heuristics.h"
#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {
namespace {

const Target& H100() {
  static Target t = *LookupTarget("sm_90");
  return t;
}

// Softmax over dim 0 of `inputs` bf16 [rows, cols] tensors, as the analysis
// summarizes it (outer reductions broadcast back: outer = columns).
FusionAnalysis OuterSoftmax(int64_t rows, int64_t cols, int inputs) {
  FusionAnalysis a;
  a.pattern = FusionPattern::kOuterPersistent;
  a.space = {rows, cols};
  a.outer_size = cols;
  a.inner_size = rows;
  a.reduced_strided = rows;
  for (int i = 0; i < inputs; ++i)
    a.inputs.push_back({DataType::kBFloat16, rows * cols, true, true, false});
  a.outputs.push_back({DataType::kBFloat16, rows * cols, true, true, false});
  return a;
}

// A column sum of a bf16 [rows, cols] tensor (outer = reduced rows).
FusionAnalysis ColumnSum(int64_t rows, int64_t cols, bool full_output) {
  FusionAnalysis a;
  a.pattern = FusionPattern::kOuter;
  a.space = {rows, cols};
  a.outer_size = rows;
  a.inner_size = cols;
  a.inputs.push_back({DataType::kBFloat16, rows * cols, true, true, false});
  a.outputs.push_back({DataType::kBFloat16, cols, true, false, false});
  if (full_output) a.outputs.push_back({DataType::kBFloat16, rows * cols, true, true, false});
  return a;
}

// What every lanes schedule must hold: a warp of adjacent columns, 512
// threads, a split that is a power of two and the group barrier only with it.
void ExpectLanes(const HeuristicParams& p, int64_t rows, int64_t cols) {
  EXPECT_EQ(p.rows_per_block, 32);
  EXPECT_EQ(p.block_y, 1);
  EXPECT_EQ(p.block_x, 16);
  EXPECT_TRUE(p.multi_pass);
  EXPECT_EQ(rows % p.vectorize, 0);
  EXPECT_EQ(p.grid_x & (p.grid_x - 1), 0) << p.grid_x;
  EXPECT_EQ(p.grid_reduction, p.grid_x > 1);
  // Split, grid_y is the column groups in flight; unsplit, the launch's cap
  // over the groups, at least every group and the resident blocks.
  if (p.grid_x > 1) {
    EXPECT_LE(p.grid_y, (cols + 31) / 32);
  } else {
    EXPECT_GE(p.grid_y, std::max<int64_t>((cols + 31) / 32, 2 * H100().sm_count));
  }
  // Every split still gives each thread at least one chunk of rows.
  EXPECT_GE(rows / p.vectorize / p.grid_x, p.block_x);
  // A cooperative grid fits the blocks resident at two a SM.
  if (p.grid_reduction) {
    EXPECT_LE(p.grid_x * p.grid_y, 2 * H100().sm_count);
  }
}

TEST(OuterLanes, SoftmaxOverDimZeroFillsTheSmsAndKeepsRereadsInTheL2) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{2048, 8192}, {8192, 2048}, {65536, 1024}}) {
    for (int inputs : {1, 2}) {
      const HeuristicParams p = OuterPersistentHeuristics(OuterSoftmax(rows, cols, inputs), H100());
      SCOPED_TRACE(p.ToString());
      EXPECT_EQ(p.kind, SchedulerKind::kOuterPersistent);
      ExpectLanes(p, rows, cols);
      // At least three quarters of the resident blocks have work.
      EXPECT_GE(4 * p.grid_x * ((cols + 31) / 32), 3 * 2 * H100().sm_count);
      // The blocks in flight read at most half the L2 between rereads.
      const int64_t in_flight = 2 * H100().sm_count * 32 * rows * 2 * inputs / p.grid_x;
      if (p.grid_x < 64) {
        EXPECT_LE(in_flight, H100().l2_bytes / 2);
      }
    }
  }
  // The 2048x8192 forward: two blocks a column group, 132 groups.
  const HeuristicParams f = OuterPersistentHeuristics(OuterSoftmax(2048, 8192, 1), H100());
  EXPECT_EQ(f.grid_x, 2);
  EXPECT_EQ(f.grid_y, 132);
  EXPECT_EQ(f.vectorize, 8);
}

TEST(OuterLanes, ColumnSumsReadOnceWithoutPartialRows) {
  // 256 column groups fill the 264 resident blocks: no split, no barrier.
  const HeuristicParams p = OuterReductionHeuristics(ColumnSum(2048, 8192, false), H100());
  EXPECT_EQ(p.kind, SchedulerKind::kOuterReduction);
  ExpectLanes(p, 2048, 8192);
  EXPECT_EQ(p.grid_x, 1);
  EXPECT_FALSE(p.grid_reduction);
  // Few columns: blocks share them.
  const HeuristicParams q = OuterReductionHeuristics(ColumnSum(65536, 1024, false), H100());
  ExpectLanes(q, 65536, 1024);
  EXPECT_EQ(q.grid_x, 8);
}

TEST(OuterLanes, ColumnSumsWithFullOutputsKeepTheRowForm) {
  const HeuristicParams p = OuterReductionHeuristics(ColumnSum(2048, 8192, true), H100());
  EXPECT_EQ(p.rows_per_block, 1);
  EXPECT_EQ(p.block_x, 128);
}

// Few rows: the row form's blocks (block_y rows of every column each) would
// leave most SMs idle (64 x 65536: 32 blocks), so the lanes form takes it.
TEST(OuterLanes, ColumnSumsWithFullOutputsOverFewRowsTakeTheLanes) {
  const HeuristicParams p = OuterReductionHeuristics(ColumnSum(64, 65536, true), H100());
  EXPECT_EQ(p.rows_per_block, 32) << p.ToString();
  EXPECT_GE(std::min<int64_t>(p.grid_y, 65536 / 32), H100().sm_count);
}

// One column group: split until every SM has a block (at most 64 left half
// of them idle).
TEST(OuterLanes, ALoneColumnGroupSplitsOverTheSms) {
  const HeuristicParams p = OuterReductionHeuristics(ColumnSum(262144, 32, false), H100());
  ExpectLanes(p, 262144, 32);
  EXPECT_GE(p.grid_x, H100().sm_count / 2 + 1);
}

TEST(OuterLanes, SmallAndOddShapesStayValid) {
  for (auto [rows, cols] :
       {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {300, 1000}, {333, 1232}, {8, 65536}}) {
    const HeuristicParams p = OuterPersistentHeuristics(OuterSoftmax(rows, cols, 1), H100());
    SCOPED_TRACE(p.ToString());
    EXPECT_EQ(p.rows_per_block, 32);
    EXPECT_GE(p.block_x, 1);
    EXPECT_GE(p.grid_x, 1);
    EXPECT_GE(p.grid_y, 1);
    EXPECT_EQ(rows % p.vectorize, 0);
    EXPECT_LE(int64_t{p.block_x} * p.vectorize * p.grid_x,
              std::max<int64_t>(rows, p.vectorize * p.block_x));
  }
}

TEST(OuterLanes, BatchNormChannelsKeepTheirForm) {
  FusionAnalysis a;
  a.pattern = FusionPattern::kOuterPersistent;
  a.space = {16, 128, 768};
  a.outer_size = 128;
  a.reduced_contiguous = 768;
  a.reduced_strided = 16;
  a.inner_size = 16 * 768;
  a.inputs.push_back({DataType::kBFloat16, 16 * 128 * 768, true, true, false});
  a.outputs.push_back({DataType::kBFloat16, 16 * 128 * 768, true, true, false});
  EXPECT_EQ(OuterPersistentHeuristics(a, H100()).rows_per_block, 1);
}

}  // namespace
}  // namespace fusiond
