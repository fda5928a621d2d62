#include "cache/request_check.h"

#include <cstdint>
#include <limits>

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

}  // namespace

// What a request costs before any of it is parsed: its node count, its
// inputs and outputs, its names and the element counts of its signature.
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
  for (size_t i = 0; i < request.input_shapes.size(); ++i) {
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
