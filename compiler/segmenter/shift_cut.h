// Where the segmenter cuts in front of a shift op (slice, pad, cat) whose
// operand a kernel cannot read at shifted indices (it depends on a reduction
// result, compiler/ir/shift_view.h). Cutting at the operand itself writes the
// whole operand to memory; cutting at the values it is computed from with
// pointwise and broadcast ops (the reduction results and graph inputs) writes
// only those, and the shift op's kernel recomputes the operand at the shifted
// indices. SegmentFusion partitions both ways and keeps the one that moves
// fewer bytes.
#ifndef FUSIOND_COMPILER_SEGMENTER_SHIFT_CUT_H_
#define FUSIOND_COMPILER_SEGMENTER_SHIFT_CUT_H_

#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/graph.h"
#include "compiler/scheduler/target.h"
#include "compiler/segmenter/segmenter.h"

namespace fusiond {

// Per shift op whose operands' sub-graph reaches a value a kernel cannot read
// at shifted indices: the shift op, then the nodes of that sub-graph a kernel
// can evaluate at shifted indices (pointwise, shift and indexed ops, walked
// through broadcasts, squeeze, permute and reshape), nearest first, stopping
// at graph inputs and at the unreadable values. Those values plus the inputs
// are the smallest frontier the shift op's kernel can recompute its operand
// from. Empty when no shift op reads such a value.
std::vector<std::vector<NodeId>> ShiftOperandCones(const Graph& g);

// The rule that cuts at that frontier: marks in *recomputed the pointwise
// nodes of the cones (not the shift ops), so that every group reading them
// recomputes them as it does shape ops, and the values crossing into the
// shift op's kernel are the unreadable values (a [rows] mean) and inputs
// rather than the operand ([rows, cols]). Left to their group: nodes in
// `owners` (graph outputs start from them) and nodes a reshape reads (an
// inner reshape reads its operand from memory).
void MarkShiftConesRecomputed(const Graph& g, const std::vector<std::vector<NodeId>>& cones,
                              const std::set<NodeId>& owners, std::vector<char>* recomputed);

// The partitioner of segmenter.cc: recompute as RecomputedNodes' candidates
// (none when null); shift_cones as ShiftOperandCones (none when null).
absl::StatusOr<std::vector<Segment>> Partition(const Graph& g, const SizeBinding& sizes,
                                               const Target& target, int max_partition_nodes,
                                               const std::set<NodeId>* recompute,
                                               const std::vector<std::vector<NodeId>>* shift_cones);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_SEGMENTER_SHIFT_CUT_H_
