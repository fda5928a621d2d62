// Simple algebra: x*1, 1*x, x/1, x+0, 0+x, x-0 become x, and neg(neg(x))
// and reciprocal(reciprocal(x)) become x, whenever the result has x's dtype
// and shape (so a scalar constant that promotes x's type or an operand that
// broadcasts x is left alone). x+0 turns -0 into +0 and
// reciprocal(reciprocal(x)) may differ from x by the rounding of the inner
// reciprocal; both are accepted, as in every tensor compiler. Assumes a
// verified graph; leaves it compacted.
#ifndef FUSIOND_COMPILER_PASSES_ALGEBRA_H_
#define FUSIOND_COMPILER_PASSES_ALGEBRA_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunAlgebra(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_ALGEBRA_H_
