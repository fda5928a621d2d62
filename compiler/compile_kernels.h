// Code generation and NVRTC for a split fusion's kernels, several at once:
// each kernel is its own NVRTC program (NVRTC compiles independent programs
// on concurrent threads), and NVRTC is nearly all of a compile's time.
#ifndef FUSIOND_COMPILER_COMPILE_KERNELS_H_
#define FUSIOND_COMPILER_COMPILE_KERNELS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/artifact.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/ir/graph.h"
#include "compiler/scheduler/heuristics.h"

namespace fusiond {

struct KernelJob {
  const Graph* graph = nullptr;             // must outlive the call
  const HeuristicParams* params = nullptr;  // must outlive the call
  SegmentCompileOptions options;
};

// How many threads CompileKernels uses for `jobs` jobs when asked for
// `threads` (0: one per hardware thread): never more than the jobs, at
// least one.
int KernelThreads(int threads, size_t jobs);

// CompileSegment for every job, at most KernelThreads(threads, jobs.size())
// at once (1: one after another on the calling thread). Results in job
// order, each kernel the same as a serial compile's. Every job before the
// first failure in job order runs (so that failure is the one a serial
// loop stops at); a job after a known failure does not start and gets
// Cancelled.
std::vector<absl::StatusOr<KernelArtifact>> CompileKernels(const std::vector<KernelJob>& jobs,
                                                           int threads);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_COMPILE_KERNELS_H_
