// Outer persistent kernels whose channels are adjacent in memory (a softmax
// or a sum over the outer axis of [M, N], broadcast back; the scheduler's
// rows_per_block > 1). A "row" of the plan is then a column of the tensor,
// its elements N apart. With the usual mapping a warp's lanes walk down one
// column, one 2-byte element a 32-byte sector; here lanes take threads_y
// consecutive columns (coalesced: 64 bytes a warp for bf16) and the block's
// threads_x lane groups (warps) split the column's rows, so a row's threads sit in
// different warps and its block reduction goes through shared memory alone.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace codegen_internal {

// The launch is (threads_x, threads_y) threads as for every kind; the linear thread id
// is split the other way round: ty (the row) fastest.
std::string Generator::LanesThreadIds() const {
  return absl::StrCat("  const int fz_lin = threadIdx.y * ", shape_.threads_x, " + threadIdx.x;\n",
                      "  const int tx = fz_lin / ", shape_.threads_y, ", ty = fz_lin % ",
                      shape_.threads_y, ";\n  (void)ty;\n");
}

// Partials [buffer][slot][tx][ty]: the lanes of a warp (consecutive ty)
// write and read consecutive words, free of bank conflicts. Static shared
// memory, so within kMaxLanesScratchBytes (double partials of many slots in
// one stage could pass the 48 KB static limit: Unimplemented, not a kernel
// NVRTC rejects).
absl::StatusOr<std::string> Generator::LanesReductionScratch() const {
  constexpr int64_t kMaxLanesScratchBytes = 40 * 1024;
  size_t per_stage = 1;
  for (int s = 0; s < plan_.num_stages; ++s) {
    size_t n = 0;
    for (const auto& sl : plan_.row_slots)
      n += (sl.stage == s) + (sl.stage == s && sl.one_pass && !sl.second_moment);
    per_stage = std::max(per_stage, n);
  }
  const int64_t bytes = int64_t{2} * per_stage * shape_.threads_x * shape_.threads_y *
                        (std::string(BlockPartialType()) == "float" ? 4 : 8);
  if (bytes > kMaxLanesScratchBytes) {
    return absl::UnimplementedError(absl::StrCat(
        "codegen: a lanes kernel's block reduction needs ", bytes, " bytes of shared memory (",
        per_stage, " partials of ", shape_.threads_x * shape_.threads_y,
        " threads, twice); at most ", kMaxLanesScratchBytes));
  }
  return absl::StrCat("  __shared__ __align__(16) ", BlockPartialType(), " fz_red[2][", per_stage,
                      "][", shape_.threads_x, "][", shape_.threads_y,
                      "];\n  unsigned fz_rb = 0;\n");
}

// Every thread stores its partials, one barrier, and every thread combines
// its row's threads_x partials in tx order (the same order in every thread of the
// row, so they all hold the same bits). Two buffers alternate as in
// BlockReduce: one barrier a reduction.
std::string Generator::LanesBlockReduce(const std::vector<int>& slots,
                                        const std::string& ind) const {
  if (shape_.threads_x == 1) return "";  // a thread a row: nothing to combine
  struct Chan {
    int f, s;
    size_t qf, qs, qn;
  };
  std::vector<Chan> chans;
  for (size_t q = 0; q < slots.size(); ++q) {
    const ReductionSlot& sl = plan_.row_slots[slots[q]];
    if (!sl.one_pass || sl.second_moment) continue;
    for (size_t r = 0; r < slots.size(); ++r) {
      const ReductionSlot& o = plan_.row_slots[slots[r]];
      if (o.node == sl.node && o.second_moment)
        chans.push_back({slots[q], slots[r], q, r, slots.size() + chans.size()});
    }
  }
  const auto at = [&](const std::string& t, size_t q, const std::string& w) {
    return absl::StrCat("(", t, ")fz_red[fz_rb][", q, "][", w, "][ty]");
  };
  std::string s = absl::StrCat(ind, "{");
  for (size_t q = 0; q < slots.size(); ++q) {
    absl::StrAppend(&s, " fz_red[fz_rb][", q, "][tx][ty] = (", BlockPartialType(), ")acc", slots[q],
                    ";");
  }
  for (const Chan& c : chans)
    absl::StrAppend(&s, " fz_red[fz_rb][", c.qn, "][tx][ty] = (", BlockPartialType(), ")wn", c.f,
                    ";");
  absl::StrAppend(&s, " }\n", ind, "__syncthreads();\n");
  for (size_t q = 0; q < slots.size(); ++q) {
    const ReductionSlot& sl = plan_.row_slots[slots[q]];
    if (sl.one_pass) continue;
    const char* op = sl.second_moment ? "0" : ReduceOpId(graph_.node(sl.node).op);
    const std::string& t = accumulator_type_[slots[q]];
    absl::StrAppend(&s, ind, "acc", slots[q], " = ", at(t, q, "0"), ";\n", ind,
                    "for (int w = 1; w < ", shape_.threads_x, "; ++w) acc", slots[q], " = fz_comb<",
                    op, ", ", t, ">(acc", slots[q], ", ", at(t, q, "w"), ");\n");
  }
  for (const Chan& c : chans) {
    const std::string& t = accumulator_type_[c.f];
    absl::StrAppend(&s, ind, "wn", c.f, " = ", at(t, c.qn, "0"), "; acc", c.f, " = ",
                    at(t, c.qf, "0"), "; acc", c.s, " = ", at(t, c.qs, "0"), ";\n", ind,
                    "for (int w = 1; w < ", shape_.threads_x, "; ++w) fz_chan(wn", c.f, ", acc",
                    c.f, ", acc", c.s, ", ", at(t, c.qn, "w"), ", ", at(t, c.qf, "w"), ", ",
                    at(t, c.qs, "w"), ");\n");
  }
  absl::StrAppend(&s, ind, "fz_rb ^= 1;\n");
  return s;
}

// Blocks a SM asked of ptxas: as many as leave a thread 64 registers (two of
// 512 threads), the figure the heuristics size the grid for; a thread keeps
// unroll x vector_width loads in flight and nothing between the passes.
int Generator::LanesMinBlocks() const {
  return std::max(1, std::min(params_.blocks_per_sm, options_.max_min_blocks));
}

}  // namespace codegen_internal
}  // namespace fusiond
