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

static std::optional<HeuristicParams> InnerPersistentShape(const FusionAnalysis& a,
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
    // Wide rows: blocks of 128-256 threads with deep per-thread batches (more
    // bytes in flight, cheaper block reductions) beat 512 threads a row.
    // Rows of 257-512 vectors: two warps a row, two rows a block, column
    // operands in shared memory (softmax forward 16384x4096: 75.9 us against
    // 85.0 at 128 x 4 on the H200; docs/heuristics.md, "Inner persistent").
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
    // Of 128 and 256 threads a row, the one with more warps resident, the
    // rows' registers counted as code generation keeps them (packed words plus
    // kRegisterMargin); kernels with column operands keep the first that fits.
    // Softmax forward 4096x16384: 256 x 8 (24 warps a SM) 71.0 us against 74.7
    // for 128 x 16 (16 warps).
    int best_warps = 0;
    for (int bx : {128, 256}) {
      if (vectors < 2048 || (column_operands > 0 && best_warps > 0)) break;
      const int64_t batch = CeilDiv(vectors, bx);
      if (batch > 16 || kRegisterOverhead + batch * floats > t.max_registers_per_thread) continue;
      const int64_t words =
          kRegisterOverhead + kRegisterMargin + RowWordsPerThread(a, batch * p.vectorize);
      const int warps = std::max(
          1, BlocksPerSm(t, bx, static_cast<int>(std::min<int64_t>(words, 255)), 0) * bx / 32);
      if (warps > best_warps) {
        best_warps = warps;
        p.block_x = bx;
        p.persistent_batch = static_cast<int>(batch);
        p.rows_per_block = 1;
      }
    }
    // torch.compile's form: a block a row of 512 threads (1024 for rows of
    // 2048 vectors), the row read evict-last for the reduction and again
    // evict-first for the output (reread_rows), for
    // - two or more full inputs and no column operand (softmax backward), rows
    //   of 512-2048 vectors: as fast as torch.compile (4096x16384: 96.6 us both);
    // - one full input, one reduction, at most one column operand (rmsnorm
    //   forward), rows of exactly two or three chunks a thread (2048x8192: 21.5
    //   against 22.4 us); narrower rows and two reductions were slower this way.
    int full_inputs = 0;
    for (const TensorSummary& s : a.inputs) full_inputs += s.full;
    const int64_t batch512 = CeilDiv(vectors, 512);
    const bool two_inputs =
        full_inputs >= 2 && column_operands == 0 && vectors >= 512 && batch512 <= 4;
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
    const int64_t row_bytes =
        int64_t{4} * BufferFloatsPerElement(a, 0) * p.block_x * p.persistent_batch * p.vectorize;
    if (row_bytes > t.smem_per_block) return std::nullopt;
    p.smem_buffer = true;
    p.smem_bytes = row_bytes;
  }
  p.block_y = p.rows_per_block;
  p.grid_x = std::max<int64_t>(1, CeilDiv(a.outer_size, p.rows_per_block));
  // A grid that loops over the rows lets the kernel load the next row while
  // it reduces the current one (layernorm forward 2048x8192: 36.6 us against
  // 53.7 with a block a row). It asks for as many blocks as the SM's threads
  // allow; code generation caps that at what the registers let run at once
  // (GeneratedKernel::one_wave). Re-read kernels keep a block a row.
  if (!p.smem_buffer && p.persistent_batch <= 4 && !p.reread_rows) {
    const int per_sm = std::max(1, t.max_threads_per_sm / (p.block_x * p.block_y));
    p.grid_x = std::min<int64_t>(p.grid_x, int64_t{per_sm} * t.sm_count);
  }
  return p;
}

// Inner reduction blocks: block_x threads along the row, `unroll` loop
// steps in flight.
static void InnerReductionBlock(const FusionAnalysis& a, HeuristicParams* p) {
  p->vectorize = VectorWidth(a, a.inner_size);
  const int64_t vectors = CeilDiv(a.inner_size, p->vectorize);
  p->block_x = static_cast<int>(std::min<int64_t>(512, std::max<int64_t>(32, FloorPow2(vectors))));
  p->unroll = vectors >= int64_t{4} * p->block_x ? 4 : 1;
}

// Blocks that share a row when the rows are fewer than half the SMs: as many
// as the idle SMs hold, each at least one loop iteration of the row (rows of
// one iteration stay a block a row). 1 otherwise.
static int64_t RowShare(const FusionAnalysis& a, const Target& t, const HeuristicParams& p) {
  const int64_t vectors = CeilDiv(a.inner_size, p.vectorize);
  const int64_t per_iteration = int64_t{p.block_x} * p.unroll;
  if (a.outer_size * 2 > t.sm_count || vectors < 2 * per_iteration) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(t.sm_count / std::max<int64_t>(1, a.outer_size),
                                                vectors / per_iteration));
}

