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
  const bool inner = params_.kind == SchedulerKind::kInnerPersistent ||
                     params_.kind == SchedulerKind::kInnerOuterPersistent;
  if (!params_.smem_buffer || !inner || params_.multi_pass) return false;
  form_.rows_staged = true;  // for Staged() below
  int64_t row_bytes = 0, col_bytes = 0, widen_bytes = 0;
  for (const auto& [v, a] : input_access_) {
    if (!Staged(a)) continue;
    const int chunk = shape_.vector_width * a.elem_bytes;
    if (chunk != 4 && chunk != 8 && chunk != 16) {  // cp.async sizes
      form_.rows_staged = false;
      return false;
    }
    (a.across_rows ? row_bytes : col_bytes) +=
        int64_t{chunk} * shape_.chunks_per_thread * shape_.threads_x * shape_.threads_y;
    if (!a.across_rows && HalfFloat(a))
      widen_bytes += int64_t{shape_.vector_width} * (4 - a.elem_bytes) * shape_.chunks_per_thread *
                     shape_.threads_x * shape_.threads_y;
  }
  if (row_bytes == 0) {
    form_.rows_staged = false;
    return false;
  }
  // As many stages as the heuristics' shared-memory budget holds.
  const auto stages_for = [&](int64_t cols) {
    return static_cast<int>(
        std::min<int64_t>(kMaxStages, std::max<int64_t>(params_.smem_bytes - cols, 0) / row_bytes));
  };
  // 16-bit columns as float (kMaxFloatColumnBatch) where the budget holds
  // them beside the two stages the heuristics plan (or as many as without).
  const int narrow = stages_for(col_bytes), wide = stages_for(col_bytes + widen_bytes);
  form_.float_columns = widen_bytes > 0 && shape_.chunks_per_thread <= kMaxFloatColumnBatch &&
                        wide >= std::min(narrow, 2);
  form_.ring_stages = form_.float_columns ? wide : narrow;
  if (form_.ring_stages < 1) {
    form_.rows_staged = false;
    return false;
  }
  int64_t off = 0;
  for (const auto& [v, a] : input_access_) {
    if (!Staged(a)) continue;
    form_.staged_smem_offset[a.ptr] = off;
    off += int64_t{shape_.vector_width} * (FloatColumn(a) ? 4 : a.elem_bytes) *
           shape_.chunks_per_thread * shape_.threads_x * shape_.threads_y *
           (a.across_rows ? form_.ring_stages : 1);
  }
  dynamic_smem_bytes_ = off;
  return true;
}

std::string Generator::StagedChunk(const Access& a, const std::string& stage,
                                   const std::string& k) const {
  const std::string slot =
      a.across_rows ? absl::StrCat("((", stage, ") * ", shape_.chunks_per_thread, " + (", k, "))")
                    : absl::StrCat("(", k, ")");
  return absl::StrCat("(u32*)(fz_smem + ", form_.staged_smem_offset.at(a.ptr), " + ((", slot, " * ",
                      shape_.threads_y, " + ty) * ", shape_.threads_x, " + tx) * ",
                      shape_.vector_width * a.elem_bytes, ")");
}

std::string Generator::FloatColumnHalf(const Access& a, int half, const std::string& k) const {
  const int64_t half_bytes = int64_t{shape_.vector_width} * 2 * shape_.chunks_per_thread *
                             shape_.threads_x * shape_.threads_y;
  return absl::StrCat("(u32*)(fz_smem + ", form_.staged_smem_offset.at(a.ptr) + half * half_bytes,
                      " + (((", k, ") * ", shape_.threads_y, " + ty) * ", shape_.threads_x,
                      " + tx) * ", shape_.vector_width * 2, ")");
}

std::string Generator::IssueStagedCopies(const std::string& stage, bool cols,
                                         const std::string& ind) const {
  std::string s =
      absl::StrCat(ind, "#pragma unroll\n", ind, "for (int k = 0; k < ", shape_.chunks_per_thread,
                   "; ++k) {\n", ind, "  const i64 jj = (t + (i64)k * T) * ", shape_.vector_width,
                   ";\n", ind, "  if (jj < rlen) {\n");
  // Two or more float columns (a layernorm forward's weight and bias) widen
  // each in a scope of its own.
  int float_columns = 0;
  for (const auto& [v, a] : input_access_) float_columns += !a.across_rows && FloatColumn(a);
  const bool scoped = cols && float_columns > 1;
  for (const auto& [v, a] : input_access_) {
    if (!Staged(a) || a.across_rows == cols) continue;
    if (FloatColumn(a)) {
      // Loaded and widened once; the thread reads back only its own slots.
      if (scoped) absl::StrAppend(&s, ind, "    {\n");
      absl::StrAppend(&s, ind, "    u32 cw[", ChunkWords(a), "], fw[", shape_.vector_width, "];\n",
                      ind, "    Chunk<", shape_.vector_width * a.elem_bytes, ">::ld(cw, ", a.ptr,
                      " + ro_", a.ptr, "(jj));\n", ind, "#pragma unroll\n", ind,
                      "    for (int l = 0; l < ", shape_.vector_width,
                      "; ++l) fw[l] = __float_as_uint(Ty<", a.type_id, ">::get(cw, l));\n");
      for (int half = 0; half < 2; ++half) {
        // One shared store of vector_width / 2 words (16, 8 or 4 bytes).
        const int w0 = half * shape_.vector_width / 2;
        const std::string dst = FloatColumnHalf(a, half, "k");
        if (shape_.vector_width == 8) {
          absl::StrAppend(&s, ind, "    *(uint4*)", dst, " = make_uint4(fw[", w0, "], fw[", w0 + 1,
                          "], fw[", w0 + 2, "], fw[", w0 + 3, "]);\n");
        } else if (shape_.vector_width == 4) {
          absl::StrAppend(&s, ind, "    *(uint2*)", dst, " = make_uint2(fw[", w0, "], fw[", w0 + 1,
                          "]);\n");
        } else {
          absl::StrAppend(&s, ind, "    *", dst, " = fw[", w0, "];\n");
        }
      }
      if (scoped) absl::StrAppend(&s, ind, "    }\n");
      continue;
    }
    absl::StrAppend(&s, ind, "    fz_cp_async<", shape_.vector_width * a.elem_bytes, ">(",
                    StagedChunk(a, stage, "k"), ", ", a.ptr, " + ro_", a.ptr, "(jj));\n");
  }
  absl::StrAppend(&s, ind, "  }\n", ind, "}\n");
  return s;
}

}  // namespace codegen_internal
}  // namespace fusiond
