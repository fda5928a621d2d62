// Trivial reductions: a sum, max, min or prod whose reduced axes all have
// extent 1 reduces one element, so it is a squeeze of those axes (nothing
// with keepdim), followed by a cast when the reduction's result type
// differs from its operand's. var and var_mean are left alone. Assumes a
// verified graph; leaves it compacted.
#ifndef FUSIOND_COMPILER_PASSES_TRIVIAL_REDUCTIONS_H_
#define FUSIOND_COMPILER_PASSES_TRIVIAL_REDUCTIONS_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunTrivialReductions(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_TRIVIAL_REDUCTIONS_H_
