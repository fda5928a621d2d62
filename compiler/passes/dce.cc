#include "compiler/passes/dce.h"

#include "compiler/passes/rewrite.h"

namespace fusiond {

absl::StatusOr<bool> RunDce(Graph& g, const PassOptions&, PassLog&) { return Compact(g); }

}  // namespace fusiond
