#include "compiler/scheduler/heuristics.h"

#include <algorithm>
#include <tuple>

#include "compiler/scheduler/kernel_heuristics.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

// A normalization-like summary: `full` bf16 [rows, width] inputs.
FusionAnalysis RowSummary(FusionPattern p, int64_t rows, int64_t width, int full, int columns) {
  FusionAnalysis a;
  a.pattern = p;
  a.outer_size = rows;
  a.inner_size = width;
  a.space = {rows, width};
  for (int i = 0; i < full; ++i) {
    a.inputs.push_back({DataType::kBFloat16, rows * width, true, true, false});
  }
  a.outputs.push_back({DataType::kBFloat16, rows * width, true, true, false});
  for (int i = 0; i < columns; ++i) {
    a.outputs.push_back({DataType::kBFloat16, width, true, false, true});
  }
  return a;
}

const Target& H100() {
  static Target t = *LookupTarget("sm_90");
  return t;
}

TEST(Heuristics, InnerPersistentCoversTheRowWithoutSpilling) {
  for (int64_t width : {128, 1000, 4096, 8192, 16384, 20000}) {
    auto p =
        InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 2048, width, 1, 0), H100());
    ASSERT_TRUE(p.has_value()) << width;
    EXPECT_GE(int64_t{p->vectorize} * p->block_x * p->persistent_batch, width);
    EXPECT_EQ(p->block_y, p->rows_per_block);
    EXPECT_FALSE(p->multi_pass);
  }
}

// Batch norm backward over [n, 64, 56, 56] bf16: x and dy per channel.
// Batch norm backward over [n, c, hw, hw] bf16 (x and dy in, dx out).
FusionAnalysis BatchNormSummary(int64_t n, int64_t c = 64, int64_t hw = 56) {
  FusionAnalysis a;
  a.pattern = FusionPattern::kOuterPersistent;
  a.outer_size = c;
  a.reduced_contiguous = hw * hw;
  a.reduced_strided = n;
  a.inner_size = n * hw * hw;
  a.space = {n, c, hw, hw};
  for (int i = 0; i < 2; ++i)
    a.inputs.push_back({DataType::kBFloat16, n * c * hw * hw, true, true, false});
  a.outputs.push_back({DataType::kBFloat16, n * c * hw * hw, true, true, false});
  return a;
}

TEST(Heuristics, OuterPersistentKeepsWhatItCanOfChannelsTooLargeForTheChip) {
  // 16 images: every channel stays on chip, nothing to keep.
  HeuristicParams fits = OuterPersistentHeuristics(BatchNormSummary(16), H100());
  EXPECT_FALSE(fits.multi_pass);
  EXPECT_EQ(fits.smem_bytes, 0);
  // A block a channel: grid_y caps the launch over the channels at no fewer
  // than the resident blocks (an artifact launched at more channels).
  if (!fits.grid_reduction) {
    EXPECT_GE(fits.grid_y, std::max<int64_t>(fits.outer_size, H100().sm_count));
  }
  // 256 images (205 MB of inputs): re-read, in blocks of 256 threads, two a
  // SM, with the rest of their shared memory keeping each thread's first
  // chunks for the second pass.
  HeuristicParams big = OuterPersistentHeuristics(BatchNormSummary(256), H100());
  EXPECT_TRUE(big.multi_pass);
  EXPECT_EQ(big.block_x * big.block_y, 256);
  EXPECT_LE(big.grid_x * big.grid_y, 2 * H100().sm_count);
  EXPECT_GE(big.smem_bytes, 96 * 1024);
  EXPECT_LE(2 * (big.smem_bytes + kStaticSmemReserve), H100().smem_per_sm);
}

