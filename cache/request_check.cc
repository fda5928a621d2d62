#include "cache/request_check.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fusiond {
namespace {

// Names are for messages only; a large one would only grow the request
// index and the memory maps (their keys hold the whole request).
absl::Status CheckNames(const fusiond::v1::FusionGraph& graph) {
  auto check = [](const std::string& name, const char* what, int index) -> absl::Status {
    if (name.size() <= kMaxRequestNameBytes) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, "'s name is ", name.size(),
                                                   " bytes; names are at most ",
                                                   kMaxRequestNameBytes, " bytes"));
  };
  for (int i = 0; i < graph.inputs_size(); ++i) {
    if (absl::Status st = check(graph.inputs(i).name(), "input", i); !st.ok()) return st;
  }
  for (int i = 0; i < graph.constants_size(); ++i) {
    if (absl::Status st = check(graph.constants(i).name(), "constant", i); !st.ok()) return st;
  }
  for (int i = 0; i < graph.nodes_size(); ++i) {
    for (const std::string& name : graph.nodes(i).output_names()) {
      if (absl::Status st = check(name, "node", i); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

// Entries of one list in a request (a node's operands; its dims, shape,
// offsets and names; an input's sizes; a signature shape). Real
// definitions have a few (rank is at most 8, cat takes its inputs); a list
// of millions costs the daemon and its worker ~8x its bytes in copies
// before the compiler would refuse it.
constexpr int kMaxListEntries = 1024;

absl::Status CheckList(int entries, const char* what, int index, const char* field) {
  if (entries <= kMaxListEntries) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " ", index, " has ", entries, " ", field,
                                                 "; a definition has at most ", kMaxListEntries));
}

absl::Status CheckLists(const fusiond::v1::FusionGraph& graph) {
  for (int i = 0; i < graph.inputs_size(); ++i) {
    const fusiond::v1::Input& in = graph.inputs(i);
    for (auto [n, field] : {std::pair{in.sizes_size(), "sizes"},
                            std::pair{in.contiguity_size(), "contiguity entries"},
                            std::pair{in.stride_order_size(), "stride_order entries"}}) {
      if (absl::Status st = CheckList(n, "input", i, field); !st.ok()) return st;
    }
  }
  for (int i = 0; i < graph.nodes_size(); ++i) {
    const fusiond::v1::Node& node = graph.nodes(i);
    for (auto [n, field] :
         {std::pair{node.operands_size(), "operands"},
          std::pair{node.output_names_size(), "output names"}, std::pair{node.dims_size(), "dims"},
          std::pair{node.broadcast_dims_size(), "broadcast_dims"},
          std::pair{node.shape_size(), "shape extents"},
          std::pair{node.is_broadcast_dim_size(), "is_broadcast_dim entries"},
          std::pair{node.offsets_size(), "offsets"}}) {
      if (absl::Status st = CheckList(n, "node", i, field); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace

// What a request may cost before the pipeline sees it: its node and
// constant counts, its inputs and outputs, the length of its lists, its
// names and the element counts of its signature.
absl::Status CheckRequest(const FusionRequest& request, const CachedCompilerOptions& options) {
  const fusiond::v1::FusionGraph& graph = request.graph;
  if (graph.nodes_size() > options.graph_limits.max_nodes) {
    return absl::ResourceExhaustedError(absl::StrCat("fusion has ", graph.nodes_size(),
                                                     " nodes; the limit is ",
                                                     options.graph_limits.max_nodes));
  }
  const int64_t io = int64_t{graph.inputs_size()} + graph.outputs_size();
  if (options.max_graph_io > 0 && io > options.max_graph_io) {
    return absl::ResourceExhaustedError(
        absl::StrCat("fusion has ", graph.inputs_size(), " inputs and ", graph.outputs_size(),
                     " outputs, over the limit of ", options.max_graph_io,
                     " inputs plus outputs (--max-graph-io); split the fusion or raise the limit"));
  }
  if (graph.constants_size() > options.graph_limits.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("fusion has ", graph.constants_size(), " constants; the limit is ",
                     options.graph_limits.max_nodes, " (--max-graph-nodes)"));
  }
  if (!request.input_shapes.empty() &&
      request.input_shapes.size() != static_cast<size_t>(graph.inputs_size())) {
    return absl::InvalidArgumentError(absl::StrCat("the fusion takes ", graph.inputs_size(),
                                                   " inputs, got ", request.input_shapes.size(),
                                                   " shapes in the signature"));
  }
  if (absl::Status st = CheckLists(graph); !st.ok()) return st;
  for (size_t i = 0; i < request.input_shapes.size(); ++i) {
    const int rank = static_cast<int>(request.input_shapes[i].size());
    if (absl::Status st = CheckList(rank, "signature shape", static_cast<int>(i), "sizes");
        !st.ok()) {
      return st;
    }
    int64_t elements = 1;
    for (int64_t size : request.input_shapes[i]) {
      if (size > 0 && elements > std::numeric_limits<int64_t>::max() / size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "signature of input ", i, ": sizes [", absl::StrJoin(request.input_shapes[i], ", "),
            "] have more elements than a 64-bit count holds"));
      }
      if (size > 0) elements *= size;
    }
  }
  return CheckNames(graph);
}

}  // namespace fusiond
