// Constant folding of scalar expressions: a scalar node whose operands are
// all constants becomes a constant (computed in float64 and rounded to the
// node's dtype the way the reference interpreter rounds it), and `size` of
// an axis with a static (or statically bound) extent becomes an int64
// constant. Results of 16-bit float type are left alone. Tensor nodes are
// not touched. Assumes a verified graph; leaves it compacted.
#ifndef FUSIOND_COMPILER_PASSES_CONSTANT_FOLDING_H_
#define FUSIOND_COMPILER_PASSES_CONSTANT_FOLDING_H_

#include <optional>
#include <vector>

#include "compiler/passes/pass_manager.h"

namespace fusiond {

absl::StatusOr<bool> RunConstantFolding(Graph& g, const PassOptions& options, PassLog& log);

// The value of `op` applied to scalar operands, rounded to `result`; nullopt
// when the pass does not fold it.
std::optional<double> FoldScalar(OpKind op, const std::vector<double>& args,
                                 const std::vector<DataType>& arg_types, DataType result,
                                 const Attrs& attrs);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PASSES_CONSTANT_FOLDING_H_
