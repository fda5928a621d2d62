#include "compiler/passes/cast_chains.h"

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

const Node* DefOp(const Graph& g, ValueId v, OpKind op) {
  const Node* d = g.def(v);
  return d && d->op == op ? d : nullptr;
}

// One sweep over the nodes present at the start; true when it rewrote any
// (nodes it adds are looked at by the next sweep).
absl::StatusOr<bool> Sweep(Graph& g, const PassOptions& options, PassLog& log) {
  const auto uses = g.Uses();  // as of the sweep's start: a hint only
  UseReplacer replace;
  const int count = static_cast<int>(g.nodes.size());
  for (int i = 0; i < count; ++i) {
    replace.ResolveOperands(g.nodes[i]);
    const Node n = g.nodes[i];
    if (n.op != OpKind::kCast) continue;
    const ValueId out = n.outputs[0];
    const ValueId x = n.inputs[0];
    const DataType to = *n.attrs.dtype;
    const DataType mid = g.value(x).dtype;
    if (mid == to) {  // a no-op cast
      replace.Replace(out, x);
      continue;
    }
    if (const Node* inner = DefOp(g, x, OpKind::kCast)) {
      const ValueId src = inner->inputs[0];
      const DataType from = g.value(src).dtype;
      if (IsLosslessCast(from, mid)) {
        ValueId r = src;
        if (from != to) {
          auto c = AddCast(g, src, to);
          if (!c.ok()) return c.status();
          r = *c;
        }
        replace.Replace(out, r);
        continue;
      }
      if (from == to && IsLosslessCast(mid, to)) {
        std::string trip = absl::StrCat(DataTypeName(from), "->", DataTypeName(mid), "->",
                                        DataTypeName(to), " round trip of ", ValueName(g, src));
        if (options.allow_precision_increase) {
          log.notes.push_back(
              absl::StrCat("removed the narrowing ", trip, " (--allow-precision-increase)"));
          replace.Replace(out, src);
          continue;
        }
        std::string note =
            absl::StrCat("kept the narrowing ", trip, " (--allow-precision-increase removes it)");
        if (std::find(log.notes.begin(), log.notes.end(), note) == log.notes.end()) {
          log.notes.push_back(note);
        }
      }
      continue;
    }
    // cast(shape_op(y)) -> shape_op(cast(y)), when that exposes a chain or the
    // shape op has no other reader. Not reshapes: reshape_views keeps them at
    // the graph's inputs, where they are views (and they never shrink a tensor).
    const Node* shape = g.def(x);
    if (shape && IsShapeOp(shape->op) && shape->op != OpKind::kReshape) {
      const ValueId y = shape->inputs[0];
      const bool exposes = DefOp(g, y, OpKind::kCast) != nullptr;
      // (Values made in this sweep are not in `uses`: leave them be.)
      const bool only_reader =
          x < static_cast<ValueId>(uses.size()) && uses[x].size() == 1 && !g.IsOutput(x);
      if (!exposes && !only_reader) continue;
      const OpKind shape_op = shape->op;
      const Attrs shape_attrs = shape->attrs;
      auto c = AddCast(g, y, to);
      if (!c.ok()) return c.status();
      auto s = AddOp(g, shape_op, {*c}, shape_attrs);
      if (!s.ok()) return s.status();
      replace.Replace(out, *s);
    }
  }
  return replace.Apply(g);
}

}  // namespace

absl::StatusOr<bool> RunCastChains(Graph& g, const PassOptions& options, PassLog& log) {
  bool changed = false;
  for (int guard = 0; guard < 10000; ++guard) {
    auto swept = Sweep(g, options, log);
    if (!swept.ok()) return swept.status();
    if (!*swept) break;
    changed = true;
    Compact(g);
  }
  return changed;
}

}  // namespace fusiond
