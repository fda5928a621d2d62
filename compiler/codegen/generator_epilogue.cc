// The Generator's column epilogue (inner-outer persistent kernels): after
// the row loop each block writes its column accumulators as a partial row
// of the column workspace (or its cluster's, summed through distributed
// shared memory), the grid meets at a barrier, and every block sums the
// partials of its tiles of columns and stores the column outputs
// (docs/codegen.md; generator_cluster.cc for the cluster partials).
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/codegen/generator.h"

namespace fusiond {
namespace codegen_internal {

// This block's column partials into the workspace: summed over the cluster
// first (cluster_x > 1), or the accumulators of a persistent kernel's row
// slots (16-byte stores that stay in L2 where the vector width allows).
void Generator::EmitColumnPartials(std::string& c) const {
  const size_t nc = plan_.col_reds.size();
  if (form_.cluster_x > 1) {
    absl::StrAppend(&c, ClusterPartials());
  } else if (shape_.persistent) {
    absl::StrAppend(&c, "  if (fits) {\n#pragma unroll\n    for (int k = 0; k < ",
                    shape_.chunks_per_thread, "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ",
                    shape_.vector_width, ";\n      if (jj < rlen) {\n");
    for (size_t ci = 0; ci < nc; ++ci) {
      const std::string dst = absl::StrCat(ColumnPartialRow(ci), " + jj");
      if (shape_.vector_width % 4 == 0) {  // rlen % V == 0 here (fits): 16-byte aligned
        absl::StrAppend(&c, "#pragma unroll\n        for (int l = 0; l < ", shape_.vector_width,
                        "; l += 4) fz_st_partial(", dst, " + l, make_float4(cacc", ci, "[k * ",
                        shape_.vector_width, " + l], cacc", ci, "[k * ", shape_.vector_width,
                        " + l + 1], cacc", ci, "[k * ", shape_.vector_width, " + l + 2], cacc", ci,
                        "[k * ", shape_.vector_width, " + l + 3]));\n");
      } else {
        absl::StrAppend(&c, "#pragma unroll\n        for (int l = 0; l < ", shape_.vector_width,
                        "; ++l) (", dst, ")[l] = cacc", ci, "[k * ", shape_.vector_width,
                        " + l];\n");
      }
    }
    absl::StrAppend(&c, "      }\n    }\n  }\n");
  }
}

absl::Status Generator::EmitColumnEpilogue(std::string& c) {
  const size_t nc = plan_.col_reds.size();
  EmitColumnPartials(c);
  // After the barrier every block sums the P partials of a tile of 4L
  // columns at a time: L lanes read the tile as float4s, the block's other
  // threads split the partials (group g takes every NG-th one), so each
  // thread has a few independent loads in flight and the tile costs about
  // one L2 round trip; the groups of a warp combine by shuffle, the warps
  // through shared memory, and 4L threads finish one column each. Fixed
  // order: the sums are deterministic. (64-column float4 tiles against
  // 32-column tiles of one float per lane: layernorm backward 2048x8192
  // 49.0 -> 45.0 us on the H200.) L comes from the shape compiled for,
  // see EpilogueLanes.
  const int nthreads = shape_.threads_x * shape_.threads_y, nw = std::max(1, nthreads / 32);
  const int64_t gx = std::max<int64_t>(1, params_.grid_x),
                blocks = gx * std::max<int64_t>(1, params_.grid_y);
  const int L = EpilogueLanes(params_.inner_size, gx * shape_.threads_y / form_.cluster_x, blocks,
                              nthreads),
            TW = 4 * L, ng = nthreads / L;
  // The staged ring is dead past the row loop: the epilogue's tiles reuse
  // it instead of declaring 4 KiB a column reduction more, so the ring may
  // have all of the 227 KiB a block may ask for but the reductions' scratch.
  // The row loop waits for all its copies when it ends; the grid barrier
  // then orders every thread's last ring read before the tiles' first write.
  const bool tiles_in_ring =
      form_.rows_staged && form_.cluster_x == 1 && dynamic_smem_bytes_ >= int64_t{16} * nc * nw * L;
  absl::StrAppend(&c, "  fz_grid_sync(bar);\n");
  // Every block is past its last take: the counter is zero for the next launch.
  if (form_.dynamic_rows)
    absl::StrAppend(&c, "  if (blockIdx.x == 0 && tx == 0 && ty == 0) bar[1] = 0;\n");
  // Partial rows: one per cluster where the clusters summed theirs (fits).
  const std::string P = form_.cluster_x > 1 ? absl::StrCat("fits ? (int)gridDim.x / ",
                                                           form_.cluster_x, " : (int)gridDim.x")
                                            : absl::StrCat("gridDim.x * ", shape_.threads_y);
  absl::StrAppend(
      &c, "  {\n    const int P = ", P, ";\n", "    const int tid = ty * ", shape_.threads_x,
      " + tx, lane = tid % ", L, ", grp = tid / ", L, ";\n",
      tiles_in_ring ? absl::StrCat("    float4 (*fz_cred)[", nw, "][", L, "] = (float4 (*)[", nw,
                                   "][", L, "])fz_smem;\n")
                    : absl::StrCat("    __shared__ float4 fz_cred[", nc, "][", nw, "][", L, "];\n"),
      "    for (i64 c0 = ((i64)blockIdx.y * gridDim.x + blockIdx.x) * ", TW, "; c0 < rlen;",
      " c0 += (i64)gridDim.x * gridDim.y * ", TW, ") {\n      const i64 j4 = c0 + lane * 4;\n");
  std::string comb;
  for (size_t ci = 0; ci < nc; ++ci) {
    const OpKind cop = graph_.node(plan_.col_reds[ci]).op;
    const std::string id = ReductionIdentity(cop, "float");
    absl::StrAppend(&c, "      float4 s", ci, " = make_float4(", id, ", ", id, ", ", id, ", ", id,
                    ");\n");
    for (const char* f : {"x", "y", "z", "w"}) {
      absl::StrAppend(&comb, "          s", ci, ".", f, " = fz_comb<", ReduceOpId(cop),
                      ", float>(s", ci, ".", f, ", v", ci, ".", f, ");\n");
    }
  }
  absl::StrAppend(&c, "      if (j4 < rlen) {\n#pragma unroll ", kEpilogueLoads,
                  "\n        for (int p = grp; p < P; p += ", ng, ") {\n");
  for (size_t ci = 0; ci < nc; ++ci) {
    absl::StrAppend(&c, "          const float4 v", ci, " = *(const float4*)(wcol + ((i64)p * ", nc,
                    " + ", ci, ") * wstride + j4);\n");
  }
  absl::StrAppend(&c, comb, "        }\n      }\n");
  for (size_t ci = 0; ci < nc; ++ci) {
    const OpKind cop = graph_.node(plan_.col_reds[ci]).op;
    for (int o = L; o < 32; o *= 2) {
      for (const char* f : {"x", "y", "z", "w"}) {
        absl::StrAppend(&c, "      s", ci, ".", f, " = fz_comb<", ReduceOpId(cop), ", float>(s", ci,
                        ".", f, ", __shfl_xor_sync(0xffffffffu, s", ci, ".", f, ", ", o, "));\n");
      }
    }
    absl::StrAppend(&c, "      if ((tid & 31) < ", L, ") fz_cred[", ci, "][tid >> 5][lane] = s", ci,
                    ";\n");
  }
  // The tile's columns, one per thread (a 32-thread block takes two of 64).
  absl::StrAppend(&c, "      __syncthreads();\n      for (int q = tid; q < ", TW,
                  "; q += ", nthreads, ") {\n",
                  "      const i64 j = c0 + q;\n      if (j >= rlen) break;\n");
  std::string body;
  std::map<ValueId, std::string> memo;
  Scope cs = Scope::Of(Scope::kCol, &body, "      ", &memo);
  cs.load = [&](ValueId v) {
    const Access& a = input_access_.at(v);
    return absl::StrCat("Ty<", a.type_id, ">::load(", a.ptr, " + ", OffsetAt(a, "j", At::kElem),
                        ")");
  };
  cs.index = [this](ValueId v) { return OffsetAt(rng_access_.at(v), "j", At::kElem); };
  for (size_t ci = 0; ci < nc; ++ci) {
    const Node& n = graph_.node(plan_.col_reds[ci]);
    const ValueId out = n.outputs[0];
    const OpKind cop = n.op;
    absl::StrAppend(&body, "      float csum", ci, " = ((const float*)fz_cred[", ci, "][0])[q];\n",
                    "      for (int w = 1; w < ", nw, "; ++w) csum", ci, " = fz_comb<",
                    ReduceOpId(cop), ", float>(csum", ci, ", ((const float*)fz_cred[", ci,
                    "][w])[q]);\n");
    absl::StrAppend(
        &body, "      const ", ComputeTypeName(graph_.value(out).dtype), " cv", out, " = ",
        RoundTo(graph_.value(out).dtype,
                absl::StrCat("(", ComputeTypeName(graph_.value(out).dtype), ")csum", ci)),
        ";\n");
    memo[out] = absl::StrCat("cv", out);
  }
  for (const Access& a : output_access_) {
    if (plan_.domain[a.v] != Domain::kCol) continue;
    if (a.across_rows) {
      return absl::UnimplementedError(
          "codegen: a column-reduction output broadcast along the rows");
    }
    auto e = values_->Get(a.v, cs);
    if (!e.ok()) return e.status();
    if (a.along_row) {
      absl::StrAppend(&body, "      Ty<", a.type_id, ">::store(", a.ptr, " + ",
                      OffsetAt(a, "j", At::kElem), ", ", *e, ");\n");
    } else {  // no row axes left (every row-domain axis has extent 1)
      absl::StrAppend(&body, "      if (j == 0) Ty<", a.type_id, ">::store(", a.ptr, ", ", *e,
                      ");\n");
    }
  }
  absl::StrAppend(&c, body, "      }\n      __syncthreads();\n    }\n  }\n");
  return absl::OkStatus();
}

}  // namespace codegen_internal
}  // namespace fusiond