static int64_t FusionBytes(const FusionAnalysis& a) {
  int64_t bytes = 0;
  for (const TensorSummary& s : a.inputs) bytes += s.numel * DataTypeSize(s.dtype);
  for (const TensorSummary& s : a.outputs) bytes += s.numel * DataTypeSize(s.dtype);
  return bytes;
}

// Shorter iterations for rows shared by blocks (`ShortIterationsForSharedRows`):
// where the rows' blocks, each at least one loop iteration of 512 threads x
// 4 steps, would leave more than half the SMs without a block, the steps go
// to 1, then the threads halve down to 128, until at least half have one
// (the launch audit's cliff line). A whole-tensor sum of 134400 x 9
// floats (a box loss) had 16 blocks of 512 x 4 (5 MB, 116 SMs idle); 256
// threads x 1 step give 131 blocks. Splits already past half keep their
// steps: four in flight a thread keep an SM's bytes moving (128 blocks of
// 512 x 4 stay, not 132 of 512 x 1). Fusions under kShortIterationsMinBytes
// keep their blocks: a few blocks read them in about a launch's time, and
// more only lengthen the group barrier.
static void ShortIterationsForSharedRows(const FusionAnalysis& a, const Target& t,
                                         HeuristicParams* p) {
  constexpr int kMinSharedRowThreads = 128;
  constexpr int64_t kShortIterationsMinBytes = int64_t{1} << 20;
  if (a.outer_size * 2 > t.sm_count || FusionBytes(a) < kShortIterationsMinBytes) return;
  const int64_t rows = std::max<int64_t>(1, a.outer_size);
  while (2 * RowShare(a, t, *p) * rows < t.sm_count) {
    if (p->unroll > 1) {
      p->unroll = 1;
    } else if (p->block_x > kMinSharedRowThreads) {
      p->block_x /= 2;
    } else {
      break;
    }
  }
  // Nothing gained (a row too short to share at any size): the block as it was.
  if (RowShare(a, t, *p) == 1) InnerReductionBlock(a, p);
}

// Fewer rows than half the SMs (a whole-tensor amax or sum, fp8 scaling, a
// loss; a norm or softmax of a few long rows): blocks share each row (a
// cooperative combine), as many as the idle SMs hold, each at least one loop
// iteration of the row. One block a row left a 2048x8192 amax + fp8 cast at
// 7.7 ms (torch.compile: 0.10 ms); asking four iterations a block kept 64
// rows of 64K bf16 (16-36 MB) on 64 blocks, half the SMs idle.
int64_t InnerRowSplit(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p;
  InnerReductionBlock(a, &p);
  ShortIterationsForSharedRows(a, t, &p);
  return RowShare(a, t, p);
}

bool FewLongRows(const FusionAnalysis& a, const Target& t) {
  return InnerRowSplit(a, t) > 1 && FusionBytes(a) >= kFewLongRowsBytes;
}

static HeuristicParams InnerReductionShape(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p;
  p.kind = SchedulerKind::kInnerReduction;
  p.outer_size = a.outer_size;
  p.inner_size = a.inner_size;
  InnerReductionBlock(a, &p);
  ShortIterationsForSharedRows(a, t, &p);
  p.multi_pass = true;
  p.grid_x = std::max<int64_t>(1, a.outer_size);
  p.grid_y = InnerRowSplit(a, t);
  // No column operand: shared memory keeps what it can of each thread's first
  // iterations for the later passes (softmax backward 512x65536: 70.4 -> 62.8
  // us); column operands re-read through L1 would lose it. It takes all the
  // shared memory, so only 512-thread blocks (alone on an SM anyway).
  bool columns = false;
  for (const TensorSummary& in : a.inputs) columns |= in.varies_inner && !in.full;
  if (!columns && p.block_x >= 512)
    p.smem_bytes = std::max<int64_t>(0, t.smem_per_block - kStaticSmemReserve);
  return p;
}

std::optional<HeuristicParams> InnerPersistentHeuristics(const FusionAnalysis& a, const Target& t) {
  std::optional<HeuristicParams> p = InnerPersistentShape(a, t);
  if (p) DecideKernelForm(a, t, &*p);
  return p;
}

HeuristicParams InnerReductionHeuristics(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p = InnerReductionShape(a, t);
  DecideKernelForm(a, t, &p);
  return p;
}

}  // namespace fusiond
