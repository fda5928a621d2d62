// Checks that the optimization passes preserve the CPU reference results of
// a graph: the graph is evaluated before the passes and after every pass
// that changed it, on the same inputs, and the outputs are compared within
// the rounding a rewrite may change (see OutputTolerance).
#ifndef FUSIOND_TESTS_PASSES_PASS_CHECK_H_
#define FUSIOND_TESTS_PASSES_PASS_CHECK_H_

#include <string>
#include <vector>

#include "compiler/passes/pass_manager.h"
#include "compiler/reference/reference.h"

namespace fusiond {

// Largest accepted MaxRelativeError for a value of dtype t: pow -> products
// in float may move a float32 result by an ulp, which may flip the final
// rounding of a 16-bit value by one of its ulps. An output is held to the
// tolerance of the least precise float type it depends on.
double OutputTolerance(DataType t);

// "" when every pass preserved the results; else which pass broke what
// (or the pass error).
std::string CheckPassesPreserve(const Graph& g, const std::vector<HostTensor>& inputs,
                                const PassOptions& options = {});

// Pass-level facts the acceptance criteria name, on an optimized graph:
// pow with an integer exponent, a no-op cast, a lossless cast chain.
std::vector<std::string> ForbiddenPatterns(const Graph& g);

}  // namespace fusiond

#endif  // FUSIOND_TESTS_PASSES_PASS_CHECK_H_
