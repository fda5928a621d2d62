// The Generator's planning steps: the launch shape from the heuristics
// (PlanLaunchShape) and the kernel's form (PlanKernelForm), each decided once
// before any text is emitted, and the blocks per SM asked of ptxas.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace codegen_internal {

absl::Status Generator::PlanLaunchShape() {
  shape_.pointwise = params_.kind == SchedulerKind::kPointwise;
  // HeuristicParams -> this generator's launch shape (see docs/codegen.md).
  shape_.vector_width = std::max(1, params_.vectorize);
  shape_.threads_x = std::max(32, params_.block_x);
  shape_.threads_y = std::max(1, params_.block_y);
  shape_.chunks_per_thread = std::max(1, params_.persistent_batch);
  shape_.unroll = std::max(1, params_.unroll);
  shape_.blocks_per_row = std::max<int64_t>(1, params_.grid_y);
  shape_.row_blocks = std::max<int64_t>(1, params_.grid_x);
  shape_.persistent = !shape_.pointwise && !params_.multi_pass && !params_.smem_buffer;
  shape_.lanes = LanesKernel(params_);
  if (shape_.pointwise) {
    shape_.blocks_per_row = std::max<int64_t>(1, params_.grid_x * params_.grid_y);
    shape_.row_blocks = 1;
  } else if (shape_.lanes) {
    // Outer kinds with rows_per_block > 1: block_x threads run along each
    // of rows_per_block channels, whose lanes are adjacent in memory
    // (generator_lanes.cc); grid_x blocks share a channel group, grid_y
    // covers the groups.
    shape_.threads_x = std::max(1, params_.block_x);
    shape_.threads_y = params_.rows_per_block;
    shape_.blocks_per_row = std::max<int64_t>(1, params_.grid_x);
    shape_.row_blocks = std::max<int64_t>(1, params_.grid_y);
  } else if (params_.kind == SchedulerKind::kOuterPersistent) {
    // Threads of a block all run along the channel's elements; grid_x
    // blocks share a channel, grid_y covers the channels.
    shape_.threads_x = std::max(32, std::min(512, params_.block_x * std::max(1, params_.block_y)));
    shape_.threads_x = (shape_.threads_x + 31) / 32 * 32;
    shape_.threads_y = 1;
    shape_.blocks_per_row = std::max<int64_t>(1, params_.grid_x);
    shape_.row_blocks = std::max<int64_t>(1, params_.grid_y);
  } else if (params_.kind == SchedulerKind::kOuterReduction) {
    shape_.blocks_per_row = 1;
    shape_.row_blocks = std::max<int64_t>(1, params_.grid_x * params_.grid_y);
    shape_.persistent = !params_.multi_pass;
  }
  if (shape_.lanes) shape_.persistent = false;  // every pass reads its chunks from memory (L2)
  if ((shape_.lanes ? shape_.threads_y : shape_.threads_x) % 32 != 0 ||
      (shape_.vector_width & (shape_.vector_width - 1)) != 0 || shape_.vector_width > 16 ||
      shape_.threads_x * shape_.threads_y > options_.target.max_threads_per_block) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen: bad launch parameters vectorize=", params_.vectorize,
                     " block_x=", params_.block_x, " block_y=", params_.block_y));
  }
  // Register-persistent outer kinds keep persistent_batch vectors of a
  // channel (the heuristics count them as this block lays them out); more
  // than 16 stay in memory.
  if (shape_.persistent &&
      (params_.kind == SchedulerKind::kOuterPersistent ||
       params_.kind == SchedulerKind::kOuterReduction) &&
      shape_.chunks_per_thread > 16) {
    shape_.persistent = false;
  }
  shape_.row_split = !shape_.pointwise && shape_.blocks_per_row > 1;
  {
    // Loop iterations of a thread over a row of the size the heuristics saw
    // (the most chunks worth keeping).
    int64_t rlen = 1;
    for (int a : plan_.r_axes) rlen *= plan_.ref[a].is_static() ? plan_.ref[a].size : 0;
    if (rlen == 0) rlen = std::max<int64_t>(1, params_.inner_size);
    shape_.row_iterations =
        std::max<int64_t>(1, ((rlen + shape_.vector_width - 1) / shape_.vector_width +
                              shape_.blocks_per_row * shape_.threads_x * shape_.unroll - 1) /
                                 (shape_.blocks_per_row * shape_.threads_x * shape_.unroll));
  }
  // Vectors of at most 16 bytes of the widest element.
  int max_esize = 1;
  for (auto& [v, a] : input_access_)
    if (a.vectorized && plan_.needed[v]) max_esize = std::max(max_esize, a.elem_bytes);
  for (auto& a : output_access_)
    if (a.vectorized) max_esize = std::max(max_esize, a.elem_bytes);
  shape_.vector_width = std::min(shape_.vector_width, 16 / max_esize);
  if (PlanStaging()) shape_.persistent = true;
  return PlanRowCluster();  // before Cooperative() is first asked
}

