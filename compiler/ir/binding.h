// Binding concrete input shapes to a graph: resolves every size symbol to a
// number and checks the inputs against the definition (rank, static extents,
// extents that the graph requires to be equal).
#ifndef FUSIOND_COMPILER_IR_BINDING_H_
#define FUSIOND_COMPILER_IR_BINDING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"

namespace fusiond {

struct SizeBinding {
  // Size of every symbol (indexed by SymbolId; non-roots hold their root's).
  std::vector<int64_t> symbol_sizes;

  int64_t Resolve(const Graph& g, Extent e) const {
    e = g.Canonical(e);
    return e.is_static() ? e.size : symbol_sizes[e.symbol];
  }
  std::vector<int64_t> Shape(const Graph& g, ValueId v) const {
    std::vector<int64_t> s;
    for (const Extent& e : g.value(v).shape) s.push_back(Resolve(g, e));
    return s;
  }
};

// Elements per tensor, static or bound (GraphLimits::max_elements' default).
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// InvalidArgument "a tensor of N elements exceeds the limit of L" when the
// product of `sizes`, each counted as at least 1, passes max_elements: then
// every stride and index of the tensor fits int64, zero-size tensors too.
// Overflow-safe for any non-negative sizes.
absl::Status CheckElementCount(const std::vector<int64_t>& sizes, int64_t max_elements);

// input_shapes has one entry per graph input (empty for scalar inputs).
// InvalidArgument when a rank or extent disagrees with the definition, e.g.
// "input T1 axis 0 is 4096 but T0.size(1) is 8192", or when a bound input or
// any value computed from them fails CheckElementCount.
absl::StatusOr<SizeBinding> BindShapes(const Graph& g,
                                       const std::vector<std::vector<int64_t>>& input_shapes,
                                       int64_t max_elements = kMaxTensorElements);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_BINDING_H_
