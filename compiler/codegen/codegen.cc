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
#include "compiler/codegen/kernel_plan.h"
#include "compiler/codegen/prelude.h"
#include "compiler/codegen/value_emitter.h"

namespace fusiond {
namespace {

// How a kernel reads or writes one tensor.
struct Access {
  ValueId v = kNone;
  std::string ptr;  // "in0", "out1"
  int dt = 6;
  int esize = 4;
  bool has_r = false, has_i = false;
  bool vec = false;     // its innermost axis is the row's innermost axis
  bool fast_r = false;  // row-domain offset is the linear element index
  std::vector<std::pair<int, std::string>> r_terms, i_terms;  // (ref axis, stride)
};

const char* OpId(OpKind op) {
  switch (op) {
    case OpKind::kMax: return "1";
    case OpKind::kMin: return "2";
    case OpKind::kProd: return "3";
    default: return "0";
  }
}

std::string Identity(OpKind op, const char* t) {
  const bool f = std::string(t) == "float";
  switch (op) {
    case OpKind::kMax: return f ? "(-__int_as_float(0x7f800000))" : "(-__longlong_as_double(0x7ff0000000000000LL))";
    case OpKind::kMin: return f ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
    case OpKind::kProd: return "1";
    default: return "0";
  }
}

// The scheduler's name as docs/manifest.md spells it.
const char* KindName(SchedulerKind k) {
  switch (k) {
    case SchedulerKind::kPointwise: return "pointwise";
    case SchedulerKind::kInnerReduction: return "inner_reduction";
    case SchedulerKind::kOuterReduction: return "outer_reduction";
    case SchedulerKind::kInnerPersistent: return "inner_persistent";
    case SchedulerKind::kOuterPersistent: return "outer_persistent";
    case SchedulerKind::kInnerOuterPersistent: return "inner_outer_persistent";
  }
  return "unknown";
}

class Generator {
 public:
  Generator(const KernelPlan& plan, const HeuristicParams& hp, const CodegenOptions& o)
      : p_(plan), g_(*plan.graph), hp_(hp), o_(o) {}

  absl::StatusOr<GeneratedKernel> Run();

 private:
  Access MakeAccess(ValueId v, std::string ptr) const;
  std::string OffsetLambda(const Access& a) const;
  absl::Status EmitStage(int stage, std::string& code);
  absl::Status EmitFinal(std::string& code);
  std::string LoopOver(const std::string& body, const std::vector<const Access*>& ins,
                       const std::vector<int>& cols, bool final);
  std::string BlockReduce(const std::vector<int>& slots, const std::string& ind);
  int FirstMoment(int slot) const {
    for (size_t i = 0; i < p_.row_slots.size(); ++i) {
      if (p_.row_slots[i].node == p_.row_slots[slot].node && !p_.row_slots[i].second_moment) return i;
    }
    return slot;
  }

