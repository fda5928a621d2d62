// Generate + compile one scheduled segment into a KernelArtifact: the
// pipeline's codegen and NVRTC stages for one segment.
#ifndef FUSIOND_COMPILER_CODEGEN_COMPILE_SEGMENT_H_
#define FUSIOND_COMPILER_CODEGEN_COMPILE_SEGMENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/artifact.h"
#include "compiler/ir/graph.h"
#include "compiler/nvrtc/nvrtc_cache.h"
#include "compiler/scheduler/heuristics.h"
#include "compiler/scheduler/target.h"

namespace fusiond {

struct SegmentCompileOptions {
  std::string kernel_name = "fusion_kernel";  // Default: "fusion_kernel"
  // The GPU compiled for: NVRTC's --gpu-architecture and the limits code
  // generation sizes against. Default: DefaultTarget() (sm_90).
  Target target = DefaultTarget();
  // NVRTC outputs of kernel texts compiled before; must outlive the call.
  // Default: none (every call compiles).
  NvrtcOutputCache* nvrtc_cache = nullptr;
  bool specialize = true;             // CodegenOptions::specialize. Default: true.
  std::vector<int64_t> symbol_sizes;  // CodegenOptions::symbol_sizes. Default: none.
};

// Fills every field of KernelArtifact. Without NVRTC in this build the
// artifact has the source and an empty binary. Errors: Unimplemented for
// graphs the generator does not handle, Internal (with the NVRTC log and
// the kernel name) when NVRTC rejects the generated source.
absl::StatusOr<KernelArtifact> CompileSegment(const Graph& g, const HeuristicParams& params,
                                              const SegmentCompileOptions& options);

// Compiles the device prelude with a one-line kernel for `arch` and returns
// the microseconds it took. A process's first NVRTC call costs far more than
// the next ones (library loading and initialization: ~200 ms on the H200
// host whatever the kernel, 40-60 ms on the dev machine), and for its first
// ~25 ms it replaces the process's SIGTERM handler; a daemon should pay
// both before it serves. Then KeepNvrtcHeap maps 32 MiB of heap for this
// thread's later compiles (included in the time). Unavailable without NVRTC.
absl::StatusOr<double> WarmUpNvrtc(const std::string& arch);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_COMPILE_SEGMENT_H_
