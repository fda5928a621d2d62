// Staged rows: the persistent row buffers of the inner persistent kinds in
// dynamic shared memory instead of registers, filled with cp.async several
// rows ahead (HeuristicParams::smem_buffer; docs/codegen.md). Registers then
// no longer bound the bytes in flight: each thread copies its own chunks of
// the next rows while it reduces the current one, and reads back only what it
// copied, so a cp.async.wait_group is the only synchronization.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace codegen_internal {

namespace {
// Rows kept in flight at most (the ring has this many stages).
constexpr int kMaxStages = 4;
}  // namespace

bool Generator::PlanStaging() {
  const bool inner = hp_.kind == SchedulerKind::kInnerPersistent ||
                     hp_.kind == SchedulerKind::kInnerOuterPersistent;
  if (!hp_.smem_buffer || !inner || hp_.multi_pass) return false;
  staged_ = true;  // for Staged() below
  int64_t row_bytes = 0, col_bytes = 0, widen_bytes = 0;
  for (const auto& [v, a] : in_access_) {
    if (!Staged(a)) continue;
    const int chunk = V_ * a.esize;
    if (chunk != 4 && chunk != 8 && chunk != 16) {  // cp.async sizes
      staged_ = false;
      return false;
    }
    (a.has_i ? row_bytes : col_bytes) += int64_t{chunk} * PB_ * BX_ * BY_;
    if (!a.has_i && HalfFloat(a)) widen_bytes += int64_t{V_} * (4 - a.esize) * PB_ * BX_ * BY_;
  }
  if (row_bytes == 0) {
    staged_ = false;
    return false;
  }
  // As many stages as the heuristics' shared-memory budget holds.
  const auto stages_for = [&](int64_t cols) {
    return static_cast<int>(
        std::min<int64_t>(kMaxStages, std::max<int64_t>(hp_.smem_bytes - cols, 0) / row_bytes));
  };
  // 16-bit columns as float (kMaxFloatColumnBatch) where the budget holds
  // them beside the two stages the heuristics plan (or as many as without).
  const int narrow = stages_for(col_bytes), wide = stages_for(col_bytes + widen_bytes);
  float_cols_ = widen_bytes > 0 && PB_ <= kMaxFloatColumnBatch && wide >= std::min(narrow, 2);
  stages_ = float_cols_ ? wide : narrow;
  if (stages_ < 1) {
    staged_ = false;
    return false;
  }
  int64_t off = 0;
  for (const auto& [v, a] : in_access_) {
    if (!Staged(a)) continue;
    smem_off_[a.ptr] = off;
    off += int64_t{V_} * (FloatColumn(a) ? 4 : a.esize) * PB_ * BX_ * BY_ * (a.has_i ? stages_ : 1);
  }
  smem_bytes_ = off;
  return true;
}

std::string Generator::StagedChunk(const Access& a, const std::string& stage,
                                   const std::string& k) const {
  const std::string slot =
      a.has_i ? absl::StrCat("((", stage, ") * ", PB_, " + (", k, "))") : absl::StrCat("(", k, ")");
  return absl::StrCat("(u32*)(fz_smem + ", smem_off_.at(a.ptr), " + ((", slot, " * ", BY_,
                      " + ty) * ", BX_, " + tx) * ", V_ * a.esize, ")");
}

std::string Generator::FloatColumnHalf(const Access& a, int half, const std::string& k) const {
  const int64_t half_bytes = int64_t{V_} * 2 * PB_ * BX_ * BY_;
  return absl::StrCat("(u32*)(fz_smem + ", smem_off_.at(a.ptr) + half * half_bytes, " + (((", k,
                      ") * ", BY_, " + ty) * ", BX_, " + tx) * ", V_ * 2, ")");
}

std::string Generator::IssueStagedCopies(const std::string& stage, bool cols,
                                         const std::string& ind) const {
  std::string s =
      absl::StrCat(ind, "#pragma unroll\n", ind, "for (int k = 0; k < ", PB_, "; ++k) {\n", ind,
                   "  const i64 jj = (t + (i64)k * T) * ", V_, ";\n", ind, "  if (jj < rlen) {\n");
  for (const auto& [v, a] : in_access_) {
    if (!Staged(a) || a.has_i == cols) continue;
    if (FloatColumn(a)) {
      // Loaded and widened once; the thread reads back only its own slots.
      absl::StrAppend(&s, ind, "    u32 cw[", ChunkWords(a), "], fw[", V_, "];\n", ind,
                      "    Chunk<", V_ * a.esize, ">::ld(cw, ", a.ptr, " + ro_", a.ptr, "(jj));\n",
                      ind, "#pragma unroll\n", ind, "    for (int l = 0; l < ", V_,
                      "; ++l) fw[l] = __float_as_uint(Ty<", a.dt, ">::get(cw, l));\n");
      for (int half = 0; half < 2; ++half) {
        // One shared store of V_ / 2 words (16, 8 or 4 bytes).
        const int w0 = half * V_ / 2;
        const std::string dst = FloatColumnHalf(a, half, "k");
        if (V_ == 8) {
          absl::StrAppend(&s, ind, "    *(uint4*)", dst, " = make_uint4(fw[", w0, "], fw[", w0 + 1,
                          "], fw[", w0 + 2, "], fw[", w0 + 3, "]);\n");
        } else if (V_ == 4) {
          absl::StrAppend(&s, ind, "    *(uint2*)", dst, " = make_uint2(fw[", w0, "], fw[", w0 + 1,
                          "]);\n");
        } else {
          absl::StrAppend(&s, ind, "    *", dst, " = fw[", w0, "];\n");
        }
      }
      continue;
    }
    absl::StrAppend(&s, ind, "    fz_cp_async<", V_ * a.esize, ">(", StagedChunk(a, stage, "k"),
                    ", ", a.ptr, " + ro_", a.ptr, "(jj));\n");
  }
  absl::StrAppend(&s, ind, "  }\n", ind, "}\n");
  return s;
}

}  // namespace codegen_internal
}  // namespace fusiond
