// Pointwise nodes of the graph inputs that the segmenter's groups recompute
// instead of passing their results between kernels: SegmentFusion
// partitions once, then again with the cones of the values the first
// segments pass each other recomputed, and keeps the second when it moves
// at least a tenth fewer bytes (group norm backward at [32, 256, 28, 28]:
// 64 instead of 190 MB).
#ifndef FUSIOND_COMPILER_SEGMENTER_RECOMPUTE_H_
#define FUSIOND_COMPILER_SEGMENTER_RECOMPUTE_H_

#include <cstdint>
#include <set>
#include <vector>

#include "compiler/ir/binding.h"
#include "compiler/ir/graph.h"
#include "compiler/segmenter/segmenter.h"

namespace fusiond {

// The pointwise nodes (through shape ops) that compute the values segments
// pass each other.
std::set<NodeId> CrossingCones(const Graph& g, const std::vector<Segment>& segments);

// Bytes the segments' kernels read and write (their tensor inputs and
// outputs).
int64_t Traffic(const std::vector<Segment>& segments);

// Per node: 1 for the candidates computed from graph inputs alone (through
// pointwise and shape ops) that read at most two inputs of their own size,
// are not in `owners` (the nodes graph outputs start from) and no reshape
// reads (an inner reshape reads its operand from memory, as a view of a
// segment's input: compiler/ir/reshape_views.h).
std::vector<char> RecomputedNodes(const Graph& g, const SizeBinding& sizes,
                                  const std::set<NodeId>& candidates,
                                  const std::set<NodeId>& owners);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_SEGMENTER_RECOMPUTE_H_