absl::Status Generator::PlanKernelForm(GeneratedKernel& k) {
  const bool coop = Cooperative();
  if (coop) {
    // Two workspaces: the barrier words (zeroed before the launch) and the
    // partial results (never read before this launch writes them).
    absl::StrAppend(&signature_,
                    ", unsigned char* __restrict__ ws, unsigned char* __restrict__ wsp");
    k.params.push_back({"workspace", 0, ""});
    k.params.push_back({"workspace", 1, ""});
  }
  if (absl::Status st = PlanCluster(); !st.ok()) return st;
  form_.reread_rows = params_.reread_rows;
  if (form_.reread_rows && (!shape_.persistent || form_.rows_staged)) {
    return absl::InvalidArgumentError(
        "codegen: reread_rows needs rows held in registers (a persistent kind, no smem_buffer, "
        "rows that fit)");
  }
  form_.keep_chunks = params_.multi_pass && plan_.num_stages >= 1 && !shape_.persistent &&
                      !form_.rows_staged && form_.cluster_x == 1 && !shape_.lanes &&
                      params_.smem_bytes > 0;
  for (SymbolId s : plan_.symbol_order) {
    const std::string& name = plan_.symbol_names.at(s);
    k.params.push_back({"size", 0, name});
    k.symbols.push_back({name, {input_index_.at(graph_.symbols[s].input), graph_.symbols[s].axis}});
  }
  for (const ReductionSlot& sl : plan_.row_slots) {
    const DataType t = graph_.value(graph_.node(sl.node).outputs[0]).dtype;
    accumulator_type_.push_back(t == DataType::kDouble || IsIntegral(t) ? "double" : "float");
  }

  // Column operands in shared memory: static, so within 48 KB with room to spare.
  int64_t col_smem = 0;
  for (auto& [v, a] : input_access_) {
    if (ColumnInSmem(a))
      col_smem += int64_t{4} * shape_.chunks_per_thread * shape_.threads_x * ChunkWords(a);
  }
  if (col_smem > kMaxColumnSmemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "codegen: smem_columns needs ", col_smem,
        " bytes of shared memory for the column operands; at most ", kMaxColumnSmemBytes));
  }

  form_.divider_code = PlanDividers();
  // A specialized kernel has no loops for rows that do not fit: the runtime
  // launches it only where the manifest's requirements hold. Elsewhere it
  // would write wrong values, never out of bounds (every access is still
  // bounded by rows and rlen). An early `if (!fits) return;` made layernorm
  // backward 2048x8192 30% slower on the H200 (53 against 41 us).
  form_.specialized =
      shape_.persistent && PlanRequires(shape_.blocks_per_row * shape_.threads_x *
                                            shape_.chunks_per_thread * shape_.vector_width,
                                        k);
  // Exact kernels (HeuristicParams::exact_tiling): no row loop nor guards,
  // where the kernel is specialized to a row that fills the block's tile.
  form_.exact_tiling = params_.exact_tiling && form_.reread_rows && form_.specialized &&
                       form_.row_fills_tiles && !coop && shape_.chunks_per_thread <= 3;
  // The size parameters; literal ones (PlanRequires) stay in the signature,
  // renamed and unused, and the body declares them.
  for (SymbolId s : plan_.symbol_order) {
    absl::StrAppend(&signature_, ", i64 ", plan_.symbol_names.at(s),
                    form_.literal_symbols.count(s) ? "_arg" : "");
  }
  form_.dynamic_rows = params_.dynamic_rows && coop && HasColumnReductions() && !shape_.row_split;
  form_.min_blocks = MinBlocksPerSm(coop);
  return absl::OkStatus();
}

