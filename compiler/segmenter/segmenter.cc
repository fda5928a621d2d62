#include "compiler/segmenter/segmenter.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/limits.h"
#include "compiler/ir/printer.h"
#include "compiler/segmenter/recompute.h"
#include "compiler/segmenter/shift_cut.h"

namespace fusiond {
namespace {

// Shape ops, `size` and scalar arithmetic are recomputed by every group that
// reads them; everything else is a compute node that belongs to one group.
bool IsCompute(const Graph& g, const Node& n) {
  if (IsShapeOp(n.op) || n.op == OpKind::kSize) return false;
  return g.value(n.outputs[0]).is_tensor;
}

class Partitioner {
 public:
  // recompute: pointwise nodes of graph inputs that their readers recompute
  // where they can (MarkRecomputed); shift_cones: ShiftOperandCones' lists,
  // whose pointwise nodes every reader recomputes. None when null.
  Partitioner(const Graph& g, const SizeBinding& sizes, const Target& t, int max_nodes,
              const std::set<NodeId>* recompute,
              const std::vector<std::vector<NodeId>>* shift_cones)
      : g_(g),
        sizes_(sizes),
        t_(t),
        max_nodes_(max_nodes),
        recompute_(recompute),
        shift_cones_(shift_cones) {}

  absl::StatusOr<std::vector<Segment>> Run();

 private:
  // Compute nodes that produce the values node n reads, looking through
  // recomputed (shape / scalar) nodes.
  const std::set<NodeId>& Producers(NodeId n) const { return producers_[n]; }
  std::set<NodeId> FindProducers(NodeId n) const;
  // Whether some scheduler accepts the group (memoized: groups only grow).
  bool Accepts(const std::set<NodeId>& nodes) const;
  // The standalone graph of a set of compute nodes (+ outputs it must
  // provide), with the original values it reads and writes.
  absl::StatusOr<Segment> Build(const std::set<NodeId>& nodes) const;
  ScheduleChoice Try(const std::set<NodeId>& nodes, Segment* out = nullptr) const;
  int64_t Bytes(ValueId v) const;
  // Tensors a group reads from outside (graph inputs, other groups' results).
  std::set<ValueId> Sources(const std::set<NodeId>& group) const;
  // Values produced by group a and read by group b.
  std::set<ValueId> Crossing(int a, int b) const;
  // Whether group `to` is reachable from `from` over succ_ (optionally not
  // through the direct edge).
  bool Reaches(int from, int to, bool skip_direct) const;
  void ComputeGroupEdges();

  // Run's steps: one group per compute node (an error when one cannot be
  // scheduled alone), greedy merging, then the segments in a topological
  // order of the groups with the reason for each boundary.
  absl::Status StartGroups();
  // A node no scheduler takes with the graph outputs that metadata ops make
  // of its results (a sum broadcast to an output of another shape): those
  // ops become kernels of their own. False when it owns none.
  bool ForceOwnedOutputs(NodeId n);
  // Whether a scheduler takes the union of groups a and b.
  bool AcceptsMerge(int a, int b) const;
  // The producer -> consumer merge that moves the most bytes, or false.
  bool FindProducerConsumerMerge(int* best_a, int* best_b) const;
  // Independent groups to join, those reading the most bytes in common first.
  bool FindIndependentMerge(int* best_a, int* best_b) const;
  void MergeGreedily();
  std::vector<int> TopologicalOrder() const;
  // Why group grp is a segment apart from the earlier ones (index_of: their
  // group -> segment index; first: no earlier segment).
  std::string BoundaryReason(int grp, const std::map<int, int>& index_of, bool first) const;

