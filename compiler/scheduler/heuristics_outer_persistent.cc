// Outer persistent (batch norm [N, C, L] over (0, 2)): for each kept element
// (channel) a block of block_x threads along the contiguous reduced axis L
// (vectorized) and block_y threads along the strided reduced axes N keeps
// the channel's elements in registers; grid_y covers the channels and grid_x
// blocks share one channel (grid_reduction) when one block cannot hold it.
// When even all co-resident blocks cannot, the kernel re-reads (multi_pass)
// in rounds of the channels whose inputs the L2 holds, and keeps in shared
// memory what it can of the first pass for the second.
// With no contiguous reduced axis ([N, C] over 0) lanes run along C
// (OuterLanesHeuristics).
#include <algorithm>
#include <numeric>

#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {

// Outer reductions broadcast back with the kept axes innermost (softmax over
// dim 0 of [M, N]): the channels are the N columns, adjacent in memory, each
// M elements N apart. rows_per_block = 32 columns a block, one a lane, so a
// warp reads 32 adjacent elements (coalesced), and block_x lane groups
// (warps) split a column's rows: chunks of `vectorize` rows, `unroll`
// chunks in flight. Every pass reads the columns again (multi_pass), so
// the blocks in flight must have their columns' inputs in the L2: grid_x
// blocks (a power of two) share a column group (grid_reduction, a group
// barrier a reduction) until those inputs fit half the L2, and until the
// column groups times grid_x fill three quarters of the resident blocks.
// Column sums (`rereads` false) read their inputs once: no L2 rule.
HeuristicParams OuterLanesHeuristics(const FusionAnalysis& a, const Target& t, SchedulerKind kind,
                                     int64_t columns, int64_t rlen, bool rereads) {
  constexpr int kLaneRows = 32;       // columns a block: a warp's lanes
  constexpr int kLaneGroups = 16;     // block_x: 512 threads a block
  constexpr int kLaneRegisters = 64;  // what code generation asks ptxas for
  // A lone column group (32 columns or fewer) splits over enough blocks to
  // give every SM one (at 64, 16384x32 ran on 64 blocks, half the SMs idle).
  constexpr int64_t kMaxSplit = 128;
  HeuristicParams p;
  p.kind = kind;
  p.outer_size = a.outer_size;
  p.inner_size = a.inner_size;
  p.vectorize = 8;
  while (p.vectorize > 1 && rlen % p.vectorize != 0) p.vectorize /= 2;
  p.unroll = 4;
  const int64_t chunks = CeilDiv(rlen, p.vectorize);
  p.block_x =
      static_cast<int>(std::min<int64_t>(kLaneGroups, FloorPow2(std::max<int64_t>(1, chunks))));
  // The block reduction keeps every thread's partials in static shared
  // memory, at most 40 KB (code generation refuses more): up to three a
  // reduction (a one-pass var), double for float64 or integer inputs.
  constexpr int64_t kMaxScratchBytes = 40 * 1024;
  int partial_bytes = 4;
  for (const TensorSummary& s : a.inputs) {
    if (s.dtype == DataType::kDouble || IsIntegral(s.dtype)) partial_bytes = 8;
  }
  const int64_t partials = 3 * std::max(1, a.num_reductions);
  while (p.block_x > 1 && 2 * partials * p.block_x * kLaneRows * partial_bytes > kMaxScratchBytes)
    p.block_x /= 2;
  p.block_y = 1;
  p.rows_per_block = kLaneRows;
  p.multi_pass = true;
  const int threads = p.block_x * kLaneRows;
  const int64_t slots =
      int64_t{t.sm_count} * std::max(1, BlocksPerSm(t, threads, kLaneRegisters, 0));
  const int64_t groups = CeilDiv(columns, kLaneRows);
  int64_t element_bytes = 0;  // input bytes a (row, column) element
  for (const TensorSummary& s : a.inputs) {
    if (s.full) element_bytes += DataTypeSize(s.dtype);
  }
  const int64_t l2_budget = rereads && t.l2_bytes > 0 ? t.l2_bytes / 2 : int64_t{1} << 62;
  const int64_t most = std::max<int64_t>(1, std::min({kMaxSplit, slots, chunks / p.block_x}));
  int64_t split = 1;
  while (split < most && (4 * groups * split < 3 * slots ||
                          slots * kLaneRows * rlen * element_bytes / split > l2_budget)) {
    split *= 2;
  }
  p.grid_x = split;
  // Unsplit, every column group runs at once: grid_y is only the launch's
  // cap (blocks walk the groups by gridDim.x). At least the resident blocks,
  // so an artifact of a symbolic definition launched at more columns than
  // it was compiled for keeps a full wave (a column sum compiled at 64x256
  // ran 8192x8192 on 8 blocks).
  p.grid_y =
      split > 1 ? std::max<int64_t>(1, std::min(groups, slots / split)) : std::max(groups, slots);
  p.grid_reduction = split > 1;
  return p;
}

