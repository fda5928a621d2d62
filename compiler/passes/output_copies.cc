#include "compiler/passes/output_copies.h"

#include "absl/strings/str_cat.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {

absl::StatusOr<bool> RunOutputCopies(Graph& g, const PassOptions&, PassLog& log) {
  bool changed = false;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const ValueId out = g.outputs[i];
    if (!g.IsInput(out) || !g.value(out).is_tensor) continue;
    absl::StatusOr<ValueId> copy = AddCast(g, out, g.value(out).dtype);
    if (!copy.ok()) return copy.status();
    g.outputs[i] = *copy;
    log.notes.push_back(absl::StrCat("output ", i, " is input ", g.value(out).name, ": copied"));
    changed = true;
  }
  return changed;
}

}  // namespace fusiond
