// Heuristic parameters: what a scheduler decides for one segment, as a plain
// printable, hashable struct. The code generator reads nothing else.
#ifndef FUSIOND_COMPILER_SCHEDULER_HEURISTICS_H_
#define FUSIOND_COMPILER_SCHEDULER_HEURISTICS_H_

#include <cstdint>
#include <string>

namespace fusiond {

enum class SchedulerKind {
  kPointwise,
  kInnerReduction,        // reduce the innermost axes, rows too wide to keep on chip
  kOuterReduction,        // reduce outer axes (column sums), not persistent
  kInnerPersistent,       // softmax / norm forward: a row kept on chip
  kOuterPersistent,       // batch norm: per-channel reduction over outer axes
  kInnerOuterPersistent,  // norm backward: row reductions + column reductions
};

const char* SchedulerName(SchedulerKind k);  // "pointwise", "inner_persistent", ...

// Registers ptxas takes beyond the code generator's estimate of an inner
// persistent kernel (32 + the words it keeps of rows and column operands;
// the estimate runs low), left free when a kernel asks for more than two
// blocks of up to 256 threads per SM. The heuristics count it too when they
// weigh block sizes by the warps they keep resident.
inline constexpr int kRegisterMargin = 16;

// Staged rows (smem_buffer on the inner-outer kind): a column operand of
// 16-bit floats (a norm's weight) is kept in shared memory as float when a
// thread keeps at most this many chunks a row, so no row unpacks it. The
// heuristics leave room for the float copy, the code generator takes it
// where the room holds its stages: layernorm backward 16384x4096 (two chunks)
// 112.1 -> 109.4 us on the H200; at four chunks (128 registers) it lost ~1%.
inline constexpr int kMaxFloatColumnBatch = 2;

// Every field is meaningful for every kind (unused ones keep their default),
// so two parameter sets compare and hash field by field.
struct HeuristicParams {
  SchedulerKind kind = SchedulerKind::kPointwise;
  // The iteration space seen as [outer, inner]: inner is the reduced extent
  // (inner reductions) or the innermost contiguous extent (pointwise, outer
  // reductions). For symbolic definitions these are the sizes heuristics were
  // computed for; the kernel reads the real sizes from its arguments.
  int64_t outer_size = 1;
  int64_t inner_size = 1;
  // Elements per vectorized access along the innermost axis (1, 2, 4, 8).
  int vectorize = 1;
  // Threads per block along the inner axis (x) and across rows (y).
  int block_x = 128;
  int block_y = 1;
  // Blocks in the grid (x over the inner axis or rows, y over the outer).
  int64_t grid_x = 1;
  int64_t grid_y = 1;
  // Persistent kinds: vectors each thread keeps on chip per row (the row
  // width covered is vectorize * block_x * persistent_batch).
  int persistent_batch = 1;
  // Persistent buffer in shared memory instead of registers.
  bool smem_buffer = false;
  // Rows handled by one block per iteration (inner kinds).
  int rows_per_block = 1;
  // Grid-wide reduction: partial results in a workspace and a grid sync
  // (cooperative launch); the outer and inner-outer persistent kinds.
  bool grid_reduction = false;
  // Not persistent: re-read inputs once per reduction phase (rows too wide).
  bool multi_pass = false;
  // Unroll factor of the innermost serial loop (never a full unroll).
  int unroll = 1;
  // Dynamic shared memory per block, bytes.
  int64_t smem_bytes = 0;
  // Inner-outer persistent on sm_90+: blocks per thread-block cluster along
  // x. The blocks of a cluster sum their column partials through distributed
  // shared memory before the grid step, so the workspace holds grid_x /
  // cluster_x partial rows (grid_x is a multiple of it). 1: no cluster.
  int cluster_x = 1;
  // Persistent kinds: column operands (inputs that vary along the inner axis
  // only: weights, biases) are kept in shared memory, loaded once per block,
  // instead of in registers, which frees a register per word for deeper row
  // batches.
  bool smem_columns = false;
  // Persistent kinds with rows in registers: the row's chunks are loaded
  // with L1 and L2 evict-last policies for the reductions, and the output
  // pass loads them again with evict-first policies instead of reading the
  // registers (as torch.compile's Triton kernels do; docs/codegen.md).
  bool reread_rows = false;
  // Lanes outer persistent kernels (rows_per_block > 1): the first pass
  // that reads an input keeps each thread's elements of it in registers
  // (persistent_batch chunks, packed as stored) and the later passes read
  // them there, so the columns come from memory once, not once a pass.
  // With smem_buffer the kept words live in dynamic shared memory instead
  // (more chunks a thread: fewer blocks a column group).
  bool lanes_in_registers = false;
  // Rows split over grid_y blocks (grid_y 2, 4 or 8, sm_90+): those blocks
  // form a thread-block cluster and combine their row partials through
  // distributed shared memory (one cluster barrier a reduction) instead of
  // the workspace and a group barrier, so the split needs no cooperative
  // launch of its own and more, smaller blocks run each row.
  bool cluster_rows = false;
  // Specialized persistent kernels take their vector alignment as given
  // (vec_ok true, so every `fits` test folds away): the runtimes launch
  // them only on pointers aligned as the manifest's `align` says (they copy
  // misaligned inputs). Launched on misaligned pointers anyway, such a
  // kernel faults instead of computing nothing useful.
  bool trust_alignment = false;
  // Softmax-like reductions (a sum of exp(x - max(x)) over the axes of the
  // max) in one stage: a running max and a running sum rescaled when the
  // max grows, so a multi-pass kernel reads its input twice, not three
  // times (compiler/codegen/online_softmax.h). Off by default.
  bool online_softmax = false;

  // Code generation's choices beyond the launch shape, set by
  // DecideKernelForm (heuristics_kernel_form.cc) from the fields above.
  // var/var_mean in one stage (a merged count, mean and deviations).
  bool one_pass_variance = false;
  // Cooperative multi-pass inner-outer kernels: blocks take row groups from
  // a counter instead of a static order.
  bool dynamic_rows = false;
  // Output stores with the streaming (evict-first) cache hint.
  bool streaming_stores = false;
  // Re-read kernels whose row fills the block's tile: no row loop, a block a
  // row group (taken where the kernel is specialized to such a row).
  bool exact_tiling = false;
  // Blocks per SM asked of ptxas (__launch_bounds__): the count cooperative
  // grids were sized for, an upper bound for inner persistent kernels.
  int blocks_per_sm = 1;

  std::string ToString() const;  // one line, "kind=inner_persistent vectorize=8 ..."
  std::string ToJson() const;    // one JSON object with every field
  uint64_t Hash() const;         // stable across runs and builds
  bool operator==(const HeuristicParams& o) const;
};

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_SCHEDULER_HEURISTICS_H_