static HeuristicParams OuterPersistentShape(const FusionAnalysis& a, const Target& t) {
  if (a.reduced_contiguous <= 1) {
    return OuterLanesHeuristics(a, t, SchedulerKind::kOuterPersistent, a.outer_size,
                                a.reduced_strided, true);
  }
  constexpr int kMaxBatch = 16;
  // Multi-pass kernels: threads a block and the registers a thread has at
  // two blocks a SM.
  constexpr int kMultiPassThreads = 256;
  constexpr int kMultiPassRegisters = 128;
  HeuristicParams p;
  p.kind = SchedulerKind::kOuterPersistent;
  p.outer_size = a.outer_size;
  p.inner_size = a.inner_size;
  const bool contiguous_reduced = a.reduced_contiguous > 1;
  // The axis threads run along (x) and the one they stride over (y).
  const int64_t x_extent = contiguous_reduced ? a.reduced_contiguous : a.outer_size;
  const int64_t y_extent = a.reduced_strided;
  // Divides both the axis threads run along and inner_size.
  p.vectorize = VectorWidth(a, std::gcd(x_extent, a.inner_size));
  const int64_t lanes = CeilDiv(x_extent, p.vectorize);
  p.block_x =
      static_cast<int>(std::min<int64_t>(RoundUp(lanes, 32), contiguous_reduced ? 512 : 128));
  p.block_y = static_cast<int>(
      std::min<int64_t>(FloorPow2(std::max<int64_t>(1, t.max_threads_per_block / p.block_x)),
                        FloorPow2(std::max<int64_t>(1, y_extent))));
  const int64_t x_steps = CeilDiv(lanes, p.block_x);
  const int64_t y_steps = CeilDiv(y_extent, p.block_y);
  const int floats = BufferFloatsPerElement(a, 0) * p.vectorize;
  const int max_batch = std::max<int>(
      1, std::min<int>(kMaxBatch, (t.max_registers_per_thread - kRegisterOverhead) / floats));
  int64_t batch = x_steps * y_steps;
  p.grid_x = CeilDiv(batch, max_batch);  // blocks sharing one channel (group)
  p.persistent_batch = static_cast<int>(CeilDiv(batch, p.grid_x));
  p.grid_y = contiguous_reduced ? a.outer_size : CeilDiv(lanes, p.block_x);
  const int registers = kRegisterOverhead + p.persistent_batch * floats;
  const int64_t resident =
      int64_t{t.sm_count} * std::max(1, BlocksPerSm(t, p.block_x * p.block_y, registers, 0));
  p.grid_reduction = p.grid_x > 1;
  if (p.grid_x * p.grid_y > resident && p.grid_reduction) {
    p.multi_pass = true;  // cannot keep every channel on chip at once
    p.persistent_batch = 1;
    p.unroll = 4;
    // Two blocks of 256 threads a SM rather than one of 512 (the generator
    // asks ptxas for the blocks a SM the grid is sized for: 128 registers):
    // a SM then runs blocks of two channel groups, whose phases (the first
    // pass reading, the group's barrier, the second pass writing) need not
    // line up ([256, 64, 56, 56] bf16: 113.7 us against 118.4 for one of 512).
    int per_sm = static_cast<int>(resident / t.sm_count);
    if (contiguous_reduced) {
      p.block_x = kMultiPassThreads;
      p.block_y = 1;
      per_sm = std::clamp(BlocksPerSm(t, kMultiPassThreads, kMultiPassRegisters, 0), 1, 2);
    }
    const int64_t slots = int64_t{t.sm_count} * per_sm;
    // Channels a round: as many as the L2 holds the full inputs of (a power
    // of two), the co-resident blocks shared among them, so the final pass
    // finds in the L2 most of what shared memory did not keep ([256, 64, 56,
    // 56] bf16: 16 a round 118.0 us against 123.2 for all 64). At most four
    // rounds (eight lost: each round adds a barrier, a read phase and a write
    // phase that do not overlap), so a small L2 does not make a round a channel.
    if (contiguous_reduced && t.l2_bytes > 0) {
      constexpr int64_t kMaxRounds = 4;
      int64_t channel_bytes = 0;
      for (const TensorSummary& s : a.inputs) {
        if (s.full) channel_bytes += int64_t{DataTypeSize(s.dtype)} * a.inner_size;
      }
      const int64_t fit =
          FloorPow2(std::max<int64_t>(1, t.l2_bytes / std::max<int64_t>(1, channel_bytes)));
      p.grid_y = std::min(p.grid_y, std::max(fit, CeilDiv(p.grid_y, kMaxRounds)));
    }
    p.grid_x = std::max<int64_t>(1, slots / p.grid_y);
    // The final pass re-reads the channel; what shared memory holds of each
    // thread's first chunks it takes from there instead (codegen: kept
    // chunks): as much as a resident block may use.
    p.smem_bytes = std::max<int64_t>(
        0, std::min(t.smem_per_block, t.smem_per_sm / per_sm) - kStaticSmemReserve);
  }
  // A block a channel (no split, one pass): grid_y is only the launch's cap
  // over the channels (blocks walk them), at least the resident blocks, so
  // an artifact launched at more channels than it was compiled for keeps a
  // full wave (compiled at 2x4x16x256, 64x64x56x56 ran on 4 blocks).
  if (!p.grid_reduction && !p.multi_pass) p.grid_y = std::max(p.grid_y, resident);
  return p;
}

HeuristicParams OuterPersistentHeuristics(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p = OuterPersistentShape(a, t);
  DecideKernelForm(a, t, &p);
  return p;
}

}  // namespace fusiond
