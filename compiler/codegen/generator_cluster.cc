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
#include "absl/strings/str_cat.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace codegen_internal {

absl::Status Generator::PlanCluster() {
  const int c = hp_.cluster_x;
  if (c <= 1) return absl::OkStatus();
  const bool ok = hp_.kind == SchedulerKind::kInnerOuterPersistent && persistent_ &&
                  !p_.col_reds.empty() && !split_ && BY_ == 1 && V_ % 4 == 0 &&
                  (c & (c - 1)) == 0 && c <= 8 && (PB_ * (V_ / 4) * BX_) % c == 0;
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen: cluster_x=", c,
                     " needs an inner-outer persistent kernel with column reductions, one row per "
                     "block, vectors of 4+ elements and a power of two up to 8 (block_x=",
                     BX_, " block_y=", BY_, " vectorize=", V_, ")"));
  }
  cluster_ = c;
  const int64_t bytes = int64_t{4} * static_cast<int64_t>(p_.col_reds.size()) * PB_ * V_ * BX_;
  smem_bytes_ =
      std::max(smem_bytes_, bytes);  // aliases the staged ring, which the loop is done with
  return absl::OkStatus();
}

std::string Generator::ClusterPartials() const {
  const size_t nc = p_.col_reds.size();
  const int q4 = V_ / 4, region = PB_ * q4 * BX_;  // float4s per column reduction
  // This thread's accumulators into shared memory, float4-interleaved by
  // thread (conflict-free), after the block is done reading the ring.
  std::string s =
      absl::StrCat("  if (fits) {\n    __syncthreads();\n    float4* fz_cs = (float4*)fz_smem;\n",
                   "#pragma unroll\n    for (int k = 0; k < ", PB_, "; ++k) {\n#pragma unroll\n",
                   "      for (int l = 0; l < ", V_, "; l += 4) {\n");
  for (size_t ci = 0; ci < nc; ++ci) {
    absl::StrAppend(&s, "        fz_cs[", ci * region, " + (k * ", q4, " + l / 4) * ", BX_,
                    " + tx] = make_float4(cacc", ci, "[k * ", V_, " + l], cacc", ci, "[k * ", V_,
                    " + l + 1], cacc", ci, "[k * ", V_, " + l + 2], cacc", ci, "[k * ", V_,
                    " + l + 3]);\n");
  }
  absl::StrAppend(
      &s, "      }\n    }\n    fz_cluster_sync();\n", "    const int per = ", region / cluster_,
      ", rank = blockIdx.x % ", cluster_, ";\n", "    for (int i = tx; i < per; i += ", BX_,
      ") {\n", "      const int q = rank * per + i, x = q % ", BX_, ", k = q / ", BX_ * q4,
      ", l = q / ", BX_, " % ", q4, " * 4;\n", "      const i64 j = ((i64)blockIdx.y * ", BX_,
      " + x + (i64)k * T) * ", V_, " + l;\n", "      if (j >= rlen) continue;\n");
  for (size_t ci = 0; ci < nc; ++ci) {
    const char* op = OpId(g_.node(p_.col_reds[ci]).op);
    absl::StrAppend(&s, "      float4 s", ci, " = fz_dsmem_ld4(fz_cs + ", ci * region,
                    " + q, 0);\n");
    for (int r = 1; r < cluster_; ++r) {
      absl::StrAppend(&s, "      {\n        const float4 v = fz_dsmem_ld4(fz_cs + ", ci * region,
                      " + q, ", r, ");\n");
      for (const char* f : {"x", "y", "z", "w"}) {
        absl::StrAppend(&s, "        s", ci, ".", f, " = fz_comb<", op, ", float>(s", ci, ".", f,
                        ", v.", f, ");\n");
      }
      absl::StrAppend(&s, "      }\n");
    }
    absl::StrAppend(&s, "      fz_st_partial(wcol + ((i64)(blockIdx.x / ", cluster_, ") * ", nc,
                    " + ", ci, ") * wstride + j, s", ci, ");\n");
  }
  // No block leaves (its shared memory) while the others still read it.
  absl::StrAppend(&s, "    }\n    fz_cluster_sync();\n  }\n");
  return s;
}

}  // namespace codegen_internal
}  // namespace fusiond
