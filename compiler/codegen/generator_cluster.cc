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

}  // namespace codegen_internal
}  // namespace fusiond
