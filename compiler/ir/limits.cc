#include "compiler/ir/limits.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace fusiond {

int GraphDepth(const Graph& g) {
  // Nodes read only earlier values (the verifier's invariant), so one pass
  // in node order sees every operand's depth before its readers.
  std::vector<int> depth(g.values.size(), 0);
  int deepest = 0;
  for (const Node& n : g.nodes) {
    int d = 0;
    for (ValueId in : n.inputs) {
      if (in >= 0 && in < static_cast<ValueId>(depth.size())) d = std::max(d, depth[in]);
    }
    ++d;
    for (ValueId o : n.outputs) {
      if (o >= 0 && o < static_cast<ValueId>(depth.size())) depth[o] = d;
    }
    deepest = std::max(deepest, d);
  }
  return deepest;
}

absl::Status LimitError(const std::string& what, int64_t value, int64_t limit,
                        const std::string& option) {
  return absl::ResourceExhaustedError(
      absl::StrCat(what, " is ", value, ", over the limit of ", limit, " (", option, ")"));
}

absl::Status CheckGraphLimits(const Graph& g, const CompileLimits& limits) {
  const int64_t nodes = static_cast<int64_t>(g.nodes.size());
  if (limits.max_nodes > 0 && nodes > limits.max_nodes) {
    return LimitError("the graph's node count", nodes, limits.max_nodes,
                      "CompileLimits::max_nodes; --max-graph-nodes");
  }
  if (limits.max_depth > 0) {
    const int depth = GraphDepth(g);
    if (depth > limits.max_depth) {
      return LimitError("the graph's depth (its longest chain of nodes)", depth, limits.max_depth,
                        "CompileLimits::max_depth; --max-graph-depth");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckKernelLimits(const Graph& segment, int index, const CompileLimits& limits) {
  const int64_t ops = static_cast<int64_t>(segment.nodes.size());
  if (limits.max_kernel_ops > 0 && ops > limits.max_kernel_ops) {
    return LimitError(
        absl::StrCat("the node count of kernel ", index), ops, limits.max_kernel_ops,
        "CompileLimits::max_kernel_ops, --max-kernel-ops; NVRTC's time grows with it");
  }
  return absl::OkStatus();
}

}  // namespace fusiond