TEST(Heuristics, OuterPersistentRoundsTakeTheChannelsTheL2Holds) {
  // [256, 64, 56, 56]: x and dy of a channel are 3.2 MB, 16 fit the H200's
  // 50 MiB L2: four rounds of 16 channels, 16 blocks each (two a SM).
  HeuristicParams p = OuterPersistentHeuristics(BatchNormSummary(256), H100());
  EXPECT_TRUE(p.multi_pass);
  EXPECT_EQ(p.grid_y, 16);
  EXPECT_EQ(p.grid_x, 16);
  // [64, 256, 56, 56]: 0.8 MB a channel, 64 a round (not a block for each
  // of the 256).
  p = OuterPersistentHeuristics(BatchNormSummary(64, 256), H100());
  EXPECT_EQ(p.grid_y, 64);
  EXPECT_EQ(p.grid_x, 4);
  // [32, 64, 112, 112]: 1.6 MB a channel, 32 a round.
  p = OuterPersistentHeuristics(BatchNormSummary(32, 64, 112), H100());
  EXPECT_EQ(p.grid_y, 32);
  EXPECT_EQ(p.grid_x, 8);
  // A larger L2 (B200's 126 MiB) holds more channels a round.
  auto b200 = LookupTarget("sm_100");
  ASSERT_TRUE(b200.ok());
  p = OuterPersistentHeuristics(BatchNormSummary(256), *b200);
  EXPECT_EQ(p.grid_y, 32);
  EXPECT_EQ(p.grid_x, 2 * b200->sm_count / 32);
  // A small one (A40's 6 MiB holds one channel): still at most four rounds.
  auto a40 = LookupTarget("sm_86");
  ASSERT_TRUE(a40.ok());
  p = OuterPersistentHeuristics(BatchNormSummary(256), *a40);
  EXPECT_TRUE(p.multi_pass);
  EXPECT_EQ(p.grid_y, 16);
}

// The grid-stride pointwise form's grid_x is the launch's cap: two waves of
// the resident blocks at every size, so an artifact launched at larger sizes
// than compiled for keeps them (the manifest takes the blocks the space
// needs where fewer).
TEST(Heuristics, PointwiseGridStrideCapIsTwoWaves) {
  FusionAnalysis a = RowSummary(FusionPattern::kPointwise, 64, 256, 1, 0);
  const HeuristicParams small = PointwiseHeuristics(a, H100());
  EXPECT_EQ(small.unroll, 1);
  EXPECT_GE(small.grid_x * small.grid_y, 2 * H100().sm_count);
  // Deep spaces keep a block per four accesses a thread (no loop).
  a = RowSummary(FusionPattern::kPointwise, 8192, 8192, 1, 0);
  const HeuristicParams deep = PointwiseHeuristics(a, H100());
  EXPECT_EQ(deep.unroll, 4);
  EXPECT_EQ(deep.grid_x, 8192 * 8192 / 8 / (128 * 4));
}

// A few long rows moving 8 MB or more (log_softmax over a 50257 vocabulary
// at 64 tokens, 18 MB): the inner persistent kind leaves them to the inner
// reduction, whose blocks share each row (128 blocks, not 64); below 8 MB,
// or with enough rows, a block a row stays.
TEST(Heuristics, FewLongRowsLeaveThePersistentKind) {
  FusionAnalysis a = RowSummary(FusionPattern::kInner, 64, 50257, 1, 0);
  a.num_reductions = 2;
  EXPECT_TRUE(FewLongRows(a, H100()));
  EXPECT_EQ(InnerReductionHeuristics(a, H100()).grid_y, 2);
  EXPECT_FALSE(FewLongRows(RowSummary(FusionPattern::kInner, 16, 50257, 1, 0), H100()));
  EXPECT_FALSE(FewLongRows(RowSummary(FusionPattern::kInner, 128, 50257, 1, 0), H100()));
}

// Fewer rows than half the SMs: blocks share each row, one loop iteration
// each at least (64 rows of 64K bf16 kept a block a row at four).
TEST(Heuristics, FewLongRowsShareBlocks) {
  FusionAnalysis a = RowSummary(FusionPattern::kInner, 64, 65536, 1, 0);
  a.num_reductions = 1;
  HeuristicParams p = InnerReductionHeuristics(a, H100());
  EXPECT_EQ(p.grid_x * p.grid_y, 128) << p.ToString();
  // Rows of a single iteration, even of 128 threads x 1 step, stay a block a row.
  a = RowSummary(FusionPattern::kInner, 64, 1024, 1, 0);
  a.num_reductions = 1;
  EXPECT_EQ(InnerReductionHeuristics(a, H100()).grid_y, 1);
}