size_t Generator::MaxSlotsPerStage() const {
  size_t max_slots = 1;
  for (int s = 0; s < plan_.num_stages; ++s) {
    size_t n = 0;
    for (const auto& sl : plan_.row_slots) n += sl.stage == s;
    max_slots = std::max(max_slots, n);
  }
  return max_slots;
}

// Registers per thread: the row buffers hold u32 words of the inputs'
// storage type (twice when the next row is prefetched into a second buffer),
// the column buffers once more, plus about 32 for indices, reductions and
// temporaries. The heuristics decide the blocks per SM
// (HeuristicParams::blocks_per_sm): cooperative kernels ask for that count;
// an inner persistent kernel asks for as many up to it as its estimate fits
// (two at most for more than 128 threads, beyond that for 256 threads only
// without a prefetch buffer and with kRegisterMargin to spare: the estimate
// runs low); with (T, 1) ptxas takes as many registers as it likes.
// CompileSegment lowers options_.max_min_blocks when ptxas spills.
int Generator::MinBlocksPerSm(bool coop) const {
  if (shape_.lanes) return LanesMinBlocks();
  int min_blocks = 1;
  const int regs_per_sm = options_.target.registers_per_sm;
  const int max_regs = options_.target.max_registers_per_thread;
  const int planned = params_.blocks_per_sm;
  if (shape_.persistent && !coop && params_.kind == SchedulerKind::kInnerPersistent) {
    const int estimate =
        32 + PersistentColWords() + PersistentRowWords() * (PrefetchRows() ? 2 : 1);
    const int threads = shape_.threads_x * shape_.threads_y;
    const int most = threads <= 128 ? planned : std::min(planned, 2);
    for (int n = std::min(most, options_.max_min_blocks); n >= 2 && min_blocks == 1; --n) {
      if (threads <= 256 && estimate <= std::min(max_regs, regs_per_sm / (n * threads)))
        min_blocks = n;
    }
    // Rows re-read for the output pass at 512 threads: two blocks where the
    // estimate allows.
    if (form_.reread_rows && threads == 512 && planned >= 2 && options_.max_min_blocks >= 2 &&
        estimate <= regs_per_sm / (2 * threads)) {
      min_blocks = 2;
    }
    // Exact kernels of 1024 threads: the estimate runs high without a row
    // loop; CompileSegment asks for one block if ptxas spills.
    if (form_.exact_tiling && threads == 1024 && planned >= 2 && options_.max_min_blocks >= 2) {
      min_blocks = 2;
    }
    if (threads == 256 && min_blocks == 2 && !PrefetchRows()) {
      for (int n = std::min(planned, options_.max_min_blocks); n > 2 && min_blocks == 2; --n) {
        if (estimate + kRegisterMargin <= regs_per_sm / (n * threads)) min_blocks = n;
      }
    }
  } else if (coop && shape_.row_split &&
             (params_.kind == SchedulerKind::kInnerOuterPersistent ||
              params_.kind == SchedulerKind::kOuterPersistent)) {
    // Rows (channels) split over blocks: the grid was sized for these.
    min_blocks = std::max(1, std::min(planned, options_.max_min_blocks));
  }
  return min_blocks;
}

std::string Generator::ColumnPartialRow(size_t ci) const {
  return absl::StrCat("wcol + ((i64)(blockIdx.x * ", shape_.threads_y, " + ty) * ",
                      plan_.col_reds.size(), " + ", ci, ") * wstride");
}

}  // namespace codegen_internal
}  // namespace fusiond
