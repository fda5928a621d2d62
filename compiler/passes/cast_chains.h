// Cast chains: removes casts that lose nothing.
//  - cast(x, dtype(x)) is x.
//  - cast(cast(x, A), B) where x -> A is lossless is cast(x, B) (x itself
//    when B is x's type): bf16 -> f32 -> bf16 becomes the input.
//  - A narrowing round trip cast(cast(x, A), dtype(x)) with x -> A lossy
//    (f32 -> bf16 -> f32) rounds x; it is kept unless
//    PassOptions::allow_precision_increase, and either way the pass notes it.
//  - A cast of a shape op's result is moved before the shape op (elementwise
//    ops commute with broadcasts), so chains split by a broadcast are seen
//    and the cast runs on the smaller tensor.
// Assumes a verified graph; leaves it compacted.
#ifndef FUSIOND_COMPILER_PASSES_CAST_CHAINS_H_
#define FUSIOND_COMPILER_PASSES_CAST_CHAINS_H_

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunCastChains(Graph& g, const PassOptions& options, PassLog& log);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_CAST_CHAINS_H_
