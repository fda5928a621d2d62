// Shape chains: composes chains of metadata ops into one op and removes
// ones that do nothing.
//  - broadcast and expand are rewritten as broadcast_in_dim (one form for
//    the later stages);
//  - broadcast_in_dim(broadcast_in_dim(x)) is one broadcast_in_dim;
//  - squeeze of axes a broadcast_in_dim inserted folds into it;
//  - broadcast_in_dim(squeeze(x)) maps the squeezed size-1 axes onto free
//    output axes when the order allows (one broadcast_in_dim of x);
//  - reshape(reshape(x)) is one reshape;
//  - identities go: broadcast_in_dim to the same shape, reshape to the same
//    shape, squeeze of no axes, the identity permutation.
// Assumes a verified graph; leaves it compacted.
#ifndef FUSIOND_COMPILER_PASSES_SHAPE_CHAINS_H_
#define FUSIOND_COMPILER_PASSES_SHAPE_CHAINS_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunShapeChains(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_SHAPE_CHAINS_H_
