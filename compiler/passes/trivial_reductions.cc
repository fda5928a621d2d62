#include "compiler/passes/trivial_reductions.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

bool IsStaticOne(const Graph& g, const Extent& e) {
  const Extent c = g.Canonical(e);
  return c.is_static() && c.size == 1;
}

// The reduction's axes, each in [0, rank) (graphs may keep -1 for the last).
std::vector<int64_t> ReducedAxes(const Node& n, int rank) {
  std::vector<int64_t> dims;
  for (int64_t d : n.attrs.dims) dims.push_back(d < 0 ? d + rank : d);
  return dims;
}

// A sum, max or min whose reduced axes all have extent 1: a squeeze of those
// axes (nothing with keepdim) and a cast to the result type.
absl::StatusOr<ValueId> SqueezeOfOnes(Graph& g, const Node& n) {
  const ValueId x = n.inputs[0];
  ValueId r = x;
  if (!n.attrs.keepdim) {
    Attrs a;
    a.dims = n.attrs.dims;
    auto s = AddOp(g, OpKind::kSqueeze, {x}, a);
    if (!s.ok()) return s.status();
    r = *s;
  }
  const DataType want = g.value(n.outputs[0]).dtype;
  if (g.value(r).dtype == want) return r;
  return AddCast(g, r, want);
}

// Per value, per axis: true where the value repeats one value along the axis
// (an extent other than 1): an axis a broadcast_in_dim adds, or grows from
// an operand axis of extent 1; and, through pointwise ops, an axis every
// tensor operand repeats or has extent 1 along. Computed in node order.
using Repeated = std::vector<std::vector<bool>>;
Repeated RepeatedAxes(const Graph& g) {
  Repeated r(g.values.size());
  for (const Node& n : g.nodes) {
    const Value& out = g.value(n.outputs[0]);
    if (!out.is_tensor || n.outputs.size() != 1) continue;
    std::vector<bool> rep(out.rank(), false);
    if (n.op == OpKind::kBroadcastInDim) {
      rep.assign(out.rank(), true);
      const Value& y = g.value(n.inputs[0]);
      for (size_t k = 0; k < n.attrs.broadcast_dims.size(); ++k) {
        const int64_t a = n.attrs.broadcast_dims[k];
        rep[a] = y.is_tensor && IsStaticOne(g, y.shape[k]);
      }
    } else if (IsPointwise(n.op)) {
      rep.assign(out.rank(), true);
      for (ValueId in : n.inputs) {
        const Value& u = g.value(in);
        if (!u.is_tensor) continue;
        for (int a = 0; a < out.rank(); ++a) {
          const bool u_rep = !r[in].empty() && r[in][a];
          rep[a] = rep[a] && (u_rep || IsStaticOne(g, u.shape[a]));
        }
      }
    }
    for (int a = 0; a < out.rank(); ++a) rep[a] = rep[a] && !IsStaticOne(g, out.shape[a]);
    r[n.outputs[0]] = std::move(rep);
  }
  return r;
}

// The int64 product of the `axes` of v's shape: a constant, times a `size`
// value for each symbolic one (of a graph input axis of that size, else of v).
absl::StatusOr<ValueId> ExtentProduct(Graph& g, ValueId v, const std::vector<int64_t>& axes) {
  int64_t fixed = 1;
  ValueId product = kNone;
  for (int64_t axis : axes) {
    const Extent c = g.Canonical(g.value(v).shape[axis]);
    if (c.is_static()) {
      fixed *= c.size;
      continue;
    }
    Attrs a;
    a.axis = axis;
    ValueId of = v;
    for (ValueId in : g.inputs) {
      const Value& t = g.value(in);
      for (int k = 0; t.is_tensor && of == v && k < t.rank(); ++k) {
        if (g.Canonical(t.shape[k]) == c) {
          of = in;
          a.axis = k;
        }
      }
    }
    auto size = AddOp(g, OpKind::kSize, {of}, a);
    if (!size.ok()) return size.status();
    if (product == kNone) {
      product = *size;
    } else {
      auto m = AddOp(g, OpKind::kMul, {product, *size});
      if (!m.ok()) return m.status();
      product = *m;
    }
  }
  const ValueId k = MakeConstant(g, static_cast<double>(fixed), DataType::kInt64);
  if (product == kNone) return k;
  if (fixed == 1) return product;
  return AddOp(g, OpKind::kMul, {product, k});
}

