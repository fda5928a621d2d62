// reshape_views: reshapes that split or merge axes become views at the
// graph's edges. Every tensor is rewritten in the finest factorization its
// reshapes imply (group norm's x [N, C, H, W] -> [N, G, C/G, H, W] makes
// every [.., C, ..] tensor [.., G, C/G, ..], the weight [C] included), so
// the reshapes inside the graph become identities and only two kinds stay:
// a reshape of a graph input (all of whose uses it takes) and a reshape of a
// computed value into graph outputs. Both are views of contiguous memory
// (compiler/ir/reshape_views.h), so the schedulers see group norm as a row
// reduction over [N*G, C/G*H*W] and no kernel copies anything.
//
// A reshape with no common refinement (a regroup such as [6, 4] -> [4, 6],
// a symbolic axis split by run-time factors), or one that meets an op whose
// axes cannot be split (random ops, iota, slice, pad, cat, expand), leaves the
// graph unchanged with a note; the segmenter then cuts around the reshape
// where it can.
#ifndef FUSIOND_COMPILER_PASSES_RESHAPE_VIEWS_H_
#define FUSIOND_COMPILER_PASSES_RESHAPE_VIEWS_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunReshapeViews(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_RESHAPE_VIEWS_H_
