#include "compiler/passes/output_copies.h"

#include "absl/strings/str_cat.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {

absl::StatusOr<bool> RunOutputCopies(Graph& g, const PassOptions&, PassLog& log) {
  bool changed = false;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
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
  return changed;
}

}  // namespace fusiond
