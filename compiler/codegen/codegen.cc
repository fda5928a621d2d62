// GenerateKernel: the kernel skeleton around the value emitter. Sections, in
// the order they appear in the generated source: parameters and sizes,
// per-tensor offset functions, column buffers, the row loop (row values,
// persistent loads, one block per stage, the final stage with stores), and
// the column epilogue.
#include "compiler/codegen/codegen.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/expr_emitter.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/codegen/prelude.h"
#include "compiler/codegen/value_emitter.h"

namespace fusiond {
namespace codegen_internal {

absl::StatusOr<GeneratedKernel> Generator::Run() {
  pointwise_ = hp_.kind == SchedulerKind::kPointwise;
  // HeuristicParams -> this generator's launch shape (see docs/codegen.md).
  V_ = std::max(1, hp_.vectorize);
  BX_ = std::max(32, hp_.block_x);
  BY_ = std::max(1, hp_.block_y);
  PB_ = std::max(1, hp_.persistent_batch);
  U_ = std::max(1, hp_.unroll);
  int64_t split = std::max<int64_t>(1, hp_.grid_y);
  row_blocks_ = std::max<int64_t>(1, hp_.grid_x);
  persistent_ = !pointwise_ && !hp_.multi_pass && !hp_.smem_buffer;
  lanes_ = LanesKernel(hp_);
  if (pointwise_) {
    split = std::max<int64_t>(1, hp_.grid_x * hp_.grid_y);
    row_blocks_ = 1;
  } else if (lanes_) {
    // Outer kinds with rows_per_block > 1: block_x threads run along each
    // of rows_per_block channels, whose lanes are adjacent in memory
    // (generator_lanes.cc); grid_x blocks share a channel group, grid_y
    // covers the groups.
    BX_ = std::max(1, hp_.block_x);
    BY_ = hp_.rows_per_block;
    split = std::max<int64_t>(1, hp_.grid_x);
    row_blocks_ = std::max<int64_t>(1, hp_.grid_y);
  } else if (hp_.kind == SchedulerKind::kOuterPersistent) {
    // Threads of a block all run along the channel's elements; grid_x
    // blocks share a channel, grid_y covers the channels.
    BX_ = std::max(32, std::min(512, hp_.block_x * std::max(1, hp_.block_y)));
    BX_ = (BX_ + 31) / 32 * 32;
    BY_ = 1;
    split = std::max<int64_t>(1, hp_.grid_x);
    row_blocks_ = std::max<int64_t>(1, hp_.grid_y);
  } else if (hp_.kind == SchedulerKind::kOuterReduction) {
    split = 1;
    row_blocks_ = std::max<int64_t>(1, hp_.grid_x * hp_.grid_y);
    persistent_ = !hp_.multi_pass;
  }
  if (lanes_) persistent_ = false;  // every pass reads its chunks from memory (L2)
  if ((lanes_ ? BY_ : BX_) % 32 != 0 || (V_ & (V_ - 1)) != 0 || V_ > 16 ||
      BX_ * BY_ > o_.target.max_threads_per_block) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen: bad launch parameters vectorize=", hp_.vectorize,
                     " block_x=", hp_.block_x, " block_y=", hp_.block_y));
  }
  if (persistent_ &&
      (hp_.kind == SchedulerKind::kOuterPersistent || hp_.kind == SchedulerKind::kOuterReduction)) {
    // Slots per thread for the sizes the heuristics saw.
    int64_t rlen = 1;
    for (int a : p_.r_axes) {
      rlen *= p_.ref[a].is_static() ? p_.ref[a].size : 0;
    }
    if (rlen == 0) {  // symbolic: the sizes the heuristics saw
      rlen = hp_.kind == SchedulerKind::kOuterPersistent
                 ? std::max<int64_t>(1, hp_.outer_size * hp_.inner_size) /
                       std::max<int64_t>(1, row_blocks_)
                 : hp_.inner_size;
    }
    const int64_t chunks = (rlen + V_ - 1) / V_;
    PB_ = static_cast<int>(std::max<int64_t>(1, (chunks + BX_ * split - 1) / (BX_ * split)));
    if (PB_ > 16) persistent_ = false;
  }
  split_ = !pointwise_ && split > 1;
  {
    // Loop iterations of a thread over a row of the size the heuristics saw
    // (the most chunks worth keeping).
    int64_t rlen = 1;
    for (int a : p_.r_axes) rlen *= p_.ref[a].is_static() ? p_.ref[a].size : 0;
    if (rlen == 0) rlen = std::max<int64_t>(1, hp_.inner_size);
    row_iters_ =
        std::max<int64_t>(1, ((rlen + V_ - 1) / V_ + split * BX_ * U_ - 1) / (split * BX_ * U_));
  }
  const bool cols = !p_.col_reds.empty();
  const bool coop = split_ || cols;
  // Inputs and outputs.
  std::string sig;
  GeneratedKernel k;
  k.name = o_.kernel_name;
  k.scheduler = KindName(hp_.kind);
  for (size_t i = 0; i < g_.inputs.size(); ++i) {
    const ValueId v = g_.inputs[i];
    input_index_[v] = static_cast<int>(i);
    const Value& val = g_.value(v);
    if (!sig.empty()) sig += ", ";
    if (val.is_tensor) {
      absl::StrAppend(&sig, "const void* __restrict__ in", i, "_");
      k.params.push_back({"input", static_cast<int>(i), ""});
      in_access_[v] = MakeAccess(v, absl::StrCat("in", i));
    } else {
      absl::StrAppend(&sig, "double sc", i);
      k.params.push_back({"scalar", static_cast<int>(i), ""});
    }
  }
  for (size_t i = 0; i < g_.outputs.size(); ++i) {
    absl::StrAppend(&sig, sig.empty() ? "" : ", ", "void* __restrict__ out", i, "_");
    k.params.push_back({"output", static_cast<int>(i), ""});
    out_access_.push_back(MakeAccess(g_.outputs[i], absl::StrCat("out", i)));
  }
  if (coop) {
    // Two workspaces: the barrier words (zeroed before the launch) and the
    // partial results (never read before this launch writes them).
    absl::StrAppend(&sig, ", unsigned char* __restrict__ ws, unsigned char* __restrict__ wsp");
    k.params.push_back({"workspace", 0, ""});
    k.params.push_back({"workspace", 1, ""});
  }
  int max_esize = 1;
  for (auto& [v, a] : in_access_)
    if (a.vec && p_.needed[v]) max_esize = std::max(max_esize, a.esize);
  for (auto& a : out_access_)
    if (a.vec) max_esize = std::max(max_esize, a.esize);
  V_ = std::min(V_, 16 / max_esize);
  if (PlanStaging()) persistent_ = true;
  if (absl::Status st = PlanCluster(); !st.ok()) return st;
  reread_ = hp_.reread_rows;
  if (reread_ && (!persistent_ || staged_)) {
    return absl::InvalidArgumentError(
        "codegen: reread_rows needs rows held in registers (a persistent kind, no smem_buffer, "
        "rows that fit)");
  }
  keep_ = hp_.multi_pass && p_.num_stages >= 1 && !persistent_ && !staged_ && cluster_ == 1 &&
          !lanes_ && hp_.smem_bytes > 0;
  {
    int streamed = 0;
    for (auto& [v, a] : in_access_) streamed += a.has_r && a.has_i && p_.needed[v];
    streaming_stores_ =
        !pointwise_ && streamed == 1 &&
        (hp_.kind == SchedulerKind::kInnerPersistent || hp_.kind == SchedulerKind::kInnerReduction);
  }
  for (SymbolId s : p_.symbol_order) {
    const std::string& name = p_.symbol_names.at(s);
    k.params.push_back({"size", 0, name});
    k.symbols.push_back({name, {input_index_.at(g_.symbols[s].input), g_.symbols[s].axis}});
  }
  for (const ReductionSlot& sl : p_.row_slots) {
    const DataType t = g_.value(g_.node(sl.node).outputs[0]).dtype;
    acc_type_.push_back(t == DataType::kDouble || IsIntegral(t) ? "double" : "float");
  }
  ExprOptions eo;
  eo.approx_transcendentals = true;
  for (ValueId o : g_.outputs) {
    const DataType t = g_.value(o).dtype;
    if (t == DataType::kFloat || t == DataType::kDouble) eo.approx_transcendentals = false;
  }
  em_ = std::make_unique<ValueEmitter>(p_, eo, input_index_);
  row_scope_ = Scope::Of(Scope::kRow, &row_pending_, "    ", &row_memo_);
  row_scope_.load = [&](ValueId v) {
    const Access& a = in_access_.at(v);
    if (persistent_ && a.has_i && !a.has_r) return absl::StrCat("cr_", a.ptr);
    return absl::StrCat("(active ? Ty<", a.dt, ">::load(", a.ptr, " + ",
                        a.has_i ? "rb_" + a.ptr : "0", ") : ", ComputeTypeName(g_.value(v).dtype),
                        "(0))");
  };

  // Column operands in shared memory: static, so within 48 KB with room to spare.
  int64_t col_smem = 0;
  for (auto& [v, a] : in_access_) {
    if (ColumnInSmem(a)) col_smem += int64_t{4} * PB_ * BX_ * ChunkWords(a);
  }
  if (col_smem > kMaxColumnSmemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "codegen: smem_columns needs ", col_smem,
        " bytes of shared memory for the column operands; at most ", kMaxColumnSmemBytes));
  }

  // ---- Kernel text.
  std::string c = DevicePrelude();
  if (cluster_ > 1) c += ClusterPrelude();
  const std::string dividers = PlanDividers();
  if (!dividers.empty()) c += DividerPrelude();  // the FzDivs follow rlen, before vec_ok
  if (float_cols_) c += FloatColumnPrelude();
  if (reread_) c += RereadPrelude();
  if (std::any_of(g_.values.begin(), g_.values.end(), [](const Value& v) {
        return v.dtype == DataType::kFloat8E4M3 || v.dtype == DataType::kFloat8E5M2;
      })) {
    c += Fp8Prelude();  // Ty<8>, Ty<9>
  }
  // A specialized kernel has no loops for rows that do not fit: the runtime
  // launches it only where the manifest's requirements hold. Elsewhere it
  // would write wrong values, never out of bounds (every access is still
  // bounded by rows and rlen). An early `if (!fits) return;` made layernorm
  // backward 2048x8192 30% slower on the H200 (53 against 41 us).
  specialized_ = persistent_ && PlanRequires(split * BX_ * PB_ * V_, k);
  // Exact kernels (exact_): no row loop nor guards, up to three chunks a
  // thread (softmax backward 8192x8192: 97.2 us against 103.4 with the loop,
  // torch.compile 96.7; at four chunks, 4096x16384, the loop's kernel won).
  exact_ = reread_ && specialized_ && tiled_exactly_ && !coop && PB_ <= 3;
  // The size parameters; literal ones (PlanRequires) stay in the signature,
  // renamed and unused, and the body declares them.
  for (SymbolId s : p_.symbol_order) {
    absl::StrAppend(&sig, ", i64 ", p_.symbol_names.at(s), literal_symbols_.count(s) ? "_arg" : "");
  }
  const int min_blocks = MinBlocksPerSm(coop);
  absl::StrAppend(&c, "\nextern \"C\" __global__ void __launch_bounds__(", BX_ * BY_, ", ",
                  min_blocks, ") ",
                  cluster_ > 1 ? absl::StrCat("__cluster_dims__(", cluster_, ", 1, 1) ") : "",
                  k.name, "(", sig, ") {\n");
  absl::StrAppend(&c, lanes_ ? LanesThreadIds()
                             : "  const int tx = threadIdx.x, ty = threadIdx.y;\n  (void)ty;\n");
  for (SymbolId s : literal_symbols_) {
    absl::StrAppend(&c, "  constexpr i64 ", p_.symbol_names.at(s), " = ", o_.symbol_sizes[s],
                    ";  // compiled for (requires)\n");
  }
  if (staged_ || cluster_ > 1)
    absl::StrAppend(&c, "  extern __shared__ __align__(16) unsigned char fz_smem[];\n");
  // Typed pointers: element arithmetic per dtype.
  auto typed = [&](const Access& a, bool in) {
    const char* t = a.esize == 1   ? "unsigned char"
                    : a.esize == 2 ? "unsigned short"
                    : a.esize == 4 ? "u32"
                                   : "u64";
    return absl::StrCat("  ", in ? "const " : "", t, "* __restrict__ ", a.ptr, " = (",
                        in ? "const " : "", t, "*)", a.ptr, "_;\n");
  };
  // Typed pointers: element arithmetic per dtype.
  std::string rename;
  for (auto& [v, a] : in_access_) rename += typed(a, true);
  for (auto& a : out_access_) rename += typed(a, false);
  absl::StrAppend(&c, rename);
  const std::string rows = p_.ProductExpr(p_.i_axes);
  const std::string rlen = p_.ProductExpr(p_.r_axes);
  absl::StrAppend(&c, "  const i64 rows = (i64)(", rows, ");\n  const i64 rlen = (i64)(", rlen,
                  ");\n");
  if (exact_) {  // one block along the row (no split)
    absl::StrAppend(&c, "  const i64 t = tx;\n  constexpr i64 T = ", BX_, ";\n", dividers);
  } else {
    absl::StrAppend(&c, "  const i64 t = (i64)blockIdx.y * ", BX_,
                    " + tx;\n  const i64 T = (i64)gridDim.y * ", BX_, ";\n", dividers);
  }
  // Vector accesses need the innermost row extent divisible by V and aligned pointers.
  std::string vec = absl::StrCat("(", p_.ExtentExpr(p_.ref[p_.r_axes.back()]), ") % ", V_, " == 0");
  for (auto& [v, a] : in_access_) {
    if (a.vec) absl::StrAppend(&vec, " && ((u64)", a.ptr, " % ", V_ * a.esize, ") == 0");
  }
  for (auto& a : out_access_) {
    if (a.vec && a.has_r) absl::StrAppend(&vec, " && ((u64)", a.ptr, " % ", V_ * a.esize, ") == 0");
  }
  if (!dividers_.empty()) absl::StrAppend(&vec, " && fz_q32");
  absl::StrAppend(&c, "  const bool vec_ok = ", vec, ";\n");
  // The row fits the persistent buffers: T * PB_ * V_ elements, with T =
  // split * BX_ (a persistent kernel's grid y is `split`), written as a
  // literal so that NVVM folds `fits` to the alignment test for static
  // definitions and drops their vector fallback loop: rmsnorm backward
  // thunder compiles 12-20% faster, 117 -> 114 registers. T itself stays
  // gridDim.y * BX_ in the index math (a literal there made kernels 1-5% slower).
  absl::StrAppend(
      &c, "  const bool fits = ",
      persistent_ ? absl::StrCat("vec_ok && rlen <= ", split * BX_ * PB_ * V_, "LL") : "false",
      ";\n  (void)fits;\n");
  if (lanes_ && !p_.row_slots.empty() && BX_ > 1) {
    auto scratch = LanesReductionScratch();
    if (!scratch.ok()) return scratch.status();
    absl::StrAppend(&c, *scratch);
  } else if (!p_.row_slots.empty() && BX_ > 32) {
    size_t per_stage = 1;
    for (int s = 0; s < p_.num_stages; ++s) {
      size_t n = 0;
      // A one-pass var also exchanges its count.
      for (const auto& sl : p_.row_slots)
        n += (sl.stage == s) + (sl.stage == s && sl.one_pass && !sl.second_moment);
      per_stage = std::max(per_stage, n);
    }
    // Slot-major: one slot's warp partials are contiguous (read four at a
    // time when they are floats).
    absl::StrAppend(&c, "  __shared__ __align__(16) ", RedType(), " fz_red[2][", BY_, "][",
                    per_stage, "][", BX_ / 32, "];\n  unsigned fz_rb = 0;\n");
  }
  // Workspaces: ws holds the barrier words (kBarrierBytes: grid-wide words,
  // then one per row group); wsp the row partials (double, two parities),
  // then the column partials (float).
  size_t max_slots = 1;
  for (int s = 0; s < p_.num_stages; ++s) {
    size_t n = 0;
    for (const auto& sl : p_.row_slots) n += sl.stage == s;
    max_slots = std::max(max_slots, n);
  }
  if (coop) {
    absl::StrAppend(
        &c, "  u32* bar = (u32*)ws;\n  (void)bar;\n",
        "  const size_t part_stride = (size_t)gridDim.x * ", BY_, " * gridDim.y * ", max_slots,
        ";\n", "  double* ws_row = (double*)wsp;\n  (void)ws_row; (void)part_stride;\n",
        "  float* wcol = (float*)(wsp + ", split_ ? "2 * part_stride * 8" : "0",
        ");\n  (void)wcol;\n", "  const i64 wstride = (rlen + 3) & ~(i64)3;\n  (void)wstride;\n",
        "  unsigned par = 0;\n  (void)par;\n");
  }
  // Row bases and offsets.
  for (auto& [v, a] : in_access_)
    if (a.has_i) absl::StrAppend(&c, "  i64 rb_", a.ptr, " = 0;\n");
  for (auto& a : out_access_)
    if (a.has_i) absl::StrAppend(&c, "  i64 rb_", a.ptr, " = 0;\n");
  absl::StrAppend(&c, "  i64 row = 0;\n  bool active = false;\n");
  for (auto& [v, a] : in_access_)
    if (a.has_r) absl::StrAppend(&c, OffsetLambda(a));
  for (auto& a : out_access_)
    if (a.has_r) absl::StrAppend(&c, OffsetLambda(a));
  // Column inputs stay in registers across rows, or in shared memory
  // (smem_columns: each thread's chunks at [k][tx], filled by the first row
  // of threads).
  if (persistent_) {
    if (staged_)
      absl::StrAppend(&c, "  if (fits) {\n", IssueStagedCopies("0", true, "    "), "  }\n");
    bool smem_cols = false;
    for (auto& [v, a] : in_access_) {
      if (!ColumnInSmem(a)) continue;
      const int w = ChunkWords(a);
      smem_cols = true;
      absl::StrAppend(&c, "  __shared__ __align__(16) u32 cs_", a.ptr, "[", PB_ * BX_ * w, "];\n",
                      "  if (fits && ty == 0) {\n#pragma unroll\n", "    for (int k = 0; k < ", PB_,
                      "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", V_, ";\n      if (",
                      InRow("jj"), ") Chunk<", V_ * a.esize, ">::ld(&cs_", a.ptr, "[(k * ", BX_,
                      " + tx) * ", w, "], ", a.ptr, " + ro_", a.ptr, "(jj));\n    }\n  }\n");
    }
    if (smem_cols && BY_ > 1) absl::StrAppend(&c, "  __syncthreads();\n");
    for (auto& [v, a] : in_access_) {
      if (!a.has_r || a.has_i || !a.vec || !p_.needed[v] || staged_ || ColumnInSmem(a)) continue;
      const int w = ChunkWords(a);
      absl::StrAppend(&c, "  u32 cb_", a.ptr, "[", PB_ * w, "];\n  if (fits) {\n#pragma unroll\n",
                      "    for (int k = 0; k < ", PB_,
                      "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", V_, ";\n      if (",
                      InRow("jj"), ") Chunk<", V_ * a.esize, ">::ld(&cb_", a.ptr, "[k * ", w, "], ",
                      a.ptr, " + ro_", a.ptr, "(jj));\n    }\n  }\n");
    }
    for (size_t ci = 0; ci < p_.col_reds.size(); ++ci) {
      absl::StrAppend(&c, "  float cacc", ci, "[", PB_ * V_,
                      "];\n#pragma unroll\n  for (int q = 0; q < ", PB_ * V_, "; ++q) cacc", ci,
                      "[q] = ", Identity(g_.node(p_.col_reds[ci]).op, "float"), ";\n");
    }
  }
  // Row bases of every tensor with row axes, for row r.
  {
    std::string rb = "  auto rowbase = [&](i64 r) {\n    i64 q = r;\n";
    for (int kx = static_cast<int>(p_.i_axes.size()) - 1; kx >= 0; --kx) {
      const int ax = p_.i_axes[kx];
      if (kx > 0) {
        absl::StrAppend(&rb, "    const i64 ic", ax, " = q % (i64)(", p_.ExtentExpr(p_.ref[ax]),
                        "); q /= (i64)(", p_.ExtentExpr(p_.ref[ax]), ");\n");
      } else {
        absl::StrAppend(&rb, "    const i64 ic", ax, " = q;\n");
      }
    }
    auto base = [&](const Access& a) {
      std::string e = "0";
      for (const auto& [ra, stride] : a.i_terms)
        absl::StrAppend(&e, " + ic", ra, " * (i64)(", stride, ")");
      return absl::StrCat("    rb_", a.ptr, " = ", e, ";\n");
    };
    for (auto& [v, a] : in_access_)
      if (a.has_i) rb += base(a);
    for (auto& a : out_access_)
      if (a.has_i) rb += base(a);
    absl::StrAppend(&rb, "  };\n");
    if (!p_.i_axes.empty()) c += rb;
  }
  const std::string first_row = absl::StrCat("(i64)blockIdx.x * ", BY_, " + ty");
  absl::StrAppend(&c, "  const i64 rstride = (i64)gridDim.x * ", BY_, ";\n");
  if (staged_) {
    // Fill the ring but its last stage: rows it = 0 .. stages_ - 2.
    absl::StrAppend(&c, "#pragma unroll\n  for (int s = 0; s < ", stages_ - 1, "; ++s) {\n",
                    "    const i64 r = ", first_row, " + (i64)s * rstride;\n",
                    "    if (fits && r < rows) {\n      rowbase(r);\n",
                    IssueStagedCopies("s", false, "      "), "    }\n    fz_cp_commit();\n  }\n");
  }
  if (persistent_ && !staged_) {
    for (auto& [v, a] : in_access_) {
      if (!a.has_r || !a.has_i || !a.vec || !p_.needed[v]) continue;
      const int w = ChunkWords(a);
      absl::StrAppend(&c, "  u32 pb_", a.ptr, "[", PB_ * w, "];\n");
      absl::StrAppend(&c, "  if (fits && ", first_row, " < rows) {\n    rowbase(", first_row,
                      ");\n#pragma unroll\n", "    for (int k = 0; k < ", PB_,
                      "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", V_, ";\n      if (",
                      InRow("jj"), ") ",
                      RowChunkLoad(a, absl::StrCat("&pb_", a.ptr, "[k * ", w, "]"),
                                   absl::StrCat(a.ptr, " + ro_", a.ptr, "(jj)")),
                      "\n    }\n  }\n");
    }
  }
  if (persistent_) {
    for (auto& [v, a] : in_access_) {
      if (a.has_r || !a.has_i || !p_.needed[v]) continue;
      const char* ct = ComputeTypeName(g_.value(v).dtype);
      absl::StrAppend(&c, "  ", ct, " cr_", a.ptr, " = ", ct, "(0);\n  if (", first_row,
                      " < rows) { rowbase(", first_row, "); cr_", a.ptr, " = Ty<", a.dt, ">::load(",
                      a.ptr, " + rb_", a.ptr, "); }\n");
    }
  }
  if (cols) {
    std::string init;
    for (size_t ci = 0; ci < p_.col_reds.size(); ++ci) {
      const OpKind cop = g_.node(p_.col_reds[ci]).op;
      absl::StrAppend(&init, "    for (i64 j = tx; j < rlen; j += ", BX_, ") (", WcolRow(ci),
                      ")[j] = ", Identity(cop, "float"), ";\n");
    }
    if (!init.empty() && !specialized_)
      absl::StrAppend(&c, "  if (!fits) {\n", init, "  }\n  __syncthreads();\n");
  }
  // ---- Row loop.
  if (absl::Status st = EmitRowLoop(c, coop, cols); !st.ok()) return st;
  // ---- Column epilogue.
  if (cols) {
    if (absl::Status st = EmitColumnEpilogue(c); !st.ok()) return st;
  }
  absl::StrAppend(&c, "}\n");
  k.source = std::move(c);
  k.cooperative = coop;
  k.min_blocks = min_blocks;
  k.dynamic_smem_bytes = smem_bytes_;
  k.cluster_x = cluster_;
  k.block_x = BX_;
  k.block_y = BY_;
  k.rows_expr = rows;
  if (pointwise_) {
    k.grid_x_cap = 1;
    k.grid_y_expr =
        absl::StrCat("min(", split, ", max(1, ceil_div(", rlen, ", ", BX_ * V_ * U_, ")))");
  } else {
    // An exact kernel has no row loop: a block for every row group.
    k.grid_x_cap = exact_ ? int64_t{kMaxGridX} : row_blocks_;
    // The heuristics asked for a grid that loops over the rows: more blocks
    // than fit at once would run as a second, partial wave.
    k.one_wave = persistent_ && !coop && !exact_ && row_blocks_ < (hp_.outer_size + BY_ - 1) / BY_;
    k.grid_y_expr = std::to_string(split);
  }
  if (coop) {
    k.needs_workspace = true;
    std::string per = "0";
    if (split_) per = absl::StrCat(2 * BY_ * split * static_cast<int64_t>(max_slots) * 8);
    if (cols) {
      per = absl::StrCat(per, " + ", BY_ * static_cast<int64_t>(p_.col_reds.size()) * 4,
                         " * ceil_div(", rlen, ", 4) * 4");
    }
    k.ws_per_grid_x = per;
  }
  return k;
}