// Where b's axes go when the `dropped` ones leave (-1; extent 1 with keepdim).
std::vector<int64_t> NewAxes(size_t rank, const std::vector<bool>& dropped, bool keepdim) {
  std::vector<int64_t> new_axis(rank, -1);
  int64_t next = 0;
  for (size_t a = 0; a < rank; ++a) {
    if (!dropped[a] || keepdim) new_axis[a] = next++;
  }
  return new_axis;
}

// broadcast_dims for b's operand in a result of `rank` axes whose positions
// of b's axes are `new_axis`: an operand axis of extent 1 on a dropped axis
// moves to a free axis between its neighbours' (so that nothing squeezes
// it), or nullopt when there is no room.
std::optional<std::vector<int64_t>> MovedDims(const Node& b, const std::vector<int64_t>& new_axis,
                                              int64_t rank) {
  const std::vector<int64_t>& dims = b.attrs.broadcast_dims;
  std::vector<int64_t> out;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t prev = out.empty() ? -1 : out.back();
    if (new_axis[dims[k]] >= 0) {
      if (new_axis[dims[k]] <= prev) return std::nullopt;
      out.push_back(new_axis[dims[k]]);
      continue;
    }
    int64_t limit = rank;  // the next operand axis that stays where it is
    for (size_t j = k + 1; j < dims.size(); ++j) {
      if (new_axis[dims[j]] >= 0) {
        limit = new_axis[dims[j]];
        break;
      }
    }
    if (prev + 1 >= limit) return std::nullopt;
    out.push_back(prev + 1);
  }
  return out;
}

// b's operand broadcast to b's shape without the `dropped` axes (kept as
// extent 1 when `keepdim`), each of which b repeats along or has extent 1.
absl::StatusOr<ValueId> Unbroadcast(Graph& g, const Node& b, const std::vector<bool>& dropped,
                                    bool keepdim) {
  const std::vector<Extent>& shape = g.value(b.outputs[0]).shape;
  const std::vector<int64_t> new_axis = NewAxes(shape.size(), dropped, keepdim);
  Attrs out;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (new_axis[a] >= 0) out.shape.push_back(dropped[a] ? Extent::Static(1) : shape[a]);
  }
  std::optional<std::vector<int64_t>> dims =
      MovedDims(b, new_axis, static_cast<int64_t>(out.shape.size()));
  if (!dims) return absl::InternalError("trivial_reductions: no room for a broadcast's operand");
  out.broadcast_dims = *dims;
  const ValueId y = b.inputs[0];
  const Value& yv = g.value(y);
  bool identity = yv.is_tensor && yv.rank() == static_cast<int>(out.shape.size());
  for (size_t k = 0; identity && k < out.broadcast_dims.size(); ++k) {
    identity = out.broadcast_dims[k] == static_cast<int64_t>(k) &&
               g.Canonical(yv.shape[k]) == g.Canonical(out.shape[k]);
  }
  if (identity) return y;
  return AddOp(g, OpKind::kBroadcastInDim, {y}, out);
}

