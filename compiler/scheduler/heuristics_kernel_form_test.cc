// DecideKernelForm: code generation's choices beyond the launch shape, as
// HeuristicParams fields (printed, hashed, so part of the cache key).
#include <gtest/gtest.h>

#include "compiler/scheduler/heuristics.h"
#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {
namespace {

// bf16 [rows, width] row inputs (`streamed`: varying along and across rows)
// and `columns` column operands (a weight: along the row only).
FusionAnalysis Rows(int64_t rows, int64_t width, int streamed, int columns) {
  FusionAnalysis a;
  a.pattern = FusionPattern::kInner;
  a.outer_size = rows;
  a.inner_size = width;
  a.space = {rows, width};
  for (int i = 0; i < streamed; ++i) {
    a.inputs.push_back({DataType::kBFloat16, rows * width, true, true, false, true});
  }
  for (int i = 0; i < columns; ++i) {
    a.inputs.push_back({DataType::kBFloat16, width, true, false, false, false});
  }
  return a;
}

HeuristicParams Kind(SchedulerKind kind) {
  HeuristicParams p;
  p.kind = kind;
  return p;
}

const Target& H100() {
  static Target t = *LookupTarget("sm_90");
  return t;
}

TEST(KernelForm, OnePassVarianceOnlyWhereTheRowIsReadAgainByOneBlock) {
  HeuristicParams p = Kind(SchedulerKind::kInnerReduction);
  DecideKernelForm(Rows(128, 131072, 1, 0), H100(), &p);
  EXPECT_FALSE(p.one_pass_variance);  // rows in registers
  p.multi_pass = true;
  DecideKernelForm(Rows(128, 131072, 1, 0), H100(), &p);
  EXPECT_TRUE(p.one_pass_variance);
  p.kind = SchedulerKind::kInnerOuterPersistent;
  p.grid_y = 2;  // blocks share a row: the combine sums plain partials
  DecideKernelForm(Rows(128, 131072, 1, 0), H100(), &p);
  EXPECT_FALSE(p.one_pass_variance);
}

TEST(KernelForm, StreamingStoresForRowKernelsOfOneStreamedInput) {
  for (SchedulerKind kind : {SchedulerKind::kInnerPersistent, SchedulerKind::kInnerReduction}) {
    HeuristicParams p = Kind(kind);
    DecideKernelForm(Rows(4096, 4096, 1, 2), H100(), &p);  // a norm forward
    EXPECT_TRUE(p.streaming_stores);
    DecideKernelForm(Rows(4096, 4096, 2, 0), H100(), &p);  // softmax backward
    EXPECT_FALSE(p.streaming_stores);
  }
  HeuristicParams p = Kind(SchedulerKind::kPointwise);
  DecideKernelForm(Rows(4096, 4096, 1, 0), H100(), &p);
  EXPECT_FALSE(p.streaming_stores);
}

TEST(KernelForm, DynamicRowsAndExactTiling) {
  HeuristicParams p = Kind(SchedulerKind::kInnerOuterPersistent);
  p.multi_pass = true;
  DecideKernelForm(Rows(512, 65536, 2, 1), H100(), &p);
  EXPECT_TRUE(p.dynamic_rows);
  p.grid_y = 4;
  DecideKernelForm(Rows(512, 65536, 2, 1), H100(), &p);
  EXPECT_FALSE(p.dynamic_rows);

  p = Kind(SchedulerKind::kInnerPersistent);
  p.reread_rows = true;
  p.persistent_batch = 3;
  DecideKernelForm(Rows(4096, 12288, 2, 0), H100(), &p);
  EXPECT_TRUE(p.exact_tiling);
  p.persistent_batch = 4;  // four chunks a thread: the row loop's kernel won
  DecideKernelForm(Rows(4096, 16384, 2, 0), H100(), &p);
  EXPECT_FALSE(p.exact_tiling);
}

TEST(KernelForm, BlocksPerSmFollowTheGridAndTheBlock) {
  // Outer persistent rounds: 16 x 16 blocks of 256 threads are two a SM on
  // 132 SMs; 8 x 16 one; blocks of 128 threads up to four.
  HeuristicParams p = Kind(SchedulerKind::kOuterPersistent);
  p.block_x = 256;
  p.grid_x = 16;
  p.grid_y = 16;
  DecideKernelForm(Rows(64, 802816, 1, 0), H100(), &p);
  EXPECT_EQ(p.blocks_per_sm, 2);
  p.grid_x = 8;
  DecideKernelForm(Rows(64, 802816, 1, 0), H100(), &p);
  EXPECT_EQ(p.blocks_per_sm, 1);
  p.block_x = 128;
  p.grid_x = 32;
  DecideKernelForm(Rows(64, 802816, 1, 0), H100(), &p);
  EXPECT_EQ(p.blocks_per_sm, 4);
  // Inner persistent: an upper bound by block size, six for 128 threads
  // with two column operands in shared memory.
  p = Kind(SchedulerKind::kInnerPersistent);
  p.block_x = 64;
  p.block_y = 2;
  DecideKernelForm(Rows(16384, 4096, 1, 2), H100(), &p);
  EXPECT_EQ(p.blocks_per_sm, 4);
  p.smem_columns = true;
  DecideKernelForm(Rows(16384, 4096, 1, 2), H100(), &p);
  EXPECT_EQ(p.blocks_per_sm, 6);
  p.block_x = 512;
  p.block_y = 1;
  DecideKernelForm(Rows(16384, 4096, 1, 2), H100(), &p);
  EXPECT_EQ(p.blocks_per_sm, 2);
}

TEST(KernelForm, OuterKindsKeepTheChunksTheirBlocksLayOut) {
  // 4096 reduced elements a channel in float4s over two blocks of 256
  // threads: two vectors a thread; multi-pass kernels keep none.
  HeuristicParams p = Kind(SchedulerKind::kOuterPersistent);
  p.inner_size = 4096;
  p.outer_size = 64;
  p.vectorize = 4;
  p.block_x = 256;
  p.grid_x = 2;
  p.grid_y = 64;
  DecideKernelForm(Rows(64, 4096, 1, 0), H100(), &p);
  EXPECT_EQ(p.persistent_batch, 2);
  p.grid_x = 1;
  DecideKernelForm(Rows(64, 4096, 1, 0), H100(), &p);
  EXPECT_EQ(p.persistent_batch, 4);
  p.multi_pass = true;
  p.persistent_batch = 1;
  DecideKernelForm(Rows(64, 4096, 1, 0), H100(), &p);
  EXPECT_EQ(p.persistent_batch, 1);
}

TEST(KernelForm, ChoicesArePrintedAndHashed) {
  HeuristicParams a = Kind(SchedulerKind::kInnerPersistent);
  HeuristicParams b = a;
  b.streaming_stores = true;
  EXPECT_NE(a.Hash(), b.Hash());
  EXPECT_FALSE(a == b);
  EXPECT_NE(b.ToString().find(" streaming_stores=true"), std::string::npos);
  EXPECT_EQ(a.ToString().find("streaming_stores"), std::string::npos);
  EXPECT_NE(a.ToJson().find("\"streaming_stores\":false"), std::string::npos);
  b.blocks_per_sm = 3;
  EXPECT_NE(b.ToString().find(" blocks_per_sm=3"), std::string::npos);
  EXPECT_NE(b.ToJson().find("\"blocks_per_sm\":3"), std::string::npos);
}

}  // namespace
}  // namespace fusiond