// A whole-tensor sum of a short row (a loss over 134400 x 9 floats, 5 MB):
// 512 threads x 4 steps a block gave it 16 blocks; shorter iterations give
// nearly every SM one (ShortIterationsForSharedRows). Rows that half the
// SMs already share at 512 x 4 keep that block.
TEST(Heuristics, ShortSharedRowsTakeShorterIterations) {
  FusionAnalysis a = RowSummary(FusionPattern::kInner, 1, 134400, 0, 0);
  for (int i = 0; i < 9; ++i) a.inputs.push_back({DataType::kFloat, 134400, true, true, false});
  a.num_reductions = 1;
  HeuristicParams p = InnerReductionHeuristics(a, H100());
  EXPECT_EQ(p.grid_y, 131) << p.ToString();
  EXPECT_EQ(p.block_x, 256);
  EXPECT_EQ(p.unroll, 1);
  // Sixteen rows: eight blocks each, at 512 threads x 1 step.
  a = RowSummary(FusionPattern::kInner, 16, 65536, 1, 0);
  a.num_reductions = 1;
  p = InnerReductionHeuristics(a, H100());
  EXPECT_EQ(p.grid_y, 8) << p.ToString();
  EXPECT_EQ(p.block_x, 512);
  EXPECT_EQ(p.unroll, 1);
  // 64 rows of 64K bf16: two blocks a row at 512 x 4, as before.
  a = RowSummary(FusionPattern::kInner, 64, 65536, 1, 0);
  a.num_reductions = 1;
  p = InnerReductionHeuristics(a, H100());
  EXPECT_EQ(p.grid_y, 2);
  EXPECT_EQ(p.unroll, 4);
  // One row of 2M bf16 (8 MB): 128 blocks of 512 x 4, not 132 of 512 x 1.
  a = RowSummary(FusionPattern::kInner, 1, 2048 * 1024, 1, 0);
  a.num_reductions = 1;
  p = InnerReductionHeuristics(a, H100());
  EXPECT_EQ(p.grid_y, 128) << p.ToString();
  EXPECT_EQ(p.unroll, 4);
  // Under 1 MB (a global norm of 65536 floats): the blocks of 512 x 4.
  a = RowSummary(FusionPattern::kInner, 1, 65536, 0, 0);
  a.inputs.push_back({DataType::kFloat, 65536, true, true, false});
  a.num_reductions = 1;
  p = InnerReductionHeuristics(a, H100());
  EXPECT_EQ(p.grid_y, 8) << p.ToString();
  EXPECT_EQ(p.block_x, 512);
}

TEST(Heuristics, WideRowsKeepChunksUnlessAColumnOperandIsReadAgain) {
  // Softmax backward 512x65536 (dy and y, one reduction): kept chunks.
  FusionAnalysis sb = RowSummary(FusionPattern::kInner, 512, 65536, 2, 0);
  sb.num_reductions = 1;
  HeuristicParams p = InnerReductionHeuristics(sb, H100());
  EXPECT_TRUE(p.multi_pass);
  EXPECT_GE(p.smem_bytes, 192 * 1024);
  EXPECT_LE(p.smem_bytes + kStaticSmemReserve, H100().smem_per_block);
  // Softmax forward (x, two reductions, three passes): as well.
  FusionAnalysis sf = RowSummary(FusionPattern::kInner, 512, 65536, 1, 0);
  sf.num_reductions = 2;
  EXPECT_EQ(InnerReductionHeuristics(sf, H100()).smem_bytes, p.smem_bytes);
  // Rmsnorm forward (x and its weight, a column operand): none.
  FusionAnalysis rf = RowSummary(FusionPattern::kInner, 512, 65536, 1, 0);
  rf.num_reductions = 1;
  rf.inputs.push_back({DataType::kBFloat16, 65536, true, false, false});
  EXPECT_EQ(InnerReductionHeuristics(rf, H100()).smem_bytes, 0);
  // Rows of 2048 (256 vectors) take blocks of 256 threads, which could
  // share an SM: none.
  FusionAnalysis narrow = RowSummary(FusionPattern::kInner, 512, 2048, 2, 0);
  narrow.num_reductions = 1;
  HeuristicParams n = InnerReductionHeuristics(narrow, H100());
  EXPECT_LT(n.block_x, 512);
  EXPECT_EQ(n.smem_bytes, 0);
}

