// pow with a constant exponent: pow(x, n) for an integer n in -4..8 becomes
// multiplications by repeated squaring (and a reciprocal for n < 0), n = 1
// becomes x, n = 0 becomes a tensor of ones, 0.5 becomes sqrt and -0.5
// rsqrt. Any other exponent stays a pow. The products are computed in the
// compute type of the pow's result (float for bf16/fp16, as the generated
// code does) and cast back once, so 16-bit results are rounded once, like
// the pow they replace; float results may differ from a single rounding by
// an ulp. Negative and fractional exponents are rewritten only for floating
// point results. Assumes a verified graph; leaves it compacted.
#ifndef FUSIOND_COMPILER_PASSES_POW_CONSTANT_H_
#define FUSIOND_COMPILER_PASSES_POW_CONSTANT_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunPowConstant(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_POW_CONSTANT_H_
