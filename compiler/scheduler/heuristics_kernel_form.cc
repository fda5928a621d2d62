// The code generator's choices that change a kernel beyond its launch shape,
// decided here (DecideKernelForm) so that they are HeuristicParams fields:
// printed by --explain and the report, part of the heuristics hash and so of
// the cache key. Code generation reads them and checks only what it alone
// knows (its register estimate, whether a kernel is specialized).
#include <algorithm>

#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {
namespace {

bool OuterKind(SchedulerKind k) {
  return k == SchedulerKind::kOuterPersistent || k == SchedulerKind::kOuterReduction;
}

// Outer kinds whose channels are adjacent in memory (rows_per_block > 1).
bool Lanes(const HeuristicParams& p) { return OuterKind(p.kind) && p.rows_per_block > 1; }

// Blocks share a row (channel) and combine partials through a workspace:
// grid_x blocks a channel for the outer persistent and lanes kernels,
// grid_y blocks a row for the inner kinds.
bool RowSplitOverBlocks(const HeuristicParams& p) {
  if (p.kind == SchedulerKind::kOuterPersistent || Lanes(p)) return p.grid_x > 1;
  return p.kind != SchedulerKind::kPointwise && p.kind != SchedulerKind::kOuterReduction &&
         p.grid_y > 1;
}

// Lanes outer persistent kernels that keep their chunks in registers
// (lanes_in_registers): the chunks of `vectorize` rows a thread takes of its
// column, the column's rows (inner_size) over the grid_x blocks' block_x
// lane groups.
bool LanesInRegisters(const HeuristicParams& p) {
  return Lanes(p) && p.lanes_in_registers && p.kind == SchedulerKind::kOuterPersistent;
}
int LanesKeptChunks(const HeuristicParams& p) {
  const int64_t chunks = CeilDiv(p.inner_size, std::max(1, p.vectorize));
  const int64_t threads = std::max<int64_t>(1, p.block_x) * std::max<int64_t>(1, p.grid_x);
  return static_cast<int>(std::max<int64_t>(1, CeilDiv(chunks, threads)));
}
// Registers such a thread needs: 40 for indices, partials and temporaries
// (the streaming lanes kernels fit 64) and the kept words of every full
// input (2- to 8-byte elements; others stream).
int LanesKeptRegisters(const FusionAnalysis& a, const HeuristicParams& p) {
  int64_t bytes = 0;
  for (const TensorSummary& s : a.inputs) {
    const int b = DataTypeSize(s.dtype);
    if (s.full && b >= 2) bytes += b;
  }
  return static_cast<int>(40 + CeilDiv(int64_t{LanesKeptChunks(p)} * p.vectorize * bytes, 4));
}

// Threads a block as code generation lays them out.
int BlockThreads(const HeuristicParams& p) {
  if (Lanes(p)) return std::max(1, p.block_x) * p.rows_per_block;
  if (p.kind == SchedulerKind::kOuterPersistent) {
    return (std::max(32, std::min(512, p.block_x * std::max(1, p.block_y))) + 31) / 32 * 32;
  }
  return std::max(32, p.block_x) * std::max(1, p.block_y);
}

}  // namespace

// Register-persistent outer kernels (not lanes ones): the vectors a thread
// keeps of its channel (outer persistent: the channel's reduced elements
// over the grid_x blocks that share it) or of its column run (outer
// reduction), as code generation lays the block out along them.
void ChunksPerThread(HeuristicParams* p) {
  if (LanesInRegisters(*p)) {
    p->persistent_batch = LanesKeptChunks(*p);
    return;
  }
  const bool persistent = p->kind == SchedulerKind::kOuterPersistent
                              ? !p->multi_pass && !p->smem_buffer
                              : p->kind == SchedulerKind::kOuterReduction && !p->multi_pass;
  if (!persistent || Lanes(*p)) return;
  const bool channels = p->kind == SchedulerKind::kOuterPersistent;
  // inner_size: the reduced elements per channel (outer persistent), the
  // kept columns (outer reduction).
  const int64_t rlen = p->inner_size;
  const int64_t threads = channels ? BlockThreads(*p) : std::max(32, p->block_x);
  const int64_t blocks = channels ? std::max<int64_t>(1, p->grid_x) : 1;
  const int64_t chunks = CeilDiv(rlen, std::max(1, p->vectorize));
  p->persistent_batch = static_cast<int>(std::max<int64_t>(1, CeilDiv(chunks, threads * blocks)));
}

// var/var_mean in one stage (count, mean and squared deviations merged) where
// that saves a pass over memory: kernels that re-read the row (multi_pass;
// layernorm forward 128x131072 36.4 -> 33.4 us on the H200). With the row in
// registers the merge's latency per row cost more than the block reduction it
// saves (2048x8192 22.0 -> 24.0 us), so persistent kernels keep two stages.
// Not where blocks share a row: the cross-block combine sums plain partials.
bool OnePassVariance(const HeuristicParams& p) { return p.multi_pass && !RowSplitOverBlocks(p); }