TEST(Heuristics, BF16RowsVectorizeSixteenBytes) {
  auto p = InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 2048, 8192, 1, 0), H100());
  EXPECT_EQ(p->vectorize, 8);
  auto odd = InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 2048, 8190, 1, 0), H100());
  EXPECT_EQ(odd->vectorize, 2);
}

TEST(Heuristics, InnerOuterUsesAtMostTheCoResidentBlocks) {
  HeuristicParams p = InnerOuterPersistentHeuristics(
      RowSummary(FusionPattern::kInnerOuter, 16384, 4096, 2, 1), H100());
  EXPECT_TRUE(p.grid_reduction);
  EXPECT_LE(p.grid_x, 132 * 32);
  EXPECT_GE(int64_t{p.vectorize} * p.block_x * p.persistent_batch, 4096);
}

TEST(Heuristics, WideRowsStillSchedule) {
  const int64_t width = 128 * 1024;
  EXPECT_FALSE(
      InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 64, width, 2, 0), H100()));
  HeuristicParams r =
      InnerReductionHeuristics(RowSummary(FusionPattern::kInner, 64, width, 2, 0), H100());
  EXPECT_TRUE(r.multi_pass);
  EXPECT_LT(int64_t{r.unroll} * r.vectorize * r.block_x, width);  // never a full unroll
  HeuristicParams io = InnerOuterPersistentHeuristics(
      RowSummary(FusionPattern::kInnerOuter, 64, width, 2, 1), H100());
  EXPECT_TRUE(io.multi_pass || io.smem_buffer);
}

TEST(Heuristics, NormBackwardSplitsRowsTooWideForOneBlock) {
  // 32K-128K bf16: slices of 256 x 4 vectors over grid_y blocks, staged, all
  // of them co-resident (one per SM).
  for (auto [rows, width, parts] :
       {std::tuple{1024, 32768, 4}, {512, 65536, 8}, {256, 131072, 16}}) {
    for (int columns : {1, 2}) {
      HeuristicParams p = InnerOuterPersistentHeuristics(
          RowSummary(FusionPattern::kInnerOuter, rows, width, 2, columns), H100());
      EXPECT_FALSE(p.multi_pass) << width;
      EXPECT_EQ(p.grid_y, parts) << width;
      EXPECT_EQ(p.block_x, 256) << width;
      EXPECT_EQ(p.persistent_batch, 4) << width;
      EXPECT_TRUE(p.smem_buffer) << width;
      EXPECT_EQ(p.grid_x, 2 * 132 / parts) << width;  // two blocks per SM
    }
  }
  // Rows whose vectors are too narrow for cp.async (65535 bf16: one element)
  // cannot be staged: the multi-pass kernel.
  HeuristicParams odd = InnerOuterPersistentHeuristics(
      RowSummary(FusionPattern::kInnerOuter, 512, 65535, 2, 1), H100());
  EXPECT_TRUE(odd.multi_pass);
  EXPECT_EQ(odd.grid_y, 1);
  // More slices than SMs: the multi-pass kernel.
  HeuristicParams huge = InnerOuterPersistentHeuristics(
      RowSummary(FusionPattern::kInnerOuter, 8, 2048 * 1024, 2, 1), H100());
  EXPECT_TRUE(huge.multi_pass);
  EXPECT_EQ(huge.grid_y, 1);
}