  // A compute node, or a metadata op that makes a graph output out of
  // graph inputs only (it needs a kernel of its own).
  bool Compute(const Node& n) const {
    return (IsCompute(g_, n) && !recomputed_[n.id]) || forced_[n.id];
  }
  // Marks the pointwise nodes each group recomputes: from the graph's inputs
  // (recompute_), and in shift ops' operand cones (shift_cones_).
  void MarkRecomputed();
  // The compute node whose result a chain of recomputed nodes ending in v
  // starts from, or kNone when it starts at graph inputs.
  NodeId ChainOwner(ValueId v) const;

  const Graph& g_;
  const SizeBinding& sizes_;
  const Target& t_;
  const int max_nodes_;  // compute nodes the search may take (0: any)
  const std::set<NodeId>* recompute_;
  const std::vector<std::vector<NodeId>>* shift_cones_;
  std::vector<char> forced_;
  std::vector<char> recomputed_;
  std::vector<std::set<NodeId>> producers_;  // per node
  std::vector<std::set<int>> succ_;          // group edges, producer -> consumer
  mutable std::map<std::vector<NodeId>, bool> accepts_;
  std::vector<int> group_of_;             // node -> group (compute nodes only)
  std::vector<std::set<NodeId>> groups_;  // empty when merged away
  std::vector<std::vector<NodeId>> uses_;
};

std::set<NodeId> Partitioner::FindProducers(NodeId n) const {
  std::set<NodeId> out;
  std::vector<ValueId> work(g_.node(n).inputs.begin(), g_.node(n).inputs.end());
  std::set<ValueId> seen;
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    const Node* d = g_.def(v);
    if (!d) continue;
    if (Compute(*d)) {
      out.insert(d->id);
    } else {
      work.insert(work.end(), d->inputs.begin(), d->inputs.end());
    }
  }
  return out;
}

std::set<ValueId> Partitioner::Sources(const std::set<NodeId>& group) const {
  std::set<ValueId> out;
  std::vector<ValueId> work;
  for (NodeId n : group)
    work.insert(work.end(), g_.node(n).inputs.begin(), g_.node(n).inputs.end());
  std::set<ValueId> seen;
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    const Node* d = g_.def(v);
    if (d && !Compute(*d)) {
      if (d->op != OpKind::kSize) work.insert(work.end(), d->inputs.begin(), d->inputs.end());
    } else if ((d && !group.count(d->id)) || (!d && g_.value(v).is_tensor)) {
      out.insert(v);
    }
  }
  return out;
}

NodeId Partitioner::ChainOwner(ValueId v) const {
  const Node* d = g_.def(v);
  while (d && !IsCompute(g_, *d)) {
    d = d->inputs.empty() || !g_.value(d->inputs[0]).is_tensor ? nullptr : g_.def(d->inputs[0]);
  }
  return d ? d->id : kNone;
}

int64_t Partitioner::Bytes(ValueId v) const {
  int64_t n = DataTypeSize(g_.value(v).dtype);
  for (int64_t s : sizes_.Shape(g_, v)) n *= s;
  return n;
}

