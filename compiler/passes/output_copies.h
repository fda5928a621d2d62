// Output copies: an output that is a graph input (the definition returns an
// input, or the passes reduced an output to one), or a reshape of one, gets a
// same-dtype cast, so a kernel writes the output buffer. Without it no kernel would compute the
// value and the output would stay unwritten. An output that reshapes a value
// no node computes (an input other nodes read too, or reshape_views' input
// view) is no view at either edge: it becomes a reshape of a copy of that
// value (an output view). Runs once, after the optimization rounds
// (cast_chains would remove the copy).
#ifndef FUSIOND_COMPILER_PASSES_OUTPUT_COPIES_H_
#define FUSIOND_COMPILER_PASSES_OUTPUT_COPIES_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunOutputCopies(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_OUTPUT_COPIES_H_
