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
  const KernelParamCount params = CountKernelParams(segment);
  if (limits.max_kernel_params > 0 && params.total() > limits.max_kernel_params) {
    return LimitError(
        absl::StrCat("the parameter count of kernel ", index, " (", params.inputs, " inputs, ",
                     params.outputs, " outputs, ", params.sizes, " symbolic sizes)"),
        params.total(), limits.max_kernel_params,
        "CompileLimits::max_kernel_params, --max-kernel-params; NVRTC's time grows "
        "faster than quadratically with it");
  }
  return absl::OkStatus();
}

KernelParamCount CountKernelParams(const Graph& segment) {
  KernelParamCount c;
  c.inputs = static_cast<int64_t>(segment.inputs.size());
  c.outputs = static_cast<int64_t>(segment.outputs.size());  // one pointer per listing
  std::vector<bool> seen(segment.symbols.size(), false);
  for (ValueId in : segment.inputs) {
    for (const Extent& e : segment.value(in).shape) {
      const Extent r = segment.Canonical(e);
      if (r.is_static() || r.symbol < 0 || r.symbol >= static_cast<SymbolId>(seen.size()) ||
          seen[r.symbol]) {
        continue;
      }
      seen[r.symbol] = true;
      ++c.sizes;
    }
  }
  return c;
}

}  // namespace fusiond
