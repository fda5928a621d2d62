#include "compiler/segmenter/recompute.h"

#include <algorithm>
#include <optional>

namespace fusiond {

std::set<NodeId> CrossingCones(const Graph& g, const std::vector<Segment>& segments) {
  std::set<NodeId> cones;
  std::vector<ValueId> work;
  for (const Segment& seg : segments) {
    for (ValueId v : seg.source_inputs)
      if (!g.IsInput(v)) work.push_back(v);
  }
  std::set<ValueId> seen;
  while (!work.empty()) {
    const ValueId v = work.back();
    work.pop_back();
    const Node* d = g.def(v);
    if (!seen.insert(v).second || d == nullptr) continue;
    if (!IsPointwise(d->op) && !IsShapeOp(d->op)) continue;
    if (IsPointwise(d->op)) cones.insert(d->id);
    work.insert(work.end(), d->inputs.begin(), d->inputs.end());
  }
  return cones;
}

int64_t Traffic(const std::vector<Segment>& segments) {
  int64_t bytes = 0;
  for (const Segment& seg : segments) {
    const Graph& g = seg.graph;
    for (size_t i = 0; i < g.inputs.size() && i < seg.input_shapes.size(); ++i) {
      int64_t n = DataTypeSize(g.value(g.inputs[i]).dtype);
      for (int64_t e : seg.input_shapes[i]) n *= e;
      bytes += g.value(g.inputs[i]).is_tensor ? n : 0;
    }
    for (ValueId o : g.outputs) {
      int64_t n = DataTypeSize(g.value(o).dtype);
      for (const Extent& e : g.value(o).shape) n *= std::max<int64_t>(g.Canonical(e).size, 1);
      bytes += n;
    }
  }
  return bytes;
}

std::vector<char> RecomputedNodes(const Graph& g, const SizeBinding& sizes,
                                  const std::set<NodeId>& candidates,
                                  const std::set<NodeId>& owners) {
  std::vector<char> out(g.nodes.size(), 0);
  const std::vector<std::vector<NodeId>> uses = g.Uses();
  auto elements = [&](ValueId v) {
    int64_t n = 1;
    for (int64_t e : sizes.Shape(g, v)) n *= e;
    return n;
  };
  // Per value: the graph inputs it is computed from, or nullopt when it
  // reads a result no group recomputes.
  std::vector<std::optional<std::set<ValueId>>> from(g.values.size());
  for (ValueId in : g.inputs) from[in] = std::set<ValueId>{in};
  for (const Value& v : g.values)
    if (v.is_constant()) from[v.id] = std::set<ValueId>{};
  for (const Node& n : g.nodes) {
    const bool compute =
        !IsShapeOp(n.op) && n.op != OpKind::kSize && g.value(n.outputs[0]).is_tensor;
    const bool pointwise = compute && IsPointwise(n.op);
    if (compute && !pointwise) continue;
    std::set<ValueId> all;
    bool ok = true;
    for (ValueId in : n.inputs) {
      if (!from[in]) ok = false;
      if (ok) all.insert(from[in]->begin(), from[in]->end());
    }
    if (!ok) continue;
    if (pointwise) {
      bool reshaped = false;
      for (NodeId u : uses[n.outputs[0]]) reshaped |= g.node(u).op == OpKind::kReshape;
      if (owners.count(n.id) || reshaped || !candidates.count(n.id)) continue;
      const int64_t size = elements(n.outputs[0]);
      int full = 0;
      for (ValueId in : all) full += g.value(in).is_tensor && elements(in) >= size;
      if (full > 2) continue;
      out[n.id] = 1;
    }
    for (ValueId o : n.outputs) from[o] = all;
  }
  return out;
}

}  // namespace fusiond
