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
  kept_slot_words_ = 0;
  kept_word_offset_.clear();
  for (const Access* x : ins) {
    if (!x->across_rows || !x->along_row || !x->vectorized) continue;
    kept_word_offset_[x->ptr] = kept_slot_words_;
    kept_slot_words_ += ChunkWords(*x);
  }
  const int64_t iter_bytes =
      int64_t{4} * shape_.unroll * kept_slot_words_ * shape_.threads_x * shape_.threads_y;
  kept_iterations_ =
      iter_bytes > 0
          ? static_cast<int>(std::min(params_.smem_bytes / iter_bytes, shape_.row_iterations))
          : 0;
  dynamic_smem_bytes_ = std::max(dynamic_smem_bytes_, kept_iterations_ * iter_bytes);
}

std::string Generator::KeptWord(const Access& a, int q) const {
  return absl::StrCat("((u32*)fz_smem)[((fz_ki * ", shape_.unroll, " + u) * ", kept_slot_words_,
                      " + ", kept_word_offset_.at(a.ptr) + q, ") * ",
                      shape_.threads_x * shape_.threads_y, " + ty * ", shape_.threads_x, " + tx]");
}

// The vector path of a kernel that keeps chunks: the first pass copies its
// first kept_iterations_ iterations; each later pass reads those in a loop of
// their own (a branch per chunk in the main loop made the 4-D batch norm
// 12% slower): the final pass of two walks each thread's own iterations
// backwards, the kept ones last (what the L2 is likeliest to hold comes
// first); the passes of three walk forwards, the kept ones first.
std::string Generator::KeptVectorPath(bool first, bool backwards, const std::string& body,
                                      const std::vector<const Access*>& ins,
                                      const std::vector<int>& cols) const {
  const std::string fwd = absl::StrCat("(c0 + (i64)u * T) * ", shape_.vector_width);
  const std::string step = absl::StrCat("(i64)T * ", shape_.unroll);
  std::string s = "      extern __shared__ __align__(16) unsigned char fz_smem[];\n";
  if (first) {
    absl::StrAppend(
        &s, "      i64 fz_ki = 0;\n",
        VectorLoop(absl::StrCat("      for (i64 c0 = t; active && c0 * ", shape_.vector_width,
                                " < rlen; c0 += ", step, ", ++fz_ki) {\n"),
                   fwd, "jj < rlen", Src::kMemoryAndKeep, body, ins, cols));
  } else if (!backwards) {
    absl::StrAppend(
        &s, "      i64 fz_ki = 0;\n",
        VectorLoop(
            absl::StrCat("      for (; active && fz_ki < ", kept_iterations_, "; ++fz_ki) {\n",
                         "        const i64 c0 = t + fz_ki * ", step, ";\n"),
            fwd, "jj < rlen", Src::kKept, body, ins, cols),
        VectorLoop(absl::StrCat("      for (i64 c0 = t + fz_ki * ", step, "; active && c0 * ",
                                shape_.vector_width, " < rlen; c0 += ", step, ") {\n"),
                   fwd, "jj < rlen", Src::kMemory, body, ins, cols));
  } else {
    const std::string at = absl::StrCat("        const i64 c0 = t + fz_ki * ", step, ";\n");
    absl::StrAppend(&s, "      i64 fz_ki = rlen > t * ", shape_.vector_width, " ? (rlen - t * ",
                    shape_.vector_width, " + ", step, " * ", shape_.vector_width, " - 1) / (", step,
                    " * ", shape_.vector_width, ") - 1 : -1;\n",
                    VectorLoop(absl::StrCat("      for (; active && fz_ki >= ", kept_iterations_,
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
  absl::StrAppend(&l, "#pragma unroll 1\n        for (int u = 0; u < ", shape_.unroll,
                  "; ++u) {\n          const i64 jj = ", jj, ";\n          if (!(", in_row,
                  ")) break;\n");
  for (const Access* x : ins) {
    absl::StrAppend(&l, "          u32 w_", x->ptr, "[", ChunkWords(*x), "];\n");
    for (int q = 0; q < ChunkWords(*x); ++q) {
      absl::StrAppend(&l, "          w_", x->ptr, "[", q, "] = ", KeptWord(*x, q), ";\n");
    }
  }
  absl::StrAppend(&l, "          ", body, "(VW<", shape_.vector_width, ">(), jj");
  for (const Access* x : ins) absl::StrAppend(&l, ", w_", x->ptr);
  for (int c : cols) absl::StrAppend(&l, ", ", ColumnPartialRow(c), " + jj");
  absl::StrAppend(&l, ");\n        }\n      }\n");
  return l;
}

}  // namespace codegen_internal
}  // namespace fusiond
