#include "compiler/ir/shift_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace {

// What a value read at shifted indices is, when a kernel cannot read it so;
// "" when it can be read through its definition.
std::string Unreadable(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  const Node* d = g.def(v);
  if (!val.is_tensor) return "";
  // Inputs: the runtimes hand kernels contiguous row-major tensors.
  if (d == nullptr) return "";
  if (IsPointwise(d->op) || IsShift(d->op) || IsIndexed(d->op)) return "";
  switch (d->op) {
    case OpKind::kBroadcastInDim:
    case OpKind::kBroadcast:
    case OpKind::kExpand:
    case OpKind::kSqueeze:
    case OpKind::kPermute:
    case OpKind::kReshape:  // read at the same row-major offset
      return "";
    default:
      return absl::StrCat("a ", OpName(d->op), " result");
  }
}

}  // namespace

std::vector<bool> ShiftedOnly(const Graph& g) {
  std::vector<bool> only(g.values.size(), false);
  const std::vector<std::vector<NodeId>> uses = g.Uses();
  auto decide = [&](ValueId v) {
    if (!g.value(v).is_tensor || g.IsOutput(v)) return;
    bool any = false;
    for (NodeId u : uses[v]) {
      const Node& n = g.node(u);
      if (n.op == OpKind::kSize) continue;  // reads the extent only
      any = true;
      if (IsShift(n.op)) continue;  // every tensor operand of a shift op is read shifted
      for (ValueId o : n.outputs) {
        if (!only[o]) return;
      }
    }
    only[v] = any;
  };
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    for (ValueId o : it->outputs) decide(o);
  }
  for (ValueId in : g.inputs) decide(in);
  return only;
}

std::string ShiftReadProblem(const Graph& g) {
  std::vector<bool> seen(g.values.size(), false);
  for (const Node& n : g.nodes) {
    if (!IsShift(n.op)) continue;
    std::vector<ValueId> work;
    for (ValueId in : n.inputs) {
      if (g.value(in).is_tensor) work.push_back(in);
    }
    while (!work.empty()) {
      const ValueId v = work.back();
      work.pop_back();
      if (seen[v]) continue;
      seen[v] = true;
      if (std::string why = Unreadable(g, v); !why.empty()) {
        return absl::StrCat(
            OpName(n.op), " ", ValueName(g, n.outputs[0]), " reads ", ValueName(g, v), ", ", why,
            ", at shifted indices; a kernel reads shifted operands only "
            "through pointwise ops, broadcasts, squeeze, permute, reshape and slice/pad/cat "
            "down to its inputs, so that value must come from "
            "memory");
      }
      const Node* d = g.def(v);
      if (d == nullptr) continue;
      for (ValueId in : d->inputs) {
        if (g.value(in).is_tensor) work.push_back(in);
      }
    }
  }
  return "";
}

Graph ShiftFreeView(const Graph& g) {
  if (std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return IsShift(n.op); })) {
    return g;
  }
  const std::vector<bool> only = ShiftedOnly(g);
  Graph v;
  v.symbols = g.symbols;
  std::vector<ValueId> id(g.values.size(), kNone);
  auto add_value = [&](ValueId old) {
    Value val = g.value(old);
    val.id = static_cast<ValueId>(v.values.size());
    val.def = kNone;
    id[old] = val.id;
    v.values.push_back(std::move(val));
    return id[old];
  };
  for (ValueId in : g.inputs) {
    const ValueId n = add_value(in);
    if (only[in]) {  // read only at shifted indices: a name for its symbols, nothing to place
      v.values[n].is_tensor = false;
      v.values[n].shape.clear();
    }
    v.inputs.push_back(n);
  }
  for (SizeSymbol& s : v.symbols) {
    if (s.input != kNone) s.input = id[s.input];
  }
  for (const Node& n : g.nodes) {
    if (std::all_of(n.outputs.begin(), n.outputs.end(), [&](ValueId o) { return only[o]; })) {
      continue;
    }
    Node m = n;
    m.id = static_cast<NodeId>(v.nodes.size());
    if (IsShift(n.op)) {  // the kernel computes it from its index: a fresh input here
      const ValueId fresh = add_value(n.outputs[0]);
      v.values[fresh].name = absl::StrCat(ValueName(g, n.outputs[0]), "_shifted");
      v.inputs.push_back(fresh);
      m.op = OpKind::kCast;
      m.inputs = {fresh};
      m.attrs = Attrs{};
      m.attrs.dtype = g.value(n.outputs[0]).dtype;
    } else if (n.op == OpKind::kSize && only[n.inputs[0]]) {
      const ValueId fresh = add_value(n.outputs[0]);  // the extent as a scalar input
      v.inputs.push_back(fresh);
      continue;
    } else {
      for (ValueId& in : m.inputs) {
        if (id[in] == kNone) add_value(in);  // constants
        in = id[in];
      }
    }
    for (ValueId& o : m.outputs) {
      o = add_value(o);
      v.values[o].def = m.id;
    }
    v.nodes.push_back(std::move(m));
  }
  for (ValueId o : g.outputs) v.outputs.push_back(id[o]);
  return v;
}

}  // namespace fusiond
