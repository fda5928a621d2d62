// Outer reduction (column sums, not persistent): block_x threads along the
// kept contiguous columns (vectorized), block_y threads down the reduced
// rows, `unroll` rows per thread per step; grid_x covers the columns and
// grid_y splits the rows (grid_reduction) until the SMs are busy.
#include <algorithm>

#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {

static HeuristicParams OuterReductionShape(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p;
  p.kind = SchedulerKind::kOuterReduction;
  p.outer_size = a.outer_size;  // reduced rows
  p.inner_size = a.inner_size;  // kept columns
  p.vectorize = VectorWidth(a, a.inner_size);
  const int64_t lanes = CeilDiv(a.inner_size, p.vectorize);
  p.block_x = static_cast<int>(std::min<int64_t>(RoundUp(lanes, 32), 128));
  p.block_y = static_cast<int>(
      std::min<int64_t>(256 / p.block_x, FloorPow2(std::max<int64_t>(1, a.outer_size))));
  p.block_y = std::max(1, p.block_y);
  // Only column results (a bias gradient): a lane a column reads the input
  // once and sums whole columns, with no partial rows to write and read
  // back (OuterLanesHeuristics). With full outputs the row form below reads
  // once for both, but its blocks each take block_y rows of every column
  // (code generation does not split the columns over blocks): where its row
  // groups cannot give half the SMs a block (64 x 65536: 32 blocks of 256
  // threads), the lanes form takes full outputs too, reading the input
  // once more for them.
  bool only_columns = true;
  for (const TensorSummary& s : a.outputs) only_columns = only_columns && !s.full;
  if (only_columns || 2 * CeilDiv(a.outer_size, int64_t{p.block_y}) < t.sm_count) {
    return OuterLanesHeuristics(a, t, SchedulerKind::kOuterReduction, a.inner_size, a.outer_size,
                                false);
  }
  p.unroll = a.outer_size >= 4 * p.block_y ? 4 : 1;
  p.grid_x = CeilDiv(lanes, p.block_x);
  const int64_t resident =
      int64_t{t.sm_count} * std::max(1, BlocksPerSm(t, p.block_x * p.block_y, 64, 0));
  const int64_t row_steps = CeilDiv(a.outer_size, int64_t{p.block_y} * p.unroll);
  p.grid_y = std::max<int64_t>(1, std::min(row_steps, resident / p.grid_x));
  p.grid_reduction = p.grid_y > 1;
  return p;
}

HeuristicParams OuterReductionHeuristics(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p = OuterReductionShape(a, t);
  DecideKernelForm(a, t, &p);
  return p;
}

}  // namespace fusiond
