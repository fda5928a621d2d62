// What the graph fuzz targets check once they hold a graph: the verifier
// accepts it; the passes, the segmenter, the scheduler and code generation
// (no NVRTC) each return a value or an error with a message, never Internal
// (an invariant broken inside the compiler); every pass keeps the CPU
// reference's results where the graph is small and static; the graph's
// wire form (ToProto, FromProto) compiles to the same canonical hash.
#ifndef FUSIOND_TESTS_FUZZ_FUZZ_PIPELINE_H_
#define FUSIOND_TESTS_FUZZ_FUZZ_PIPELINE_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/graph.h"

namespace fusiond {

// Aborts (a finding) with `what` and the status when `ok` is false.
void FuzzCheck(bool ok, const char* what, const absl::Status& status = absl::OkStatus());

// Aborts when an error comes without a message.
void FuzzCheckError(const absl::Status& status);

void FuzzPipeline(const Graph& g, const std::vector<std::vector<int64_t>>& input_shapes);

}  // namespace fusiond

#endif  // FUSIOND_TESTS_FUZZ_FUZZ_PIPELINE_H_
