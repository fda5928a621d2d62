// A GPU-free audit of launch shapes: a fusion is compiled through the
// pipeline at some input sizes, its manifest is read back by the C++
// runtime, and the runtime's own launch planner (client/runtime,
// PlanLaunch) gives every kernel's grid, block and dynamic shared memory at
// the sizes it is launched at. A kernel that moves many bytes on fewer
// blocks than the GPU has SMs is a "cliff": whole SMs idle while it streams
// (issue 34: a softmax over dim 0 on 512 blocks walking columns ran 100x
// slower than torch.compile; a whole-tensor amax in one block 77x).
#ifndef FUSIOND_TESTS_LAUNCH_AUDIT_LAUNCH_AUDIT_H_
#define FUSIOND_TESTS_LAUNCH_AUDIT_LAUNCH_AUDIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/runtime/manifest.h"
#include "compiler/compile_result.h"
#include "compiler/ir/graph.h"

namespace fusiond {
namespace launch_audit {

using Shapes = std::vector<std::vector<int64_t>>;

struct AuditOptions {
  std::string arch = "sm_90";
  // --general kernels (no shape class: one artifact for every shape).
  bool general = false;
  // Registers from NVRTC and ptxas (slow: ~0.1 s a kernel). Otherwise the
  // most the kernel's __launch_bounds__ leaves a thread, which is what ptxas
  // may use without spilling; it only bounds the grids of cooperative and
  // one-wave kernels, which are sized from the resident blocks either way.
  bool nvrtc = false;
  // A kernel moving fewer bytes is never a cliff: 8 MB streams in ~2 us at
  // H200 bandwidth, about the cost of a launch, so idle SMs cost little.
  int64_t min_bytes = int64_t{8} << 20;
};

struct KernelAudit {
  std::string name;
  std::string scheduler;
  std::string params;  // HeuristicParams::ToString of its segment
  bool cooperative = false;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t smem_bytes = 0;
  int64_t blocks = 0;            // grid[0] * grid[1] * grid[2]
  int64_t threads = 0;           // a block's
  int64_t resident_threads = 0;  // threads running at once: min(blocks, SMs x per SM) x threads
  int64_t bytes = 0;             // the tensors it reads and writes, once each
  bool cliff = false;
  std::string why;  // for a cliff
  // A cliff whose grid is held down by the cap the heuristics chose for the
  // sizes compiled for ("min(CAP, ...)" in the manifest, a non-cooperative
  // kernel): with the cap lifted the same kernel would launch more blocks.
  // The heuristics can fix those; the others need another split or block
  // shape compiled into the kernel (compile for the sizes).
  bool capped = false;
};

struct FusionAudit {
  std::string label;
  Shapes compile_shapes;
  Shapes launch_shapes;
  // Not OK when compiling failed or the runtime refused to plan the launch
  // (FailedPrecondition: the kernels were compiled for another shape class;
  // the front ends compile for the new sizes instead, so it is no cliff).
  absl::Status status;
  std::vector<KernelAudit> kernels;
  bool HasCliff() const;
  bool HasCappedCliff() const;
};

// The manifest FusionManifestJson writes for `graph` compiled at `shapes`,
// parsed by the runtime (and the compile result, for the heuristics).
struct CompiledManifest {
  CompileResult result;
  std::string json;
  runtime::Manifest manifest;
};
absl::StatusOr<CompiledManifest> CompileManifest(const Graph& graph, const Shapes& shapes,
                                                 const AuditOptions& options);

// PlanLaunch of `m` at `launch_shapes`, with bytes and the cliff rule per kernel.
absl::StatusOr<std::vector<KernelAudit>> AuditLaunch(const CompiledManifest& m,
                                                     const Shapes& launch_shapes,
                                                     const AuditOptions& options);

// Compile at `compile_shapes`, launch at `launch_shapes` (the same for a
// fusion compiled for its own sizes).
FusionAudit AuditFusion(const std::string& label, const Graph& graph, const Shapes& compile_shapes,
                        const Shapes& launch_shapes, const AuditOptions& options);

// Input shapes of `graph` (whose own sizes are `own`) with its symbolic axes
// set from `target`: the first input of target's rank whose axes are all
// symbolic takes target's extents, and every input axis of the same symbol,
// or of another symbol of the same own size, follows. Static axes and other
// symbols keep their sizes. Empty when no input fits (a static definition,
// or none of that rank).
Shapes ScaledShapes(const Graph& graph, const Shapes& own, const std::vector<int64_t>& target);

// True when the graph has a symbolic input axis.
bool IsSymbolic(const Graph& graph);

// "2048x8192;8192" (scalar inputs: "scalar").
std::string ShapesText(const Shapes& s);

// One line a kernel: the label, scheduler, grid, block, bytes and verdict.
std::string FormatAudit(const FusionAudit& a);

}  // namespace launch_audit
}  // namespace fusiond

#endif  // FUSIOND_TESTS_LAUNCH_AUDIT_LAUNCH_AUDIT_H_