absl::StatusOr<Segment> Partitioner::Build(const std::set<NodeId>& nodes) const {
  // The closure: the compute nodes plus the recomputed nodes they read, and
  // the recomputed nodes between them and graph outputs they own.
  std::set<NodeId> closure(nodes.begin(), nodes.end());
  // Graph outputs made by metadata ops over this group's results.
  for (ValueId o : g_.outputs) {
    const Node* d = g_.def(o);
    if (d && !Compute(*d) && nodes.count(ChainOwner(o))) closure.insert(d->id);
  }
  std::vector<NodeId> work(closure.begin(), closure.end());
  std::set<ValueId> seg_inputs;
  while (!work.empty()) {
    NodeId n = work.back();
    work.pop_back();
    if (g_.node(n).op == OpKind::kSize) continue;  // becomes a constant below
    for (ValueId in : g_.node(n).inputs) {
      const Node* d = g_.def(in);
      if (d && !Compute(*d)) {
        if (closure.insert(d->id).second) work.push_back(d->id);
      } else if (d && !closure.count(d->id)) {
        seg_inputs.insert(in);
      } else if (!d && !g_.value(in).is_constant()) {
        seg_inputs.insert(in);
      }
    }
  }
  // Graph outputs computed by recomputed nodes over this group's results.
  std::vector<ValueId> outputs;
  for (ValueId o : g_.outputs) {
    const Node* d = g_.def(o);
    if (d && closure.count(d->id) &&
        std::find(outputs.begin(), outputs.end(), o) == outputs.end()) {
      outputs.push_back(o);
    }
  }
  // Results that compute nodes of other groups read (through recomputed nodes).
  for (const Node& n : g_.nodes) {
    if (nodes.count(n.id) || !Compute(n)) continue;
    for (NodeId p : Producers(n.id)) {
      if (!nodes.count(p)) continue;
      for (ValueId o : g_.node(p).outputs) {
        if (std::find(outputs.begin(), outputs.end(), o) == outputs.end()) outputs.push_back(o);
      }
    }
  }
  Segment seg;
  GraphBuilder b(&seg.graph);
  std::map<ValueId, ValueId> map;
  auto static_extent = [&](Extent e) { return Extent::Static(sizes_.Resolve(g_, e)); };
  for (ValueId in : g_.inputs) {  // keep the original input order first
    if (!seg_inputs.count(in)) continue;
    seg_inputs.erase(in);
    seg_inputs.insert(in);
  }
  std::vector<ValueId> ordered;
  for (ValueId in : g_.inputs)
    if (seg_inputs.count(in)) ordered.push_back(in);
  for (ValueId in : seg_inputs)
    if (!g_.IsInput(in)) ordered.push_back(in);
  for (ValueId in : ordered) {
    const Value& v = g_.value(in);
    if (!v.is_tensor) {
      map[in] = b.DefineScalarInput(v.dtype, v.name);
      seg.input_shapes.push_back({});
    } else {
      std::vector<int64_t> shape = sizes_.Shape(g_, in);
      auto id = b.DefineTensor(v.name.empty() ? ValueName(g_, in) : v.name, v.dtype, shape);
      if (!id.ok()) return id.status();
      map[in] = *id;
      seg.input_shapes.push_back(shape);
    }
    seg.source_inputs.push_back(in);
  }
  for (const Node& n : g_.nodes) {
    if (!closure.count(n.id)) continue;
    if (n.op == OpKind::kSize) {  // split segments have static sizes
      const Extent e = g_.value(n.inputs[0]).shape[n.attrs.axis];
      map[n.outputs[0]] = b.DefineConstant(static_cast<double>(sizes_.Resolve(g_, e)),
                                           DataType::kInt64, g_.value(n.outputs[0]).name);
      continue;
    }
    std::vector<ValueId> ins;
    for (ValueId in : n.inputs) {
      if (!map.count(in)) {
        const Value& c = g_.value(in);
        map[in] = b.DefineConstant(*c.constant, c.dtype, c.name);
      }
      ins.push_back(map[in]);
    }
    Attrs attrs = n.attrs;
    for (Extent& e : attrs.shape) e = static_extent(e);
    auto outs = b.AddNode(n.op, ins, attrs);
    if (!outs.ok()) return outs.status();
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      map[n.outputs[k]] = (*outs)[k];
      seg.graph.value((*outs)[k]).name = g_.value(n.outputs[k]).name;
    }
  }
  for (ValueId o : outputs) {
    if (absl::Status s = b.AddOutput(map[o]); !s.ok()) return s;
    seg.source_outputs.push_back(o);
  }
  return seg;
}

ScheduleChoice Partitioner::Try(const std::set<NodeId>& nodes, Segment* out) const {
  ScheduleChoice refused;
  auto seg = Build(nodes);
  if (!seg.ok()) {
    refused.reason = std::string(seg.status().message());
    return refused;
  }
  auto sizes = BindShapes(seg->graph, seg->input_shapes);
  if (!sizes.ok()) {
    refused.reason = std::string(sizes.status().message());
    return refused;
  }
  ScheduleChoice c = ChooseScheduler(AnalyzeFusion(seg->graph, *sizes), t_);
  if (out) *out = *std::move(seg);
  return c;
}

