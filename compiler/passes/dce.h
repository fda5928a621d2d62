// Dead code elimination: removes nodes whose results reach no output and
// constants nobody reads, then renumbers (Compact in rewrite.h). Graph
// inputs always stay: they are the fusion's calling convention.
#ifndef FUSIOND_COMPILER_PASSES_DCE_H_
#define FUSIOND_COMPILER_PASSES_DCE_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunDce(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_DCE_H_
