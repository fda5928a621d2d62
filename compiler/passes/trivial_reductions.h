// Trivial reductions: a sum, max, min or prod whose reduced axes all have
// extent 1 reduces one element, so it is a squeeze of those axes (nothing
// with keepdim), followed by a cast when the reduction's result type
// differs from its operand's; var and var_mean over such axes are left
// alone. A reduction over axes its operand repeats along (a broadcast's,
// through pointwise ops) reduces only the others: a sum multiplies by the
// repeated extents (sizes for symbolic ones) in its accumulation type, max
// and min take the operand, var over repeated axes alone is x - x (0, NaN
// for NaN and infinities) and var_mean's mean the operand; prod, empty
// extents, one-element results and var with other axes stay. Assumes a
// verified graph; leaves it compacted.
#ifndef FUSIOND_COMPILER_PASSES_TRIVIAL_REDUCTIONS_H_
#define FUSIOND_COMPILER_PASSES_TRIVIAL_REDUCTIONS_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunTrivialReductions(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_TRIVIAL_REDUCTIONS_H_