std::set<ValueId> Partitioner::Crossing(int a, int b) const {
  std::set<ValueId> out;
  for (NodeId n : groups_[b]) {
    for (NodeId p : Producers(n)) {
      if (group_of_[p] == a) {
        // The compute results of p read (through recomputed nodes) by n.
        for (ValueId o : g_.node(p).outputs) out.insert(o);
      }
    }
  }
  return out;
}

bool Partitioner::Reaches(int from, int to, bool skip_direct) const {
  std::vector<int> work;
  std::set<int> seen;
  for (int x : succ_[from]) {
    if (!(skip_direct && x == to)) work.push_back(x);
  }
  while (!work.empty()) {
    int x = work.back();
    work.pop_back();
    if (x == to) return true;
    if (!seen.insert(x).second) continue;
    work.insert(work.end(), succ_[x].begin(), succ_[x].end());
  }
  return false;
}

void Partitioner::ComputeGroupEdges() {
  succ_.assign(groups_.size(), {});
  for (size_t n = 0; n < g_.nodes.size(); ++n) {
    if (group_of_[n] < 0) continue;
    for (NodeId p : producers_[n]) {
      if (group_of_[p] != group_of_[n]) succ_[group_of_[p]].insert(group_of_[n]);
    }
  }
}

bool Partitioner::Accepts(const std::set<NodeId>& nodes) const {
  std::vector<NodeId> key(nodes.begin(), nodes.end());
  auto it = accepts_.find(key);
  if (it != accepts_.end()) return it->second;
  bool ok = Try(nodes).accepted;
  accepts_.emplace(std::move(key), ok);
  return ok;
}

absl::Status Partitioner::StartGroups() {
  forced_.assign(g_.nodes.size(), 0);
  MarkRecomputed();
  for (ValueId o : g_.outputs) {
    const Node* d = g_.def(o);
    if (d && !IsCompute(g_, *d) && ChainOwner(o) == kNone) forced_[d->id] = 1;
  }
  // The search below grows faster than quadratically with the compute nodes.
  const int64_t compute =
      std::count_if(g_.nodes.begin(), g_.nodes.end(), [&](const Node& n) { return Compute(n); });
  if (max_nodes_ > 0 && compute > max_nodes_) {
    return LimitError(
        "the count of compute nodes to partition into kernels (no scheduler takes the whole "
        "graph)",
        compute, max_nodes_, "CompileLimits::max_partition_nodes; --max-partition-nodes");
  }
  uses_.assign(g_.values.size(), {});
  for (const Node& n : g_.nodes) {
    for (ValueId in : n.inputs) uses_[in].push_back(n.id);
  }
  producers_.clear();
  for (const Node& n : g_.nodes) producers_.push_back(FindProducers(n.id));
  group_of_.assign(g_.nodes.size(), -1);
  for (const Node& n : g_.nodes) {
    if (!Compute(n)) continue;
    group_of_[n.id] = static_cast<int>(groups_.size());
    groups_.push_back({n.id});
    ScheduleChoice alone = Try(groups_.back());
    if (!alone.accepted && ForceOwnedOutputs(n.id)) alone = Try(groups_.back());
    if (!alone.accepted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node ", NodeString(g_, n), " cannot be scheduled even alone: ", alone.reason));
    }
  }
  return absl::OkStatus();
}

bool Partitioner::ForceOwnedOutputs(NodeId n) {
  bool forced = false;
  for (ValueId o : g_.outputs) {
    const Node* d = g_.def(o);
    if (d && !Compute(*d) && ChainOwner(o) == n) {
      forced_[d->id] = 1;
      forced = true;
    }
  }
  if (forced) {
    for (const Node& m : g_.nodes) producers_[m.id] = FindProducers(m.id);
  }
  return forced;
}