// Registers per thread: the row buffers hold u32 words of the inputs'
// storage type (twice when the next row is prefetched into a second buffer),
// the column buffers once more, plus about 32 for indices, reductions and
// temporaries. An inner persistent kernel of <= 256 threads asks ptxas for
// as many blocks per SM (up to four) as its estimate fits; with (T, 1) ptxas
// takes as many registers as it likes (layernorm forward 2048x8192: two
// blocks a SM, 36.9 -> 33.9 us). Not for 512 threads (softmax backward
// capped at 64 registers was slower) nor for cooperative kernels, whose grid
// the heuristics size for the blocks they expect to be resident.
int Generator::MinBlocksPerSm(bool coop) const {
  if (lanes_) return LanesMinBlocks();
  int min_blocks = 1;
  const int regs_per_sm = o_.target.registers_per_sm;
  const int max_regs = o_.target.max_registers_per_thread;
  if (persistent_ && !coop && hp_.kind == SchedulerKind::kInnerPersistent) {
    const int estimate =
        32 + PersistentColWords() + PersistentRowWords() * (PrefetchRows() ? 2 : 1);
    const int threads = BX_ * BY_;
    // The estimate runs low (rmsnorm forward 256x4: 80 against 102 used), so
    // more than two blocks for 128 threads, where four still leave ptxas
    // 128 registers, and for 256 threads only without a prefetch buffer and
    // with kRegisterMargin to spare (softmax forward 4096x16384 at 256 x 8:
    // three blocks, 80 registers, 71.0 us against 74.7 for 128 x 16 at four).
    // Two or more columns in shared memory (layernorm forward's weight and
    // bias) leave the rows most of the registers: six blocks of 128 threads
    // (layernorm forward 16384x4096: 77.4 -> 75.4 us; with the weight alone,
    // rmsnorm forward, six were not faster).
    const int most = threads <= 128 ? (ColumnsInSmem() >= 2 ? 6 : 4) : 2;
    for (int n = std::min(most, o_.max_min_blocks); n >= 2 && min_blocks == 1; --n) {
      if (threads <= 256 && estimate <= std::min(max_regs, regs_per_sm / (n * threads)))
        min_blocks = n;
    }
    // Rows re-read for the output pass (reread_rows) at 512 threads: two
    // blocks where the estimate allows (softmax backward 4096x16384, 63
    // registers: 96.9 us against 107.1 at one block, ptxas then taking 71).
    if (reread_ && threads == 512 && o_.max_min_blocks >= 2 &&
        estimate <= regs_per_sm / (2 * threads)) {
      min_blocks = 2;
    }
    // Exact kernels of 1024 threads: two blocks (32 registers; softmax
    // backward 4096x16384 at 1024 x 2 took 32 with one asked). The estimate
    // runs high without a row loop; CompileSegment asks for one if ptxas
    // spills.
    if (exact_ && threads == 1024 && o_.max_min_blocks >= 2) min_blocks = 2;
    if (threads == 256 && min_blocks == 2 && !PrefetchRows()) {
      for (int n = std::min(4, o_.max_min_blocks); n > 2 && min_blocks == 2; --n) {
        if (estimate + kRegisterMargin <= regs_per_sm / (n * threads)) min_blocks = n;
      }
    }
  } else if (coop && split_ &&
             (hp_.kind == SchedulerKind::kInnerOuterPersistent ||
              hp_.kind == SchedulerKind::kOuterPersistent)) {
    // Rows (channels) split over blocks: the heuristics sized grid_x x grid_y
    // for the blocks per SM they expect resident (SplitWideRows, the outer
    // persistent multi-pass rounds); ask ptxas for that (at most two for
    // inner-outer rows, four for outer persistent blocks of <= 128 threads:
    // the same 128 registers a thread as two of 256).
    const int64_t planned = std::max<int64_t>(1, hp_.grid_x) * std::max<int64_t>(1, hp_.grid_y);
    const int most = hp_.kind == SchedulerKind::kOuterPersistent && BX_ * BY_ <= 128 ? 4 : 2;
    min_blocks = static_cast<int>(
        std::clamp<int64_t>((planned + o_.target.sm_count - 1) / o_.target.sm_count, 1,
                            std::min(most, o_.max_min_blocks)));
  }
  return min_blocks;
}

