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
  int64_t row_bytes = 0, col_bytes = 0;
  for (const auto& [v, a] : in_access_) {
    if (!Staged(a)) continue;
    const int chunk = V_ * a.esize;
    if (chunk != 4 && chunk != 8 && chunk != 16) {  // cp.async sizes
      staged_ = false;
      return false;
    }
    (a.has_i ? row_bytes : col_bytes) += int64_t{chunk} * PB_ * BX_ * BY_;
  }
  if (row_bytes == 0) {
    staged_ = false;
    return false;
  }
  // As many stages as the heuristics' shared-memory budget holds.
  const int64_t budget = std::max<int64_t>(hp_.smem_bytes - col_bytes, 0);
  stages_ = static_cast<int>(std::min<int64_t>(kMaxStages, budget / row_bytes));
  if (stages_ < 1) {
    staged_ = false;
    return false;
  }
  int64_t off = 0;
  for (const auto& [v, a] : in_access_) {
    if (!Staged(a)) continue;
    smem_off_[a.ptr] = off;
    off += int64_t{V_} * a.esize * PB_ * BX_ * BY_ * (a.has_i ? stages_ : 1);
  }
  smem_bytes_ = off;
  return true;
}

std::string Generator::StagedChunk(const Access& a, const std::string& stage,
                                   const std::string& k) const {
  const std::string slot = a.has_i ? absl::StrCat("((", stage, ") * ", PB_, " + (", k, "))")
                                   : absl::StrCat("(", k, ")");
  return absl::StrCat("(u32*)(fz_smem + ", smem_off_.at(a.ptr), " + ((", slot, " * ", BY_,
                      " + ty) * ", BX_, " + tx) * ", V_ * a.esize, ")");
}

std::string Generator::IssueStagedCopies(const std::string& stage, bool cols,
                                         const std::string& ind) const {
  std::string s = absl::StrCat(ind, "#pragma unroll\n", ind, "for (int k = 0; k < ", PB_, "; ++k) {\n",
                               ind, "  const i64 jj = (t + (i64)k * T) * ", V_, ";\n", ind,
                               "  if (jj < rlen) {\n");
  for (const auto& [v, a] : in_access_) {
    if (!Staged(a) || a.has_i == cols) continue;
    absl::StrAppend(&s, ind, "    fz_cp_async<", V_ * a.esize, ">(", StagedChunk(a, stage, "k"), ", ",
                    a.ptr, " + ro_", a.ptr, "(jj));\n");
  }
  absl::StrAppend(&s, ind, "  }\n", ind, "}\n");
  return s;
}

}  // namespace codegen_internal
}  // namespace fusiond
