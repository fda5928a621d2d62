// The Generator's kept chunks (HeuristicParams::smem_bytes in multi-pass
// kernels): the first pass copies each thread's first loop iterations of
// what it streams into dynamic shared memory, and the later passes read
// them there instead of memory (docs/codegen.md, "Kept chunks").
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace codegen_internal {

void Generator::PlanKeep(const std::vector<const Access*>& ins) {
  keep_slot_words_ = 0;
  keep_word_.clear();
  for (const Access* x : ins) {
    if (!x->has_i || !x->has_r || !x->vec) continue;
    keep_word_[x->ptr] = keep_slot_words_;
    keep_slot_words_ += ChunkWords(*x);
  }
  const int64_t iter_bytes = int64_t{4} * U_ * keep_slot_words_ * BX_ * BY_;
  keep_iters_ =
      iter_bytes > 0 ? static_cast<int>(std::min(hp_.smem_bytes / iter_bytes, row_iters_)) : 0;
  smem_bytes_ = std::max(smem_bytes_, keep_iters_ * iter_bytes);
}

std::string Generator::KeptWord(const Access& a, int q) const {
  return absl::StrCat("((u32*)fz_smem)[((fz_ki * ", U_, " + u) * ", keep_slot_words_, " + ",
                      keep_word_.at(a.ptr) + q, ") * ", BX_ * BY_, " + ty * ", BX_, " + tx]");
}

// The vector path of a kernel that keeps chunks: the first pass copies its
// first keep_iters_ iterations; each later pass reads those in a loop of
// their own (a branch per chunk in the main loop made the 4-D batch norm
// 12% slower): the final pass of two walks each thread's own iterations
// backwards, the kept ones last (what the L2 is likeliest to hold comes
// first); the passes of three walk forwards, the kept ones first.
std::string Generator::KeptVectorPath(bool first, bool backwards, const std::string& body,
                                      const std::vector<const Access*>& ins,
                                      const std::vector<int>& cols) const {
  const std::string fwd = absl::StrCat("(c0 + (i64)u * T) * ", V_);
  const std::string step = absl::StrCat("(i64)T * ", U_);
  std::string s = "      extern __shared__ __align__(16) unsigned char fz_smem[];\n";
  if (first) {
    absl::StrAppend(&s, "      i64 fz_ki = 0;\n",
                    VectorLoop(absl::StrCat("      for (i64 c0 = t; active && c0 * ", V_,
                                            " < rlen; c0 += ", step, ", ++fz_ki) {\n"),
                               fwd, "jj < rlen", Src::kMemoryAndKeep, body, ins, cols));
  } else if (!backwards) {
    absl::StrAppend(
        &s, "      i64 fz_ki = 0;\n",
        VectorLoop(absl::StrCat("      for (; active && fz_ki < ", keep_iters_, "; ++fz_ki) {\n",
                                "        const i64 c0 = t + fz_ki * ", step, ";\n"),
                   fwd, "jj < rlen", Src::kKept, body, ins, cols),
        VectorLoop(absl::StrCat("      for (i64 c0 = t + fz_ki * ", step, "; active && c0 * ", V_,
                                " < rlen; c0 += ", step, ") {\n"),
                   fwd, "jj < rlen", Src::kMemory, body, ins, cols));
  } else {
    const std::string at = absl::StrCat("        const i64 c0 = t + fz_ki * ", step, ";\n");
    absl::StrAppend(&s, "      i64 fz_ki = rlen > t * ", V_, " ? (rlen - t * ", V_, " + ", step,
                    " * ", V_, " - 1) / (", step, " * ", V_, ") - 1 : -1;\n",
                    VectorLoop(absl::StrCat("      for (; active && fz_ki >= ", keep_iters_,
                                            "; --fz_ki) {\n", at),
                               fwd, "jj < rlen", Src::kMemory, body, ins, cols),
                    VectorLoop(absl::StrCat("      for (; active && fz_ki >= 0; --fz_ki) {\n", at),
                               fwd, "jj < rlen", Src::kKept, body, ins, cols));
  }
  return s;
}

// Every input kept: shared memory needs no batch of loads in flight, one
// chunk at a time (batched like the memory loop, ptxas spilled the 4-D
// batch norm).
std::string Generator::RolledKeptLoop(const std::string& header, const std::string& jj,
                                      const std::string& in_row, const std::string& body,
                                      const std::vector<const Access*>& ins,
                                      const std::vector<int>& cols) const {
  std::string l = header;
  absl::StrAppend(&l, "#pragma unroll 1\n        for (int u = 0; u < ", U_,
                  "; ++u) {\n          const i64 jj = ", jj, ";\n          if (!(", in_row,
                  ")) break;\n");
  for (const Access* x : ins) {
    absl::StrAppend(&l, "          u32 w_", x->ptr, "[", ChunkWords(*x), "];\n");
    for (int q = 0; q < ChunkWords(*x); ++q) {
      absl::StrAppend(&l, "          w_", x->ptr, "[", q, "] = ", KeptWord(*x, q), ";\n");
    }
  }
  absl::StrAppend(&l, "          ", body, "(VW<", V_, ">(), jj");
  for (const Access* x : ins) absl::StrAppend(&l, ", w_", x->ptr);
  for (int c : cols) absl::StrAppend(&l, ", ", WcolRow(c), " + jj");
  absl::StrAppend(&l, ");\n        }\n      }\n");
  return l;
}

}  // namespace codegen_internal
}  // namespace fusiond
