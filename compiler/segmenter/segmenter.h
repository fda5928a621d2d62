// The segmenter: decides which nodes run in which kernel. It tries the whole
// graph first; only when no scheduler accepts it does it partition. The
// partition starts from one group per compute node (pointwise, cast,
// reduction) and greedily merges producer/consumer neighbours while some
// scheduler accepts the merged group, taking first the merge that keeps the
// most bytes off global memory (the bytes of the tensors the cut would
// write and read back); merges that would make the groups cyclic are
// skipped. Metadata ops (broadcast, squeeze, reshape, ...) and scalar
// arithmetic are never segments of their own: each group recomputes the
// ones it reads, so a cut lies at a compute node's result (never the
// "bookend" split that moves shape ops to a fusion's edges). So are
// pointwise nodes computed from a few graph inputs alone (MarkRecomputed).
// Every boundary records why the two sides could not be one kernel. In
// front of a shift op whose operand must come from memory, the cut at the
// values the operand is recomputed from is tried too (shift_cut.h).
#ifndef FUSIOND_COMPILER_SEGMENTER_SEGMENTER_H_
#define FUSIOND_COMPILER_SEGMENTER_SEGMENTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/graph.h"
#include "compiler/scheduler/scheduler.h"
#include "compiler/scheduler/target.h"

namespace fusiond {

struct Segment {
  // The segment as a standalone graph. For a single segment this is the
  // fusion itself (symbolic extents kept); segments of a split fusion use
  // the concrete sizes as static extents.
  Graph graph;
  // Concrete shapes of graph.inputs.
  std::vector<std::vector<int64_t>> input_shapes;
  // Which values of the original graph are this segment's inputs / outputs
  // (in the order of graph.inputs / graph.outputs).
  std::vector<ValueId> source_inputs;
  std::vector<ValueId> source_outputs;
  SchedulerKind kind = SchedulerKind::kPointwise;
  std::string scheduler_reason;  // why this scheduler took it
  std::string boundary_reason;   // why it is cut from its producers ("" if one segment)
};

// InvalidArgument when a single compute node is not schedulable at all;
// ResourceExhausted when no scheduler takes the whole graph and it has more
// than max_partition_nodes compute nodes to partition (0: no limit;
// CompileLimits::max_partition_nodes).
absl::StatusOr<std::vector<Segment>> SegmentFusion(const Graph& g, const SizeBinding& sizes,
                                                   const Target& target,
                                                   int max_partition_nodes = 0);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_SEGMENTER_SEGMENTER_H_