// Cooperative multi-pass inner-outer kernels take row groups from a counter
// as they go, so blocks the memory system serves faster take more rows and
// all reach the grid barrier together (rmsnorm backward 512x65536 bf16
// 268.3 -> 246.3 us on the H200). Persistent kernels lost with it (layernorm
// backward 2048x8192 41.6 -> 58.3 us) and keep the static order.
bool DynamicRowOrder(const HeuristicParams& p) {
  return p.kind == SchedulerKind::kInnerOuterPersistent && p.multi_pass && p.grid_y <= 1;
}

// Output stores with the streaming (evict-first) hint: row kernels that
// stream one input, varying along and across rows (the forwards; softmax forward 16384x4096 76.4 ->
// 72.7 us on the H200); with two streamed inputs (the backwards) they were
// 1-11% slower.
bool StreamingStores(const FusionAnalysis& a, const HeuristicParams& p) {
  if (p.kind != SchedulerKind::kInnerPersistent && p.kind != SchedulerKind::kInnerReduction) {
    return false;
  }
  int streamed = 0;
  for (const TensorSummary& s : a.inputs) streamed += s.varies_inner && s.varies_outer;
  return streamed == 1;
}

// Re-read kernels (reread_rows) of up to three chunks a thread and a block a
// row tile the row exactly where it fills the tile: no row loop nor guards,
// a block a row group (softmax backward 8192x8192: 97.2 us against 103.4 with
// the loop; at four chunks, 4096x16384, the loop's kernel won). Code
// generation takes it where the kernel is specialized to such a row.
bool ExactTiling(const HeuristicParams& p) {
  return p.reread_rows && p.persistent_batch <= 3 && !RowSplitOverBlocks(p);
}

// The blocks per SM a kernel asks ptxas for (__launch_bounds__):
// - lanes kernels: as many as 64 registers a thread allow, at most four;
// - cooperative kernels whose rows (channels) blocks share: the blocks the
//   heuristics sized grid_x x grid_y for (at most two for inner-outer rows,
//   four for outer persistent blocks of <= 128 threads: the same 128
//   registers a thread as two of 256);
// - inner persistent kernels: an upper bound, under which code generation
//   asks for as many as its register estimate fits: four for 128 threads
//   (six with two or more column operands in shared memory, which leave the
//   rows most of the registers: layernorm forward 16384x4096 77.4 -> 75.4
//   us), four for 256 threads (beyond two only with a register margin and no
//   prefetch buffer: softmax forward 4096x16384 at 256 x 8, three blocks,
//   71.0 us against 74.7 for 128 x 16), two for larger blocks;
// - others: one.
int PlannedBlocksPerSm(const FusionAnalysis& a, const HeuristicParams& p, const Target& t) {
  const int threads = BlockThreads(p);
  if (Lanes(p)) {
    constexpr int kLaneRegisters = 64;
    const int registers =
        LanesInRegisters(p) && !p.smem_buffer ? LanesKeptRegisters(a, p) : kLaneRegisters;
    return std::clamp(t.registers_per_sm / std::max(1, threads * registers), 1, 4);
  }
  if (RowSplitOverBlocks(p) && (p.kind == SchedulerKind::kInnerOuterPersistent ||
                                p.kind == SchedulerKind::kOuterPersistent)) {
    const int64_t planned = std::max<int64_t>(1, p.grid_x) * std::max<int64_t>(1, p.grid_y);
    const int most = p.kind == SchedulerKind::kOuterPersistent && threads <= 128 ? 4 : 2;
    return static_cast<int>(std::clamp<int64_t>(CeilDiv(planned, t.sm_count), 1, most));
  }
  if (p.kind == SchedulerKind::kInnerPersistent) {
    int column_operands = 0;
    for (const TensorSummary& s : a.inputs) column_operands += s.varies_inner && !s.varies_outer;
    if (threads <= 128) return p.smem_columns && column_operands >= 2 ? 6 : 4;
    return threads == 256 ? 4 : 2;
  }
  return 1;
}

void DecideKernelForm(const FusionAnalysis& a, const Target& t, HeuristicParams* p) {
  ChunksPerThread(p);
  p->one_pass_variance = OnePassVariance(*p);
  p->dynamic_rows = DynamicRowOrder(*p);
  p->streaming_stores = StreamingStores(a, *p);
  p->exact_tiling = ExactTiling(*p);
  p->blocks_per_sm = PlannedBlocksPerSm(a, *p, t);
}

}  // namespace fusiond
