// What a compile takes and gives: the options and the per-segment results.
// Plain data shared by the pipeline (compiler/pipeline.h), code generation's
// manifest, the cache and the clients, so that those layers need not include
// the pipeline itself.
#ifndef FUSIOND_COMPILER_COMPILE_RESULT_H_
#define FUSIOND_COMPILER_COMPILE_RESULT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/artifact.h"
#include "compiler/ir/graph.h"
#include "compiler/ir/limits.h"
#include "compiler/passes/pass_record.h"
#include "compiler/scheduler/heuristics.h"

namespace fusiond {

class NvrtcOutputCache;  // compiler/nvrtc/nvrtc_cache.h

struct CompileOptions {
  // Target GPU architecture. Default: "sm_90" (H100/H200).
  std::string arch = "sm_90";
  // Remove narrowing cast round trips (f32->bf16->f32). Default: false.
  bool allow_precision_increase = false;
  // Print the IR after this pass when it changed the graph ("all" for every
  // pass). Default: none.
  std::string dump_pass;
  // Kernels that run at every shape and alignment: persistent kernels keep
  // their fallback loops instead of stating requirements in the manifest
  // (CodegenOptions::specialize; compiles ~1.4x slower). Default: false.
  bool general_kernels = false;
  // Run code generation and NVRTC. Default: true.
  bool generate_code = true;
  // NVRTC outputs by kernel text, shared across compiles (the daemon keeps
  // one); must outlive the call. Not part of any cache key: it changes how
  // long a compile takes, never its result. Default: none.
  NvrtcOutputCache* nvrtc_cache = nullptr;
  // Kernels of a split fusion generated and compiled at once
  // (compiler/compile_kernels.h); 0: one per hardware thread, 1: one after
  // another. Not part of any cache key: the kernels are the same. Default: 0.
  int kernel_threads = 0;
  // What one compile may cost (graph nodes and depth, partition size, ops
  // per kernel), checked before the stage each protects; beyond a limit
  // the compile is refused with ResourceExhausted. Default: CompileLimits{}.
  CompileLimits limits;
};

struct SegmentResult {
  Graph graph;  // the segment as a standalone graph
  SchedulerKind kind = SchedulerKind::kPointwise;
  HeuristicParams params;
  std::string scheduler_reason;  // why this scheduler took the segment
  std::string boundary_reason;   // why the fusion was cut here ("" if one segment)
  // Which values of `CompileResult::optimized` are this segment's inputs and
  // outputs (in the order of graph.inputs / graph.outputs).
  std::vector<ValueId> source_inputs;
  std::vector<ValueId> source_outputs;
  // The sizes compiled for: every symbol of `graph` (SizeBinding).
  std::vector<int64_t> symbol_sizes;
  // Filled when CompileOptions::generate_code.
  std::optional<KernelArtifact> kernel;
};

struct CompileResult {
  Graph optimized;             // after the passes
  std::string canonical_hash;  // hex; equal for graphs equal up to names/order
  std::vector<PassRecord> passes;
  std::vector<SegmentResult> segments;
  // Wall time per stage in microseconds: "verify", "passes", "segment",
  // "schedule", "codegen", "nvrtc".
  std::map<std::string, double> stage_micros;
};

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_COMPILE_RESULT_H_