TEST(Heuristics, RowsAreStagedWhereRegistersCannotPrefetch) {
  // softmax backward 4096x16384: two full inputs in registers, in
  // torch.compile's form: 1024 x 2, the row re-read for the output pass,
  // a block per row.
  auto sb = InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 4096, 16384, 2, 0), H100());
  ASSERT_TRUE(sb.has_value());
  EXPECT_FALSE(sb->smem_buffer);
  EXPECT_EQ(sb->block_x, 1024);
  EXPECT_EQ(sb->persistent_batch, 2);
  EXPECT_TRUE(sb->reread_rows);
  EXPECT_EQ(sb->grid_x, 4096);
  // Rows of 512-2048 vectors take the same form, a chunk a thread for each
  // 512 vectors; narrower rows (2048: 256 vectors) keep the other shapes.
  for (int64_t width : {4096, 8192, 12288}) {
    auto other =
        InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 16384, width, 2, 0), H100());
    ASSERT_TRUE(other.has_value());
    EXPECT_TRUE(other->reread_rows) << width;
    EXPECT_EQ(other->block_x, 512) << width;
    EXPECT_EQ(other->persistent_batch, width / 4096) << width;
    EXPECT_EQ(other->rows_per_block, 1) << width;
    EXPECT_EQ(other->grid_x, 16384) << width;
  }
  auto narrow =
      InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 16384, 2048, 2, 0), H100());
  ASSERT_TRUE(narrow.has_value());
  EXPECT_FALSE(narrow->reread_rows);
  // One full input, one reduction, one column (rmsnorm forward): rows of
  // two or three chunks a thread only (2048x8192 takes it, 16384x4096 does
  // not); two reductions (softmax forward) never.
  for (int64_t width : {4096, 8192, 12288, 16384}) {
    FusionAnalysis rf = RowSummary(FusionPattern::kInner, 2048, width, 1, 0);
    rf.num_reductions = 1;
    rf.inputs.push_back({DataType::kBFloat16, width, true, false, false});
    auto p = InnerPersistentHeuristics(rf, H100());
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->reread_rows, width == 8192 || width == 12288) << width;
    rf.num_reductions = 2;
    rf.inputs.pop_back();
    auto two = InnerPersistentHeuristics(rf, H100());
    ASSERT_TRUE(two.has_value());
    EXPECT_FALSE(two->reread_rows) << width;
  }
  // One full input (softmax forward): 256 x 8, three blocks of 256 threads
  // resident (24 warps) against four of 128 at 128 x 16 (16 warps).
  auto sf = InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 4096, 16384, 1, 0), H100());
  EXPECT_FALSE(sf->smem_buffer);
  EXPECT_EQ(sf->block_x, 256);
  EXPECT_EQ(sf->persistent_batch, 8);
  // With a column operand (rmsnorm forward 4096x16384) the first that fits.
  FusionAnalysis rf = RowSummary(FusionPattern::kInner, 4096, 16384, 1, 0);
  rf.inputs.push_back({DataType::kBFloat16, 16384, true, false, false});
  auto rfp = InnerPersistentHeuristics(rf, H100());
  ASSERT_TRUE(rfp.has_value());
  EXPECT_EQ(rfp->block_x, 128);
  // rmsnorm backward 2048x8192 prefetches in registers (16 words); at
  // 4096x16384 it stages.
  HeuristicParams rb = InnerOuterPersistentHeuristics(
      RowSummary(FusionPattern::kInnerOuter, 2048, 8192, 2, 1), H100());
  EXPECT_FALSE(rb.smem_buffer);
  EXPECT_EQ(rb.block_x * rb.persistent_batch, 1024);
  HeuristicParams rw = InnerOuterPersistentHeuristics(
      RowSummary(FusionPattern::kInnerOuter, 4096, 16384, 2, 1), H100());
  EXPECT_TRUE(rw.smem_buffer);
  // 4096 wide: 256 threads x 2, two blocks per SM.
  HeuristicParams r4 = InnerOuterPersistentHeuristics(
      RowSummary(FusionPattern::kInnerOuter, 16384, 4096, 2, 1), H100());
  EXPECT_EQ(r4.block_x, 256);
  EXPECT_EQ(r4.persistent_batch, 2);
  EXPECT_EQ(r4.grid_x, 264);
}

// A norm backward summary: x and dy [rows, width], a weight [width], and
// `columns` column reductions (weight/bias gradients).
FusionAnalysis NormBackward(int64_t rows, int64_t width, int columns) {
  FusionAnalysis a = RowSummary(FusionPattern::kInnerOuter, rows, width, 2, columns);
  a.inputs.push_back({DataType::kBFloat16, width, true, false, false});
  return a;
}

