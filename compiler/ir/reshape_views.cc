#include "compiler/ir/reshape_views.h"

#include <algorithm>
#include <optional>

namespace fusiond {
namespace {

bool SameShape(const Graph& g, const std::vector<Extent>& a, const std::vector<Extent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(g.Canonical(a[i]) == g.Canonical(b[i]))) return false;
  return true;
}

// Row-major with no gaps: every axis contiguous (a broadcast axis only of
// extent 1), the stride order (if any) outermost first.
bool RowMajor(const Graph& g, const Value& v) {
  for (size_t i = 0; i < v.stride_order.size(); ++i) {
    if (v.stride_order[i] != static_cast<int64_t>(v.stride_order.size() - 1 - i)) return false;
  }
  for (size_t i = 0; i < v.contiguity.size(); ++i) {
    if (v.contiguity[i].has_value() ? !*v.contiguity[i]
                                    : !(g.Canonical(v.shape[i]) == Extent::Static(1))) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool IsInputView(const Graph& g, const Node& n, const std::vector<std::vector<NodeId>>& uses) {
  if (n.op != OpKind::kReshape) return false;
  const ValueId x = n.inputs[0];
  if (!g.IsInput(x) || g.IsOutput(x) || !RowMajor(g, g.value(x))) return false;
  for (NodeId u : uses[x]) {
    const Node& r = g.node(u);
    if (r.op != OpKind::kReshape || g.IsOutput(r.outputs[0]) ||
        !SameShape(g, g.value(r.outputs[0]).shape, g.value(n.outputs[0]).shape)) {
      return false;
    }
  }
  return true;
}

bool IsOutputView(const Graph& g, const Node& n, const std::vector<std::vector<NodeId>>& uses) {
  if (n.op != OpKind::kReshape) return false;
  const ValueId y = n.inputs[0], r = n.outputs[0];
  if (!uses[r].empty() || std::count(g.outputs.begin(), g.outputs.end(), r) != 1) return false;
  if (g.def(y) == nullptr || g.def(y)->op == OpKind::kReshape || g.IsOutput(y)) return false;
  for (NodeId u : uses[y]) {  // one output view per value
    if (u != n.id && g.node(u).op == OpKind::kReshape && g.IsOutput(g.node(u).outputs[0]))
      return false;
  }
  return true;
}

Graph ResolveReshapeViews(const Graph& g) {
  const auto uses = g.Uses();
  std::vector<bool> drop(g.nodes.size(), false);
  std::vector<ValueId> alias(g.values.size());
  for (size_t v = 0; v < alias.size(); ++v) alias[v] = static_cast<ValueId>(v);
  std::vector<std::optional<std::vector<Extent>>> reshaped(g.values.size());
  bool any = false;
  for (const Node& n : g.nodes) {
    const bool in_view = IsInputView(g, n, uses);
    if (!in_view && !IsOutputView(g, n, uses)) continue;
    drop[n.id] = any = true;
    alias[n.outputs[0]] = n.inputs[0];
    if (in_view) {
      std::vector<Extent> shape;
      for (const Extent& e : g.value(n.outputs[0]).shape) shape.push_back(g.Canonical(e));
      reshaped[n.inputs[0]] = shape;
    }
  }
  if (!any) return g;
  // Copy what stays, renumbering values and nodes densely (ids are indices).
  Graph h;
  h.symbols = g.symbols;
  std::vector<ValueId> id(g.values.size(), kNone);
  for (const Value& v : g.values) {
    if (v.def != kNone && drop[v.def]) continue;
    Value c = v;
    c.id = id[v.id] = static_cast<ValueId>(h.values.size());
    c.def = kNone;
    if (reshaped[v.id]) {
      c.shape = *reshaped[v.id];
      c.contiguity.assign(c.shape.size(), true);
      c.stride_order.clear();
    }
    h.values.push_back(std::move(c));
  }
  for (const Node& n : g.nodes) {
    if (drop[n.id]) continue;
    Node c = n;
    c.id = static_cast<NodeId>(h.nodes.size());
    for (ValueId& in : c.inputs) in = id[alias[in]];
    for (ValueId& out : c.outputs) {
      out = id[out];
      h.values[out].def = c.id;
    }
    h.nodes.push_back(std::move(c));
  }
  for (ValueId in : g.inputs) h.inputs.push_back(id[in]);
  for (ValueId out : g.outputs) h.outputs.push_back(id[alias[out]]);
  for (SizeSymbol& s : h.symbols)
    if (s.input != kNone) s.input = id[s.input];
  return h;
}

}  // namespace fusiond