// `v` without the `dropped` axes (extent 1 when `keepdim`), along each of
// which it repeats (`rep`) or has extent 1: broadcasts are made over the
// smaller shape and the pointwise ops between them and v are made again on
// it. An explicit stack, as graphs may be deep.
absl::StatusOr<ValueId> Rebuild(Graph& g, const Repeated& rep, ValueId v,
                                const std::vector<bool>& dropped, bool keepdim) {
  std::map<ValueId, ValueId> made;
  // A value that does not repeat along a dropped axis has extent 1 there.
  auto leaf = [&](ValueId u) {
    if (!g.value(u).is_tensor) return true;
    const Node* d = g.def(u);
    if (d == nullptr || rep[u].empty()) return true;
    bool any = false;
    for (size_t a = 0; a < dropped.size(); ++a) any |= dropped[a] && rep[u][a];
    return !any || !(d->op == OpKind::kBroadcastInDim || IsPointwise(d->op));
  };
  std::vector<std::pair<ValueId, bool>> stack = {{v, false}};
  while (!stack.empty()) {
    auto [u, expanded] = stack.back();
    stack.pop_back();
    if (made.count(u)) continue;
    if (leaf(u)) {  // extent 1 along the dropped axes: kept (NeedsSqueeze ruled out dropping)
      made[u] = u;
      continue;
    }
    const Node& d = *g.def(u);
    if (d.op == OpKind::kBroadcastInDim) {
      auto r = Unbroadcast(g, d, dropped, keepdim);
      if (!r.ok()) return r.status();
      made[u] = *r;
      continue;
    }
    if (!expanded) {
      stack.push_back({u, true});
      for (ValueId in : d.inputs) {
        if (!made.count(in)) stack.push_back({in, false});
      }
      continue;
    }
    const Node p = d;  // AddOp may move the node list
    std::vector<ValueId> inputs;
    for (ValueId in : p.inputs) inputs.push_back(made.at(in));
    auto r = AddOp(g, p.op, inputs, p.attrs);
    if (!r.ok()) return r.status();
    made[u] = *r;
  }
  return made.at(v);
}

// True when dropping the `dropped` axes of v (Rebuild without keepdim) would
// squeeze an axis of extent 1 out of a tensor: of an operand that a
// broadcast grows along one, or of a value that only has extent 1 there. The
// code generator cannot place such a squeeze followed by a broadcast in one
// kernel, so those reductions stay. An explicit stack, as graphs may be deep.
bool NeedsSqueeze(const Graph& g, const Repeated& rep, ValueId v, const std::vector<bool>& dropped,
                  bool keepdim) {
  std::vector<ValueId> stack = {v};
  std::set<ValueId> seen;
  while (!stack.empty()) {
    const ValueId u = stack.back();
    stack.pop_back();
    if (!g.value(u).is_tensor || !seen.insert(u).second) continue;
    const Node* d = g.def(u);
    bool repeats = false;
    for (size_t a = 0; a < dropped.size(); ++a) {
      if (dropped[a] && !rep[u].empty() && rep[u][a]) repeats = true;
      if (dropped[a] && !keepdim && (rep[u].empty() || !rep[u][a])) return true;  // extent 1
    }
    if (!repeats || d == nullptr) continue;
    if (d->op == OpKind::kBroadcastInDim) {
      const std::vector<int64_t> new_axis = NewAxes(dropped.size(), dropped, keepdim);
      const int64_t rank = *std::max_element(new_axis.begin(), new_axis.end()) + 1;
      if (!MovedDims(*d, new_axis, rank)) return true;
    } else {
      for (ValueId in : d->inputs) stack.push_back(in);
    }
  }
  return false;
}

// The type a sum of `in` into `out` multiplies in: the reductions' float
// accumulation for 16- and 8-bit floats, float64 where either side is; the
// result type for integer sums. Nothing for a float summed into an integer.
std::optional<DataType> SumType(DataType in, DataType out) {
  if (IsFloatingPoint(out)) return PromoteTypes(ComputeType(out), ComputeType(in));
  if (IsIntegral(out) && !IsFloatingPoint(in)) return out;
  return std::nullopt;
}

