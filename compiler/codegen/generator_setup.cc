// The Generator's emission steps before the row loop: the tensors and
// parameters (DeclareTensors), the value emitter's row scope, the preludes,
// the signature, the index setup (typed pointers, sizes, vec_ok and fits,
// reduction scratch, workspaces, offset functions), the column buffers, the
// row bases and the first rows' loads; and the launch recipe (FillLaunch).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/prelude.h"

namespace fusiond {
namespace codegen_internal {

void Generator::DeclareTensors(GeneratedKernel& k) {
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    const ValueId v = graph_.inputs[i];
    input_index_[v] = static_cast<int>(i);
    const Value& val = graph_.value(v);
    if (!signature_.empty()) signature_ += ", ";
    if (val.is_tensor) {
      absl::StrAppend(&signature_, "const void* __restrict__ in", i, "_");
      k.params.push_back({"input", static_cast<int>(i), ""});
      input_access_[v] = MakeAccess(v, absl::StrCat("in", i));
    } else {
      absl::StrAppend(&signature_, "double sc", i);
      k.params.push_back({"scalar", static_cast<int>(i), ""});
    }
  }
  for (size_t i = 0; i < graph_.outputs.size(); ++i) {
    absl::StrAppend(&signature_, signature_.empty() ? "" : ", ", "void* __restrict__ out", i, "_");
    k.params.push_back({"output", static_cast<int>(i), ""});
    output_access_.push_back(MakeAccess(graph_.outputs[i], absl::StrCat("out", i)));
  }
  // Ops computed from indices (random ones, iota; slice, pad and cat, which
  // read their operands there): the offsets of a contiguous tensor of their
  // shape are their elements' indices (no pointer).
  for (const Node& n : graph_.nodes) {
    if ((IsIndexed(n.op) || IsShift(n.op)) && plan_.needed[n.outputs[0]])
      rng_access_[n.outputs[0]] = MakeAccess(n.outputs[0], absl::StrCat("rng", n.outputs[0]));
  }
}

void Generator::SetUpValueEmitter() {
  ExprOptions eo;
  eo.approx_transcendentals = true;
  for (ValueId o : graph_.outputs) {
    const DataType t = graph_.value(o).dtype;
    if (t == DataType::kFloat || t == DataType::kDouble) eo.approx_transcendentals = false;
  }
  values_ = std::make_unique<ValueEmitter>(plan_, eo, input_index_);
  row_scope_ = Scope::Of(Scope::kRow, &row_code_, "    ", &row_values_);
  row_scope_.load = [&](ValueId v) {
    const Access& a = input_access_.at(v);
    if (shape_.persistent && a.across_rows && !a.along_row) return absl::StrCat("cr_", a.ptr);
    return absl::StrCat("(active ? Ty<", a.type_id, ">::load(", a.ptr, " + ",
                        a.across_rows ? "rb_" + a.ptr : "0",
                        ") : ", ComputeTypeName(graph_.value(v).dtype), "(0))");
  };
  row_scope_.index = [&](ValueId v) {
    const Access& a = rng_access_.at(v);
    return a.across_rows ? "rb_" + a.ptr : std::string("0");
  };
}

std::string Generator::Preludes() const {
  std::string c = DevicePrelude();
  if (form_.cluster_x > 1 || form_.cluster_rows) c += ClusterPrelude();
  if (!form_.divider_code.empty()) c += DividerPrelude();  // the FzDivs follow rlen, before vec_ok
  if (form_.float_columns) c += FloatColumnPrelude();
  if (form_.reread_rows) c += RereadPrelude();
  if (std::any_of(graph_.values.begin(), graph_.values.end(), [](const Value& v) {
        return v.dtype == DataType::kFloat8E4M3 || v.dtype == DataType::kFloat8E5M2;
      })) {
    c += Fp8Prelude();  // Ty<8>, Ty<9>
  }
  if (std::any_of(graph_.nodes.begin(), graph_.nodes.end(),
                  [](const Node& n) { return IsRandom(n.op); })) {
    c += RandomPrelude();
  }
  return c;
}

void Generator::EmitSignature(const std::string& name, std::string& c) const {
  absl::StrAppend(
      &c, "\nextern \"C\" __global__ void __launch_bounds__(", shape_.threads_x * shape_.threads_y,
      ", ", form_.min_blocks, ") ",
      form_.cluster_x > 1  ? absl::StrCat("__cluster_dims__(", form_.cluster_x, ", 1, 1) ")
      : form_.cluster_rows ? absl::StrCat("__cluster_dims__(1, ", shape_.blocks_per_row, ", 1) ")
                           : "",
      name, "(", signature_, ") {\n");
  absl::StrAppend(&c, shape_.lanes
                          ? LanesThreadIds()
                          : "  const int tx = threadIdx.x, ty = threadIdx.y;\n  (void)ty;\n");
  for (SymbolId s : form_.literal_symbols) {
    absl::StrAppend(&c, "  constexpr i64 ", plan_.symbol_names.at(s), " = ",
                    options_.symbol_sizes[s], ";  // compiled for (requires)\n");
  }
  if (form_.rows_staged || form_.cluster_x > 1)
    absl::StrAppend(&c, "  extern __shared__ __align__(16) unsigned char fz_smem[];\n");
}

absl::Status Generator::EmitIndexSetup(std::string& c) {
  const bool coop = Cooperative();
  // Typed pointers: element arithmetic per dtype.
  auto typed = [&](const Access& a, bool in) {
    const char* t = a.elem_bytes == 1   ? "unsigned char"
                    : a.elem_bytes == 2 ? "unsigned short"
                    : a.elem_bytes == 4 ? "u32"
                                        : "u64";
    return absl::StrCat("  ", in ? "const " : "", t, "* __restrict__ ", a.ptr, " = (",
                        in ? "const " : "", t, "*)", a.ptr, "_;\n");
  };
  // Typed pointers: element arithmetic per dtype.
  std::string rename;
  for (auto& [v, a] : input_access_) rename += typed(a, true);
  for (auto& a : output_access_) rename += typed(a, false);
  absl::StrAppend(&c, rename);
  const std::string rows = plan_.ProductExpr(plan_.i_axes);
  const std::string rlen = plan_.ProductExpr(plan_.r_axes);
  absl::StrAppend(&c, "  const i64 rows = (i64)(", rows, ");\n  const i64 rlen = (i64)(", rlen,
                  ");\n");
  if (form_.exact_tiling) {  // one block along the row (no split)
    absl::StrAppend(&c, "  const i64 t = tx;\n  constexpr i64 T = ", shape_.threads_x, ";\n",
                    form_.divider_code);
  } else {
    absl::StrAppend(&c, "  const i64 t = (i64)blockIdx.y * ", shape_.threads_x,
                    " + tx;\n  const i64 T = (i64)gridDim.y * ", shape_.threads_x, ";\n",
                    form_.divider_code);
  }
  // Vector accesses need the innermost row extent (or the trailing row axes
  // every vectorized tensor shares, VectorUnitAxes) divisible by V and
  // aligned pointers.
  const std::vector<int> unit = VectorUnitAxes();
  const std::string unit_expr = unit.empty() ? plan_.ExtentExpr(plan_.ref[plan_.r_axes.back()])
                                : unit.size() == plan_.r_axes.size() ? "rlen"
                                                                     : plan_.ProductExpr(unit);
  std::string vec = absl::StrCat("(", unit_expr, ") % ", shape_.vector_width, " == 0");
  for (auto& [v, a] : input_access_) {
    if (a.vectorized)
      absl::StrAppend(&vec, " && ((u64)", a.ptr, " % ", shape_.vector_width * a.elem_bytes,
                      ") == 0");
  }
  for (auto& a : output_access_) {
    if (a.vectorized && a.along_row)
      absl::StrAppend(&vec, " && ((u64)", a.ptr, " % ", shape_.vector_width * a.elem_bytes,
                      ") == 0");
  }
  if (!form_.extent_dividers.empty()) absl::StrAppend(&vec, " && fz_q32");
  // HeuristicParams::trust_alignment: a specialized kernel's extents are the
  // literals compiled for and its pointers aligned as its manifest requires.
  if (params_.trust_alignment && form_.specialized && form_.extent_dividers.empty()) vec = "true";
  absl::StrAppend(&c, "  const bool vec_ok = ", vec, ";\n");
  // The row fits the persistent buffers: T * chunks_per_thread * vector_width elements, with T =
  // split * threads_x (a persistent kernel's grid y is `split`), written as a
  // literal so that NVVM folds `fits` to the alignment test for static
  // definitions and drops their vector fallback loop: rmsnorm backward
  // thunder compiles 12-20% faster, 117 -> 114 registers. T itself stays
  // gridDim.y * threads_x in the index math (a literal there made kernels 1-5% slower).
  absl::StrAppend(&c, "  const bool fits = ",
                  shape_.persistent
                      ? absl::StrCat("vec_ok && rlen <= ",
                                     shape_.blocks_per_row * shape_.threads_x *
                                         shape_.chunks_per_thread * shape_.vector_width,
                                     "LL")
                      : "false",
                  ";\n  (void)fits;\n");
  if (absl::Status st = PlanLanesKept(); !st.ok()) return st;
  if (shape_.lanes && !plan_.row_slots.empty() && shape_.threads_x > 1) {
    auto scratch = LanesReductionScratch();
    if (!scratch.ok()) return scratch.status();
    absl::StrAppend(&c, *scratch);
  } else if (!plan_.row_slots.empty() && shape_.threads_x > 32) {
    size_t per_stage = 1;
    for (int s = 0; s < plan_.num_stages; ++s) {
      size_t n = 0;
      // A one-pass var also exchanges its count and its plain sum.
      for (const auto& sl : plan_.row_slots)
        n += (sl.stage == s) + 2 * (sl.stage == s && sl.one_pass && !sl.second_moment);
      per_stage = std::max(per_stage, n);
    }
    // Slot-major: one slot's warp partials are contiguous (read four at a
    // time when they are floats).
    absl::StrAppend(&c, "  __shared__ __align__(16) ", BlockPartialType(), " fz_red[2][",
                    shape_.threads_y, "][", per_stage, "][", shape_.threads_x / 32,
                    "];\n  unsigned fz_rb = 0;\n");
  }
  // Workspaces: ws holds the barrier words (kBarrierBytes: grid-wide words,
  // then one per row group); wsp the row partials (double, two parities),
  // then the column partials (float).
  const size_t max_slots = MaxSlotsPerStage();
  if (coop) {
    absl::StrAppend(
        &c, "  u32* bar = (u32*)ws;\n  (void)bar;\n",
        "  const size_t part_stride = (size_t)gridDim.x * ", shape_.threads_y, " * gridDim.y * ",
        max_slots, ";\n", "  double* ws_row = (double*)wsp;\n  (void)ws_row; (void)part_stride;\n",
        "  float* wcol = (float*)(wsp + ", shape_.row_split ? "2 * part_stride * 8" : "0",
        ");\n  (void)wcol;\n", "  const i64 wstride = (rlen + 3) & ~(i64)3;\n  (void)wstride;\n",
        "  unsigned par = 0;\n  (void)par;\n");
  }
  // Row bases and offsets.
  for (auto& [v, a] : input_access_)
    if (a.across_rows) absl::StrAppend(&c, "  i64 rb_", a.ptr, " = 0;\n");
  for (auto& a : output_access_)
    if (a.across_rows) absl::StrAppend(&c, "  i64 rb_", a.ptr, " = 0;\n");
  for (auto& [v, a] : rng_access_)
    if (a.across_rows) absl::StrAppend(&c, "  i64 rb_", a.ptr, " = 0;\n");
  absl::StrAppend(&c, "  i64 row = 0;\n  bool active = false;\n");
  for (auto& [v, a] : input_access_)
    if (a.along_row) absl::StrAppend(&c, OffsetLambda(a));
  for (auto& a : output_access_)
    if (a.along_row) absl::StrAppend(&c, OffsetLambda(a));
  for (auto& [v, a] : rng_access_)
    if (a.along_row) absl::StrAppend(&c, OffsetLambda(a));
  return absl::OkStatus();
}

void Generator::EmitColumnBuffers(std::string& c) const {
  // Column inputs stay in registers across rows, or in shared memory
  // (smem_columns: each thread's chunks at [k][tx], filled by the first row
  // of threads).
  if (shape_.persistent) {
    if (form_.rows_staged)
      absl::StrAppend(&c, "  if (fits) {\n", IssueStagedCopies("0", true, "    "), "  }\n");
    bool smem_cols = false;
    for (auto& [v, a] : input_access_) {
      if (!ColumnInSmem(a)) continue;
      const int w = ChunkWords(a);
      smem_cols = true;
      absl::StrAppend(&c, "  __shared__ __align__(16) u32 cs_", a.ptr, "[",
                      shape_.chunks_per_thread * shape_.threads_x * w, "];\n",
                      "  if (fits && ty == 0) {\n#pragma unroll\n", "    for (int k = 0; k < ",
                      shape_.chunks_per_thread,
                      "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", shape_.vector_width,
                      ";\n      if (", InRow("jj"), ") Chunk<", shape_.vector_width * a.elem_bytes,
                      ">::ld(&cs_", a.ptr, "[(k * ", shape_.threads_x, " + tx) * ", w, "], ", a.ptr,
                      " + ro_", a.ptr, "(jj));\n    }\n  }\n");
    }
    if (smem_cols && shape_.threads_y > 1) absl::StrAppend(&c, "  __syncthreads();\n");
    for (auto& [v, a] : input_access_) {
      if (!a.along_row || a.across_rows || !a.vectorized || !plan_.needed[v] || form_.rows_staged ||
          ColumnInSmem(a))
        continue;
      const int w = ChunkWords(a);
      absl::StrAppend(&c, "  u32 cb_", a.ptr, "[", shape_.chunks_per_thread * w,
                      "];\n  if (fits) {\n#pragma unroll\n", "    for (int k = 0; k < ",
                      shape_.chunks_per_thread,
                      "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", shape_.vector_width,
                      ";\n      if (", InRow("jj"), ") Chunk<", shape_.vector_width * a.elem_bytes,
                      ">::ld(&cb_", a.ptr, "[k * ", w, "], ", a.ptr, " + ro_", a.ptr,
                      "(jj));\n    }\n  }\n");
    }
    for (size_t ci = 0; ci < plan_.col_reds.size(); ++ci) {
      absl::StrAppend(&c, "  float cacc", ci, "[", shape_.chunks_per_thread * shape_.vector_width,
                      "];\n#pragma unroll\n  for (int q = 0; q < ",
                      shape_.chunks_per_thread * shape_.vector_width, "; ++q) cacc", ci,
                      "[q] = ", ReductionIdentity(graph_.node(plan_.col_reds[ci]).op, "float"),
                      ";\n");
    }
  }
}

void Generator::EmitRowBases(std::string& c) const {
  // Row bases of every tensor with row axes, for row r.
  {
    std::string rb = "  auto rowbase = [&](i64 r) {\n    i64 q = r;\n";
    for (int kx = static_cast<int>(plan_.i_axes.size()) - 1; kx >= 0; --kx) {
      const int ax = plan_.i_axes[kx];
      if (kx > 0) {
        absl::StrAppend(&rb, "    const i64 ic", ax, " = q % (i64)(",
                        plan_.ExtentExpr(plan_.ref[ax]), "); q /= (i64)(",
                        plan_.ExtentExpr(plan_.ref[ax]), ");\n");
      } else {
        absl::StrAppend(&rb, "    const i64 ic", ax, " = q;\n");
      }
    }
    auto base = [&](const Access& a) {
      std::string e = "0";
      for (const auto& [ra, stride] : a.across_row_terms)
        absl::StrAppend(&e, " + ic", ra, " * (i64)(", stride, ")");
      return absl::StrCat("    rb_", a.ptr, " = ", e, ";\n");
    };
    for (auto& [v, a] : input_access_)
      if (a.across_rows) rb += base(a);
    for (auto& a : output_access_)
      if (a.across_rows) rb += base(a);
    for (auto& [v, a] : rng_access_)
      if (a.across_rows) rb += base(a);
    absl::StrAppend(&rb, "  };\n");
    if (!plan_.i_axes.empty()) c += rb;
  }
}

void Generator::EmitFirstRows(std::string& c) const {
  const bool cols = HasColumnReductions();
  const std::string first_row = absl::StrCat("(i64)blockIdx.x * ", shape_.threads_y, " + ty");
  absl::StrAppend(&c, "  const i64 rstride = (i64)gridDim.x * ", shape_.threads_y, ";\n");
  if (form_.lanes_kept > 0) c += LanesKeptSetup();
  if (form_.rows_staged) {
    // Fill the ring but its last stage: rows it = 0 .. ring_stages - 2.
    absl::StrAppend(&c, "#pragma unroll\n  for (int s = 0; s < ", form_.ring_stages - 1,
                    "; ++s) {\n", "    const i64 r = ", first_row, " + (i64)s * rstride;\n",
                    "    if (fits && r < rows) {\n      rowbase(r);\n",
                    IssueStagedCopies("s", false, "      "), "    }\n    fz_cp_commit();\n  }\n");
  }
  if (shape_.persistent && !form_.rows_staged) {
    for (auto& [v, a] : input_access_) {
      if (!a.along_row || !a.across_rows || !a.vectorized || !plan_.needed[v]) continue;
      const int w = ChunkWords(a);
      absl::StrAppend(&c, "  u32 pb_", a.ptr, "[", shape_.chunks_per_thread * w, "];\n");
      absl::StrAppend(&c, "  if (fits && ", first_row, " < rows) {\n    rowbase(", first_row,
                      ");\n#pragma unroll\n", "    for (int k = 0; k < ", shape_.chunks_per_thread,
                      "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", shape_.vector_width,
                      ";\n      if (", InRow("jj"), ") ",
                      RowChunkLoad(a, absl::StrCat("&pb_", a.ptr, "[k * ", w, "]"),
                                   absl::StrCat(a.ptr, " + ro_", a.ptr, "(jj)")),
                      "\n    }\n  }\n");
    }
  }
  if (shape_.persistent) {
    for (auto& [v, a] : input_access_) {
      if (a.along_row || !a.across_rows || !plan_.needed[v]) continue;
      const char* ct = ComputeTypeName(graph_.value(v).dtype);
      absl::StrAppend(&c, "  ", ct, " cr_", a.ptr, " = ", ct, "(0);\n  if (", first_row,
                      " < rows) { rowbase(", first_row, "); cr_", a.ptr, " = Ty<", a.type_id,
                      ">::load(", a.ptr, " + rb_", a.ptr, "); }\n");
    }
  }
  if (cols) {
    std::string init;
    for (size_t ci = 0; ci < plan_.col_reds.size(); ++ci) {
      const OpKind cop = graph_.node(plan_.col_reds[ci]).op;
      absl::StrAppend(&init, "    for (i64 j = tx; j < rlen; j += ", shape_.threads_x, ") (",
                      ColumnPartialRow(ci), ")[j] = ", ReductionIdentity(cop, "float"), ";\n");
    }
    if (!init.empty() && !form_.specialized)
      absl::StrAppend(&c, "  if (!fits) {\n", init, "  }\n  __syncthreads();\n");
  }
}

void Generator::FillLaunch(GeneratedKernel& k) const {
  const bool coop = Cooperative();
  const bool cols = HasColumnReductions();
  const std::string rows = plan_.ProductExpr(plan_.i_axes);
  const std::string rlen = plan_.ProductExpr(plan_.r_axes);
  k.cooperative = coop;
  k.min_blocks = form_.min_blocks;
  k.dynamic_smem_bytes = dynamic_smem_bytes_;
  k.cluster_x = form_.cluster_x;
  k.block_x = shape_.threads_x;
  k.block_y = shape_.threads_y;
  k.rows_expr = rows;
  if (shape_.pointwise) {
    k.grid_x_cap = 1;
    k.grid_y_expr = absl::StrCat("min(", shape_.blocks_per_row, ", max(1, ceil_div(", rlen, ", ",
                                 shape_.threads_x * shape_.vector_width * shape_.unroll, ")))");
  } else {
    // An exact kernel has no row loop: a block for every row group.
    k.grid_x_cap = form_.exact_tiling ? int64_t{kMaxGridX} : shape_.row_blocks;
    // The heuristics asked for a grid that loops over the rows: more blocks
    // than fit at once would run as a second, partial wave.
    k.one_wave = shape_.persistent && !coop && !form_.exact_tiling &&
                 shape_.row_blocks < (params_.outer_size + shape_.threads_y - 1) / shape_.threads_y;
    k.grid_y_expr = std::to_string(shape_.blocks_per_row);
  }
  if (coop) {
    k.needs_workspace = true;
    std::string per = "0";
    if (shape_.row_split)
      per = absl::StrCat(2 * shape_.threads_y * shape_.blocks_per_row *
                         static_cast<int64_t>(MaxSlotsPerStage()) * 8);
    if (cols) {
      per = absl::StrCat(per, " + ",
                         shape_.threads_y * static_cast<int64_t>(plan_.col_reds.size()) * 4,
                         " * ceil_div(", rlen, ", 4) * 4");
    }
    k.ws_per_grid_x = per;
  }
}

}  // namespace codegen_internal
}  // namespace fusiond