std::string Generator::WcolRow(size_t ci) const {
  return absl::StrCat("wcol + ((i64)(blockIdx.x * ", BY_, " + ty) * ", p_.col_reds.size(), " + ",
                      ci, ") * wstride");
}

}  // namespace codegen_internal

absl::StatusOr<GeneratedKernel> GenerateKernel(const Graph& g, const HeuristicParams& params,
                                               const CodegenOptions& options) {
  // var/var_mean in one stage where it saves a pass over memory: in kernels
  // that re-read the row (multi_pass; layernorm forward 128x131072 36.4 ->
  // 33.4 us on the H200). With the row in registers the merge's latency per
  // row cost more than the block reduction it saves (2048x8192 22.0 -> 24.0
  // us in steady state; 16384x4096 equal), so persistent kernels keep two
  // stages. Not where blocks share a row (the cross-block combine through
  // the workspace sums plain partials); the same split as Generator::Run's.
  // Lanes kernels (generator_lanes.cc) reduce their channels as rows, column
  // sums included.
  const bool lanes = codegen_internal::LanesKernel(params);
  const bool outer = params.kind == SchedulerKind::kOuterPersistent || lanes;
  const bool row_split = outer ? params.grid_x > 1
                               : params.kind != SchedulerKind::kPointwise &&
                                     params.kind != SchedulerKind::kOuterReduction &&
                                     params.grid_y > 1;
  auto plan = PlanKernel(g, params.kind == SchedulerKind::kPointwise,
                         params.multi_pass && !row_split, lanes);
  if (!plan.ok()) return plan.status();
  codegen_internal::Generator gen(*plan, params, options);
  return gen.Run();
}