  const KernelPlan& p_;
  const Graph& g_;
  const HeuristicParams& hp_;
  const CodegenOptions& o_;
  int V_ = 1, BX_ = 128, BY_ = 1, PB_ = 1, U_ = 1;
  bool pointwise_ = false, persistent_ = false, split_ = false;
  int64_t row_blocks_ = 1;
  std::string row_swap_;
  std::map<ValueId, int> input_index_;
  std::map<ValueId, Access> in_access_;  // tensor inputs with a row-domain part
  std::vector<Access> out_access_;       // per graph output
  std::vector<std::string> acc_type_;    // per row slot
  std::map<ValueId, std::string> row_memo_;
  std::string row_pending_;
  Scope row_scope_;
  std::unique_ptr<ValueEmitter> em_;
};

Access Generator::MakeAccess(ValueId v, std::string ptr) const {
  Access a;
  a.v = v;
  a.ptr = std::move(ptr);
  const Value& val = g_.value(v);
  a.dt = static_cast<int>(val.dtype);
  a.esize = DataTypeSize(val.dtype);
  const auto& m = p_.axis_map[v];
  std::vector<int> own;  // own non-1 axes (indices)
  for (int i = 0; i < val.rank(); ++i) if (m[i] >= 0) own.push_back(i);
  for (size_t k = 0; k < own.size(); ++k) {
    std::vector<std::string> f;
    int64_t st = 1;
    for (size_t q = k + 1; q < own.size(); ++q) {
      Extent e = g_.Canonical(val.shape[own[q]]);
      if (e.is_static()) st *= e.size; else f.push_back(p_.ExtentExpr(e));
    }
    if (st != 1 || f.empty()) f.push_back(std::to_string(st));
    const int ra = m[own[k]];
    auto& terms = (p_.r_mask >> ra & 1) ? a.r_terms : a.i_terms;
    terms.push_back({ra, absl::StrJoin(f, " * ")});
  }
  a.has_r = !a.r_terms.empty();
  a.has_i = !a.i_terms.empty();
  a.vec = a.has_r && !own.empty() && m[own.back()] == p_.r_axes.back();
  // Fast path: the trailing own axes are exactly the row axes, in order.
  if (a.r_terms.size() == p_.r_axes.size() && own.size() >= p_.r_axes.size()) {
    bool ok = true;
    for (size_t k = 0; k < p_.r_axes.size(); ++k) {
      ok &= m[own[own.size() - p_.r_axes.size() + k]] == p_.r_axes[k];
    }
    a.fast_r = ok;
  }
  return a;
}

std::string Generator::OffsetLambda(const Access& a) const {
  std::string s = absl::StrCat("  auto ro_", a.ptr, " = [&](i64 j) -> i64 { ");
  const std::string base = a.has_i ? absl::StrCat("rb_", a.ptr) : "0";
  if (a.fast_r) return absl::StrCat(s, "return ", base, " + j; };\n");
  // The decomposition of j over the row axes, in 32-bit arithmetic when the
  // iteration space is small enough (integer division is costly).
  auto decompose = [&](const char* t) {
    std::string d = absl::StrCat(t, " q = (", t, ")j; ", t, " o = 0;");
    for (int k = static_cast<int>(p_.r_axes.size()) - 1; k >= 0; --k) {
      const int ax = p_.r_axes[k];
      const std::string ext = absl::StrCat("(", t, ")(", p_.ExtentExpr(p_.ref[ax]), ")");
      std::string coord = k == 0 ? "q" : absl::StrCat("(q % ", ext, ")");
      for (const auto& [ra, stride] : a.r_terms) {
        if (ra == ax) absl::StrAppend(&d, " o += ", coord, " * (", t, ")(", stride, ");");
      }
      if (k > 0) absl::StrAppend(&d, " q /= ", ext, ";");
    }
    return d;
  };
  absl::StrAppend(&s, "if (small) { ", decompose("u32"), " return ", base, " + (i64)o; } ",
                  decompose("i64"), " return ", base, " + o; };\n");
  return s;
}

// Calls `body` for every chunk this thread owns in the current row: from the
// persistent buffers, from memory with vector loads, or element by element.
std::string Generator::LoopOver(const std::string& body, const std::vector<const Access*>& ins,
                                const std::vector<int>& cols, bool final) {
  std::string s;
  if (persistent_) {
    absl::StrAppend(&s, "    if (fits) {\n#pragma unroll\n      for (int k = 0; k < ", PB_,
                    "; ++k) {\n        const i64 jj = (t + (i64)k * T) * ", V_,
                    ";\n        if (active && jj < rlen) ", body, "(VW<", V_, ">(), jj");
    for (const Access* x : ins) {
      absl::StrAppend(&s, ", &", x->has_i ? "pb_" : "cb_", x->ptr, "[k * ",
                      (V_ * x->esize + 3) / 4, "]");
    }
    for (int c : cols) absl::StrAppend(&s, ", &cacc", c, "[k * ", V_, "]");
    absl::StrAppend(&s, ");\n      }\n    } else ");
  }
  // Vector path from memory, U chunks at a time.
  absl::StrAppend(&s, "    if (vec_ok) {\n      for (i64 c0 = t; active && c0 * ", V_,
                  " < rlen; c0 += (i64)T * ", U_, ") {\n");
  for (const Access* x : ins) {
    absl::StrAppend(&s, "        u32 w_", x->ptr, "[", U_, "][", (V_ * x->esize + 3) / 4, "];\n");
  }
  absl::StrAppend(&s, "#pragma unroll\n        for (int u = 0; u < ", U_,
                  "; ++u) {\n          const i64 jj = (c0 + (i64)u * T) * ", V_,
                  ";\n          if (jj < rlen) {\n");
  for (const Access* x : ins) {
    absl::StrAppend(&s, "            Chunk<", V_ * x->esize, ">::ld(w_", x->ptr, "[u], ", x->ptr,
                    " + ro_", x->ptr, "(jj));\n");
  }
  absl::StrAppend(&s, "          }\n        }\n#pragma unroll\n        for (int u = 0; u < ", U_,
                  "; ++u) {\n          const i64 jj = (c0 + (i64)u * T) * ", V_,
                  ";\n          if (jj < rlen) ", body, "(VW<", V_, ">(), jj");
  for (const Access* x : ins) absl::StrAppend(&s, ", w_", x->ptr, "[u]");
  for (int c : cols) {
    absl::StrAppend(&s, ", wcol + ((i64)(blockIdx.x * ", BY_, " + ty) * ", p_.col_reds.size(),
                    " + ", c, ") * rlen + jj");
  }
  absl::StrAppend(&s, ");\n        }\n      }\n    } else {\n");
  // Element by element.
  absl::StrAppend(&s, "      for (i64 jj = t; active && jj < rlen; jj += T) {\n");
  for (const Access* x : ins) {
    absl::StrAppend(&s, "        u32 w_", x->ptr, "[", (x->esize + 3) / 4, "];\n        Chunk<",
                    x->esize, ">::ld(w_", x->ptr, ", ", x->ptr, " + ro_", x->ptr, "(jj));\n");
  }
  absl::StrAppend(&s, "        ", body, "(VW<1>(), jj");
  for (const Access* x : ins) absl::StrAppend(&s, ", w_", x->ptr);
  for (int c : cols) {
    absl::StrAppend(&s, ", wcol + ((i64)(blockIdx.x * ", BY_, " + ty) * ", p_.col_reds.size(),
                    " + ", c, ") * rlen + jj");
  }
  absl::StrAppend(&s, ");\n      }\n    }\n");
  (void)final;
  return s;
}

std::string Generator::BlockReduce(const std::vector<int>& slots, const std::string& ind) {
  std::string s;
  for (size_t q = 0; q < slots.size(); ++q) {
    const ReductionSlot& sl = p_.row_slots[slots[q]];
    const char* op = sl.second_moment ? "0" : OpId(g_.node(sl.node).op);
    absl::StrAppend(&s, ind, "acc", slots[q], " = fz_warp_reduce<", op, ">(acc", slots[q], ");\n");
  }
  if (BX_ > 32) {
    absl::StrAppend(&s, ind, "if ((tx & 31) == 0) {");
    for (size_t q = 0; q < slots.size(); ++q) {
      absl::StrAppend(&s, " fz_red[ty][tx >> 5][", q, "] = (double)acc", slots[q], ";");
    }
    absl::StrAppend(&s, " }\n", ind, "__syncthreads();\n");
    for (size_t q = 0; q < slots.size(); ++q) {
      const ReductionSlot& sl = p_.row_slots[slots[q]];
      const char* op = sl.second_moment ? "0" : OpId(g_.node(sl.node).op);
      const std::string& t = acc_type_[slots[q]];
      absl::StrAppend(&s, ind, "acc", slots[q], " = (", t, ")fz_red[ty][0][", q, "];\n", ind,
                      "for (int w = 1; w < ", BX_ / 32, "; ++w) acc", slots[q], " = fz_comb<", op,
                      ", ", t, ">(acc", slots[q], ", (", t, ")fz_red[ty][w][", q, "]);\n");
    }
    absl::StrAppend(&s, ind, "__syncthreads();\n");
  }
  return s;
}

absl::Status Generator::EmitStage(int stage, std::string& code) {
  std::vector<int> slots;
  for (size_t i = 0; i < p_.row_slots.size(); ++i) {
    if (p_.row_slots[i].stage == stage) slots.push_back(static_cast<int>(i));
  }
  std::string body, pending;
  std::map<ValueId, std::string> memo;
  std::set<ValueId> used;
  Scope es;
  es.kind = Scope::kElem;
  es.out = &body;
  es.indent = "        ";
  es.memo = &memo;
  es.row = &row_scope_;
  es.load = [&](ValueId v) {
    const Access& a = in_access_.at(v);
    if (a.vec) { used.insert(v); return absl::StrCat("Ty<", a.dt, ">::get(w_", a.ptr, ", l)"); }
    return absl::StrCat("Ty<", a.dt, ">::load(", a.ptr, " + ro_", a.ptr, "(j + l))");
  };
  std::string accum;
  for (int i : slots) {
    const ReductionSlot& sl = p_.row_slots[i];
    const Node& n = g_.node(sl.node);
    auto e = em_->Get(n.inputs[0], es);
    if (!e.ok()) return e.status();
    const std::string& t = acc_type_[i];
    if (sl.second_moment) {
      absl::StrAppend(&accum, "        { const ", t, " d = (", t, ")", *e, " - rmean", FirstMoment(i),
                      "; acc", i, " += d * d; }\n");
    } else {
      absl::StrAppend(&accum, "        acc", i, " = fz_comb<", OpId(n.op), ", ", t, ">(acc", i,
                      ", (", t, ")", *e, ");\n");
    }
  }
  std::string fn = absl::StrCat("body", stage);
  std::vector<const Access*> ins;
  std::string params;
  for (ValueId v : used) {
    ins.push_back(&in_access_.at(v));
    absl::StrAppend(&params, ", const u32* w_", in_access_.at(v).ptr);
  }
  // Row values the stage needs were appended to the row scope while emitting.
  absl::StrAppend(&code, row_pending_);
  row_pending_.clear();
  for (int i : slots) {
    const ReductionSlot& sl = p_.row_slots[i];
    absl::StrAppend(&code, "    ", acc_type_[i], " acc", i, " = ",
                    sl.second_moment ? "0" : Identity(g_.node(sl.node).op, acc_type_[i].c_str()),
                    ";\n");
  }
  absl::StrAppend(&code, "    auto ", fn, " = [&](auto vw, i64 j", params,
                  ") {\n      constexpr int VV = decltype(vw)::value;\n#pragma unroll\n"
                  "      for (int l = 0; l < VV; ++l) {\n",
                  body, accum, "      }\n    };\n");
  absl::StrAppend(&code, LoopOver(fn, ins, {}, false));
  absl::StrAppend(&code, BlockReduce(slots, "    "));
  if (split_) {
    // Blocks sharing a row combine their partials through the workspace.
    absl::StrAppend(&code, "    {\n      double* part = ws_row + (size_t)(par & 1) * part_stride;\n",
                    "      const size_t base = ((size_t)(blockIdx.x * ", BY_, " + ty) * gridDim.y) * ",
                    std::max<size_t>(1, slots.size()), ";\n");
    absl::StrAppend(&code, "      if (tx == 0) {");
    for (size_t q = 0; q < slots.size(); ++q) {
      absl::StrAppend(&code, " part[base + (size_t)blockIdx.y * ", slots.size(), " + ", q,
                      "] = (double)acc", slots[q], ";");
    }
    absl::StrAppend(&code, " }\n      fz_grid_sync(bar);\n      par++;\n");
    for (size_t q = 0; q < slots.size(); ++q) {
      const ReductionSlot& sl = p_.row_slots[slots[q]];
      const char* op = sl.second_moment ? "0" : OpId(g_.node(sl.node).op);
      const std::string& t = acc_type_[slots[q]];
      absl::StrAppend(&code, "      acc", slots[q], " = ",
                      sl.second_moment ? "0" : Identity(g_.node(sl.node).op, t.c_str()),
                      ";\n      for (int b = tx; b < (int)gridDim.y; b += ", BX_, ") acc", slots[q],
                      " = fz_comb<", op, ", ", t, ">(acc", slots[q], ", (", t, ")part[base + (size_t)b * ",
                      slots.size(), " + ", q, "]);\n");
    }
    absl::StrAppend(&code, BlockReduce(slots, "      "), "    }\n");
  }
  // Results as row values.
  for (int i : slots) {
    const ReductionSlot& sl = p_.row_slots[i];
    const Node& n = g_.node(sl.node);
    const bool var = n.op == OpKind::kVar || n.op == OpKind::kVarMean;
    const std::string& t = acc_type_[i];
    if (var && !sl.second_moment) {
      absl::StrAppend(&code, "    const ", t, " rmean", i, " = acc", i, " / (", t, ")rlen;\n");
      if (n.op == OpKind::kVarMean) {
        ValueId mean = n.outputs[1];
        absl::StrAppend(&code, "    const ", ComputeTypeName(g_.value(mean).dtype), " rv", mean,
                        " = ", RoundTo(g_.value(mean).dtype, absl::StrCat("rmean", i)), ";\n");
        row_memo_[mean] = absl::StrCat("rv", mean);
      }
      continue;
    }
    ValueId out = n.outputs[0];
    std::string val = absl::StrCat("acc", i);
    if (var) {
      val = absl::StrCat("(acc", i, " / (", t, ")(rlen - ", n.attrs.correction, "))");
    }
    absl::StrAppend(&code, "    const ", ComputeTypeName(g_.value(out).dtype), " rv", out, " = ",
                    RoundTo(g_.value(out).dtype, absl::StrCat("(", ComputeTypeName(g_.value(out).dtype), ")", val)),
                    ";\n");
    row_memo_[out] = absl::StrCat("rv", out);
  }
  return absl::OkStatus();
}

absl::Status Generator::EmitFinal(std::string& code) {
  std::string body;
  std::map<ValueId, std::string> memo;
  std::set<ValueId> used;
  Scope es;
  es.kind = Scope::kElem;
  es.out = &body;
  es.indent = "        ";
  es.memo = &memo;
  es.row = &row_scope_;
  es.load = [&](ValueId v) {
    const Access& a = in_access_.at(v);
    if (a.vec) { used.insert(v); return absl::StrCat("Ty<", a.dt, ">::get(w_", a.ptr, ", l)"); }
    return absl::StrCat("Ty<", a.dt, ">::load(", a.ptr, " + ro_", a.ptr, "(j + l))");
  };
  std::string pre, post, rowstores;
  for (size_t k = 0; k < out_access_.size(); ++k) {
    const Access& a = out_access_[k];
    if (p_.domain[a.v] == Domain::kCol) continue;
    if (a.has_r) {
      // A cast to the stored 16-bit type needs no rounding of its own: the
      // store rounds (to nearest even) exactly as the cast would.
      ValueId src = a.v;
      const Node* dn = g_.def(a.v);
      if (a.vec && dn != nullptr && dn->op == OpKind::kCast &&
          (a.dt == static_cast<int>(DataType::kBFloat16) || a.dt == static_cast<int>(DataType::kHalf)) &&
          g_.value(dn->inputs[0]).dtype == DataType::kFloat && p_.domain[dn->inputs[0]] == Domain::kElem) {
        src = dn->inputs[0];
      }
      auto e = em_->Get(src, es);
      if (!e.ok()) return e.status();
      // Outputs without row axes (column-only) are written by the first row.
      const std::string guard = a.has_i || p_.i_axes.empty() ? "" : "if (row == 0) ";
      if (a.vec) {
        absl::StrAppend(&pre, "      u32 wo", k, "[(VV * ", a.esize, " + 3) / 4] = {};\n");
        absl::StrAppend(&body, "        Ty<", a.dt, ">::put(wo", k, ", l, ", *e, ");\n");
        absl::StrAppend(&post, "      ", guard, "Chunk<VV * ", a.esize, ">::st(", a.ptr, " + ro_",
                        a.ptr, "(j), wo", k, ");\n");
      } else {
        absl::StrAppend(&body, "        ", guard, "Ty<", a.dt, ">::store(", a.ptr, " + ro_", a.ptr,
                        "(j + l), ", *e, ");\n");
      }
    } else {
      auto e = em_->Get(a.v, row_scope_);
      if (!e.ok()) return e.status();
      std::string off = "0";
      if (a.has_i) off = absl::StrCat("rb_", a.ptr);
      absl::StrAppend(&rowstores, "    if (active && tx == 0 && blockIdx.y == 0) Ty<", a.dt,
                      ">::store(", a.ptr, " + ", off, ", ", *e, ");\n");
    }
  }
  std::vector<int> cols;
  for (size_t c = 0; c < p_.col_reds.size(); ++c) {
    const Node& n = g_.node(p_.col_reds[c]);
    auto e = em_->Get(n.inputs[0], es);
    if (!e.ok()) return e.status();
    absl::StrAppend(&body, "        cp", c, "[l] = fz_comb<", OpId(n.op), ", float>(cp", c, "[l], (float)", *e, ");\n");
    cols.push_back(static_cast<int>(c));
  }
  absl::StrAppend(&code, row_pending_);
  row_pending_.clear();
  std::vector<const Access*> ins;
  std::string params;
  for (ValueId v : used) {
    ins.push_back(&in_access_.at(v));
    absl::StrAppend(&params, ", const u32* w_", in_access_.at(v).ptr);
  }
  for (int c : cols) absl::StrAppend(&params, ", float* cp", c);
  absl::StrAppend(&code, "    auto fin = [&](auto vw, i64 j", params,
                  ") {\n      constexpr int VV = decltype(vw)::value;\n", pre,
                  "#pragma unroll\n      for (int l = 0; l < VV; ++l) {\n", body, "      }\n", post,
                  "    };\n");
  absl::StrAppend(&code, LoopOver("fin", ins, cols, true));
  absl::StrAppend(&code, rowstores);
  return absl::OkStatus();
}

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
  if (pointwise_) {
    split = std::max<int64_t>(1, hp_.grid_x * hp_.grid_y);
    row_blocks_ = 1;
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
  if (BX_ % 32 != 0 || (V_ & (V_ - 1)) != 0 || V_ > 16 || BX_ * BY_ > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("codegen: bad launch parameters vectorize=", hp_.vectorize,
                                                " block_x=", hp_.block_x, " block_y=", hp_.block_y));
  }
  if (persistent_ && (hp_.kind == SchedulerKind::kOuterPersistent ||
                      hp_.kind == SchedulerKind::kOuterReduction)) {
    // Slots per thread for the sizes the heuristics saw.
    int64_t rlen = 1;
    for (int a : p_.r_axes) {
      rlen *= p_.ref[a].is_static() ? p_.ref[a].size : 0;
    }
    if (rlen == 0) {  // symbolic: the sizes the heuristics saw
      rlen = hp_.kind == SchedulerKind::kOuterPersistent
                 ? std::max<int64_t>(1, hp_.outer_size * hp_.inner_size) / std::max<int64_t>(1, row_blocks_)
                 : hp_.inner_size;
    }
    const int64_t chunks = (rlen + V_ - 1) / V_;
    PB_ = static_cast<int>(std::max<int64_t>(1, (chunks + BX_ * split - 1) / (BX_ * split)));
    if (PB_ > 16) persistent_ = false;
  }
  split_ = !pointwise_ && split > 1;
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
    absl::StrAppend(&sig, ", unsigned char* __restrict__ ws");
    k.params.push_back({"workspace", 0, ""});
  }
  int max_esize = 1;
  for (auto& [v, a] : in_access_) if (a.vec && p_.needed[v]) max_esize = std::max(max_esize, a.esize);
  for (auto& a : out_access_) if (a.vec) max_esize = std::max(max_esize, a.esize);
  V_ = std::min(V_, 16 / max_esize);
  for (SymbolId s : p_.symbol_order) {
    const std::string& name = p_.symbol_names.at(s);
    absl::StrAppend(&sig, ", i64 ", name);
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
  row_scope_.kind = Scope::kRow;
  row_scope_.out = &row_pending_;
  row_scope_.indent = "    ";
  row_scope_.memo = &row_memo_;
  row_scope_.load = [&](ValueId v) {
    const Access& a = in_access_.at(v);
    if (persistent_ && a.has_i && !a.has_r) return absl::StrCat("cr_", a.ptr);
    return absl::StrCat("(active ? Ty<", a.dt, ">::load(", a.ptr, " + ",
                        a.has_i ? "rb_" + a.ptr : "0", ") : ",
                        ComputeTypeName(g_.value(v).dtype), "(0))");
  };

  // ---- Kernel text.
  std::string c = DevicePrelude();
  absl::StrAppend(&c, "\nextern \"C\" __global__ void __launch_bounds__(", BX_ * BY_, ", 1) ", k.name,
                  "(", sig, ") {\n");
  absl::StrAppend(&c, "  const int tx = threadIdx.x, ty = threadIdx.y;\n  (void)ty;\n");
  // Typed pointers: element arithmetic per dtype.
  auto typed = [&](const Access& a, bool in) {
    const char* t = a.esize == 1 ? "unsigned char" : a.esize == 2 ? "unsigned short"
                  : a.esize == 4 ? "u32" : "u64";
    return absl::StrCat("  ", in ? "const " : "", t, "* __restrict__ ", a.ptr, " = (", in ? "const " : "",
                        t, "*)", a.ptr, "_;\n");
  };
  // Typed pointers: element arithmetic per dtype.
  std::string rename;
  for (auto& [v, a] : in_access_) rename += typed(a, true);
  for (auto& a : out_access_) rename += typed(a, false);
  absl::StrAppend(&c, rename);
  const std::string rows = p_.ProductExpr(p_.i_axes);
  const std::string rlen = p_.ProductExpr(p_.r_axes);
  absl::StrAppend(&c, "  const i64 rows = (i64)(", rows, ");\n  const i64 rlen = (i64)(", rlen, ");\n");
  absl::StrAppend(&c, "  const i64 t = (i64)blockIdx.y * ", BX_, " + tx;\n  const i64 T = (i64)gridDim.y * ",
                  BX_, ";\n");
  // Vector accesses need the innermost row extent divisible by V and aligned pointers.
  std::string vec = absl::StrCat("(", p_.ExtentExpr(p_.ref[p_.r_axes.back()]), ") % ", V_, " == 0");
  for (auto& [v, a] : in_access_) {
    if (a.vec) absl::StrAppend(&vec, " && ((u64)", a.ptr, " % ", V_ * a.esize, ") == 0");
  }
  for (auto& a : out_access_) {
    if (a.vec && a.has_r) absl::StrAppend(&vec, " && ((u64)", a.ptr, " % ", V_ * a.esize, ") == 0");
  }
  absl::StrAppend(&c, "  const bool vec_ok = ", vec, ";\n",
                  "  const bool small = rows * rlen < 2147483647LL;\n  (void)small;\n");
  absl::StrAppend(&c, "  const bool fits = ", persistent_ ? "vec_ok && rlen <= T * " + std::to_string(PB_ * V_) : "false",
                  ";\n  (void)fits;\n");
  if (!p_.row_slots.empty() && BX_ > 32) {
    size_t per_stage = 1;
    for (int s = 0; s < p_.num_stages; ++s) {
      size_t n = 0;
      for (const auto& sl : p_.row_slots) n += sl.stage == s;
      per_stage = std::max(per_stage, n);
    }
    absl::StrAppend(&c, "  __shared__ double fz_red[", BY_, "][", BX_ / 32, "][", per_stage, "];\n");
  }
  // Workspace layout: [0, 256) barrier; row partials (double, two parities);
  // column partials (float).
  size_t max_slots = 1;
  for (int s = 0; s < p_.num_stages; ++s) {
    size_t n = 0;
    for (const auto& sl : p_.row_slots) n += sl.stage == s;
    max_slots = std::max(max_slots, n);
  }
  if (coop) {
    absl::StrAppend(&c, "  u32* bar = (u32*)ws;\n  (void)bar;\n",
                    "  const size_t part_stride = (size_t)gridDim.x * ", BY_, " * gridDim.y * ", max_slots, ";\n",
                    "  double* ws_row = (double*)(ws + 256);\n  (void)ws_row; (void)part_stride;\n",
                    "  float* wcol = (float*)(ws + 256 + ", split_ ? "2 * part_stride * 8" : "0", ");\n  (void)wcol;\n",
                    "  unsigned par = 0;\n  (void)par;\n");
  }
  // Row bases and offsets.
  for (auto& [v, a] : in_access_) if (a.has_i) absl::StrAppend(&c, "  i64 rb_", a.ptr, " = 0;\n");
  for (auto& a : out_access_) if (a.has_i) absl::StrAppend(&c, "  i64 rb_", a.ptr, " = 0;\n");
  absl::StrAppend(&c, "  i64 row = 0;\n  bool active = false;\n");
  for (auto& [v, a] : in_access_) if (a.has_r) absl::StrAppend(&c, OffsetLambda(a));
  for (auto& a : out_access_) if (a.has_r) absl::StrAppend(&c, OffsetLambda(a));
  // Column inputs stay in registers across rows.
  if (persistent_) {
    for (auto& [v, a] : in_access_) {
      if (!a.has_r || a.has_i || !a.vec || !p_.needed[v]) continue;
      const int w = (V_ * a.esize + 3) / 4;
      absl::StrAppend(&c, "  u32 cb_", a.ptr, "[", PB_ * w, "];\n  if (fits) {\n#pragma unroll\n",
                      "    for (int k = 0; k < ", PB_, "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", V_,
                      ";\n      if (jj < rlen) Chunk<", V_ * a.esize, ">::ld(&cb_", a.ptr, "[k * ", w, "], ",
                      a.ptr, " + ro_", a.ptr, "(jj));\n    }\n  }\n");
    }
    for (size_t ci = 0; ci < p_.col_reds.size(); ++ci) {
      absl::StrAppend(&c, "  float cacc", ci, "[", PB_ * V_, "];\n#pragma unroll\n  for (int q = 0; q < ",
                      PB_ * V_, "; ++q) cacc", ci, "[q] = ", Identity(g_.node(p_.col_reds[ci]).op, "float"), ";\n");
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
      for (const auto& [ra, stride] : a.i_terms) absl::StrAppend(&e, " + ic", ra, " * (i64)(", stride, ")");
      return absl::StrCat("    rb_", a.ptr, " = ", e, ";\n");
    };
    for (auto& [v, a] : in_access_) if (a.has_i) rb += base(a);
    for (auto& a : out_access_) if (a.has_i) rb += base(a);
    absl::StrAppend(&rb, "  };\n");
    if (!p_.i_axes.empty()) c += rb;
  }
  const std::string first_row = absl::StrCat("(i64)blockIdx.x * ", BY_, " + ty");
  absl::StrAppend(&c, "  const i64 rstride = (i64)gridDim.x * ", BY_, ";\n");
  if (persistent_) {
    for (auto& [v, a] : in_access_) {
      if (!a.has_r || !a.has_i || !a.vec || !p_.needed[v]) continue;
      const int w = (V_ * a.esize + 3) / 4;
      absl::StrAppend(&c, "  u32 pb_", a.ptr, "[", PB_ * w, "];\n");
      absl::StrAppend(&c, "  if (fits && ", first_row, " < rows) {\n    rowbase(", first_row, ");\n#pragma unroll\n",
                      "    for (int k = 0; k < ", PB_, "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", V_,
                      ";\n      if (jj < rlen) Chunk<", V_ * a.esize, ">::ld(&pb_", a.ptr, "[k * ", w, "], ", a.ptr,
                      " + ro_", a.ptr, "(jj));\n    }\n  }\n");
    }
  }
  if (persistent_) {
    for (auto& [v, a] : in_access_) {
      if (a.has_r || !a.has_i || !p_.needed[v]) continue;
      const char* ct = ComputeTypeName(g_.value(v).dtype);
      absl::StrAppend(&c, "  ", ct, " cr_", a.ptr, " = ", ct, "(0);\n  if (", first_row, " < rows) { rowbase(",
                      first_row, "); cr_", a.ptr, " = Ty<", a.dt, ">::load(", a.ptr, " + rb_", a.ptr, "); }\n");
    }
  }
  if (cols) {
    std::string init;
    for (size_t ci = 0; ci < p_.col_reds.size(); ++ci) {
      const OpKind cop = g_.node(p_.col_reds[ci]).op;
      if (cop == OpKind::kSum) continue;
      absl::StrAppend(&init, "    for (i64 j = tx; j < rlen; j += ", BX_, ") wcol[((i64)(blockIdx.x * ", BY_,
                      " + ty) * ", p_.col_reds.size(), " + ", ci, ") * rlen + j] = ", Identity(cop, "float"), ";\n");
    }
    if (!init.empty()) absl::StrAppend(&c, "  if (!fits) {\n", init, "  }\n  __syncthreads();\n");
  }
  // ---- Row loop.
  absl::StrAppend(&c, "  const i64 iters = (rows + rstride - 1) / rstride;\n",
                  "  for (i64 it = 0; it < iters; ++it) {\n",
                  "    row = it * rstride + (i64)blockIdx.x * ", BY_, " + ty;\n",
                  "    active = row < rows;\n");
  // Row coordinates and bases.
  if (!p_.i_axes.empty()) {
    absl::StrAppend(&c, "    rowbase(row);\n");
  }
  if (persistent_) {
    // The row's persistent data was loaded one iteration ahead; load the
    // next row's now so its loads overlap this row's reductions.
    std::string swap;
    bool any = false;
    // Double-buffering costs as many registers again: only for small buffers.
    int words = 0;
    for (auto& [v, a] : in_access_) {
      if (a.has_r && a.has_i && a.vec && p_.needed[v]) words += PB_ * ((V_ * a.esize + 3) / 4);
    }
    const bool prefetch = words <= 16;
    for (auto& [v, a] : in_access_) {
      if (!a.has_r || !a.has_i || !a.vec || !p_.needed[v]) continue;
      if (!prefetch) {
        const int w = (V_ * a.esize + 3) / 4;
        absl::StrAppend(&c, "    if (it > 0 && fits && active) {\n#pragma unroll\n",
                        "      for (int k = 0; k < ", PB_, "; ++k) {\n        const i64 jj = (t + (i64)k * T) * ", V_,
                        ";\n        if (jj < rlen) Chunk<", V_ * a.esize, ">::ld(&pb_", a.ptr, "[k * ", w, "], ", a.ptr,
                        " + ro_", a.ptr, "(jj));\n      }\n    }\n");
        continue;
      }
      any = true;
      const int w = (V_ * a.esize + 3) / 4;
      absl::StrAppend(&c, "    u32 nb_", a.ptr, "[", PB_ * w, "];\n");
      absl::StrAppend(&swap, "#pragma unroll\n    for (int q = 0; q < ", PB_ * w, "; ++q) pb_", a.ptr,
                      "[q] = nb_", a.ptr, "[q];\n");
    }
    std::string row_loads;
    for (auto& [v, a] : in_access_) {
      if (a.has_r || !a.has_i || !p_.needed[v]) continue;
      const char* ct = ComputeTypeName(g_.value(v).dtype);
      absl::StrAppend(&c, "    ", ct, " nr_", a.ptr, " = ", ct, "(0);\n");
      absl::StrAppend(&row_loads, "      if (nact) nr_", a.ptr, " = Ty<", a.dt, ">::load(", a.ptr, " + rb_", a.ptr, ");\n");
      absl::StrAppend(&swap, "    cr_", a.ptr, " = nr_", a.ptr, ";\n");
    }
    if (any || !row_loads.empty()) {
      absl::StrAppend(&c, "    {\n      const i64 nrow = row + rstride;\n      const bool nact = nrow < rows;\n",
                      "      rowbase(nrow);\n", row_loads, "      if (fits && nact) {\n#pragma unroll\n",
                      "        for (int k = 0; k < ", PB_, "; ++k) {\n          const i64 jj = (t + (i64)k * T) * ", V_,
                      ";\n          if (jj < rlen) {\n");
      for (auto& [v, a] : in_access_) {
        if (!a.has_r || !a.has_i || !a.vec || !p_.needed[v] || !prefetch) continue;
        const int w = (V_ * a.esize + 3) / 4;
        absl::StrAppend(&c, "            Chunk<", V_ * a.esize, ">::ld(&nb_", a.ptr, "[k * ", w, "], ", a.ptr,
                        " + ro_", a.ptr, "(jj));\n");
      }
      absl::StrAppend(&c, "          }\n        }\n      }\n      rowbase(row);\n    }\n");
    }
    row_swap_ = swap;
  }
  for (int s = 0; s < p_.num_stages; ++s) {
    if (absl::Status st = EmitStage(s, c); !st.ok()) return st;
  }
  if (absl::Status st = EmitFinal(c); !st.ok()) return st;
  absl::StrAppend(&c, row_swap_, "  }\n");
  // ---- Column epilogue.
  if (cols) {
    const size_t nc = p_.col_reds.size();
    if (persistent_) {
      absl::StrAppend(&c, "  if (fits) {\n#pragma unroll\n    for (int k = 0; k < ", PB_,
                      "; ++k) {\n      const i64 jj = (t + (i64)k * T) * ", V_, ";\n      if (jj < rlen) {\n");
      for (size_t ci = 0; ci < nc; ++ci) {
        absl::StrAppend(&c, "#pragma unroll\n        for (int l = 0; l < ", V_,
                        "; ++l) wcol[((i64)(blockIdx.x * ", BY_, " + ty) * ", nc, " + ", ci,
                        ") * rlen + jj + l] = cacc", ci, "[k * ", V_, " + l];\n");
      }
      absl::StrAppend(&c, "      }\n    }\n  }\n");
    }
    absl::StrAppend(&c, "  fz_grid_sync(bar);\n  {\n    const int P = gridDim.x * ", BY_, ";\n",
                    "    const i64 gt = (((i64)blockIdx.y * gridDim.x + blockIdx.x) * ", BY_, " + ty) * ", BX_,
                    " + tx;\n    const i64 GT = (i64)gridDim.x * gridDim.y * ", BX_ * BY_, ";\n",
                    "    for (i64 j = gt; j < rlen; j += GT) {\n");
    std::string body;
    std::map<ValueId, std::string> memo;
    Scope cs;
    cs.kind = Scope::kCol;
    cs.out = &body;
    cs.indent = "      ";
    cs.memo = &memo;
    cs.load = [&](ValueId v) {
      const Access& a = in_access_.at(v);
      return absl::StrCat("Ty<", a.dt, ">::load(", a.ptr, " + ro_", a.ptr, "(j))");
    };
    for (size_t ci = 0; ci < nc; ++ci) {
      const Node& n = g_.node(p_.col_reds[ci]);
      const ValueId out = n.outputs[0];
      const OpKind cop = n.op;
      absl::StrAppend(&body, "      float csum", ci, " = ", Identity(cop, "float"), ";\n      for (int p = 0; p < P; ++p) csum", ci,
                      " = fz_comb<", OpId(cop), ", float>(csum", ci, ", wcol[((i64)p * ", nc, " + ", ci, ") * rlen + j]);\n");
      absl::StrAppend(&body, "      const ", ComputeTypeName(g_.value(out).dtype), " cv", out, " = ",
                      RoundTo(g_.value(out).dtype, absl::StrCat("(", ComputeTypeName(g_.value(out).dtype), ")csum", ci)),
                      ";\n");
      memo[out] = absl::StrCat("cv", out);
    }
    for (const Access& a : out_access_) {
      if (p_.domain[a.v] != Domain::kCol) continue;
      if (a.has_i) {
        return absl::UnimplementedError("codegen: a column-reduction output broadcast along the rows");
      }
      auto e = em_->Get(a.v, cs);
      if (!e.ok()) return e.status();
      if (a.has_r) {
        absl::StrAppend(&body, "      Ty<", a.dt, ">::store(", a.ptr, " + ro_", a.ptr, "(j), ", *e, ");\n");
      } else {  // no row axes left (every row-domain axis has extent 1)
        absl::StrAppend(&body, "      if (j == 0) Ty<", a.dt, ">::store(", a.ptr, ", ", *e, ");\n");
      }
    }
    absl::StrAppend(&c, body, "    }\n  }\n");
  }
  absl::StrAppend(&c, "}\n");
  k.source = std::move(c);
  k.cooperative = coop;
  k.block_x = BX_;
  k.block_y = BY_;
  k.rows_expr = rows;
  if (pointwise_) {
    k.grid_x_cap = 1;
    k.grid_y_expr = absl::StrCat("min(", split, ", max(1, ceil_div(", rlen, ", ", BX_ * V_ * U_, ")))");
  } else {
    k.grid_x_cap = row_blocks_;
    k.grid_y_expr = std::to_string(split);
  }
  if (coop) {
    k.needs_workspace = true;
    k.ws_fixed = 256;
    std::string per = "0";
    if (split_) per = absl::StrCat(2 * BY_ * split * static_cast<int64_t>(max_slots) * 8);
    if (cols) {
      per = absl::StrCat(per, " + ", BY_ * static_cast<int64_t>(p_.col_reds.size()) * 4, " * (", rlen, ")");
    }
    k.ws_per_grid_x = per;
  }
  return k;
}

}  // namespace