TEST(Heuristics, LayerNormBackwardStagesRowsForWideBlocks) {
  // Two column reductions: x and dy staged in shared memory (the weight's
  // row, as float: two chunks a thread, kMaxFloatColumnBatch, plus two rows
  // of both); 8192 wide 512 x 2, one block per SM; 4096 wide 256 x 2, two
  // per SM.
  for (auto [rows, width, block_x, grid_x] :
       {std::tuple{2048, 8192, 512, 132}, {16384, 4096, 256, 264}}) {
    HeuristicParams l = InnerOuterPersistentHeuristics(NormBackward(rows, width, 2), H100());
    EXPECT_EQ(l.block_x, block_x) << width;
    EXPECT_EQ(l.persistent_batch, 2) << width;
    EXPECT_TRUE(l.smem_buffer) << width;
    EXPECT_EQ(l.smem_bytes, 4 * width + 2 * 2 * 2 * width) << width;
    EXPECT_EQ(l.grid_x, grid_x) << width;
  }
  // Four chunks a thread at 16384 wide: the weight stays bf16.
  HeuristicParams w = InnerOuterPersistentHeuristics(NormBackward(4096, 16384, 2), H100());
  EXPECT_EQ(w.persistent_batch, 4);
  EXPECT_EQ(w.smem_bytes, 2 * 16384 + 2 * 2 * 2 * 16384);
  // rmsnorm (one column reduction) keeps its rows in registers.
  HeuristicParams r = InnerOuterPersistentHeuristics(NormBackward(2048, 8192, 1), H100());
  EXPECT_EQ(r.block_x, 512);
  EXPECT_FALSE(r.smem_buffer);
}

TEST(Heuristics, LayerNormBackwardSumsItsPartialsOverClustersOfTwo) {
  // Two column reductions from one staged block per SM: clusters of two.
  for (auto [rows, width] : {std::pair{2048, 8192}, {4096, 16384}}) {
    HeuristicParams l = InnerOuterPersistentHeuristics(NormBackward(rows, width, 2), H100());
    EXPECT_EQ(l.cluster_x, 2) << width;
    EXPECT_EQ(l.grid_x % 2, 0) << width;
    // Before sm_90 there are no clusters.
    auto a100 = LookupTarget("sm_80");
    ASSERT_TRUE(a100.ok());
    EXPECT_EQ(InnerOuterPersistentHeuristics(NormBackward(rows, width, 2), *a100).cluster_x, 1)
        << width;
    // rmsnorm (one column reduction): none.
    EXPECT_EQ(InnerOuterPersistentHeuristics(NormBackward(rows, width, 1), H100()).cluster_x, 1)
        << width;
  }
  // Two blocks per SM (4096 wide): none.
  EXPECT_EQ(InnerOuterPersistentHeuristics(NormBackward(16384, 4096, 2), H100()).cluster_x, 1);
  // Rows stacked in a block (narrow rows): none.
  EXPECT_EQ(InnerOuterPersistentHeuristics(RowSummary(FusionPattern::kInnerOuter, 4096, 1024, 3, 2),
                                           H100())
                .cluster_x,
            1);
  EXPECT_TRUE(HasClusters(H100()));
  EXPECT_FALSE(HasClusters(*LookupTarget("sm_89")));
  EXPECT_TRUE(HasClusters(*LookupTarget("sm_100")));
}

TEST(Heuristics, NarrowNormBackwardRowsShareBlocksOfFiveHundredTwelve) {
  // rmsnorm backward: two vectors per thread, rows stacked to 512 threads,
  // one block per SM (not 32-thread blocks sixteen to an SM).
  for (auto [width, block_x, rows] : {std::tuple{1024, 64, 8}, {2048, 128, 4}, {512, 32, 16}}) {
    HeuristicParams p = InnerOuterPersistentHeuristics(
        RowSummary(FusionPattern::kInnerOuter, 16384, width, 2, 1), H100());
    EXPECT_EQ(p.block_x, block_x) << width;
    EXPECT_EQ(p.persistent_batch, 2) << width;
    EXPECT_EQ(p.rows_per_block, rows) << width;
    EXPECT_EQ(p.block_y, rows) << width;
    EXPECT_EQ(p.grid_x, 132) << width;
    EXPECT_FALSE(p.smem_buffer) << width;
  }
  // layernorm backward (two column reductions) keeps its batch of four,
  // staged, still rows deep: 32 x 8, one block per SM.
  HeuristicParams l = InnerOuterPersistentHeuristics(
      RowSummary(FusionPattern::kInnerOuter, 4096, 1024, 3, 2), H100());
  EXPECT_EQ(l.persistent_batch, 4);
  EXPECT_GE(l.block_x * l.block_y, 256);
  EXPECT_EQ(l.grid_x, 132);
}