// The candidates of recompute_ (SegmentFusion: the cones of values a first
// partition passes between segments) that every group reading them
// recomputes, as shape ops are (compiler/segmenter/recompute.h).
void Partitioner::MarkRecomputed() {
  recomputed_.assign(g_.nodes.size(), 0);
  std::set<NodeId> owners;  // some group must own an output's chain
  for (ValueId o : g_.outputs) owners.insert(ChainOwner(o));
  if (recompute_) recomputed_ = RecomputedNodes(g_, sizes_, *recompute_, owners);
  if (shift_cones_) MarkShiftConesRecomputed(g_, *shift_cones_, owners, &recomputed_);
}

bool Partitioner::AcceptsMerge(int a, int b) const {
  std::set<NodeId> merged = groups_[a];
  merged.insert(groups_[b].begin(), groups_[b].end());
  return Accepts(merged);
}

bool Partitioner::FindProducerConsumerMerge(int* best_a, int* best_b) const {
  // Producer -> consumer merges, by the bytes the cut would move.
  std::vector<std::tuple<int64_t, int, int>> edges;
  for (size_t a = 0; a < groups_.size(); ++a) {
    for (int b : succ_[a]) {
      int64_t bytes = 0;
      for (ValueId v : Crossing(static_cast<int>(a), b)) bytes += Bytes(v);
      edges.emplace_back(-bytes, static_cast<int>(a), b);
    }
  }
  std::sort(edges.begin(), edges.end());
  for (const auto& [neg_bytes, a, b] : edges) {
    if (Reaches(a, b, /*skip_direct=*/true)) continue;  // the merge would be cyclic
    if (!AcceptsMerge(a, b)) continue;
    *best_a = a;
    *best_b = b;
    return true;
  }
  return false;
}

