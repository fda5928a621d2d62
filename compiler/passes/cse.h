// Common subexpression elimination: two nodes with the same op, the same
// operands (in any order for commutative ops) and the same attributes are
// one node; equal scalar constants (same dtype and value) are one constant.
// Later duplicates are replaced by the first. Assumes a verified graph in
// topological order; leaves it compacted.
#ifndef FUSIOND_COMPILER_PASSES_CSE_H_
#define FUSIOND_COMPILER_PASSES_CSE_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunCse(Graph& g, const PassOptions& options, PassLog& log);

// True for binary ops whose operands may be swapped.
bool IsCommutative(OpKind op);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_CSE_H_
