// Cluster column partials (HeuristicParams::cluster_x, sm_90+): an
// inner-outer persistent kernel's blocks end their row loop with a column
// accumulator per element they own. Without clusters each block writes all
// of them to its own partial row of the workspace, and after the grid
// barrier the epilogue sums gridDim.x partial rows. With clusters of C
// blocks each block first puts its accumulators in (dynamic) shared memory,
// the cluster synchronizes, and block r of the cluster sums share r of the
// columns over the C blocks (distributed shared memory, blocks in rank
// order: deterministic) into the cluster's partial row: C times fewer
// partial bytes written and read back.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/online_softmax.h"
#include "compiler/scheduler/target.h"

namespace fusiond {
namespace codegen_internal {

absl::Status Generator::PlanCluster() {
  const int c = params_.cluster_x;
  if (c <= 1) return absl::OkStatus();
  const bool ok =
      params_.kind == SchedulerKind::kInnerOuterPersistent && shape_.persistent &&
      !plan_.col_reds.empty() && !shape_.row_split && shape_.threads_y == 1 &&
      shape_.vector_width % 4 == 0 && (c & (c - 1)) == 0 && c <= 8 &&
      (shape_.chunks_per_thread * (shape_.vector_width / 4) * shape_.threads_x) % c == 0;
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "codegen: cluster_x=", c,
        " needs an inner-outer persistent kernel with column reductions, one row per "
        "block, vectors of 4+ elements and a power of two up to 8 (block_x=",
        shape_.threads_x, " block_y=", shape_.threads_y, " vectorize=", shape_.vector_width, ")"));
  }
  form_.cluster_x = c;
  const int64_t bytes = int64_t{4} * static_cast<int64_t>(plan_.col_reds.size()) *
                        shape_.chunks_per_thread * shape_.vector_width * shape_.threads_x;
  dynamic_smem_bytes_ =
      std::max(dynamic_smem_bytes_, bytes);  // aliases the staged ring, which the loop is done with
  return absl::OkStatus();
}

std::string Generator::ClusterPartials() const {
  const size_t nc = plan_.col_reds.size();
  const int q4 = shape_.vector_width / 4,
            region =
                shape_.chunks_per_thread * q4 * shape_.threads_x;  // float4s per column reduction
  // This thread's accumulators into shared memory, float4-interleaved by
  // thread (conflict-free), after the block is done reading the ring.
  std::string s =
      absl::StrCat("  if (fits) {\n    __syncthreads();\n    float4* fz_cs = (float4*)fz_smem;\n",
                   "#pragma unroll\n    for (int k = 0; k < ", shape_.chunks_per_thread,
                   "; ++k) {\n#pragma unroll\n", "      for (int l = 0; l < ", shape_.vector_width,
                   "; l += 4) {\n");
  for (size_t ci = 0; ci < nc; ++ci) {
    absl::StrAppend(&s, "        fz_cs[", ci * region, " + (k * ", q4, " + l / 4) * ",
                    shape_.threads_x, " + tx] = make_float4(cacc", ci, "[k * ", shape_.vector_width,
                    " + l], cacc", ci, "[k * ", shape_.vector_width, " + l + 1], cacc", ci, "[k * ",
                    shape_.vector_width, " + l + 2], cacc", ci, "[k * ", shape_.vector_width,
                    " + l + 3]);\n");
  }
  absl::StrAppend(&s, "      }\n    }\n    fz_cluster_sync();\n",
                  "    const int per = ", region / form_.cluster_x, ", rank = blockIdx.x % ",
                  form_.cluster_x, ";\n", "    for (int i = tx; i < per; i += ", shape_.threads_x,
                  ") {\n", "      const int q = rank * per + i, x = q % ", shape_.threads_x,
                  ", k = q / ", shape_.threads_x * q4, ", l = q / ", shape_.threads_x, " % ", q4,
                  " * 4;\n", "      const i64 j = ((i64)blockIdx.y * ", shape_.threads_x,
                  " + x + (i64)k * T) * ", shape_.vector_width, " + l;\n",
                  "      if (j >= rlen) continue;\n");
  for (size_t ci = 0; ci < nc; ++ci) {
    const char* op = ReduceOpId(graph_.node(plan_.col_reds[ci]).op);
    absl::StrAppend(&s, "      float4 s", ci, " = fz_dsmem_ld4(fz_cs + ", ci * region,
                    " + q, 0);\n");
    for (int r = 1; r < form_.cluster_x; ++r) {
      absl::StrAppend(&s, "      {\n        const float4 v = fz_dsmem_ld4(fz_cs + ", ci * region,
                      " + q, ", r, ");\n");
      for (const char* f : {"x", "y", "z", "w"}) {
        absl::StrAppend(&s, "        s", ci, ".", f, " = fz_comb<", op, ", float>(s", ci, ".", f,
                        ", v.", f, ");\n");
      }
      absl::StrAppend(&s, "      }\n");
    }
    absl::StrAppend(&s, "      fz_st_partial(wcol + ((i64)(blockIdx.x / ", form_.cluster_x, ") * ",
                    nc, " + ", ci, ") * wstride + j, s", ci, ");\n");
  }
  // No block leaves (its shared memory) while the others still read it.
  absl::StrAppend(&s, "    }\n    fz_cluster_sync();\n  }\n");
  return s;
}