// The static product of `extents`, or -1 when one is symbolic.
int64_t StaticProduct(const Graph& g, const std::vector<Extent>& extents) {
  int64_t p = 1;
  for (const Extent& e : extents) {
    const Extent c = g.Canonical(e);
    if (!c.is_static()) return -1;
    p *= c.size;
  }
  return p;
}

// How a reduction over repeated axes is rewritten (OverRepeatedAxes).
struct RepeatedPlan {
  std::vector<bool> dropped;  // operand axes that leave the reduction
  std::vector<Extent> dropped_extents;
  std::vector<int64_t> rest;           // reduced axes that stay, in the rebuilt operand
  bool keepdim = false;                // of the rebuilt operand and reduction
  std::vector<int64_t> squeeze_after;  // the result's axes squeezed at the end
  std::optional<DataType> acc;         // sums: the type multiplied in
  int64_t count = -1;                  // product of dropped extents; -1 when symbolic
};

// The plan for reduction n, or nullopt where it is left alone.
std::optional<RepeatedPlan> PlanRepeated(const Graph& g, const Repeated& rep, const Node& n) {
  const ValueId x = n.inputs[0];
  if (x >= static_cast<ValueId>(rep.size()) || rep[x].empty()) return std::nullopt;
  const std::vector<Extent>& shape = g.value(x).shape;
  const std::vector<int64_t> reduced = ReducedAxes(n, static_cast<int>(shape.size()));
  RepeatedPlan p;
  p.dropped.assign(shape.size(), false);
  p.keepdim = n.attrs.keepdim;
  for (int64_t a : reduced) {
    p.dropped[a] = rep[x][a];
    if (rep[x][a]) p.dropped_extents.push_back(shape[a]);
  }
  if (p.dropped_extents.empty()) return std::nullopt;
  // A result of one element stays a reduction: a broadcast of an element to
  // [1, 1] beside the kernel that computes the element is one the code
  // generator cannot place.
  bool one_element = true;
  for (const Extent& e : g.value(n.outputs[0]).shape) one_element &= IsStaticOne(g, e);
  if (one_element) return std::nullopt;
  if (NeedsSqueeze(g, rep, x, p.dropped, p.keepdim)) {
    // Keep the dropped axes as extent 1 and squeeze the result instead.
    if (p.keepdim || NeedsSqueeze(g, rep, x, p.dropped, true)) return std::nullopt;
    p.keepdim = true;
    p.squeeze_after = reduced;
    std::sort(p.squeeze_after.begin(), p.squeeze_after.end());
  }
  int64_t gone = 0;
  for (int64_t a = 0; a < static_cast<int64_t>(shape.size()); ++a) {
    if (p.dropped[a]) {
      ++gone;
    } else if (std::find(reduced.begin(), reduced.end(), a) != reduced.end()) {
      p.rest.push_back(p.keepdim ? a : a - gone);
    }
  }
  p.count = StaticProduct(g, p.dropped_extents);
  if (p.count == 0) return std::nullopt;  // an empty reduction is its initial value
  const DataType in = g.value(x).dtype;
  if (n.op == OpKind::kSum) {
    p.acc = SumType(in, g.value(n.outputs[0]).dtype);
    if (!p.acc) return std::nullopt;
  } else if (n.op == OpKind::kVar || n.op == OpKind::kVarMean) {
    // Only over repeated axes alone, of a count the correction leaves positive.
    if (!p.rest.empty() || p.count < 0 || p.count <= n.attrs.correction || in == DataType::kBool) {
      return std::nullopt;
    }
  } else if (n.op != OpKind::kMax && n.op != OpKind::kMin) {
    return std::nullopt;
  }
  return p;
}