absl::StatusOr<GeneratedKernel> GenerateKernel(const Graph& g, const HeuristicParams& params,
                                               const CodegenOptions& options) {
  auto plan = PlanKernel(g, params.kind == SchedulerKind::kPointwise);
  if (!plan.ok()) return plan.status();
  Generator gen(*plan, params, options);
  return gen.Run();
}

std::vector<std::string> LaunchGrid(const GeneratedKernel& k, int registers, int static_smem_bytes,
                                    int sm_count) {
  int64_t cap = k.grid_x_cap;
  if (k.cooperative) {
    const int threads = k.block_x * k.block_y;
    int per_sm = 2048 / threads;
    if (registers > 0) {
      const int regs_per_block = ((registers * 32 + 255) / 256 * 256) * (threads / 32);
      per_sm = std::min(per_sm, 65536 / std::max(1, regs_per_block));
    } else {
      per_sm = 1;
    }
    if (static_smem_bytes > 0) per_sm = std::min(per_sm, (227 * 1024) / static_smem_bytes);
    per_sm = std::max(1, std::min(per_sm, 32));
    int64_t y = 1;
    if (k.grid_y_expr.find_first_not_of("0123456789") == std::string::npos) y = std::stoll(k.grid_y_expr);
    cap = std::min<int64_t>(cap, std::max<int64_t>(1, per_sm * sm_count / y));
  }
  std::string gx = absl::StrCat("min(", cap, ", max(1, ceil_div(", k.rows_expr, ", ", k.block_y, ")))");
  if (k.rows_expr == "1") gx = "1";
  return {gx, k.grid_y_expr, "1"};
}

std::string WorkspaceBytes(const GeneratedKernel& k, const std::string& grid_x) {
  if (!k.needs_workspace) return "";
  return absl::StrCat(k.ws_fixed, " + (", grid_x, ") * (", k.ws_per_grid_x, ")");
}

}  // namespace fusiond
