// Inner persistent (softmax, norm forward): block_x threads share a row,
// each keeping persistent_batch vectors of `vectorize` elements of every
// full input in registers (or the row in shared memory when registers would
// spill), rows_per_block rows per block, one block per row group.
// Inner reduction: the fallback for rows that fit nowhere on chip; it reads
// the row once per reduction phase (multi_pass) in a serial loop unrolled
// `unroll` times.
#include <algorithm>

#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {

std::optional<HeuristicParams> InnerPersistentHeuristics(const FusionAnalysis& a,
                                                         const Target& t) {
  HeuristicParams p;
  p.kind = SchedulerKind::kInnerPersistent;
  p.outer_size = a.outer_size;
  p.inner_size = a.inner_size;
  p.vectorize = VectorWidth(a, a.inner_size);
  const int64_t vectors = CeilDiv(a.inner_size, p.vectorize);
  const int floats = BufferFloatsPerElement(a, 0) * p.vectorize;
  if (auto split = ChoosePersistentSplit(t, vectors, floats)) {
    p.block_x = split->block_x;
    p.persistent_batch = split->batch;
    p.rows_per_block = split->rows_per_block;
    // Tuned on the H200 (docs/heuristics-tuning.md): wide rows run best with
    // blocks of 128-256 threads and deep per-thread batches (more bytes in
    // flight per thread, cheaper block reductions) than with 512 threads
    // (softmax 4096x16384 bf16 164 us at 512x4, session 3). With two full
    // inputs (softmax backward) 128x16 would spill: 256x8, 101.0 us against
    // 107.0 for 512x4 with rows staged in shared memory.
    // Rows of 257-512 vectors with no column operands: two warps per row
    // (their barrier is cheap) and two rows per block: softmax forward
    // 16384x4096 bf16 75.9 us against 85.0 at 128x4, softmax backward 99.5
    // against 104.7; one warp per row was in between (80.6, 100.7)
    // (bench/results/gpu-2026-11-29-s4-warp-rows.log). With one column
    // operand (rmsnorm's weight) the same, the column kept in shared memory
    // (in registers it took 158 of them): rmsnorm forward 16384x4096 72.3 us
    // against 76.4 at 128 x 4 with the weight in registers, 73.4 with the
    // weight read again from L1 at each use. Layernorm forward (weight and
    // bias) lost either way at four blocks a SM: 84.0 (shared memory) and
    // 82.8 (L1) against 77.2 (bench/results/gpu-2026-11-30-s9-run{2,3}-*.log);
    // with both columns in shared memory code generation now asks ptxas for
    // six blocks, and then it wins: 16384x4096 75.4-76.7 against 77.4-78.3,
    // 16384x3072 58.1-58.2 against 61.1 (bench/results/gpu-2026-11-30-s15-*.log).
    int column_operands = 0;
    for (const TensorSummary& s : a.inputs) column_operands += s.varies_inner && !s.full;
    const int64_t batch64 = CeilDiv(vectors, 64);
    if (vectors > 256 && vectors <= 512 && column_operands <= 2 &&
        kRegisterOverhead + batch64 * floats <= t.max_registers_per_thread) {
      p.block_x = 64;
      p.persistent_batch = static_cast<int>(batch64);
      p.rows_per_block = 2;
      p.smem_columns = column_operands >= 1;
    }
    // Of 128 and 256 threads a row, the one with more warps resident: the
    // rows' registers counted as code generation keeps them (packed words,
    // plus kRegisterMargin; compiler/codegen/codegen.cc asks ptxas for the
    // blocks). Kernels with column operands keep the first that fits (not
    // measured).
    // Softmax forward 4096x16384 bf16: 256 x 8 at three blocks a SM (80
    // registers, 24 warps) 71.0 us against 74.7 for 128 x 16 at four (128
    // registers, 16 warps) (bench/results/gpu-2026-11-30-s10-4-*.log).
    // Before code generation asked ptxas for three blocks of 256 threads,
    // 256 x 8 ran two and lost (158 against 103 us, session 3).
    int best_warps = 0;
    for (int bx : {128, 256}) {
      if (vectors < 2048 || (column_operands > 0 && best_warps > 0)) break;
      const int64_t batch = CeilDiv(vectors, bx);
      if (batch > 16 || kRegisterOverhead + batch * floats > t.max_registers_per_thread) continue;
      const int64_t words = kRegisterOverhead + kRegisterMargin + RowWordsPerThread(a, batch * p.vectorize);
      const int warps =
          std::max(1, BlocksPerSm(t, bx, static_cast<int>(std::min<int64_t>(words, 255)), 0) * bx / 32);
      if (warps > best_warps) {
        best_warps = warps;
        p.block_x = bx;
        p.persistent_batch = static_cast<int>(batch);
        p.rows_per_block = 1;
      }
    }
    // torch.compile's form (H200, bf16, do_bench us, steady state in
    // parentheses): a block a row of 512 threads (1024 for rows of 2048
    // vectors: its 32 warps x 16 elements), the row read evict-last for the
    // reduction and again evict-first for the output (reread_rows); where
    // the row is exactly the threads' chunks code generation drops the row
    // loop and guards and combines in warp 0 (codegen's exact kernels).
    // - Two or more full inputs, no column operand (softmax backward), rows
    //   of 512-2048 vectors: 4096x16384 96.6 (93.5) against 99.5 (94.5) at
    //   256 x 8 and 97.4 at 512 x 4, torch.compile 96.6 (93.6); 16384x4096
    //   96.4 (92.5) against 99.4 (94.4) for 64 x 8 two rows a block,
    //   torch.compile 96.1 (92.5); 8192x8192 97.2 (93.8) against 103.4
    //   (102.4), torch.compile 96.7 (93.8)
    //   (bench/results/gpu-2026-12-01-s22-8-*.log, -s23-{2,5}-*.log).
    // - One full input, one reduction, at most one column operand (rmsnorm
    //   forward), rows of exactly two or three chunks a thread, the column
    //   loaded by each block (it stays in L1 and L2): 2048x8192 21.5 (17.9)
    //   against 22.4 (19.3) for 256 x 4 over a one-wave grid. Not narrower
    //   rows (16384x4096 80.3 against 70.6) nor two reductions (softmax
    //   forward 16384x4096 87.5 against 70.0, layernorm forward 2048x8192
    //   29.3 against 23.1) (bench/results/gpu-2026-12-01-s23-3-*.log).
    int full_inputs = 0;
    for (const TensorSummary& s : a.inputs) full_inputs += s.full;
    const int64_t batch512 = CeilDiv(vectors, 512);
    const bool two_inputs = full_inputs >= 2 && column_operands == 0 && vectors >= 512 && batch512 <= 4;
    const bool one_input = full_inputs == 1 && column_operands <= 1 && a.num_reductions == 1 &&
                           vectors % 512 == 0 && vectors >= 1024 && batch512 <= 3;
    if (two_inputs || one_input) {
      p.block_x = batch512 == 4 && vectors % 1024 == 0 ? 1024 : 512;
      p.persistent_batch = static_cast<int>(CeilDiv(vectors, p.block_x));
      p.rows_per_block = 1;
      p.reread_rows = true;
    }
  } else {
    // Registers would spill: the row buffers go to shared memory.
    p.block_x = 512;
    p.persistent_batch = static_cast<int>(CeilDiv(vectors, p.block_x));
    const int64_t row_bytes = int64_t{4} * BufferFloatsPerElement(a, 0) *
                              p.block_x * p.persistent_batch * p.vectorize;
    if (row_bytes > t.smem_per_block) return std::nullopt;
    p.smem_buffer = true;
    p.smem_bytes = row_bytes;
  }
  p.block_y = p.rows_per_block;
  p.grid_x = std::max<int64_t>(1, CeilDiv(a.outer_size, p.rows_per_block));
  // A grid that loops over the rows lets the generated kernel load the next
  // row while it reduces the current one (layernorm forward 2048x8192: 36.6
  // us against 53.7 us with a block per row; rmsnorm forward 27.2 against
  // 30.1). It asks for as many blocks as the SM's threads allow; code
  // generation caps that at what the compiled registers let run at once
  // (GeneratedKernel::one_wave): softmax forward 16384x4096 ran 6 blocks per
  // SM instead of 3. Rows stay in registers: staging them in shared memory
  // (StageRows, as inner-outer kernels do) was slower here, softmax
  // backward 16384x4096 108.2 against 105.2 us. Kernels that re-read their
  // rows take a block a row, as torch.compile's do (the form measured).
  if (!p.smem_buffer && p.persistent_batch <= 4 && !p.reread_rows) {
    const int per_sm = std::max(1, t.max_threads_per_sm / (p.block_x * p.block_y));
    p.grid_x = std::min<int64_t>(p.grid_x, int64_t{per_sm} * t.sm_count);
  }
  return p;
}

