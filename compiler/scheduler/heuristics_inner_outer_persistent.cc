// Inner-outer persistent (norm backward): like inner persistent for the
// rows, and every thread also accumulates the column reductions (weight and
// bias gradients) for the columns it owns across the rows its block visits;
// the per-block partials are combined after a grid sync, so the grid is at
// most the co-resident blocks. Rows too wide for registers or shared memory
// fall back to multi_pass (re-reading the row), still one kernel.
#include <algorithm>

#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {

HeuristicParams InnerOuterPersistentHeuristics(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p;
  p.kind = SchedulerKind::kInnerOuterPersistent;
  p.outer_size = a.outer_size;
  p.inner_size = a.inner_size;
  p.vectorize = VectorWidth(a, a.inner_size);
  p.grid_reduction = true;
  int columns = 0;
  for (const TensorSummary& s : a.outputs) columns += s.column;
  const int64_t vectors = CeilDiv(a.inner_size, p.vectorize);
  const int floats = BufferFloatsPerElement(a, columns) * p.vectorize;
  int registers = kRegisterOverhead;
  int64_t smem = 0;
  if (auto split = ChoosePersistentSplit(t, vectors, floats)) {
    p.block_x = split->block_x;
    p.persistent_batch = split->batch;
    p.rows_per_block = split->rows_per_block;
    registers = split->registers;
  } else {
    p.block_x = 512;
    p.persistent_batch = static_cast<int>(CeilDiv(vectors, p.block_x));
    smem = int64_t{4} * BufferFloatsPerElement(a, 0) * p.block_x * p.persistent_batch *
           p.vectorize;
    registers = kRegisterOverhead + columns * p.vectorize * p.persistent_batch;
    if (smem <= t.smem_per_block && registers <= t.max_registers_per_thread) {
      p.smem_buffer = true;
      p.smem_bytes = smem;
    } else {
      p.multi_pass = true;
      p.persistent_batch = 1;
      p.unroll = 4;
      smem = 0;
      registers = kRegisterOverhead + columns * p.vectorize * 4;
    }
  }
  p.block_y = p.rows_per_block;
  const int per_sm = std::max(1, BlocksPerSm(t, p.block_x * p.block_y, registers, smem));
  p.grid_x = std::max<int64_t>(
      1, std::min<int64_t>(CeilDiv(a.outer_size, p.rows_per_block), int64_t{t.sm_count} * per_sm));
  return p;
}

}  // namespace fusiond
