#include "compiler/codegen/kernel_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/online_softmax.h"
#include "compiler/ir/shift_view.h"

namespace fusiond {
namespace {

constexpr int kUnknown = -2;

absl::Status Unsupported(const Graph& g, const Node& n, const std::string& why) {
  return absl::UnimplementedError(
      absl::StrCat("codegen: node ", n.id, " (", OpName(n.op), "): ", why));
}

uint32_t Bit(int a) { return uint32_t{1} << a; }

std::vector<int> AxesOf(uint32_t mask, int rank) {
  std::vector<int> out;
  for (int a = 0; a < rank; ++a)
    if (mask & Bit(a)) out.push_back(a);
  return out;
}

// Whether axis i of value v and axis j of value w have the same extent: only
// those are the same iteration axis (a keepdim reduction's 1 broadcast to
// another extent links nothing).
bool SameExtent(const Graph& g, ValueId v, size_t i, ValueId w, size_t j) {
  return g.Canonical(g.value(v).shape[i]) == g.Canonical(g.value(w).shape[j]);
}

// Links axis i of value `from` to axis o of value `to` both ways; true when
// either map changed.
bool Link(const Graph& g, std::vector<std::vector<int>>& m, ValueId from, size_t i, ValueId to,
          size_t o) {
  if (i >= m[from].size() || o >= m[to].size() || !SameExtent(g, from, i, to, o)) return false;
  int& a = m[from][i];
  int& b = m[to][o];
  if (a == kUnknown && b != kUnknown) {
    a = b;
    return true;
  }
  if (b == kUnknown && a != kUnknown) {
    b = a;
    return true;
  }
  return false;
}

// Links values v and w (of one rank) axis by axis.
bool LinkAll(const Graph& g, std::vector<std::vector<int>>& m, ValueId v, ValueId w) {
  bool changed = false;
  for (size_t i = 0; i < m[v].size(); ++i) changed |= Link(g, m, v, i, w, i);
  return changed;
}

// One sweep of axis-map propagation over every node, both directions.
bool PropagateOnce(const Graph& g, const std::vector<bool>& shifted_only,
                   std::vector<std::vector<int>>& m) {
  bool changed = false;
  for (const Node& n : g.nodes) {
    const ValueId out = n.outputs[0];
    if (!g.value(out).is_tensor || shifted_only[out]) continue;
    const OpCategory cat = CategoryOf(n.op);
    if (IsPointwise(n.op)) {
      for (ValueId in : n.inputs) {
        const Value& v = g.value(in);
        if (!v.is_tensor || v.rank() != g.value(out).rank()) continue;
        changed |= LinkAll(g, m, in, out);
      }
      continue;
    }
    const ValueId x = n.inputs[0];
    if (cat == OpCategory::kReduction || cat == OpCategory::kVarMean) {
      const auto& dims = n.attrs.dims;
      if (n.attrs.keepdim) {
        changed |= LinkAll(g, m, x, out);
      } else {
        size_t k = 0;
        for (size_t i = 0; i < m[x].size(); ++i) {
          if (!std::count(dims.begin(), dims.end(), static_cast<int64_t>(i)))
            changed |= Link(g, m, x, i, out, k++);
        }
      }
      for (ValueId o : n.outputs) changed |= LinkAll(g, m, out, o);
      continue;
    }
    switch (n.op) {
      case OpKind::kBroadcastInDim:
        for (size_t i = 0; i < n.attrs.broadcast_dims.size(); ++i)
          changed |= Link(g, m, x, i, out, n.attrs.broadcast_dims[i]);
        break;
      case OpKind::kBroadcast: {
        size_t j = 0;
        for (size_t o = 0; o < n.attrs.is_broadcast_dim.size(); ++o) {
          if (!n.attrs.is_broadcast_dim[o]) changed |= Link(g, m, x, j++, out, o);
        }
        break;
      }
      case OpKind::kExpand:
        changed |= LinkAll(g, m, x, out);
        break;
      case OpKind::kSqueeze: {
        size_t o = 0;
        for (size_t i = 0; i < m[x].size(); ++i) {
          if (!std::count(n.attrs.dims.begin(), n.attrs.dims.end(), static_cast<int64_t>(i)))
            changed |= Link(g, m, x, i, out, o++);
        }
        break;
      }
      case OpKind::kPermute:
        for (size_t o = 0; o < n.attrs.dims.size(); ++o)
          changed |= Link(g, m, x, n.attrs.dims[o], out, o);
        break;
      default:
        break;
    }
  }
  return changed;
}

// An axis propagation leaves unknown (a reduced axis no other value shares,
// an operand's axis a broadcast's 1 stands for) goes where the scheduler's
// analysis puts it: the reference axis at its position counted from the
// right when the extents agree, else (not `full_rank`) the first of the same
// extent the value does not use yet. `full_rank`: only values of the
// reference's rank (first, so a lower-rank operand's axis follows the
// full-rank values it meets). Only values an output needs (others are never
// indexed). True when one axis was placed.
bool SeedLooseAxis(const Graph& g, const std::vector<Extent>& ref, const std::vector<bool>& needed,
                   bool full_rank, std::vector<std::vector<int>>& m) {
  const int rank = static_cast<int>(ref.size());
  for (size_t v = 0; v < m.size(); ++v) {
    const Value& val = g.values[v];
    if (!needed[v] || (full_rank && val.rank() != rank)) continue;
    for (int i = 0; i < val.rank(); ++i) {
      const Extent e = g.Canonical(val.shape[i]);
      if (m[v][i] != kUnknown || e.is_broadcast()) continue;
      const int pos = i + rank - val.rank();
      std::vector<int> order = {pos};
      for (int a = 0; a < rank && !full_rank; ++a)
        if (a != pos) order.push_back(a);
      for (int a : order) {
        if (a < 0 || !(ref[a] == e) || std::count(m[v].begin(), m[v].end(), a)) continue;
        m[v][i] = a;
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::string KernelPlan::ExtentExpr(Extent e) const {
  e = graph->Canonical(e);
  if (e.is_static()) return std::to_string(e.size);
  return symbol_names.at(e.symbol);
}

std::string KernelPlan::ProductExpr(const std::vector<int>& axes) const {
  int64_t k = 1;
  std::string sym;
  for (int a : axes) {
    if (ref[a].is_static()) {
      k *= ref[a].size;
    } else {
      sym = sym.empty() ? ExtentExpr(ref[a]) : absl::StrCat(sym, " * ", ExtentExpr(ref[a]));
    }
  }
  if (sym.empty()) return std::to_string(k);
  return k == 1 ? sym : absl::StrCat(sym, " * ", k);
}

bool KernelPlan::IsStatic() const {
  for (const Extent& e : ref)
    if (!e.is_static()) return false;
  return true;
}

uint32_t KernelPlan::ReducedAxes(const Node& n) const {
  uint32_t d = 0;
  const auto& im = axis_map[n.inputs[0]];
  for (int64_t dim : n.attrs.dims)
    if (im[dim] >= 0) d |= Bit(im[dim]);
  return d;
}

std::string KernelPlan::HiddenCount(const Graph& g, const Node& n) const {
  const ValueId in = n.inputs[0];
  // The axes the reduction's own loop walks: a row reduction the row's, a
  // column reduction the rows (each element there is already added once per copy).
  const bool col = std::count(col_reds.begin(), col_reds.end(), n.id) > 0;
  const uint32_t looped = col ? ~r_mask : r_mask;
  std::string count;
  for (int64_t dim : n.attrs.dims) {
    const Extent e = g.Canonical(g.value(in).shape[dim]);
    if (e.is_static() && e.size == 1) continue;
    const int a = axis_map[in][dim];
    if (a >= 0 && ((vary[in] | looped) & Bit(a)) != 0) continue;
    absl::StrAppend(&count, count.empty() ? "" : " * ", "(double)(", ExtentExpr(e), ")");
  }
  return count;
}

namespace {

// A node is computed when any of its outputs is needed (var_mean's mean
// alone, say).
bool Computed(const KernelPlan& p, const Node& n) {
  return std::any_of(n.outputs.begin(), n.outputs.end(), [&p](ValueId o) { return p.needed[o]; });
}

// The size symbols' kernel names ("s0", ...) in input order.
void NameSymbols(const Graph& g, KernelPlan& p) {
  for (ValueId in : g.inputs) {
    for (const Extent& e0 : g.value(in).shape) {
      Extent e = g.Canonical(e0);
      if (!e.is_static() && !p.symbol_names.count(e.symbol)) {
        p.symbol_names[e.symbol] = absl::StrCat("s", p.symbol_order.size());
        p.symbol_order.push_back(e.symbol);
      }
    }
  }
}

// The reference shape: the widest rank; per axis the first extent that is
// not 1.
absl::Status PlanReference(const Graph& g, KernelPlan& p) {
  for (const Value& v : g.values)
    if (v.is_tensor && !p.shifted_only[v.id]) p.rank = std::max(p.rank, v.rank());
  if (p.rank == 0) return absl::UnimplementedError("codegen: segment has no tensor of rank > 0");
  if (p.rank > 8) return absl::UnimplementedError("codegen: rank above 8");
  p.ref.assign(p.rank, Extent::Static(1));
  for (const Value& v : g.values) {
    if (!v.is_tensor || v.rank() != p.rank || p.shifted_only[v.id]) continue;
    for (int a = 0; a < p.rank; ++a) {
      Extent e = g.Canonical(v.shape[a]);
      if (p.ref[a].is_broadcast() && !e.is_broadcast()) p.ref[a] = e;
    }
  }
  for (const Node& n : g.nodes) {
    // A reshape read only at shifted indices is the shift emitter's.
    if (n.op == OpKind::kReshape && !p.shifted_only[n.outputs[0]])
      return Unsupported(g, n, "reshape is not supported");
  }
  return absl::OkStatus();
}

// Axis maps: seed full-rank values one at a time, propagate to a fixpoint.
void MapAxes(const Graph& g, KernelPlan& p) {
  const size_t nv = g.values.size();
  std::vector<std::vector<int>>& m = p.axis_map;
  m.resize(nv);
  for (size_t v = 0; v < nv; ++v) m[v].assign(g.values[v].rank(), kUnknown);
  for (;;) {
    while (PropagateOnce(g, p.shifted_only, m)) {
    }
    bool seeded = false;
    for (size_t v = 0; v < nv && !seeded; ++v) {
      const Value& val = g.values[v];
      if (!val.is_tensor || val.rank() != p.rank || p.shifted_only[v]) continue;
      if (std::all_of(m[v].begin(), m[v].end(), [](int x) { return x == kUnknown; })) {
        for (int a = 0; a < p.rank; ++a) m[v][a] = a;
        seeded = true;
      }
    }
    if (!seeded) seeded = SeedLooseAxis(g, p.ref, p.needed, /*full_rank=*/true, m);
    if (!seeded) seeded = SeedLooseAxis(g, p.ref, p.needed, /*full_rank=*/false, m);
    if (!seeded) break;
  }
}

// The values an output depends on.
void MarkNeeded(const Graph& g, KernelPlan& p) {
  p.needed.assign(g.values.size(), false);
  for (ValueId o : g.outputs) p.needed[o] = true;
  for (int i = static_cast<int>(g.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = g.nodes[i];
    bool any = false;
    for (ValueId o : n.outputs) any |= p.needed[o];
    if (!any) continue;
    for (ValueId in : n.inputs) {
      // Shift ops read their tensor operands at shifted indices (shift_emitter.h).
      if (IsShift(n.op) && g.value(in).is_tensor) continue;
      if (n.op == OpKind::kSize && p.shifted_only[in]) continue;
      p.needed[in] = true;
    }
  }
}

// Each value's axes in the reference space (shape_mask) and the axes it
// varies along by dataflow (vary).
absl::Status PlaceAxes(const Graph& g, KernelPlan& p) {
  const size_t nv = g.values.size();
  std::vector<std::vector<int>>& m = p.axis_map;
  p.vary.assign(nv, 0);
  p.shape_mask.assign(nv, 0);
  for (size_t v = 0; v < nv; ++v) {
    const Value& val = g.values[v];
    for (int i = 0; i < val.rank(); ++i) {
      if (g.Canonical(val.shape[i]).is_broadcast()) {
        m[v][i] = -1;
      } else if (m[v][i] < 0 && !p.needed[v]) {
        m[v][i] = -1;  // an unused value: never indexed
      } else if (m[v][i] < 0) {
        return absl::UnimplementedError(absl::StrCat("codegen: cannot place axis ", i, " of value ",
                                                     v, " in the iteration space"));
      } else if (p.needed[v] && (p.shape_mask[v] & Bit(m[v][i]))) {
        return absl::UnimplementedError(
            absl::StrCat("codegen: two axes of value ", v, " fall on reference axis ", m[v][i]));
      } else {
        p.shape_mask[v] |= Bit(m[v][i]);
      }
    }
  }
  // Variation by dataflow.
  for (ValueId in : g.inputs) p.vary[in] = p.shape_mask[in];
  for (const Node& n : g.nodes) {
    uint32_t u = 0;
    for (ValueId in : n.inputs) u |= p.vary[in];
    if (IsReduction(n.op)) u &= ~p.ReducedAxes(n);
    if (n.op == OpKind::kSize) u = 0;
    // Values from indices (and shifted reads) vary along all their axes.
    if (IsIndexed(n.op) || IsShift(n.op)) u = ~0u;
    for (ValueId o : n.outputs) p.vary[o] = u & p.shape_mask[o];
  }
  return absl::OkStatus();
}

// The row domain R (r_axes) and the iteration axes (i_axes); *reds gets the
// computed reductions that reduce something.
absl::Status PlanRowDomain(const Graph& g, bool pointwise, bool reduced_rows, KernelPlan& p,
                           std::vector<NodeId>* reds_out) {
  const size_t nv = g.values.size();
  std::vector<NodeId>& reds = *reds_out;
  // Row domain R.
  const uint32_t all = (p.rank >= 32 ? ~0u : Bit(p.rank) - 1);
  // The innermost axis that is not a broadcast (extent 1) one.
  int last = p.rank - 1;
  while (last > 0 && p.ref[last].is_broadcast()) --last;
  uint32_t hidden_last = 0;  // the reduced axes of reductions over the innermost axis
  for (const Node& n : g.nodes) {
    if (!IsReduction(n.op) || !Computed(p, n)) continue;
    uint32_t eff = p.ReducedAxes(n) & p.vary[n.inputs[0]];
    if (eff == 0) {
      p.trivial_reds.push_back(n.id);
      continue;
    }
    if (pointwise) return Unsupported(g, n, "a reduction in a pointwise segment");
    reds.push_back(n.id);
    if (eff & Bit(last)) p.r_mask |= eff;
    if (p.ReducedAxes(n) & Bit(last)) hidden_last |= p.ReducedAxes(n);
  }
  // Reductions over the innermost axis that their inputs only hold copies
  // along (a sum over both axes of a column broadcast to [n, m]): the
  // scheduler's analysis takes them as row reductions, so the rows walk the
  // copies too.
  if (p.r_mask == 0 && !pointwise) p.r_mask = hidden_last;
  // R is every axis a row reduction reduces effectively; each reduces all of
  // R its input varies along (a sum over [rows, n] of a row broadcast to
  // [rows, n] walks n with the sum over both axes of [rows, n]).
  for (NodeId id : reds) {
    const Node& n = g.node(id);
    const uint32_t eff = p.ReducedAxes(n) & p.vary[n.inputs[0]];
    const uint32_t walked = p.r_mask == hidden_last ? p.ReducedAxes(n) : eff;
    if ((walked & Bit(last)) && eff != (p.vary[n.inputs[0]] & p.r_mask)) {
      return Unsupported(g, n, "row reductions over different axes");
    }
  }
  if (pointwise) {
    p.r_mask = all;
  } else if (p.r_mask == 0) {
    if (reds.empty()) {
      p.r_mask = all;  // every reduction is trivial: a single row, like pointwise
    }
  }
  if (p.r_mask == 0) {
    // Only reductions over outer axes. When a result comes back to the
    // elements it reduced (a batch-norm-like normalization over outer axes)
    // the reduced axes are the rows' elements (strided); otherwise the
    // reductions are column sums and the rows are what they keep.
    const Node& first_red = g.node(reds.empty() ? 0 : reds[0]);
    const uint32_t eff = p.ReducedAxes(first_red) & p.vary[first_red.inputs[0]];
    std::vector<bool> dep(nv, false);
    for (ValueId o : first_red.outputs) dep[o] = true;
    bool comes_back = false;
    for (const Node& n : g.nodes) {
      bool d = false;
      for (ValueId in : n.inputs) d |= dep[in];
      if (!d) continue;
      for (ValueId o : n.outputs) {
        dep[o] = true;
        comes_back |= p.needed[o] && (p.vary[o] & eff) != 0;
      }
    }
    p.r_mask = comes_back || reduced_rows ? eff : all & ~eff;
  }
  p.r_axes = AxesOf(p.r_mask, p.rank);
  p.i_axes = AxesOf(all & ~p.r_mask, p.rank);
  return absl::OkStatus();
}

// Row and column reductions; each value's domain (element, row, column,
// scalar), refusing mixes the kernel cannot hold. *is_col: per node.
absl::Status PlanDomains(const Graph& g, const std::vector<NodeId>& reds, KernelPlan& p,
                         std::vector<bool>* is_col_out) {
  const size_t nv = g.values.size();
  std::vector<bool>& is_col = *is_col_out;
  // Classify reductions; column reductions mark their results.
  std::vector<bool> post_col(nv, false);
  for (NodeId id : reds) {
    const Node& n = g.node(id);
    const uint32_t in_vary = p.vary[n.inputs[0]];
    const uint32_t eff = p.ReducedAxes(n) & in_vary;
    if (eff == (in_vary & p.r_mask)) continue;  // row reduction
    if (eff == (in_vary & ~p.r_mask) && (eff & p.r_mask) == 0) {
      if (n.op != OpKind::kSum && n.op != OpKind::kMax && n.op != OpKind::kMin) {
        return Unsupported(g, n, "only sum/max/min as column reductions");
      }
      is_col[id] = true;
      p.col_reds.push_back(id);
      continue;
    }
    return Unsupported(g, n, "reduces some but not all of the row axes");
  }
  for (const Node& n : g.nodes) {
    bool pc = is_col[n.id];
    for (ValueId in : n.inputs) pc |= post_col[in];
    if (pc && !is_col[n.id] && !IsPointwise(n.op) && !IsShapeOp(n.op)) {
      return Unsupported(g, n, "a reduction of a column-reduction result");
    }
    for (ValueId o : n.outputs) post_col[o] = pc;
  }
  // Values computed from a row reduction are per-row values even when the
  // rows vary along nothing (a single row).
  std::vector<bool> row_dep(nv, false);
  for (const Node& n : g.nodes) {
    bool d = IsReduction(n.op) && !is_col[n.id] && std::count(reds.begin(), reds.end(), n.id) > 0;
    for (ValueId in : n.inputs) d |= row_dep[in];
    for (ValueId o : n.outputs) row_dep[o] = d;
  }
  p.domain.assign(nv, Domain::kScalar);
  for (size_t v = 0; v < nv; ++v) {
    if (!g.values[v].is_tensor) continue;
    if (post_col[v])
      p.domain[v] = Domain::kCol;
    else if (p.vary[v] & p.r_mask)
      p.domain[v] = Domain::kElem;
    else if (p.vary[v] || row_dep[v])
      p.domain[v] = Domain::kRow;
  }
  for (size_t v = 0; v < nv; ++v) {
    if (p.needed[v] && p.domain[v] == Domain::kCol && (p.vary[v] & ~p.r_mask) != 0) {
      return absl::UnimplementedError(
          absl::StrCat("codegen: value ", v,
                       " combines a column-reduction result with values that vary along the rows"));
    }
  }
  for (const Node& n : g.nodes) {
    if (!Computed(p, n) || p.domain[n.outputs[0]] == Domain::kCol) continue;
    for (ValueId in : n.inputs) {
      if (p.domain[in] == Domain::kCol) {
        return Unsupported(g, n, "uses a column-reduction result in the row domain");
      }
    }
  }
  return absl::OkStatus();
}

// Pairs row sum n with its max's slot (in row_slots already, not yet
// paired) when n sums exp(x - max(x)): both online, n's slot in the max's
// stage, appended last. False when n is no such sum.
bool PairOnline(const Graph& g, const Node& n, KernelPlan& p) {
  bool exp2 = false;
  const NodeId mx = OnlineSoftmaxMax(g, p, n, &exp2);
  if (mx == kNone) return false;
  for (ReductionSlot& sl : p.row_slots) {
    if (sl.node != mx || sl.online) continue;
    sl.online = true;
    sl.online_exp2 = exp2;
    sl.partner = n.id;
    ReductionSlot sum{n.id, false, sl.stage, false};
    sum.online = true;
    sum.online_exp2 = exp2;
    sum.partner = mx;
    p.row_slots.push_back(sum);
    return true;
  }
  return false;
}

// The row reductions' slots and stages (a var takes two stages, or one in
// one pass; an online sum of exponentials its max's).
void PlanStages(const Graph& g, const std::vector<NodeId>& reds, const std::vector<bool>& is_col,
                bool one_pass_var, bool online_softmax, KernelPlan& p) {
  p.avail.assign(g.values.size(), 0);
  for (const Node& n : g.nodes) {
    int a = 0;
    for (ValueId in : n.inputs) a = std::max(a, p.avail[in]);
    const bool row_red = IsReduction(n.op) && !is_col[n.id] &&
                         std::count(reds.begin(), reds.end(), n.id) && Computed(p, n);
    if (row_red && online_softmax && PairOnline(g, n, p)) {
      a = p.row_slots.back().stage + 1;
      p.num_stages = std::max(p.num_stages, a);
    } else if (row_red) {
      const bool two = n.op == OpKind::kVar || n.op == OpKind::kVarMean;
      const bool one_pass = two && one_pass_var;
      p.row_slots.push_back({n.id, false, a, one_pass});
      if (two) p.row_slots.push_back({n.id, true, one_pass ? a : a + 1, one_pass});
      a += two && !one_pass ? 2 : 1;
      p.num_stages = std::max(p.num_stages, a);
    }
    for (ValueId o : n.outputs) p.avail[o] = a;
  }
  std::stable_sort(
      p.row_slots.begin(), p.row_slots.end(),
      [](const ReductionSlot& x, const ReductionSlot& y) { return x.stage < y.stage; });
}

}  // namespace

absl::StatusOr<KernelPlan> PlanKernel(const Graph& g, bool pointwise, bool one_pass_var,
                                      bool reduced_rows, bool online_softmax) {
  KernelPlan p;
  p.graph = &g;
  p.shifted_only = ShiftedOnly(g);
  NameSymbols(g, p);
  if (absl::Status s = PlanReference(g, p); !s.ok()) return s;
  MarkNeeded(g, p);
  MapAxes(g, p);
  if (absl::Status s = PlaceAxes(g, p); !s.ok()) return s;
  std::vector<NodeId> reds;
  if (absl::Status s = PlanRowDomain(g, pointwise, reduced_rows, p, &reds); !s.ok()) return s;
  std::vector<bool> is_col(g.nodes.size(), false);
  if (absl::Status s = PlanDomains(g, reds, p, &is_col); !s.ok()) return s;
  PlanStages(g, reds, is_col, one_pass_var, online_softmax, p);
  return p;
}
}  // namespace fusiond
