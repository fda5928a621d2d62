// Helpers shared by the per-kind heuristic functions.
#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {

int64_t FloorPow2(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

int VectorWidth(const FusionAnalysis& a, int64_t extent) {
  int widest = 1;
  for (const auto* list : {&a.inputs, &a.outputs}) {
    for (const TensorSummary& s : *list) {
      if (s.varies_inner) widest = std::max(widest, DataTypeSize(s.dtype));
    }
  }
  int w = std::min(8, 16 / widest);
  while (w > 1 && extent % w != 0) w /= 2;
  return w;
}

int BufferFloatsPerElement(const FusionAnalysis& a, int accumulators) {
  int floats = accumulators;
  for (const TensorSummary& s : a.inputs) {
    if (s.full && s.varies_inner) floats += DataTypeSize(ComputeType(s.dtype)) >= 8 ? 2 : 1;
  }
  return std::max(floats, 1);
}

int64_t RowWordsPerThread(const FusionAnalysis& a, int64_t elements) {
  int64_t words = 0;
  for (const TensorSummary& s : a.inputs) {
    if (s.varies_inner) words += (elements * DataTypeSize(s.dtype) + 3) / 4;
  }
  return words;
}

int BlocksPerSm(const Target& t, int threads, int registers, int64_t smem) {
  if (threads <= 0) return 0;
  int by_threads = t.max_threads_per_sm / threads;
  int by_regs = t.registers_per_sm / std::max(1, registers * threads);
  int by_smem = smem > 0 ? static_cast<int>(t.smem_per_sm / smem) : t.max_blocks_per_sm;
  if (smem > t.smem_per_block) return 0;
  return std::max(0, std::min({by_threads, by_regs, by_smem, t.max_blocks_per_sm}));
}

std::optional<PersistentSplit> ChoosePersistentSplit(const Target& t, int64_t vectors,
                                                     int floats_per_slot) {
  constexpr int kMaxBatch = 16;
  std::optional<PersistentSplit> best;
  std::tuple<int64_t, int, int> best_key;
  for (int block_x = 32; block_x <= t.max_threads_per_block; block_x *= 2) {
    const int64_t batch = CeilDiv(vectors, block_x);
    if (batch > kMaxBatch) continue;
    const int registers = kRegisterOverhead + static_cast<int>(batch) * floats_per_slot;
    if (registers > t.max_registers_per_thread) continue;
    // Short rows: several rows per block so a block has at least 128 threads.
    const int rows = block_x < 128 && batch == 1 ? 128 / block_x : 1;
    if (BlocksPerSm(t, block_x * rows, registers, 0) < 1) continue;
    // Padding in per mille, then distance of the batch from 4, then threads.
    const int64_t waste = (block_x * batch - vectors) * 1000 / vectors;
    auto key = std::make_tuple(waste, static_cast<int>(std::abs(batch - 4)), block_x);
    if (!best || key < best_key) {
      best = PersistentSplit{block_x, static_cast<int>(batch), registers, rows};
      best_key = key;
    }
  }
  return best;
}

bool StageRows(const FusionAnalysis& a, const Target& t, HeuristicParams* p, bool even_small) {
  // Elements of one tensor a block keeps per row (all its rows).
  const int64_t elements =
      int64_t{p->block_x} * p->rows_per_block * p->persistent_batch * p->vectorize;
  int64_t row_bytes = 0, col_bytes = 0, words = 0;
  for (const TensorSummary& s : a.inputs) {
    if (!s.varies_inner) continue;
    const int size = DataTypeSize(s.dtype);
    const int chunk = size * p->vectorize;
    if (chunk != 4 && chunk != 8 && chunk != 16) return false;  // cp.async sizes
    if (s.full) {
      row_bytes += size * elements;
      words += int64_t{p->persistent_batch} * chunk / 4;
    } else {
      // Room for the float copy of a 16-bit column (kMaxFloatColumnBatch).
      const bool widened = size == 2 && p->persistent_batch <= kMaxFloatColumnBatch;
      col_bytes += (widened ? 4 : size) * elements;
    }
  }
  if (words <= 16 && !even_small) return false;
  const int64_t smem = col_bytes + 2 * row_bytes;
  // The kernel also declares the block reductions' scratch statically (well
  // under 4 KiB; the epilogue's column tiles reuse the ring). Without room
  // for it a ring that fits alone fails at every launch (a 224 KiB ring
  // beside 8 KiB of static tiles did).
  if (smem + kStaticSmemReserve > t.smem_per_block) return false;
  p->smem_buffer = true;
  p->smem_bytes = smem;
  return true;
}

}  // namespace fusiond
