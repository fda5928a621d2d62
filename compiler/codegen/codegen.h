// Code generation: CUDA C++ for one scheduled segment.
//
// Every scheduler kind is emitted by one generator over a KernelPlan
// (kernel_plan.h): a grid-stride loop over rows; within a row, threads own
// fixed chunks of `vectorize` elements (128-bit accesses when possible). Row
// reductions run in stages over values kept in registers (persistent) or
// re-read from memory (multi-pass, chosen at run time when a row does not fit
// on chip, or always when HeuristicParams::multi_pass); each stage ends in a
// warp-shuffle + shared-memory block reduction and, when several blocks share
// a row (grid_y > 1), a grid-wide step through a workspace. Column reductions
// (sums over rows, e.g. a norm's weight gradient) accumulate per-thread
// partials, write them to a workspace, meet at a grid barrier and are summed
// by the whole grid. A pointwise segment is the same kernel with one row.
//
// Symbolic extents are int64 kernel parameters (one cubin serves all shapes);
// static ones are baked in.
#ifndef FUSIOND_COMPILER_CODEGEN_CODEGEN_H_
#define FUSIOND_COMPILER_CODEGEN_CODEGEN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"
#include "compiler/scheduler/heuristics.h"
#include "compiler/scheduler/target.h"

namespace fusiond {

struct CodegenOptions {
  // The kernel's (extern "C") name. Default: "fusion_kernel".
  std::string kernel_name = "fusion_kernel";
  // The GPU compiled for: its SM count bounds cooperative grids, its
  // registers, shared memory and threads per SM the blocks asked of ptxas
  // and the blocks resident. Default: DefaultTarget() (sm_90).
  Target target = DefaultTarget();
  // Most blocks per SM an inner persistent kernel asks ptxas for in
  // __launch_bounds__ (it asks for fewer when its register estimate does not
  // fit). CompileSegment lowers it (to 4 or 2) when ptxas spills. Default: 6.
  int max_min_blocks = 6;
  // Persistent kernels only for the shape class they were compiled for: no
  // fallback loops for wider rows, other widths or misaligned pointers; the
  // manifest's `requires` and `align` state what the launch must meet and
  // the runtimes check them (docs/codegen.md, "Specialized kernels").
  // false: one kernel runs at every shape and alignment (compiles ~1.4x
  // slower). Default: true.
  bool specialize = true;
  // The sizes compiled for, by SymbolId of the graph (SizeBinding): what a
  // symbolic kernel is specialized to. Default: none (a symbolic persistent
  // kernel then stays general).
  std::vector<int64_t> symbol_sizes;
};

// A condition the launch sizes must meet (docs/manifest.md, `requires`):
// `expr` (a manifest expression) is a multiple of `n`, at most `n`, or `n`.
struct Requirement {
  enum class Kind { kMultipleOf, kAtMost, kEquals };
  std::string expr;
  Kind kind = Kind::kMultipleOf;
  int64_t n = 1;
};

// One kernel parameter as docs/manifest.md names it.
struct ParamBinding {
  std::string kind;    // "input", "output", "workspace", "scalar", "size"
  int index = 0;       // input/output/workspace/scalar index
  std::string symbol;  // kind "size": the symbol name
  int align = 0;       // "input"/"output": bytes the pointer must be a multiple of (0: natural)
};

struct GeneratedKernel {
  std::string name;
  std::string source;  // the prelude plus the kernel
  std::string scheduler;
  bool cooperative = false;
  int block_x = 128, block_y = 1;
  // The blocks per SM __launch_bounds__ asks for (its second argument).
  int min_blocks = 1;
  // Grid: x = min(grid_x_cap, ceil_div(rows, block_y)) (further bounded by
  // co-residency for cooperative and one_wave kernels), y = grid_y_expr.
  int64_t grid_x_cap = 1;
  // A non-cooperative grid that loops over the rows: LaunchGrid caps it at
  // the blocks that fit at once, like a cooperative one (a second, partial
  // wave would leave SMs idle at the end).
  bool one_wave = false;
  std::string rows_expr;    // rows of the iteration space
  std::string grid_y_expr;  // blocks sharing a row
  // Cooperative kernels take two workspaces: kBarrierBytes zeroed bytes of barrier
  // words, and grid_x * ws_per_grid_x bytes of partial results that need no
  // zeroing.
  bool needs_workspace = false;
  // Dynamic shared memory per block (the staged row ring), bytes.
  int64_t dynamic_smem_bytes = 0;
  // Blocks per thread-block cluster along x (__cluster_dims__ in the
  // source; LaunchGrid rounds the grid to a multiple). 1: no cluster.
  int cluster_x = 1;
  std::string ws_per_grid_x;
  std::vector<ParamBinding> params;
  // What the launch must meet (empty: any shape).
  std::vector<Requirement> requirements;
  // The symbol names used in expressions: name -> (input index, axis).
  std::vector<std::pair<std::string, std::pair<int, int>>> symbols;
};

absl::StatusOr<GeneratedKernel> GenerateKernel(const Graph& g, const HeuristicParams& params,
                                               const CodegenOptions& options);

// The kernel's launch grid as manifest expressions, with the cooperative
// bound applied from the compiled kernel's registers and static shared
// memory (registers < 0: unknown, assume one block per SM).
std::vector<std::string> LaunchGrid(const GeneratedKernel& k, int registers, int static_smem_bytes,
                                    const Target& target);
// Lanes (float4 columns) per tile of the column reductions' final step,
// one of 1, 2, 4, 8, 16: the one with the fewest dependent L2 round trips
// per block, ceil(tiles / blocks) * ceil(partials / (groups * kEpilogueLoads)) with
// groups = threads / lanes (kEpilogueLoads loads in flight each), ties to the wider
// tile. 8192 columns, 132 partials, 512 threads: 16 (64-column tiles);
// 1024 columns, 528 partials: 2, where 16 would leave 116 blocks idle and
// the other 16 nine round trips each (132 blocks).
int EpilogueLanes(int64_t columns, int64_t partials, int64_t blocks, int threads);
// Loads in flight per thread in that step (its loop's unroll). Two: four
// cost rmsnorm backward ~8 ms of its ~150 ms compile for no measured gain
// (H200, 2048x8192: 36.8 us at four, 36.1 at two, 37.0 at one).
constexpr int kEpilogueLoads = 2;
// The partial-results workspace's size in bytes over the same grid.
std::string WorkspaceBytes(const GeneratedKernel& k, const std::string& grid_x);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_CODEGEN_CODEGEN_H_
