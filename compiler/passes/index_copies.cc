#include "compiler/passes/index_copies.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

// Ops an index value may pass through and stay one: element-wise ops,
// casts and layout ops (not reshapes, which reshape_views places, nor
// reductions, whose results lie on other axes).
bool KeepsIndexValue(OpKind op) {
  switch (CategoryOf(op)) {
    case OpCategory::kUnary:
    case OpCategory::kBinary:
    case OpCategory::kTernary:
    case OpCategory::kCast:
      return true;
    case OpCategory::kShape:
      return op != OpKind::kReshape;
    default:
      return false;
  }
}

// index[v]: v is a tensor computed from indices and scalars only.
std::vector<bool> IndexValues(const Graph& g) {
  std::vector<bool> index(g.values.size(), false);
  for (const Node& n : g.nodes) {
    bool is_index = CategoryOf(n.op) == OpCategory::kIndexed;
    if (!is_index && KeepsIndexValue(n.op)) {
      bool any_tensor = false;
      is_index = true;
      for (ValueId in : n.inputs) {
        if (!g.value(in).is_tensor) continue;
        any_tensor = true;
        is_index = is_index && index[in];
      }
      is_index = is_index && any_tensor;
    }
    for (ValueId o : n.outputs) index[o] = is_index && g.value(o).is_tensor;
  }
  return index;
}

// The nodes computing index value v (its defining node and, through tensor
// operands, theirs), in topological order.
std::vector<NodeId> Cone(const Graph& g, ValueId v) {
  std::vector<NodeId> cone;
  std::vector<ValueId> stack{v};
  while (!stack.empty()) {
    const ValueId x = stack.back();
    stack.pop_back();
    const Node* d = g.def(x);
    if (d == nullptr || std::count(cone.begin(), cone.end(), d->id)) continue;
    cone.push_back(d->id);
    for (ValueId in : d->inputs) {
      if (g.value(in).is_tensor) stack.push_back(in);
    }
  }
  std::sort(cone.begin(), cone.end());
  return cone;
}

// Appends a copy of the cone's nodes; returns the copy of v.
absl::StatusOr<ValueId> CopyCone(Graph& g, const std::vector<NodeId>& cone, ValueId v) {
  std::map<ValueId, ValueId> copy;
  for (NodeId id : cone) {
    const Node n = g.node(id);  // AddOp may move the node list
    std::vector<ValueId> inputs = n.inputs;
    for (ValueId& in : inputs) {
      auto it = copy.find(in);
      if (it != copy.end()) in = it->second;
    }
    auto out = AddOp(g, n.op, inputs, n.attrs);
    if (!out.ok()) return out.status();
    copy[n.outputs[0]] = *out;
  }
  return copy.at(v);
}

}  // namespace

absl::StatusOr<bool> RunIndexCopies(Graph& g, const PassOptions&, PassLog& log) {
  const std::vector<bool> index = IndexValues(g);
  std::vector<std::vector<NodeId>> uses = g.Uses();
  const size_t original_nodes = g.nodes.size();
  int added = 0;
  bool changed = false;
  // Earliest values first: a later value's cone then holds the copies made
  // for its operands, and copying it gives each copy its own.
  for (size_t k = 0; k < original_nodes; ++k) {
    const ValueId v = g.nodes[k].outputs[0];
    if (!index[v] || uses[v].size() < 2) continue;
    std::vector<NodeId> users = uses[v];
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());
    // Readers that put v's axes elsewhere: a broadcast or a permute.
    const bool broadcast = std::any_of(users.begin(), users.end(), [&](NodeId u) {
      return g.node(u).op == OpKind::kBroadcastInDim || g.node(u).op == OpKind::kPermute;
    });
    if (users.size() < 2 || !broadcast) continue;
    const std::vector<NodeId> cone = Cone(g, v);
    const int needed = static_cast<int>(cone.size() * (users.size() - 1));
    if (added + needed > kMaxIndexCopyNodes) {
      log.notes.push_back(absl::StrCat(ValueName(g, v), " is read by ", users.size(),
                                       " nodes; copies would pass ", kMaxIndexCopyNodes,
                                       " nodes: left shared"));
      break;
    }
    for (size_t u = 1; u < users.size(); ++u) {
      auto c = CopyCone(g, cone, v);
      if (!c.ok()) return c.status();
      for (ValueId& in : g.nodes[users[u]].inputs) {
        if (in == v) in = *c;
      }
    }
    added += needed;
    changed = true;
    log.notes.push_back(absl::StrCat(ValueName(g, v), ": one copy per reader (", users.size(),
                                     " readers, ", cone.size(), " node(s) each)"));
    uses = g.Uses();
  }
  if (changed) Compact(g);
  return changed;
}

}  // namespace fusiond