TEST(Heuristics, LoopingGridsFillTheSm) {
  // layernorm forward 2048x8192 (x, a weight and a bias column): rows in
  // registers, a looping grid asking for every block the SM's threads allow
  // (codegen caps it by registers).
  FusionAnalysis lf = RowSummary(FusionPattern::kInner, 2048, 8192, 1, 0);
  lf.inputs.push_back({DataType::kBFloat16, 8192, true, false, false});
  lf.inputs.push_back({DataType::kBFloat16, 8192, true, false, false});
  auto p = InnerPersistentHeuristics(lf, H100());
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->smem_buffer);
  EXPECT_FALSE(p->smem_columns);
  EXPECT_EQ(p->block_x, 256);
  EXPECT_EQ(p->persistent_batch, 4);
  EXPECT_EQ(p->grid_x, int64_t{132} * (2048 / (p->block_x * p->block_y)));
}

TEST(Heuristics, RowsOf4096TakeTwoWarpsEach) {
  // softmax forward 16384x4096: two warps per row, two rows per block, a
  // block per row pair; rows stay in registers. (Softmax backward's two
  // full inputs take torch.compile's form: RowsAreStagedWhereRegistersCannotPrefetch.)
  {
    auto p =
        InnerPersistentHeuristics(RowSummary(FusionPattern::kInner, 16384, 4096, 1, 0), H100());
    ASSERT_TRUE(p.has_value());
    EXPECT_FALSE(p->smem_buffer);
    EXPECT_EQ(p->block_x, 64);
    EXPECT_EQ(p->persistent_batch, 8);
    EXPECT_EQ(p->rows_per_block, 2);
    EXPECT_EQ(p->block_y, 2);
    EXPECT_EQ(p->grid_x, 8192);
    EXPECT_FALSE(p->smem_columns);
  }
  // rmsnorm forward (x and a weight column) and layernorm forward (a weight
  // and a bias): the same, the columns in shared memory.
  for (int columns : {1, 2}) {
    FusionAnalysis nf = RowSummary(FusionPattern::kInner, 16384, 4096, 1, 0);
    for (int c = 0; c < columns; ++c)
      nf.inputs.push_back({DataType::kBFloat16, 4096, true, false, false});
    auto p = InnerPersistentHeuristics(nf, H100());
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->block_x, 64) << columns;
    EXPECT_EQ(p->rows_per_block, 2) << columns;
    EXPECT_TRUE(p->smem_columns) << columns;
  }
  // Three columns: the rule is measured for one and two only.
  FusionAnalysis three = RowSummary(FusionPattern::kInner, 16384, 4096, 1, 0);
  for (int c = 0; c < 3; ++c)
    three.inputs.push_back({DataType::kBFloat16, 4096, true, false, false});
  auto p = InnerPersistentHeuristics(three, H100());
  ASSERT_TRUE(p.has_value());
  EXPECT_NE(p->block_x, 64);
  EXPECT_FALSE(p->smem_columns);
}

TEST(Heuristics, PrintableAndHashable) {
  HeuristicParams a;
  HeuristicParams b = a;
  EXPECT_EQ(a.ToString(), b.ToString());
  EXPECT_EQ(a.Hash(), b.Hash());
  b.persistent_batch = 2;
  EXPECT_NE(a.Hash(), b.Hash());
  EXPECT_FALSE(a == b);
  EXPECT_NE(a.ToString().find("kind=pointwise"), std::string::npos);
  EXPECT_NE(a.ToJson().find("\"persistent_batch\":1"), std::string::npos);
}

}  // namespace
}  // namespace fusiond
