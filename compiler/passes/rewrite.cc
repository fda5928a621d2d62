#include "compiler/passes/rewrite.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "compiler/ir/builder.h"

namespace fusiond {

void ReplaceAllUses(Graph& g, ValueId from, ValueId to) {
  if (from == to) return;
  for (Node& n : g.nodes) {
    for (ValueId& in : n.inputs) {
      if (in == from) in = to;
    }
  }
  for (ValueId& o : g.outputs) {
    if (o == from) o = to;
  }
}

void UseReplacer::Replace(ValueId from, ValueId to) {
  if (from == to) return;
  if (from >= static_cast<ValueId>(to_.size())) to_.resize(from + 1, kNone);
  to_[from] = to;
  ++count_;
}

ValueId UseReplacer::Resolve(ValueId v) const {
  // Chains are short (each link goes to a value defined earlier or new).
  for (int guard = 0; guard < 1 << 20; ++guard) {
    if (v >= static_cast<ValueId>(to_.size()) || to_[v] == kNone) return v;
    v = to_[v];
  }
  return v;
}

void UseReplacer::ResolveOperands(Node& n) const {
  for (ValueId& in : n.inputs) in = Resolve(in);
}

bool UseReplacer::Apply(Graph& g) const {
  if (count_ == 0) return false;
  for (Node& n : g.nodes) ResolveOperands(n);
  for (ValueId& o : g.outputs) o = Resolve(o);
  return true;
}

bool Compact(Graph& g) {
  const int nv = static_cast<int>(g.values.size());
  const int nn = static_cast<int>(g.nodes.size());
  // Liveness, backwards from the outputs.
  std::vector<char> live_value(nv, 0), live_node(nn, 0);
  std::vector<ValueId> work(g.outputs.begin(), g.outputs.end());
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    if (live_value[v]) continue;
    live_value[v] = 1;
    NodeId d = g.values[v].def;
    if (d == kNone || live_node[d]) continue;
    live_node[d] = 1;
    for (ValueId in : g.nodes[d].inputs) work.push_back(in);
  }
  for (ValueId in : g.inputs) live_value[in] = 1;
  for (int n = 0; n < nn; ++n) {
    if (!live_node[n]) continue;
    for (ValueId o : g.nodes[n].outputs) live_value[o] = 1;  // var_mean's twin
  }

  // Topological order: each live node after the definitions of its operands,
  // otherwise in the existing order.
  // Depth-first with an explicit stack (graphs may be 100,000 nodes deep):
  // a node is placed once every operand's definition is.
  std::vector<NodeId> order;
  std::vector<char> placed(nn, 0);
  std::vector<std::pair<NodeId, size_t>> stack;  // node, next operand to visit
  for (int root = 0; root < nn; ++root) {
    if (!live_node[root] || placed[root]) continue;
    placed[root] = 1;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      const std::vector<ValueId>& ins = g.nodes[n].inputs;
      if (next < ins.size()) {
        const NodeId d = g.values[ins[next++]].def;
        if (d != kNone && !placed[d]) {
          placed[d] = 1;
          stack.emplace_back(d, 0);
        }
        continue;
      }
      order.push_back(n);
      stack.pop_back();
    }
  }

  // New value ids: inputs and constants first (existing order), then node
  // results in node order.
  std::vector<ValueId> new_id(nv, kNone);
  std::vector<Value> values;
  auto keep = [&](ValueId v) {
    new_id[v] = static_cast<ValueId>(values.size());
    values.push_back(g.values[v]);
    values.back().id = new_id[v];
  };
  for (int v = 0; v < nv; ++v) {
    if (live_value[v] && g.values[v].def == kNone) keep(v);
  }
  std::vector<Node> nodes;
  for (NodeId old : order) {
    Node n = g.nodes[old];
    n.id = static_cast<NodeId>(nodes.size());
    for (ValueId& o : n.outputs) {
      keep(o);
      values[new_id[o]].def = n.id;
      o = new_id[o];
    }
    for (ValueId& in : n.inputs) in = new_id[in];
    nodes.push_back(std::move(n));
  }
  const bool removed = values.size() != g.values.size() || nodes.size() != g.nodes.size();
  for (ValueId& v : g.inputs) v = new_id[v];
  for (ValueId& v : g.outputs) v = new_id[v];
  for (SizeSymbol& s : g.symbols) s.input = new_id[s.input];
  g.values = std::move(values);
  g.nodes = std::move(nodes);
  return removed;
}

absl::StatusOr<ValueId> AddOp(Graph& g, OpKind op, std::vector<ValueId> inputs, Attrs attrs) {
  GraphBuilder b(&g);
  auto outs = b.AddNode(op, std::move(inputs), std::move(attrs));
  if (!outs.ok()) return outs.status();
  return outs->front();
}

absl::StatusOr<ValueId> AddCast(Graph& g, ValueId x, DataType dtype) {
  Attrs a;
  a.dtype = dtype;
  return AddOp(g, OpKind::kCast, {x}, a);
}

ValueId MakeConstant(Graph& g, double v, DataType dtype) {
  for (const Value& val : g.values) {
    if (val.is_constant() && val.dtype == dtype && *val.constant == v &&
        std::signbit(*val.constant) == std::signbit(v)) {
      return val.id;
    }
  }
  GraphBuilder b(&g);
  return b.DefineConstant(v, dtype);
}

std::optional<double> ConstantOf(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (!val.is_constant()) return std::nullopt;
  return val.constant;
}

bool SameType(const Graph& g, ValueId a, ValueId b) {
  const Value& x = g.value(a);
  const Value& y = g.value(b);
  if (x.is_tensor != y.is_tensor || x.dtype != y.dtype || x.rank() != y.rank()) {
    return false;
  }
  for (int i = 0; i < x.rank(); ++i) {
    if (!g.SameExtent(x.shape[i], y.shape[i])) return false;
  }
  return true;
}

bool SameAttrs(const Graph& g, const Attrs& a, const Attrs& b) {
  if (a.dims != b.dims || a.broadcast_dims != b.broadcast_dims ||
      a.is_broadcast_dim != b.is_broadcast_dim || a.keepdim != b.keepdim || a.dtype != b.dtype ||
      a.correction != b.correction || a.axis != b.axis || a.offsets != b.offsets ||
      a.shape.size() != b.shape.size()) {
    return false;
  }
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (!g.SameExtent(a.shape[i], b.shape[i])) return false;
  }
  return true;
}

}  // namespace fusiond
