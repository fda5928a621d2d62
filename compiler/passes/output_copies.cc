#include "compiler/passes/output_copies.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {

namespace {

// Output i is a reshape of a value no node computes: a reshape of a reshape
// (reshape_views' input view) or of an input that other nodes read too. No
// kernel could write it (it is no view at either edge), so the reshape's
// operand is copied and the output becomes a reshape of the copy: an output
// view. Returns whether it did.
absl::StatusOr<bool> CopyBeforeReshape(Graph& g, size_t i, PassLog& log) {
  const Node* d = g.def(g.outputs[i]);
  if (d == nullptr || d->op != OpKind::kReshape) return false;
  const ValueId y = d->inputs[0];
  const Node* yd = g.def(y);
  bool uncomputed = yd != nullptr && yd->op == OpKind::kReshape;
  if (yd == nullptr && g.IsInput(y)) {
    const std::vector<std::vector<NodeId>> uses = g.Uses();
    for (NodeId u : uses[y]) uncomputed |= g.node(u).op != OpKind::kReshape;
  }
  if (!uncomputed) return false;
  const Attrs attrs = d->attrs;
  absl::StatusOr<ValueId> copy = AddCast(g, y, g.value(y).dtype);
  if (!copy.ok()) return copy.status();
  absl::StatusOr<ValueId> view = AddOp(g, OpKind::kReshape, {*copy}, attrs);
  if (!view.ok()) return view.status();
  g.outputs[i] = *view;
  log.notes.push_back(absl::StrCat("output ", i, " reshapes ", ValueName(g, y),
                                   ", which no node computes: copied before the reshape"));
  return true;
}

}  // namespace

absl::StatusOr<bool> RunOutputCopies(Graph& g, const PassOptions&, PassLog& log) {
  bool changed = false;
  bool reshapes = false;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    absl::StatusOr<bool> before = CopyBeforeReshape(g, i, log);
    if (!before.ok()) return before.status();
    if (*before) {
      changed = reshapes = true;
      continue;
    }
    const ValueId out = g.outputs[i];
    // A reshaped input too: the kernel copies it in the reshaped shape (the
    // reshape a view of the input, compiler/ir/reshape_views.h).
    const Node* d = g.def(out);
    const bool reshaped = d && d->op == OpKind::kReshape && g.IsInput(d->inputs[0]);
    if ((!g.IsInput(out) && !reshaped) || !g.value(out).is_tensor) continue;
    const std::string name = g.value(reshaped ? d->inputs[0] : out).name;
    absl::StatusOr<ValueId> copy = AddCast(g, out, g.value(out).dtype);
    if (!copy.ok()) return copy.status();
    g.outputs[i] = *copy;
    log.notes.push_back(
        absl::StrCat("output ", i, " is input ", name, reshaped ? " reshaped" : "", ": copied"));
    changed = true;
  }
  if (reshapes) Compact(g);  // the reshapes the copies replaced
  return changed;
}

}  // namespace fusiond
