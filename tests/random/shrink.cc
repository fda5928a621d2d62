// ShrinkGraph and RemoveDeadCode: reduce a failing graph to a small one.
#include <algorithm>

#include "compiler/ir/verifier.h"
#include "compiler/passes/rewrite.h"  // SameType
#include "tests/random/random_graph.h"

namespace fusiond {
namespace {

// Replaces every read of `from` (node operands and outputs) with `to`.
Graph ReplaceUses(const Graph& g, ValueId from, ValueId to) {
  Graph r = g;
  for (Node& n : r.nodes) {
    for (ValueId& in : n.inputs) {
      if (in == from) in = to;
    }
  }
  const bool to_is_output = r.IsOutput(to);
  std::vector<ValueId> outs;
  for (ValueId o : r.outputs) {
    if (o != from)
      outs.push_back(o);
    else if (!to_is_output)
      outs.push_back(to);
  }
  r.outputs = outs;
  return r;
}

}  // namespace

Graph RemoveDeadCode(const Graph& g) {
  const int nv = static_cast<int>(g.values.size());
  std::vector<char> live(nv, 0), live_node(g.nodes.size(), 0);
  for (ValueId o : g.outputs) {
    if (o >= 0 && o < nv) live[o] = 1;
  }
  for (int k = static_cast<int>(g.nodes.size()) - 1; k >= 0; --k) {
    const Node& n = g.nodes[k];
    bool any = false;
    for (ValueId o : n.outputs) any = any || (o >= 0 && o < nv && live[o]);
    if (!any) continue;
    live_node[k] = 1;
    for (ValueId o : n.outputs) live[o] = 1;  // both results of var_mean
    for (ValueId in : n.inputs) live[in] = 1;
  }
  for (ValueId in : g.inputs) live[in] = 1;

  Graph r;
  std::vector<ValueId> vmap(nv, kNone);
  std::vector<NodeId> nmap(g.nodes.size(), kNone);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (live_node[k]) {
      nmap[k] = static_cast<NodeId>(r.nodes.size());
      r.nodes.push_back(g.nodes[k]);
    }
  }
  for (const Value& v : g.values) {
    if (!live[v.id]) continue;
    vmap[v.id] = static_cast<ValueId>(r.values.size());
    Value c = v;
    c.id = vmap[v.id];
    if (c.def != kNone) c.def = nmap[c.def];
    r.values.push_back(c);
  }
  for (Node& n : r.nodes) {
    n.id = static_cast<NodeId>(&n - r.nodes.data());
    for (ValueId& in : n.inputs) in = vmap[in];
    for (ValueId& o : n.outputs) o = vmap[o];
  }
  for (ValueId in : g.inputs) r.inputs.push_back(vmap[in]);
  for (ValueId o : g.outputs) r.outputs.push_back(vmap[o]);
  r.symbols = g.symbols;
  for (SizeSymbol& s : r.symbols) {
    if (s.input >= 0 && s.input < nv && vmap[s.input] != kNone) s.input = vmap[s.input];
  }
  return r;
}

Graph ShrinkGraph(const Graph& g, const std::function<bool(const Graph&)>& still_fails,
                  int max_attempts) {
  int attempts = 1;
  if (!still_fails(g)) return g;
  Graph cur = g;
  // Accepts `cand` when it is valid, smaller, and still fails.
  auto try_accept = [&](const Graph& cand_in) {
    if (attempts >= max_attempts) return false;
    Graph cand = RemoveDeadCode(cand_in);
    if (!VerifyGraph(cand).ok()) return false;
    if (cand.nodes.size() > cur.nodes.size() ||
        (cand.nodes.size() == cur.nodes.size() && cand.outputs.size() >= cur.outputs.size())) {
      return false;
    }
    ++attempts;
    if (!still_fails(cand)) return false;
    cur = std::move(cand);
    return true;
  };
  try_accept(cur);
  bool changed = true;
  while (changed && attempts < max_attempts) {
    changed = false;
    // 1. Drop one output.
    for (size_t i = 0; i < cur.outputs.size() && !changed && cur.outputs.size() > 1; ++i) {
      Graph c = cur;
      c.outputs.erase(c.outputs.begin() + i);
      changed = try_accept(c);
    }
    // 2. Move an output to an operand of its definition.
    for (size_t i = 0; i < cur.outputs.size() && !changed; ++i) {
      const Node* def = cur.def(cur.outputs[i]);
      if (!def) continue;
      for (ValueId in : def->inputs) {
        if (!cur.value(in).is_tensor || cur.IsInput(in)) continue;
        if (cur.IsOutput(in)) continue;
        Graph c = cur;
        c.outputs[i] = in;
        changed = try_accept(c);
        if (changed) break;
      }
    }
    // 3. Bypass a node whose operand has its result's type and shape,
    //    latest nodes first.
    for (int k = static_cast<int>(cur.nodes.size()) - 1; k >= 0 && !changed; --k) {
      const Node& n = cur.nodes[k];
      if (n.outputs.size() != 1) continue;
      const ValueId y = n.outputs[0];
      for (ValueId x : n.inputs) {
        if (!SameType(cur, x, y)) continue;
        changed = try_accept(ReplaceUses(cur, y, x));
        if (changed) break;
      }
    }
    // 4. Cut a computed operand off: read a graph input of the same type
    //    and shape instead (the subtree behind it may then die).
    for (int k = static_cast<int>(cur.nodes.size()) - 1; k >= 0 && !changed; --k) {
      for (size_t j = 0; j < cur.nodes[k].inputs.size() && !changed; ++j) {
        const ValueId x = cur.nodes[k].inputs[j];
        if (cur.def(x) == nullptr) continue;
        for (ValueId in : cur.inputs) {
          if (!SameType(cur, in, x)) continue;
          Graph c = cur;
          c.nodes[k].inputs[j] = in;
          changed = try_accept(c);
          if (changed) break;
        }
      }
    }
  }
  return cur;
}

}  // namespace fusiond