// Rows split over blocks_per_row blocks (HeuristicParams::cluster_rows):
// those blocks are one cluster along y (__cluster_dims__(1, C, 1)), so a
// stage's totals cross them through distributed shared memory instead of
// the workspace and a group barrier; a kernel without column reductions
// then needs no cooperative launch.
absl::Status Generator::PlanRowCluster() {
  if (!params_.cluster_rows) return absl::OkStatus();
  const int64_t c = shape_.blocks_per_row;
  const bool inner = params_.kind == SchedulerKind::kInnerPersistent ||
                     params_.kind == SchedulerKind::kInnerOuterPersistent;
  // Lanes kernels (softmax or column sums over dim 0; column groups split
  // over grid_x = C blocks, the grid's y): every thread holds its column's
  // block total after LanesBlockReduce, as ClusterRowCombine takes it.
  const bool lanes = shape_.lanes;
  if (!((inner && shape_.persistent) || lanes) || !shape_.row_split ||
      (c != 2 && c != 4 && c != 8) || params_.cluster_x > 1 || !HasClusters(options_.target)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "codegen: cluster_rows needs an inner persistent or inner-outer persistent kernel with "
        "rows on chip split over grid_y = 2, 4 or 8 blocks (or a lanes kernel split over grid_x "
        "= 2, 4 or 8), no cluster_x and sm_90 or later "
        "(grid_y=",
        params_.grid_y, " cluster_x=", params_.cluster_x, " arch=", options_.target.arch, ")"));
  }
  form_.cluster_rows = true;
  return absl::OkStatus();
}

// Thread 0 of each row (ty) puts the block's totals in its half of the
// double-buffered fz_crow (a float4 a slot: a float, or a double's two
// words), one cluster barrier, and every thread combines the C blocks'
// totals in rank order, so every block of the cluster gets the same bits.
// Reduction k + 2 rewrites a buffer only after every block arrived at
// reduction k + 1's barrier, i.e. finished reading reduction k's (the
// barrier's release orders those reads first).
std::string Generator::ClusterRowCombine(const std::vector<int>& slots) const {
  const auto pack = [&](int i) {
    const std::string acc = absl::StrCat("acc", i);
    if (accumulator_type_[i] == "float")
      return absl::StrCat("make_float4(", acc, ", 0.f, 0.f, 0.f)");
    return absl::StrCat("make_float4(__int_as_float((int)__double_as_longlong(", acc,
                        ")), __int_as_float((int)(__double_as_longlong(", acc,
                        ") >> 32)), 0.f, 0.f)");
  };
  const auto unpack = [&](int i, const std::string& v) {
    if (accumulator_type_[i] == "float") return absl::StrCat(v, ".x");
    return absl::StrCat("__longlong_as_double(((long long)(unsigned)__float_as_int(", v,
                        ".y) << 32) | (unsigned)__float_as_int(", v, ".x))");
  };
  std::string s = "    {\n      float4* fz_cr = fz_crow[fz_cpar][ty];\n      if (tx == 0) {";
  for (size_t q = 0; q < slots.size(); ++q)
    absl::StrAppend(&s, " fz_cr[", q, "] = ", pack(slots[q]), ";");
  absl::StrAppend(&s, " }\n      fz_cluster_sync();\n");
  for (size_t q = 0; q < slots.size(); ++q) {
    const int i = slots[q];
    const ReductionSlot& sl = plan_.row_slots[i];
    if (sl.online && !OnlineLead(graph_, sl)) continue;
    if (sl.online) {
      // A max and its sum of exponentials (online_softmax.h), merged in rank order.
      const int p = OnlinePartnerSlot(plan_, i);
      const size_t qs = std::find(slots.begin(), slots.end(), p) - slots.begin();
      const auto ld = [&](size_t k, int64_t r) {
        return absl::StrCat("fz_dsmem_ld4(fz_cr + ", k, ", ", r, ").x");
      };
      absl::StrAppend(&s, "      acc", i, " = ", ld(q, 0), "; acc", p, " = ", ld(qs, 0), ";\n");
      for (int64_t r = 1; r < shape_.blocks_per_row; ++r)
        absl::StrAppend(&s, "      ", OnlineMerge(plan_, i, ld(q, r), ld(qs, r)), "\n");
      continue;
    }
    const char* op = sl.second_moment ? "0" : ReduceOpId(graph_.node(sl.node).op);
    const std::string& t = accumulator_type_[i];
    absl::StrAppend(&s, "      acc", i, " = ",
                    unpack(i, absl::StrCat("fz_dsmem_ld4(fz_cr + ", q, ", 0)")), ";\n");
    for (int64_t r = 1; r < shape_.blocks_per_row; ++r) {
      absl::StrAppend(&s, "      acc", i, " = fz_comb<", op, ", ", t, ">(acc", i, ", ",
                      unpack(i, absl::StrCat("fz_dsmem_ld4(fz_cr + ", q, ", ", r, ")")), ");\n");
    }
  }
  absl::StrAppend(&s, "      fz_cpar ^= 1;\n    }\n");
  return s;
}

}  // namespace codegen_internal
}  // namespace fusiond
