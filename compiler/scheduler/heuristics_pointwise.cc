// Pointwise: a grid-stride loop over the flattened [outer, inner] space,
// `vectorize` contiguous elements per access, `unroll` accesses per thread
// per iteration, at most two waves of co-resident blocks.
#include <algorithm>

#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {

HeuristicParams PointwiseHeuristics(const FusionAnalysis& a, const Target& t) {
  HeuristicParams p;
  p.kind = SchedulerKind::kPointwise;
  p.outer_size = a.outer_size;
  p.inner_size = a.inner_size;
  p.vectorize = VectorWidth(a, a.inner_size);
  p.block_x = 128;
  const int64_t total = std::max<int64_t>(1, a.outer_size * a.inner_size);
  const int64_t accesses = CeilDiv(total, p.vectorize);
  const int64_t resident = int64_t{t.sm_count} * BlocksPerSm(t, p.block_x, 32, 0);
  // Two accesses in flight per thread once the grid is many waves deep.
  p.unroll = accesses >= 8 * resident * p.block_x ? 2 : 1;
  p.grid_x = std::max<int64_t>(1, std::min(CeilDiv(accesses, p.block_x * p.unroll), 2 * resident));
  return p;
}

}  // namespace fusiond
