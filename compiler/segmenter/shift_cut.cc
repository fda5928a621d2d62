#include "compiler/segmenter/shift_cut.h"

#include <deque>

#include "absl/strings/str_cat.h"
#include "compiler/segmenter/recompute.h"

namespace fusiond {
namespace {

// Whether a kernel can evaluate d's result at shifted indices (the rule of
// ShiftReadProblem, compiler/ir/shift_view.cc): pointwise, shift and indexed
// ops, and the shape ops that read their operand at the same row-major offset.
bool ReadableShifted(const Node& d) {
  if (IsPointwise(d.op) || IsShift(d.op) || IsIndexed(d.op)) return true;
  switch (d.op) {
    case OpKind::kBroadcastInDim:
    case OpKind::kBroadcast:
    case OpKind::kExpand:
    case OpKind::kSqueeze:
    case OpKind::kPermute:
    case OpKind::kReshape:
      return true;
    default:
      return false;
  }
}

// The partition SegmentFusion keeps for shift_cones: the greedy one, or the
// one with the pointwise cones of the values it passes between segments
// recomputed when that moves at least a tenth fewer bytes (group norm
// backward: 64 instead of 190 MB at [32, 256, 28, 28]).
absl::StatusOr<std::vector<Segment>> Partitioned(
    const Graph& g, const SizeBinding& sizes, const Target& target, int max_partition_nodes,
    const std::vector<std::vector<NodeId>>* shift_cones) {
  auto plain = Partition(g, sizes, target, max_partition_nodes, nullptr, shift_cones);
  if (!plain.ok()) return plain;
  const std::set<NodeId> cones = CrossingCones(g, *plain);
  if (cones.empty()) return plain;
  auto recomputed = Partition(g, sizes, target, max_partition_nodes, &cones, shift_cones);
  if (recomputed.ok() && 10 * Traffic(*recomputed) < 9 * Traffic(*plain)) return recomputed;
  return plain;
}

}  // namespace

std::vector<std::vector<NodeId>> ShiftOperandCones(const Graph& g) {
  std::vector<std::vector<NodeId>> cones;
  for (const Node& s : g.nodes) {
    if (!IsShift(s.op)) continue;
    std::vector<NodeId> cone{s.id};
    bool blocked = false;  // reaches a value the kernel cannot read shifted
    std::set<ValueId> seen;
    std::deque<ValueId> work;  // breadth first: nearest nodes first
    for (ValueId in : s.inputs) work.push_back(in);
    while (!work.empty()) {
      const ValueId v = work.front();
      work.pop_front();
      const Node* d = g.def(v);
      if (!g.value(v).is_tensor || d == nullptr || !seen.insert(v).second) continue;
      if (!ReadableShifted(*d)) {
        blocked = true;
        continue;
      }
      if (!IsShapeOp(d->op)) cone.push_back(d->id);
      work.insert(work.end(), d->inputs.begin(), d->inputs.end());
    }
    if (blocked && cone.size() > 1) cones.push_back(std::move(cone));
  }
  return cones;
}

void MarkShiftConesRecomputed(const Graph& g, const std::vector<std::vector<NodeId>>& cones,
                              const std::set<NodeId>& owners, std::vector<char>* recomputed) {
  const std::vector<std::vector<NodeId>> uses = g.Uses();
  for (const std::vector<NodeId>& cone : cones) {
    for (size_t i = 1; i < cone.size(); ++i) {
      const Node& n = g.node(cone[i]);
      bool reshaped = false;
      for (NodeId u : uses[n.outputs[0]]) reshaped |= g.node(u).op == OpKind::kReshape;
      if (IsPointwise(n.op) && !owners.count(n.id) && !reshaped) (*recomputed)[n.id] = 1;
    }
  }
}

absl::StatusOr<std::vector<Segment>> SegmentFusion(const Graph& g, const SizeBinding& sizes,
                                                   const Target& target, int max_partition_nodes) {
  // The whole graph first.
  ScheduleChoice whole = ChooseScheduler(AnalyzeFusion(g, sizes), target);
  if (whole.accepted) {
    Segment seg;
    seg.graph = g;
    for (ValueId in : g.inputs) {
      seg.input_shapes.push_back(g.value(in).is_tensor ? sizes.Shape(g, in)
                                                       : std::vector<int64_t>{});
      seg.source_inputs.push_back(in);
    }
    seg.source_outputs = g.outputs;
    seg.kind = whole.kind;
    seg.scheduler_reason = whole.reason;
    return std::vector<Segment>{std::move(seg)};
  }
  auto greedy = Partitioned(g, sizes, target, max_partition_nodes, nullptr);
  if (!greedy.ok()) return greedy;
  // Shift ops whose operand must come from memory: also cut at the values
  // the operand is recomputed from, and keep the partition that moves fewer
  // bytes (a slice of x - mean(x): the [rows] mean instead of [rows, cols]).
  const std::vector<std::vector<NodeId>> shift_cones = ShiftOperandCones(g);
  if (shift_cones.empty()) return greedy;
  auto at_frontier = Partitioned(g, sizes, target, max_partition_nodes, &shift_cones);
  if (!at_frontier.ok() || Traffic(*at_frontier) >= Traffic(*greedy)) return greedy;
  for (Segment& seg : *at_frontier) {
    if (seg.boundary_reason.empty()) continue;
    absl::StrAppend(&seg.boundary_reason,
                    "; shift ops' operands are recomputed from the values read from memory "
                    "(ShiftOperandCones): ",
                    Traffic(*at_frontier), " bytes through memory in all, ", Traffic(*greedy),
                    " when cut at the operands");
  }
  return at_frontier;
}

}  // namespace fusiond