bool Partitioner::FindIndependentMerge(int* best_a, int* best_b) const {
  // No producer/consumer merge left: join independent groups (fewer
  // kernels), those reading the most bytes in common first; with many
  // groups only those that share something.
  std::vector<int> live;
  std::vector<std::set<ValueId>> sources(groups_.size());
  for (size_t a = 0; a < groups_.size(); ++a) {
    if (groups_[a].empty()) continue;
    live.push_back(static_cast<int>(a));
    sources[a] = Sources(groups_[a]);
  }
  std::vector<std::tuple<int64_t, int, int>> pairs;
  for (size_t i = 0; i < live.size(); ++i) {
    for (size_t j = i + 1; j < live.size(); ++j) {
      const int a = live[i], b = live[j];
      int64_t bytes = 0;
      for (ValueId v : sources[a]) bytes += sources[b].count(v) ? Bytes(v) : 0;
      if (bytes == 0 && live.size() > 32) continue;
      pairs.emplace_back(-bytes, a, b);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  for (const auto& [neg_bytes, a, b] : pairs) {
    if (Reaches(a, b, false) || Reaches(b, a, false)) continue;
    if (!AcceptsMerge(a, b)) continue;
    *best_a = a;
    *best_b = b;
    return true;
  }
  return false;
}

void Partitioner::MergeGreedily() {
  // Most bytes saved first.
  while (true) {
    ComputeGroupEdges();
    int best_a = -1, best_b = -1;
    if (!FindProducerConsumerMerge(&best_a, &best_b) && !FindIndependentMerge(&best_a, &best_b))
      break;
    for (NodeId n : groups_[best_b]) group_of_[n] = best_a;
    groups_[best_a].insert(groups_[best_b].begin(), groups_[best_b].end());
    groups_[best_b].clear();
  }
}

std::vector<int> Partitioner::TopologicalOrder() const {
  // A topological order of the groups (by first node otherwise). Depth-first
  // with an explicit stack (a chain of groups may be long): a group is
  // placed once every group it reads from is.
  std::vector<int> order;
  std::set<int> done;
  struct Visit {
    int grp;
    std::vector<int> producers;  // groups to place first, in order
    size_t next = 0;
  };
  auto visit = [&](int grp) {
    Visit v{grp, {}, 0};
    for (NodeId n : groups_[grp]) {
      for (NodeId p : Producers(n)) v.producers.push_back(group_of_[p]);
    }
    return v;
  };
  std::vector<Visit> stack;
  for (const Node& n : g_.nodes) {
    const int root = group_of_[n.id];
    if (root < 0 || !done.insert(root).second) continue;
    stack.push_back(visit(root));
    while (!stack.empty()) {
      Visit& top = stack.back();
      if (top.next < top.producers.size()) {
        const int p = top.producers[top.next++];
        if (done.insert(p).second) stack.push_back(visit(p));
        continue;
      }
      order.push_back(top.grp);
      stack.pop_back();
    }
  }
  return order;
}

std::string Partitioner::BoundaryReason(int grp, const std::map<int, int>& index_of,
                                        bool first) const {
  std::vector<std::string> cuts;
  for (const auto& [other, idx] : index_of) {
    std::set<ValueId> crossing = Crossing(other, grp);
    if (crossing.empty()) continue;
    std::set<NodeId> merged = groups_[other];
    merged.insert(groups_[grp].begin(), groups_[grp].end());
    ScheduleChoice m = Try(merged);
    std::vector<std::string> names;
    int64_t bytes = 0;
    for (ValueId v : crossing) {
      names.push_back(absl::StrCat(ValueName(g_, v), " : ", TypeString(g_, v)));
      bytes += Bytes(v);
    }
    cuts.push_back(absl::StrCat(
        "reads ", absl::StrJoin(names, ", "), " (", bytes, " bytes) from segment ", idx, ": ",
        m.accepted ? "merging would make the segments cyclic"
                   : absl::StrCat("one kernel for both is refused: ", m.reason)));
  }
  if (cuts.empty() && !first) {
    // Independent of every earlier segment: say why it is not part of one.
    std::vector<std::string> why;
    for (const auto& [other, idx] : index_of) {
      std::set<NodeId> merged = groups_[other];
      merged.insert(groups_[grp].begin(), groups_[grp].end());
      ScheduleChoice m = Try(merged);
      why.push_back(absl::StrCat("segment ", idx, ": ",
                                 m.accepted ? "merging would make the segments cyclic"
                                            : absl::StrCat("refused: ", m.reason)));
    }
    cuts.push_back(absl::StrCat("reads nothing from earlier segments; one kernel with them: ",
                                absl::StrJoin(why, "; ")));
  }
  return absl::StrJoin(cuts, "; ");
}

absl::StatusOr<std::vector<Segment>> Partitioner::Run() {
  if (absl::Status s = StartGroups(); !s.ok()) return s;
  MergeGreedily();
  // Segments in a topological order of the groups.
  std::vector<Segment> segments;
  std::map<int, int> index_of;
  for (int grp : TopologicalOrder()) {
    Segment seg;
    ScheduleChoice c = Try(groups_[grp], &seg);
    if (!c.accepted)
      return absl::InternalError(absl::StrCat("segment refused after merging: ", c.reason));
    seg.kind = c.kind;
    seg.scheduler_reason = c.reason;
    seg.boundary_reason = BoundaryReason(grp, index_of, segments.empty());
    index_of[grp] = static_cast<int>(segments.size());
    segments.push_back(std::move(seg));
  }
  return segments;
}

}  // namespace

absl::StatusOr<std::vector<Segment>> Partition(
    const Graph& g, const SizeBinding& sizes, const Target& target, int max_partition_nodes,
    const std::set<NodeId>* recompute, const std::vector<std::vector<NodeId>>* shift_cones) {
  return Partitioner(g, sizes, target, max_partition_nodes, recompute, shift_cones).Run();
}

}  // namespace fusiond
