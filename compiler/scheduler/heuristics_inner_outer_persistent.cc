// Inner-outer persistent (norm backward): like inner persistent for the
// rows, and every thread also accumulates the column reductions (weight and
// bias gradients) for the columns it owns across the rows its block visits;
// the per-block partials are combined after a grid sync, so the grid is at
// most the co-resident blocks. Rows too wide for one block's registers or
// shared memory are split over several blocks (SplitWideRows); wider still
// fall back to multi_pass (re-reading the row), still one kernel.
#include <algorithm>

#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {
namespace {

// Rows too wide for one block's registers and shared memory (bf16: from
// 32K, with one or two column reductions; 28K still takes a float row
// buffer in shared memory) are split over grid_y blocks of 256 threads x 4
// vectors: each block stages its slice of every row of its
// row group in shared memory (two rows deep) and keeps the column
// accumulators of its slice in registers across those rows; the row
// reductions cross the blocks of a row group through the workspace and a
// group barrier, two blocks a SM (each waits on a barrier per row). The
// multi-pass kernel read-modify-writes a partial row of every column for every
// row: layernorm backward 512x65536 671 us against about 100 split (H200). More
// slices than SMs: false (multi-pass).
bool SplitWideRows(const FusionAnalysis& a, const Target& t, int64_t vectors, HeuristicParams* p) {
  constexpr int kThreads = 256, kBatch = 4;
  const int64_t parts = CeilDiv(vectors, int64_t{kThreads} * kBatch);
  if (parts < 2 || parts > t.sm_count) return false;
  HeuristicParams q = *p;
  q.block_x = kThreads;
  q.persistent_batch = kBatch;
  q.rows_per_block = 1;
  q.grid_y = parts;
  q.smem_buffer = false;
  q.smem_bytes = 0;
  if (!StageRows(a, t, &q, /*even_small=*/true)) return false;
  *p = q;
  return true;
}

// Whether code generation stages the rows in p's shared-memory buffer
// (generator_staging.cc, PlanStaging: cp.async chunks, and one row of the
// full inputs beside the column inputs). A buffer that does not is read
// back from memory, not persistent, and PlanCluster refuses clusters there.
bool RowsStageInBuffer(const FusionAnalysis& a, const HeuristicParams& p) {
  const int64_t elements = int64_t{p.block_x} * p.rows_per_block * p.persistent_batch * p.vectorize;
  int64_t row_bytes = 0, col_bytes = 0;
  for (const TensorSummary& s : a.inputs) {
    if (!s.varies_inner) continue;
    const int size = DataTypeSize(s.dtype);
    const int chunk = size * p.vectorize;
    if (chunk != 4 && chunk != 8 && chunk != 16) return false;
    (s.full ? row_bytes : col_bytes) += size * elements;
  }
  return row_bytes > 0 && p.smem_bytes - col_bytes >= row_bytes;
}

}  // namespace

static HeuristicParams InnerOuterPersistentShape(const FusionAnalysis& a, const Target& t) {
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
    // One block of 512 threads a SM with a short batch keeps the most bytes in
    // flight and lets the kernel prefetch the next row (rmsnorm backward
    // 2048x8192: 51.9 us at 512 x 2, 65.0 at 256 x 4); rows of 512 vectors take
    // 256 x 2, two blocks a SM. With two column reductions (layernorm) the
    // register rows would spill, so the same blocks stage x and dy in shared memory.
    const int64_t batch512 = CeilDiv(vectors, 512);
    if (vectors >= 512 && batch512 <= 4) {
      HeuristicParams q = p;
      q.block_x = batch512 >= 2 ? 512 : 256;
      q.persistent_batch = static_cast<int>(CeilDiv(vectors, q.block_x));
      q.rows_per_block = 1;
      if (columns <= 1 || StageRows(a, t, &q, /*even_small=*/true)) {
        p = q;
        registers = std::min(t.max_registers_per_thread, 65536 / 512);
      }
    }
    // Narrow rows (under 512 vectors): blocks of up to 512 threads, several
    // rows deep, one a SM; many small blocks leave thousands of partial rows
    // for the column epilogue (rmsnorm backward 4096x512: 29.6 us against 9.5).
    // With one column reduction two vectors a thread, prefetched in registers
    // (16384x1024: 36.7 -> 32.9 us); layernorm keeps the staged split.
    const int64_t half = vectors / 2;
    if (vectors < 512 && columns <= 1 && half >= 32 && (half & (half - 1)) == 0) {
      p.block_x = static_cast<int>(half);
      p.persistent_batch = 2;
      p.rows_per_block = 1;
      registers = kRegisterOverhead + 2 * floats;
    }
    while (vectors < 512 && p.block_x * p.rows_per_block * 2 <= 512 &&
           BlocksPerSm(t, p.block_x * p.rows_per_block * 2, registers, 0) >= 1) {
      p.rows_per_block *= 2;
    }
  } else {
    p.block_x = 512;
    p.persistent_batch = static_cast<int>(CeilDiv(vectors, p.block_x));
    smem = int64_t{4} * BufferFloatsPerElement(a, 0) * p.block_x * p.persistent_batch * p.vectorize;
    registers = kRegisterOverhead + columns * p.vectorize * p.persistent_batch;
    // Rows staged at their storage type two deep when that fits, rather than
    // one float row (layernorm backward 4096x16384: 153.4 -> 121.4 us).
    if (registers <= t.max_registers_per_thread && StageRows(a, t, &p)) {
      smem = p.smem_bytes;
    } else if (smem <= t.smem_per_block && registers <= t.max_registers_per_thread) {
      p.smem_buffer = true;
      p.smem_bytes = smem;
    } else if (SplitWideRows(a, t, vectors, &p)) {
      registers = 65536 / (2 * p.block_x);  // two per SM (the kernel asks ptxas for it)
    } else {
      p.multi_pass = true;
      p.persistent_batch = 1;
      p.unroll = 4;
      smem = 0;
      registers = kRegisterOverhead + columns * p.vectorize * 4;
    }
  }
  p.block_y = p.rows_per_block;
  if (p.smem_buffer) {
    smem = p.smem_bytes;
  } else if (!p.multi_pass && p.grid_y == 1 && StageRows(a, t, &p)) {
    smem = p.smem_bytes;
  }
  const int per_sm = std::max(1, BlocksPerSm(t, p.block_x * p.block_y, registers, smem));
  p.grid_x = std::max<int64_t>(1, std::min<int64_t>(CeilDiv(a.outer_size, p.rows_per_block),
                                                    int64_t{t.sm_count} * per_sm / p.grid_y));
  // Two or more column reductions (layernorm) from one staged block a SM:
  // clusters of two sum their accumulators through distributed shared memory,
  // halving the partial rows (layernorm backward 4096x16384: 113.4-114.2 us
  // against 115.4-116.1). Not with one column reduction (rmsnorm backward:
  // 1-6% slower) nor two blocks a SM; clusters of 4 or 8 do not fit a
  // cooperative launch of one block a SM. Only where the rows stage (the
  // kernel is persistent), as code generation requires.
  if (columns >= 2 && HasClusters(t) && per_sm == 1 && p.smem_buffer && !p.multi_pass &&
      p.grid_y == 1 && p.block_y == 1 && p.vectorize % 4 == 0 && p.grid_x >= 2 &&
      RowsStageInBuffer(a, p)) {
    p.cluster_x = 2;
  }
  return p;
}

HeuristicParams InnerOuterPersistentHeuristics(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p = InnerOuterPersistentShape(a, t);
  DecideKernelForm(a, t, &p);
  return p;
}

}  // namespace fusiond
