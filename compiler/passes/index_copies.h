// Index copies: a value computed only from element indices (iota, random
// ops, and pointwise ops, casts and broadcasts of those over scalars) that
// several nodes read, one of them a broadcast_in_dim or a permute, gets one
// copy of its computation per reader. A causal mask compares iota(S)
// broadcast along the rows with the same iota broadcast along the columns
// (CSE makes the two iotas one): a kernel computes an index value from the
// reference axis it lies on, and one value cannot lie on two axes, so
// without copies both sides read the same index (q >= q). Copies are pure
// functions of the index, so the results are the same. Runs once, after the
// rounds (cse would merge the copies again). At most kMaxIndexCopyNodes
// nodes are added; beyond that the graph is left as it is, with a note.
#ifndef FUSIOND_COMPILER_PASSES_INDEX_COPIES_H_
#define FUSIOND_COMPILER_PASSES_INDEX_COPIES_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

inline constexpr int kMaxIndexCopyNodes = 1000;

absl::StatusOr<bool> RunIndexCopies(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_INDEX_COPIES_H_