// A reduction over axes its operand repeats along (of an extent other than
// 1; RepeatedAxes): those axes leave the reduction. A sum multiplies by their
// product (in SumType), max and min are the operand, var is 0 (NaN where the
// operand is NaN or infinite, as the two-pass variance gives) and
// var_mean's mean the operand. Appends the replacement of each of n's
// results to *out; nothing when n is left alone.
absl::Status OverRepeatedAxes(Graph& g, const Repeated& rep, const Node& n,
                              std::vector<ValueId>* out) {
  std::optional<RepeatedPlan> p = PlanRepeated(g, rep, n);
  if (!p) return absl::OkStatus();
  auto z = Rebuild(g, rep, n.inputs[0], p->dropped, p->keepdim);
  if (!z.ok()) return z.status();
  ValueId v = *z;
  if (!p->rest.empty()) {
    Attrs a;
    a.dims = p->rest;
    a.keepdim = p->keepdim;
    a.dtype = p->acc ? p->acc : n.attrs.dtype;
    auto r = AddOp(g, n.op, {v}, a);
    if (!r.ok()) return r.status();
    v = *r;
  }
  // The result k of n from v: cast to its type and squeezed as planned.
  auto finish = [&](ValueId x, int k) -> absl::Status {
    const DataType t = g.value(n.outputs[k]).dtype;
    absl::StatusOr<ValueId> r = g.value(x).dtype == t ? x : AddCast(g, x, t);
    if (r.ok() && !p->squeeze_after.empty()) {
      Attrs a;
      a.dims = p->squeeze_after;
      r = AddOp(g, OpKind::kSqueeze, {*r}, a);
    }
    if (!r.ok()) return r.status();
    out->push_back(*r);
    return absl::OkStatus();
  };
  if (n.op == OpKind::kSum) {
    absl::StatusOr<ValueId> c = g.value(v).dtype == *p->acc ? v : AddCast(g, v, *p->acc);
    if (!c.ok()) return c.status();
    std::vector<int64_t> axes;
    for (size_t a = 0; a < p->dropped.size(); ++a) {
      if (p->dropped[a]) axes.push_back(static_cast<int64_t>(a));
    }
    auto k = ExtentProduct(g, n.inputs[0], axes);
    if (!k.ok()) return k.status();
    auto m = AddOp(g, OpKind::kMul, {*c, *k});
    if (!m.ok()) return m.status();
    return finish(*m, 0);
  }
  if (n.op == OpKind::kVar || n.op == OpKind::kVarMean) {
    auto zero = AddOp(g, OpKind::kSub, {v, v});
    if (!zero.ok()) return zero.status();
    if (absl::Status s = finish(*zero, 0); !s.ok() || n.op == OpKind::kVar) return s;
    return finish(v, 1);
  }
  return finish(v, 0);
}

}  // namespace

absl::StatusOr<bool> RunTrivialReductions(Graph& g, const PassOptions&, PassLog&) {
  UseReplacer replace;
  const Repeated rep = RepeatedAxes(g);
  const int count = static_cast<int>(g.nodes.size());
  for (int i = 0; i < count; ++i) {
    replace.ResolveOperands(g.nodes[i]);
    const Node n = g.nodes[i];
    if (!IsReduction(n.op)) continue;
    const ValueId x = n.inputs[0];
    bool all_ones = true;
    for (int64_t a : ReducedAxes(n, g.value(x).rank())) {
      if (!IsStaticOne(g, g.value(x).shape[a])) all_ones = false;
    }
    std::vector<ValueId> results;
    if (all_ones && (n.op == OpKind::kSum || n.op == OpKind::kMax || n.op == OpKind::kMin ||
                     n.op == OpKind::kProd)) {
      auto r = SqueezeOfOnes(g, n);
      if (!r.ok()) return r.status();
      results.push_back(*r);
    } else if (!all_ones) {
      if (absl::Status s = OverRepeatedAxes(g, rep, n, &results); !s.ok()) return s;
    }
    for (size_t k = 0; k < results.size(); ++k) replace.Replace(n.outputs[k], results[k]);
  }
  const bool changed = replace.Apply(g);
  if (changed) Compact(g);
  return changed;
}

}  // namespace fusiond
