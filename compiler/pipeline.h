// The compile pipeline in one call: verify, optimize (passes), segment,
// schedule, generate code, compile with NVRTC. compiler/pipeline.cc reads as
// the list of stages; the types it takes and gives are in compile_result.h.
#ifndef FUSIOND_COMPILER_PIPELINE_H_
#define FUSIOND_COMPILER_PIPELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compile_result.h"
#include "compiler/ir/graph.h"

namespace fusiond {

// input_shapes: concrete sizes, one per graph input (required for symbolic
// definitions; may be empty for static ones).
absl::StatusOr<CompileResult> CompileFusion(const Graph& graph,
                                            const std::vector<std::vector<int64_t>>& input_shapes,
                                            const CompileOptions& options);

// The back half on its own: code generation and NVRTC for every segment of
// `result`, a CompileFusion result with generate_code false (the front half,
// which gives the cache key). CompileFusion with generate_code is the two in
// a row, so a cache miss runs verify, passes, segmentation and scheduling once.
absl::Status GenerateKernels(const CompileOptions& options, CompileResult* result);

// The `fusionc compile --json` report: {"segments":[{"scheduler":...,
// "heuristics":{...}, ...}], "canonical_hash":..., "passes":[...], ...}.
std::string CompileResultToJson(const CompileResult& result);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_PIPELINE_H_