std::vector<std::string> LaunchGrid(const GeneratedKernel& k, int registers, int static_smem_bytes,
                                    const Target& target) {
  int64_t cap = k.grid_x_cap;
  if (k.cooperative || (k.one_wave && registers > 0)) {
    const int threads = k.block_x * k.block_y;
    int per_sm = target.max_threads_per_sm / threads;
    if (registers > 0) {
      const int regs_per_block = ((registers * 32 + 255) / 256 * 256) * (threads / 32);
      per_sm = std::min(per_sm, target.registers_per_sm / std::max(1, regs_per_block));
    } else {
      per_sm = 1;
    }
    // Shared memory per block: static + dynamic + the 1 KiB the driver reserves.
    const int64_t smem = static_smem_bytes + k.dynamic_smem_bytes;
    if (smem > 0) per_sm = std::min<int64_t>(per_sm, target.smem_per_sm / (smem + 1024));
    per_sm = std::max(1, std::min(per_sm, target.max_blocks_per_sm));
    int64_t y = 1;
    if (k.grid_y_expr.find_first_not_of("0123456789") == std::string::npos)
      y = std::stoll(k.grid_y_expr);
    cap = std::min<int64_t>(cap, std::max<int64_t>(1, per_sm * target.sm_count / y));
  }
  std::string gx =
      absl::StrCat("min(", cap, ", max(1, ceil_div(", k.rows_expr, ", ", k.block_y, ")))");
  // A grid that loops over the rows: as few blocks as give the same rounds,
  // so every block takes the same number of row groups (2048 rows on 264
  // blocks: 256 blocks of 8 rows, not 200 of 8 and 64 of 7). Rmsnorm
  // forward 2048x8192 bf16 24.1 -> 23.1 us, layernorm forward 16384x4096
  // 78.8 -> 77.2 on the H200.
  const bool loops = k.one_wave || (k.cooperative && k.scheduler == "inner_outer_persistent");
  if (loops && k.rows_expr != "1") {
    const std::string groups = absl::StrCat("max(1, ceil_div(", k.rows_expr, ", ", k.block_y, "))");
    gx = absl::StrCat("ceil_div(", groups, ", ceil_div(", groups, ", ", cap, "))");
  }
  if (k.rows_expr == "1") gx = "1";
  if (k.cluster_x > 1) {  // whole clusters, still one wave
    const int64_t whole = std::max<int64_t>(k.cluster_x, cap / k.cluster_x * k.cluster_x);
    gx =
        absl::StrCat("min(", whole, ", ceil_div(", gx, ", ", k.cluster_x, ") * ", k.cluster_x, ")");
  }
  return {gx, k.grid_y_expr, "1"};
}

int EpilogueLanes(int64_t columns, int64_t partials, int64_t blocks, int threads) {
  int best = 16;
  int64_t best_trips = -1;
  for (int lanes = 16; lanes >= 1; lanes /= 2) {
    const int64_t tiles = (std::max<int64_t>(1, columns) + 4 * lanes - 1) / (4 * lanes);
    const int64_t loads = int64_t{kEpilogueLoads} * std::max(1, threads / lanes);
    const int64_t trips = (tiles + blocks - 1) / std::max<int64_t>(1, blocks) *
                          ((std::max<int64_t>(1, partials) + loads - 1) / loads);
    if (best_trips < 0 || trips < best_trips) {
      best = lanes;
      best_trips = trips;
    }
  }
  return best;
}

std::string WorkspaceBytes(const GeneratedKernel& k, const std::string& grid_x) {
  if (!k.needs_workspace) return "";
  return absl::StrCat("(", grid_x, ") * (", k.ws_per_grid_x, ")");
}

}  // namespace fusiond
