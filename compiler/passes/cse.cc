#include "compiler/passes/cse.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

std::string ExtentKey(const Graph& g, Extent e) {
  e = g.Canonical(e);
  return e.is_static() ? absl::StrCat(e.size) : absl::StrCat("s", e.symbol);
}

// Everything that decides a node's results, as a string.
std::string NodeKey(const Graph& g, const Node& n) {
  std::vector<ValueId> in = n.inputs;
  if (IsCommutative(n.op)) std::sort(in.begin(), in.end());
  const Attrs& a = n.attrs;
  std::vector<std::string> shape;
  for (const Extent& e : a.shape) shape.push_back(ExtentKey(g, e));
  std::vector<int> bcast(a.is_broadcast_dim.begin(), a.is_broadcast_dim.end());
  return absl::StrCat(static_cast<int>(n.op), "(", absl::StrJoin(in, ","), ")d[",
                      absl::StrJoin(a.dims, ","), "]b[", absl::StrJoin(a.broadcast_dims, ","),
                      "]s[", absl::StrJoin(shape, ","), "]n[", absl::StrJoin(bcast, ","), "]k",
                      a.keepdim, "t", a.dtype ? static_cast<int>(*a.dtype) : 0, "c", a.correction,
                      "a", a.axis, "o[", absl::StrJoin(a.offsets, ","), "]");
}

}  // namespace

bool IsCommutative(OpKind op) {
  switch (op) {
    case OpKind::kAdd:
    case OpKind::kMul:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
    case OpKind::kEq:
    case OpKind::kNe:
    case OpKind::kLogicalAnd:
    case OpKind::kLogicalOr:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<bool> RunCse(Graph& g, const PassOptions&, PassLog&) {
  UseReplacer replace;
  // Constants first, so that nodes reading equal constants compare equal.
  std::map<std::string, ValueId> constants;
  for (const Value& v : g.values) {
    if (!v.is_constant()) continue;
    uint64_t bits;
    double c = *v.constant;
    std::memcpy(&bits, &c, sizeof bits);
    std::string key = absl::StrCat(static_cast<int>(v.dtype), ":", bits);
    auto [it, inserted] = constants.emplace(key, v.id);
    if (!inserted) replace.Replace(v.id, it->second);
  }
  // Nodes in topological order: a duplicate's operands are already merged.
  std::map<std::string, NodeId> seen;
  for (Node& n : g.nodes) {
    replace.ResolveOperands(n);
    auto [it, inserted] = seen.emplace(NodeKey(g, n), n.id);
    if (inserted) continue;
    const Node& first = g.nodes[it->second];
    for (size_t k = 0; k < n.outputs.size(); ++k) replace.Replace(n.outputs[k], first.outputs[k]);
  }
  const bool changed = replace.Apply(g);
  if (changed) Compact(g);
  return changed;
}

}  // namespace fusiond
