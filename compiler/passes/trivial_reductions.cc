#include "compiler/passes/trivial_reductions.h"

#include "compiler/passes/rewrite.h"

namespace fusiond {

absl::StatusOr<bool> RunTrivialReductions(Graph& g, const PassOptions&, PassLog&) {
  UseReplacer replace;
  const int count = static_cast<int>(g.nodes.size());
  for (int i = 0; i < count; ++i) {
    replace.ResolveOperands(g.nodes[i]);
    const Node n = g.nodes[i];
    if (n.op != OpKind::kSum && n.op != OpKind::kMax && n.op != OpKind::kMin &&
        n.op != OpKind::kProd) {
      continue;
    }
    const ValueId x = n.inputs[0];
    bool all_ones = true;
    for (int64_t a : n.attrs.dims) {
      Extent e = g.Canonical(g.value(x).shape[a]);
      if (!(e.is_static() && e.size == 1)) all_ones = false;
    }
    if (!all_ones) continue;
    ValueId r = x;
    if (!n.attrs.keepdim) {
      Attrs a;
      a.dims = n.attrs.dims;
      auto s = AddOp(g, OpKind::kSqueeze, {x}, a);
      if (!s.ok()) return s.status();
      r = *s;
    }
    const DataType want = g.value(n.outputs[0]).dtype;
    if (g.value(r).dtype != want) {
      auto c = AddCast(g, r, want);
      if (!c.ok()) return c.status();
      r = *c;
    }
    replace.Replace(n.outputs[0], r);
  }
  const bool changed = replace.Apply(g);
  if (changed) Compact(g);
  return changed;
}

}  // namespace fusiond
