#include "compiler/passes/algebra.h"

#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

bool IsConstant(const Graph& g, ValueId v, double c) {
  auto k = ConstantOf(g, v);
  return k && *k == c;
}

// What node n simplifies to, or kNone.
ValueId Simplified(const Graph& g, const Node& n) {
  const ValueId out = n.outputs[0];
  auto same = [&](ValueId x) { return SameType(g, x, out) ? x : kNone; };
  switch (n.op) {
    case OpKind::kMul:
      if (IsConstant(g, n.inputs[1], 1.0)) return same(n.inputs[0]);
      if (IsConstant(g, n.inputs[0], 1.0)) return same(n.inputs[1]);
      return kNone;
    case OpKind::kAdd:
      if (IsConstant(g, n.inputs[1], 0.0)) return same(n.inputs[0]);
      if (IsConstant(g, n.inputs[0], 0.0)) return same(n.inputs[1]);
      return kNone;
    case OpKind::kSub:
      return IsConstant(g, n.inputs[1], 0.0) ? same(n.inputs[0]) : kNone;
    case OpKind::kDiv:
      return IsConstant(g, n.inputs[1], 1.0) ? same(n.inputs[0]) : kNone;
    case OpKind::kNeg:
    case OpKind::kReciprocal: {
      const Node* d = g.def(n.inputs[0]);
      if (!d || d->op != n.op) return kNone;
      // A 16-bit inner reciprocal rounds to 8 or 11 bits: removing it would
      // change results by an ulp of that type, so only 32/64-bit go.
      if (n.op == OpKind::kReciprocal && DataTypeSize(g.value(out).dtype) < 4) return kNone;
      return same(d->inputs[0]);
    }
    default:
      return kNone;
  }
}

}  // namespace

absl::StatusOr<bool> RunAlgebra(Graph& g, const PassOptions&, PassLog&) {
  // Nodes are visited in order, so a chain x*1*1 folds in one sweep.
  UseReplacer replace;
  for (Node& n : g.nodes) {
    replace.ResolveOperands(n);
    ValueId r = Simplified(g, n);
    if (r != kNone) replace.Replace(n.outputs[0], r);
  }
  const bool changed = replace.Apply(g);
  if (changed) Compact(g);
  return changed;
}

}  // namespace fusiond