HeuristicParams InnerReductionHeuristics(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p;
  p.kind = SchedulerKind::kInnerReduction;
  p.outer_size = a.outer_size;
  p.inner_size = a.inner_size;
  p.vectorize = VectorWidth(a, a.inner_size);
  const int64_t vectors = CeilDiv(a.inner_size, p.vectorize);
  p.block_x = static_cast<int>(std::min<int64_t>(512, std::max<int64_t>(32, FloorPow2(vectors))));
  p.unroll = vectors >= int64_t{4} * p.block_x ? 4 : 1;
  p.multi_pass = true;
  p.grid_x = std::max<int64_t>(1, a.outer_size);
  // No column operand: what shared memory holds of each thread's first
  // iterations the later passes take from there (codegen: kept chunks).
  // H200, 512x65536 bf16: softmax backward 70.4 -> 62.8 us; rmsnorm
  // forward, whose weight every pass reads again through the L1 that the
  // shared memory shrinks, 50.5 -> 51.7. A block takes all the shared
  // memory, so only blocks of 512 threads, which their 90-120 registers
  // leave alone on an SM anyway.
  bool columns = false;
  for (const TensorSummary& in : a.inputs) columns |= in.varies_inner && !in.full;
  if (!columns && p.block_x >= 512) p.smem_bytes = std::max<int64_t>(0, t.smem_per_block - kStaticSmemReserve);
  return p;
}

}  // namespace fusiond
