// The Generator's row loop: the rows (or row groups) a block visits, in a
// static order or taken from a counter (cooperative multi-pass inner-outer
// kernels), each row's bases, the next row's loads issued ahead (registers,
// or the staged ring's copies), then the reduction stages and the final
// pass (generator_stages.cc) and the swap to the next row.
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace codegen_internal {

void Generator::EmitRowLoopHead(std::string& c, bool coop) {
  if (form_.rows_staged) {
    // The ring stage of the current row and the one the next copies fill.
    absl::StrAppend(&c, "  int stage = 0, fill = ", form_.ring_stages - 1, ";\n");
    next_row_code_ +=
        absl::StrCat("    stage = stage + 1 == ", form_.ring_stages, " ? 0 : stage + 1;\n",
                     "    fill = fill + 1 == ", form_.ring_stages, " ? 0 : fill + 1;\n");
  }
  // Rows a block visits: groups of threads_y rows. Statically every
  // gridDim.x-th group; where the heuristics ask (dynamic_rows: cooperative
  // multi-pass inner-outer kernels) a block takes further groups from a
  // counter as it goes.
  // A block's first three groups are static; thread 0 takes a number at the
  // top of an iteration and hands it to the block through shared memory at
  // the end of the next one, so the atomic has an iteration to return (g0 is
  // the current group, g1 the next; multi-pass kernels prefetch nothing).
  // Group numbers are 32-bit (rows up to 2^32 x threads_y).
  if (form_.dynamic_rows) {
    absl::StrAppend(
        &c, "  const i64 ngroups = (rows + ", shape_.threads_y, " - 1) / ", shape_.threads_y, ";\n",
        "  __shared__ u32 fz_next[2];\n  u32 fz_take = 0, fz_took = 0;\n",
        "  u32 g0 = blockIdx.x + 0 * gridDim.x;\n  u32 g1 = blockIdx.x + 1 * gridDim.x;\n",
        "  for (unsigned it = 0; g0 < ngroups; ++it) {\n",
        "    if (tx == 0 && ty == 0) { fz_took = fz_take; fz_take = atomicAdd(bar + 1, 1u); }\n",
        "    row = (i64)g0 * ", shape_.threads_y, " + ty;\n    active = row < rows;\n");
    next_row_code_ +=
        "    if (tx == 0 && ty == 0) fz_next[it & 1] = it == 0 ? blockIdx.x + 2 * gridDim.x : "
        "3 * gridDim.x + fz_took;\n    __syncthreads();\n    g0 = g1;\n    g1 = fz_next[it & 1];\n";
  } else if (form_.exact_tiling) {
    // A block a row group and a grid covering them all (LaunchGrid): the
    // loop's one iteration, without its bookkeeping or a next row to load.
    absl::StrAppend(&c, "  {\n    row = (i64)blockIdx.x * ", shape_.threads_y,
                    " + ty;\n    active = row < rows;\n");
  } else if (!coop) {
    // No grid barrier in the loop: each block stops after its last group (a
    // block-uniform test) without the 64-bit division a common count takes
    // (1% for a block a row, softmax forward 16384x4096 bf16 on the H200).
    absl::StrAppend(&c, "  i64 it = 0;\n  for (i64 rg = (i64)blockIdx.x * ", shape_.threads_y,
                    "; rg < rows; rg += rstride, ++it) {\n",
                    "    row = rg + ty;\n    active = row < rows;\n");
  } else {
    // Every block runs the same count: group barriers in split kernels fall
    // back to grid barriers.
    absl::StrAppend(&c, "  const i64 iters = (rows + rstride - 1) / rstride;\n",
                    "  for (i64 it = 0; it < iters; ++it) {\n",
                    "    row = it * rstride + (i64)blockIdx.x * ", shape_.threads_y, " + ty;\n",
                    "    active = row < rows;\n");
  }
}

// The row's persistent data was loaded one iteration ahead; load the next
// row's now so its loads overlap this row's reductions (registers, or the
// staged ring's copies), and queue the swap for the loop's end.
void Generator::EmitNextRowLoads(std::string& c) {
  std::string swap;
  bool any = false;
  // Double-buffering costs as many registers again: only for small buffers.
  const bool prefetch = PrefetchRows() && !form_.rows_staged;
  if (form_.rows_staged) {
    // Row it + ring_stages - 1 into the stage row it - 1 used; then wait for
    // row it (all but the newest ring_stages - 1 groups complete).
    absl::StrAppend(&c, "    {\n      const i64 srow = row + (i64)", form_.ring_stages - 1,
                    " * rstride;\n", "      if (fits && srow < rows) {\n        rowbase(srow);\n",
                    IssueStagedCopies("fill", false, "        "),
                    "        rowbase(row);\n      }\n      fz_cp_commit();\n      fz_cp_wait<",
                    form_.ring_stages - 1, ">();\n    }\n");
  }
  for (auto& [v, a] : input_access_) {
    if (!a.along_row || !a.across_rows || !a.vectorized || !plan_.needed[v] || form_.rows_staged ||
        form_.exact_tiling)
      continue;
    if (!prefetch) {
      const int w = ChunkWords(a);
      absl::StrAppend(&c, "    if (it > 0 && fits && active) {\n#pragma unroll\n",
                      "      for (int k = 0; k < ", shape_.chunks_per_thread,
                      "; ++k) {\n        const i64 jj = (t + (i64)k * T) * ", shape_.vector_width,
                      ";\n        if (jj < rlen) ",
                      RowChunkLoad(a, absl::StrCat("&pb_", a.ptr, "[k * ", w, "]"),
                                   absl::StrCat(a.ptr, " + ro_", a.ptr, "(jj)")),
                      "\n      }\n    }\n");
      continue;
    }
    any = true;
    const int w = ChunkWords(a);
    absl::StrAppend(&c, "    u32 nb_", a.ptr, "[", shape_.chunks_per_thread * w, "];\n");
    absl::StrAppend(&swap, "#pragma unroll\n    for (int q = 0; q < ", shape_.chunks_per_thread * w,
                    "; ++q) pb_", a.ptr, "[q] = nb_", a.ptr, "[q];\n");
  }
  std::string row_loads;
  for (auto& [v, a] : input_access_) {
    if (a.along_row || !a.across_rows || !plan_.needed[v]) continue;
    const char* ct = ComputeTypeName(graph_.value(v).dtype);
    absl::StrAppend(&c, "    ", ct, " nr_", a.ptr, " = ", ct, "(0);\n");
    absl::StrAppend(&row_loads, "      if (nact) nr_", a.ptr, " = Ty<", a.type_id, ">::load(",
                    a.ptr, " + rb_", a.ptr, ");\n");
    absl::StrAppend(&swap, "    cr_", a.ptr, " = nr_", a.ptr, ";\n");
  }
  if (any || !row_loads.empty()) {
    absl::StrAppend(
        &c, "    {\n      const i64 nrow = row + rstride;\n      const bool nact = nrow < rows;\n",
        "      rowbase(nrow);\n", row_loads, "      if (fits && nact) {\n#pragma unroll\n",
        "        for (int k = 0; k < ", shape_.chunks_per_thread,
        "; ++k) {\n          const i64 jj = (t + (i64)k * T) * ", shape_.vector_width,
        ";\n          if (jj < rlen) {\n");
    for (auto& [v, a] : input_access_) {
      if (!a.along_row || !a.across_rows || !a.vectorized || !plan_.needed[v] || !prefetch)
        continue;
      const int w = ChunkWords(a);
      absl::StrAppend(&c, "            ",
                      RowChunkLoad(a, absl::StrCat("&nb_", a.ptr, "[k * ", w, "]"),
                                   absl::StrCat(a.ptr, " + ro_", a.ptr, "(jj)")),
                      "\n");
    }
    absl::StrAppend(&c, "          }\n        }\n      }\n      rowbase(row);\n    }\n");
  }
  next_row_code_ += swap;
}

absl::Status Generator::EmitRowLoop(std::string& c) {
  if (form_.cluster_rows) {
    // The blocks' stage totals a cluster exchanges (ClusterRowCombine).
    absl::StrAppend(&c, "  __shared__ __align__(16) float4 fz_crow[2][", shape_.threads_y, "][",
                    MaxSlotsPerStage(), "];\n  unsigned fz_cpar = 0;\n");
  }
  EmitRowLoopHead(c, Cooperative());
  // Row coordinates and bases.
  if (!plan_.i_axes.empty()) {
    absl::StrAppend(&c, "    rowbase(row);\n");
  }
  if (shape_.persistent) EmitNextRowLoads(c);
  for (int s = 0; s < plan_.num_stages; ++s) {
    if (absl::Status st = EmitStage(s, c); !st.ok()) return st;
  }
  if (absl::Status st = EmitFinal(c); !st.ok()) return st;
  absl::StrAppend(&c, next_row_code_, "  }\n");
  if (form_.rows_staged) absl::StrAppend(&c, "  fz_cp_wait<0>();\n");
  // No block leaves (its shared memory) while the cluster still reads it.
  if (form_.cluster_rows) absl::StrAppend(&c, "  fz_cluster_sync();\n");
  return absl::OkStatus();
}

}  // namespace codegen_internal
}  // namespace fusiond
