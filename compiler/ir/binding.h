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

// input_shapes has one entry per graph input (empty for scalar inputs).
// InvalidArgument when a rank or extent disagrees with the definition, e.g.
// "input T1 axis 0 is 4096 but T0.size(1) is 8192".
absl::StatusOr<SizeBinding> BindShapes(const Graph& g,
                                       const std::vector<std::vector<int64_t>>& input_shapes);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_BINDING_H_
