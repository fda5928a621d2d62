#include "compiler/passes/reshape_views.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/reshape_views.h"
#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

// One axis' factors, outermost first; their product is the axis' extent.
// An axis of extent 1 is {1}; other axes never hold a factor 1.
using Factors = std::vector<Extent>;

// The common refinement of two factorizations of one static extent: the
// union of their cut points (suffix products), which must divide each other.
std::optional<std::vector<int64_t>> RefineStatic(const std::vector<int64_t>& a,
                                                 const std::vector<int64_t>& b) {
  if (a == b) return a;
  auto cuts = [](const std::vector<int64_t>& f, std::set<int64_t>* out) {
    int64_t p = 1;
    out->insert(p);
    for (size_t i = f.size(); i-- > 0;) {
      if (f[i] <= 0 || p > INT64_MAX / f[i]) return false;
      p *= f[i];
      out->insert(p);
    }
    return true;
  };
  std::set<int64_t> ca, cb;
  if (!cuts(a, &ca) || !cuts(b, &cb) || *ca.rbegin() != *cb.rbegin()) return std::nullopt;
  ca.insert(cb.begin(), cb.end());
  std::vector<int64_t> c(ca.begin(), ca.end()), out;
  for (size_t k = c.size() - 1; k > 0; --k) {
    if (c[k] % c[k - 1] != 0) return std::nullopt;
    out.push_back(c[k] / c[k - 1]);
  }
  return out;
}

// The common refinement of two factorizations of one extent: symbolic
// factors must be the same in both, in the same places between the static
// runs, which are refined as above.
std::optional<Factors> Refine(const Graph& g, const Factors& a, const Factors& b) {
  Factors out;
  size_t i = 0, j = 0;
  for (;;) {
    std::vector<int64_t> ra, rb;
    while (i < a.size() && a[i].is_static()) ra.push_back(a[i++].size);
    while (j < b.size() && b[j].is_static()) rb.push_back(b[j++].size);
    auto r = RefineStatic(ra, rb);
    if (!r) return std::nullopt;
    for (int64_t f : *r) out.push_back(Extent::Static(f));
    if (i == a.size() && j == b.size()) break;
    if (i == a.size() || j == b.size() || !g.SameExtent(a[i], b[j])) return std::nullopt;
    out.push_back(g.Canonical(a[i]));
    ++i;
    ++j;
  }
  if (out.empty()) out.push_back(Extent::Static(1));
  return out;
}

int64_t StaticProduct(const Factors& f) {
  int64_t p = 1;
  for (const Extent& e : f) p *= e.size;
  return p;
}

// The factorization of every tensor, refined to a fixed point over the links
// each op makes between the axes of its operands and results.
class Factorization {
 public:
  explicit Factorization(const Graph& g) : g_(g), fac_(g.values.size()) {
    for (const Value& v : g.values) {
      for (const Extent& e : v.shape) fac_[v.id].push_back({g.Canonical(e)});
    }
  }
  // False (with why()) when some link has no common refinement.
  bool Solve();
  const std::string& why() const { return why_; }
  const Factors& at(ValueId v, int axis) const { return fac_[v][axis]; }
  std::vector<Extent> FineShape(ValueId v) const {
    std::vector<Extent> s;
    for (const Factors& f : fac_[v]) s.insert(s.end(), f.begin(), f.end());
    return s;
  }
  // Index of axis `axis`'s first factor in the fine shape.
  int FineIndex(ValueId v, int axis) const {
    int k = 0;
    for (int a = 0; a < axis; ++a) k += static_cast<int>(fac_[v][a].size());
    return k;
  }
  bool Split(ValueId v) const {
    for (const Factors& f : fac_[v])
      if (f.size() > 1) return true;
    return false;
  }

 private:
  bool Unit(ValueId v, int axis) const {
    return g_.Canonical(g_.value(v).shape[axis]) == Extent::Static(1);
  }
  // Axis (v, i) and axis (w, k) are the same axis: refine both.
  void Link(ValueId v, int i, ValueId w, int k);
  // The factors a slice's operand and result take on axis `a` (nullopt: none fit).
  std::optional<std::pair<Factors, Factors>> SliceAxis(const Node& n, int a) const;
  void LinkReshape(const Node& n);
  void Sweep(const Node& n);
  bool Set(ValueId v, int axis, const Factors& f) {
    if (fac_[v][axis] == f) return false;
    fac_[v][axis] = f;
    return changed_ = true;
  }
  void Fail(std::string why) {
    if (why_.empty()) why_ = std::move(why);
  }

  const Graph& g_;
  std::vector<std::vector<Factors>> fac_;
  bool changed_ = false;
  std::string why_;
};

// Whether slice `n` keeps axis `a` whole.
bool WholeSliceAxis(const Graph& g, const Node& n, int a) {
  const int rank = g.value(n.inputs[0]).rank();
  return n.attrs.offsets[a] == 0 && n.attrs.offsets[2 * rank + a] == 1 &&
         g.SameExtent(g.value(n.inputs[0]).shape[a], g.value(n.outputs[0]).shape[a]);
}

void Factorization::Link(ValueId v, int i, ValueId w, int k) {
  if (Unit(v, i) || Unit(w, k)) return;
  auto r = Refine(g_, fac_[v][i], fac_[w][k]);
  if (!r) {
    return Fail(absl::StrCat("axis ", i, " of ", ValueName(g_, v), " and axis ", k, " of ",
                             ValueName(g_, w), " are split in ways with no common refinement"));
  }
  Set(v, i, *r);
  Set(w, k, *r);
}

// A whole axis: the common refinement of both sides. A static window of
// stride 1: both sides' factors below the first, refined, when their
// product m divides the window's start and length and the extent, leaving
// first factors of at least 2: [2304] sliced [768, 1536) and split [12, 64]
// is [36, 64] sliced [12, 24) on its first axis (q, k, v of a fused
// projection, split into heads).
std::optional<std::pair<Factors, Factors>> Factorization::SliceAxis(const Node& n, int a) const {
  const ValueId x = n.inputs[0], y = n.outputs[0];
  const Factors &fx = fac_[x][a], &fy = fac_[y][a];
  if (WholeSliceAxis(g_, n, a)) {
    if (auto r = Refine(g_, fx, fy)) return std::pair{*r, *r};
    return std::nullopt;
  }
  if (fx.size() == 1 && fy.size() == 1) return std::pair{fx, fy};
  const int rank = g_.value(x).rank();
  const Extent ex = g_.Canonical(g_.value(x).shape[a]), ey = g_.Canonical(g_.value(y).shape[a]);
  if (n.attrs.offsets[2 * rank + a] != 1 || !ex.is_static() || !ey.is_static()) return std::nullopt;
  std::set<int64_t> cuts{1};
  for (const Factors* f : {&fx, &fy}) {
    int64_t p = 1;
    for (size_t i = f->size(); i-- > 1;) {
      if (!(*f)[i].is_static()) return std::nullopt;
      cuts.insert(p *= (*f)[i].size);
    }
  }
  const std::vector<int64_t> c(cuts.begin(), cuts.end());
  const int64_t m = c.back();
  if (n.attrs.offsets[a] % m != 0 || ex.size % m != 0 || ey.size % m != 0 || ex.size / m < 2 ||
      ey.size / m < 2) {
    return std::nullopt;
  }
  std::pair<Factors, Factors> out{{Extent::Static(ex.size / m)}, {Extent::Static(ey.size / m)}};
  for (size_t k = c.size() - 1; k > 0; --k) {
    if (c[k] % c[k - 1] != 0) return std::nullopt;
    out.first.push_back(Extent::Static(c[k] / c[k - 1]));
    out.second.push_back(Extent::Static(c[k] / c[k - 1]));
  }
  return out;
}

// Groups of axes with equal products on both sides ([N, C, H, W] ->
// [N, G, C/G, H, W]: {N}-{N}, {C}-{G, C/G}, ...) share one refinement, which
// each axis then takes its part of.
void Factorization::LinkReshape(const Node& n) {
  const ValueId x = n.inputs[0], y = n.outputs[0];
  std::vector<int> xa, ya;  // axes other than 1s
  for (int i = 0; i < g_.value(x).rank(); ++i)
    if (!Unit(x, i)) xa.push_back(i);
  for (int i = 0; i < g_.value(y).rank(); ++i)
    if (!Unit(y, i)) ya.push_back(i);
  const std::string what = absl::StrCat("reshape ", ValueName(g_, y));
  size_t i = 0, j = 0;
  while (i < xa.size() || j < ya.size()) {
    if (i == xa.size() || j == ya.size()) return Fail(what + ": axes left over");
    const Extent ex = g_.Canonical(g_.value(x).shape[xa[i]]);
    const Extent ey = g_.Canonical(g_.value(y).shape[ya[j]]);
    std::vector<int> gx{xa[i++]}, gy{ya[j++]};
    if (!ex.is_static() || !ey.is_static()) {
      if (!(ex == ey)) {
        return Fail(what + ": regroups the symbolic axis " +
                    g_.ExtentName(ex.is_static() ? ey : ex) +
                    " (only whole, or split by static factors)");
      }
    } else {
      int64_t px = ex.size, py = ey.size;
      while (px != py) {
        const bool more_x = px < py;
        std::vector<int>& grp = more_x ? gx : gy;
        const std::vector<int>& axes = more_x ? xa : ya;
        size_t& at = more_x ? i : j;
        const ValueId v = more_x ? x : y;
        if (at == axes.size()) return Fail(what + ": element counts differ");
        const Extent e = g_.Canonical(g_.value(v).shape[axes[at]]);
        if (!e.is_static() || e.size == 0) {
          return Fail(what + ": merges a symbolic axis with others");
        }
        (more_x ? px : py) *= e.size;
        grp.push_back(axes[at++]);
      }
    }
    Factors fx, fy;
    for (int a : gx) fx.insert(fx.end(), fac_[x][a].begin(), fac_[x][a].end());
    for (int a : gy) fy.insert(fy.end(), fac_[y][a].begin(), fac_[y][a].end());
    auto r = Refine(g_, fx, fy);
    if (!r) return Fail(what + ": regroups axes with no common refinement");
    // Each axis takes the run of the refinement whose product is its extent.
    auto distribute = [&](ValueId v, const std::vector<int>& grp) {
      size_t k = 0;
      for (int a : grp) {
        const Extent e = g_.Canonical(g_.value(v).shape[a]);
        Factors f;
        if (!e.is_static()) {
          f.push_back((*r)[k++]);
        } else {
          for (int64_t p = 1; k < r->size() && p < e.size; ++k) {
            p *= (*r)[k].size;
            f.push_back((*r)[k]);
          }
        }
        Set(v, a, f);
      }
    };
    distribute(x, gx);
    distribute(y, gy);
  }
}

void Factorization::Sweep(const Node& n) {
  const ValueId out = n.outputs[0];
  if (!g_.value(out).is_tensor) return;
  const Value& ov = g_.value(out);
  if (IsPointwise(n.op)) {
    for (ValueId in : n.inputs) {
      if (!g_.value(in).is_tensor || g_.value(in).rank() != ov.rank()) continue;
      for (int a = 0; a < ov.rank(); ++a) Link(in, a, out, a);
    }
    return;
  }
  const ValueId x = n.inputs[0];
  const Attrs& at = n.attrs;
  if (IsReduction(n.op)) {
    int k = 0;
    for (int a = 0; a < g_.value(x).rank(); ++a) {
      const bool reduced = std::count(at.dims.begin(), at.dims.end(), a) > 0;
      for (ValueId o : n.outputs) {
        if (!reduced) Link(x, a, o, k);
      }
      if (!reduced || at.keepdim) ++k;
    }
    return;
  }
  switch (n.op) {
    case OpKind::kBroadcastInDim:
      if (g_.value(x).is_tensor) {
        for (size_t i = 0; i < at.broadcast_dims.size(); ++i)
          Link(x, static_cast<int>(i), out, static_cast<int>(at.broadcast_dims[i]));
      }
      break;
    case OpKind::kBroadcast: {
      int k = 0;
      for (size_t o = 0; o < at.is_broadcast_dim.size(); ++o)
        if (!at.is_broadcast_dim[o]) Link(x, k++, out, static_cast<int>(o));
      break;
    }
    case OpKind::kSqueeze: {
      int k = 0;
      for (int a = 0; a < g_.value(x).rank(); ++a)
        if (!std::count(at.dims.begin(), at.dims.end(), a)) Link(x, a, out, k++);
      break;
    }
    case OpKind::kPermute:
      for (size_t o = 0; o < at.dims.size(); ++o)
        Link(x, static_cast<int>(at.dims[o]), out, static_cast<int>(o));
      break;
    case OpKind::kReshape:
      LinkReshape(n);
      break;
    case OpKind::kSlice:
      for (int a = 0; a < g_.value(x).rank(); ++a) {
        if (auto f = SliceAxis(n, a)) Set(x, a, f->first), Set(out, a, f->second);
      }
      break;
    default:  // expand, random ops, iota, pad, cat: never split (checked after)
      break;
  }
}

bool Factorization::Solve() {
  do {
    changed_ = false;
    for (const Node& n : g_.nodes) {
      Sweep(n);
      if (!why_.empty()) return false;
    }
  } while (changed_);
  for (const Node& n : g_.nodes) {
    const OpKind op = n.op;
    if (IsPointwise(op) || IsReduction(op) || op == OpKind::kBroadcastInDim ||
        op == OpKind::kBroadcast || op == OpKind::kSqueeze || op == OpKind::kPermute ||
        op == OpKind::kReshape || op == OpKind::kSize) {
      continue;
    }
    bool slice_fits = op == OpKind::kSlice;
    for (int a = 0; slice_fits && a < g_.value(n.inputs[0]).rank(); ++a) {
      auto f = SliceAxis(n, a);
      slice_fits = f && f->first == fac_[n.inputs[0]][a] && f->second == fac_[n.outputs[0]][a];
    }
    if (slice_fits) continue;
    for (const auto* vs : {&n.inputs, &n.outputs}) {
      for (ValueId v : *vs) {
        if (g_.value(v).is_tensor && Split(v)) {
          Fail(absl::StrCat(OpName(op), " ", ValueName(g_, n.outputs[0]),
                            " would need its axes split (not supported for this op)"));
          return false;
        }
      }
    }
  }
  return true;
}

// The graph rebuilt in the fine factorization (new nodes appended; the old
// ones die and Compact drops them).
class Rebuild {
 public:
  Rebuild(Graph& h, const Factorization& f) : h_(h), f_(f), b_(&h), nv_(h.values.size(), kNone) {}
  absl::Status Run();

 private:
  absl::StatusOr<std::vector<ValueId>> Node1(const Node& n, const std::vector<ValueId>& ins);
  absl::StatusOr<std::vector<ValueId>> Reduction(const Node& n, const std::vector<ValueId>& ins);
  absl::StatusOr<ValueId> ReshapeNode(const Node& n, ValueId x);
  std::vector<int64_t> SliceOffsets(const Node& n) const;
  absl::StatusOr<ValueId> Op(OpKind op, std::vector<ValueId> in, Attrs a) {
    auto r = b_.AddNode(op, std::move(in), std::move(a));
    if (!r.ok()) return r.status();
    return r->front();
  }

  Graph& h_;
  const Factorization& f_;
  GraphBuilder b_;
  std::vector<ValueId> nv_;  // original value -> its fine-form value
};

absl::StatusOr<ValueId> Rebuild::ReshapeNode(const Node& n, ValueId x) {
  // Both sides refine to the same factors, up to axes of extent 1.
  const std::vector<Extent> in = f_.FineShape(n.inputs[0]), out = f_.FineShape(n.outputs[0]);
  std::vector<Extent> in_big, out_big;
  std::vector<int64_t> ones, keep;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == Extent::Static(1)) {
      ones.push_back(static_cast<int64_t>(i));
    } else {
      in_big.push_back(in[i]);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == Extent::Static(1)) continue;
    out_big.push_back(out[i]);
    keep.push_back(static_cast<int64_t>(i));
  }
  if (in_big.size() != out_big.size()) {
    return absl::InternalError("reshape_views: the two sides of a reshape refine differently");
  }
  for (size_t i = 0; i < in_big.size(); ++i) {
    if (!h_.SameExtent(in_big[i], out_big[i]))
      return absl::InternalError("reshape_views: the two sides of a reshape refine differently");
  }
  if (in.size() == out.size()) {
    bool same = true;
    for (size_t i = 0; i < in.size(); ++i) same &= h_.SameExtent(in[i], out[i]);
    if (same) return x;
  }
  if (!ones.empty()) {
    Attrs sq;
    sq.dims = ones;
    auto s = Op(OpKind::kSqueeze, {x}, sq);
    if (!s.ok()) return s.status();
    x = *s;
  }
  Attrs bc;
  bc.shape = out;
  bc.broadcast_dims = keep;
  return Op(OpKind::kBroadcastInDim, {x}, bc);
}

// A slice's starts, ends and strides on the fine axes: a split axis whole in
// every factor, or its window on the first factor.
std::vector<int64_t> Rebuild::SliceOffsets(const Node& n) const {
  const int rank = h_.value(n.inputs[0]).rank();
  std::vector<int64_t> o[3];  // starts, ends, strides
  for (int d = 0; d < rank; ++d) {
    const Factors& fx = f_.at(n.inputs[0], d);
    const bool whole = WholeSliceAxis(h_, n, d);
    for (size_t k = 0; k < fx.size(); ++k) {
      if (fx.size() == 1) {
        for (int i = 0; i < 3; ++i) o[i].push_back(n.attrs.offsets[i * rank + d]);
        continue;
      }
      const bool window = !whole && k == 0;
      const int64_t start = window ? n.attrs.offsets[d] / (StaticProduct(fx) / fx[0].size) : 0;
      o[0].push_back(start);
      o[1].push_back(window ? start + f_.at(n.outputs[0], d)[0].size : INT64_MAX);
      o[2].push_back(1);
    }
  }
  o[0].insert(o[0].end(), o[1].begin(), o[1].end());
  o[0].insert(o[0].end(), o[2].begin(), o[2].end());
  return o[0];
}

absl::StatusOr<std::vector<ValueId>> Rebuild::Reduction(const Node& n,
                                                        const std::vector<ValueId>& ins) {
  const ValueId x = n.inputs[0];
  Attrs a = n.attrs;
  a.dims.clear();
  bool split_reduced = false;
  for (int64_t d : n.attrs.dims) {
    const int k = f_.FineIndex(x, static_cast<int>(d));
    const int count = static_cast<int>(f_.at(x, static_cast<int>(d)).size());
    split_reduced |= count > 1;
    for (int t = 0; t < count; ++t) a.dims.push_back(k + t);
  }
  if (!n.attrs.keepdim || !split_reduced) return b_.AddNode(n.op, ins, a);
  // keepdim over a split axis: reduce without it, then broadcast to the
  // result's fine shape (one axis of 1 per reduced axis).
  a.keepdim = false;
  auto r = b_.AddNode(n.op, ins, a);
  if (!r.ok()) return r.status();
  std::vector<int64_t> kept;
  for (int d = 0; d < h_.value(x).rank(); ++d) {
    if (std::count(n.attrs.dims.begin(), n.attrs.dims.end(), d)) continue;
    const int k = f_.FineIndex(n.outputs[0], d);
    for (size_t t = 0; t < f_.at(x, d).size(); ++t) kept.push_back(k + static_cast<int>(t));
  }
  std::vector<ValueId> outs;
  for (size_t o = 0; o < r->size(); ++o) {
    auto bc = b_.BroadcastInDim((*r)[o], f_.FineShape(n.outputs[o]), kept);
    if (!bc.ok()) return bc.status();
    outs.push_back(*bc);
  }
  return outs;
}

absl::StatusOr<std::vector<ValueId>> Rebuild::Node1(const Node& n,
                                                    const std::vector<ValueId>& ins) {
  const ValueId x = n.inputs.empty() ? kNone : n.inputs[0], out = n.outputs[0];
  Attrs a = n.attrs;
  if (IsReduction(n.op)) return Reduction(n, ins);
  switch (n.op) {
    case OpKind::kBroadcastInDim:
      a.shape = f_.FineShape(out);
      a.broadcast_dims.clear();
      for (size_t i = 0; i < n.attrs.broadcast_dims.size(); ++i) {
        const int k = f_.FineIndex(out, static_cast<int>(n.attrs.broadcast_dims[i]));
        for (size_t t = 0; t < f_.at(x, static_cast<int>(i)).size(); ++t)
          a.broadcast_dims.push_back(k + static_cast<int64_t>(t));
      }
      break;
    case OpKind::kBroadcast:
      a.is_broadcast_dim.clear();
      for (size_t o = 0; o < n.attrs.is_broadcast_dim.size(); ++o) {
        a.is_broadcast_dim.insert(a.is_broadcast_dim.end(), f_.at(out, static_cast<int>(o)).size(),
                                  n.attrs.is_broadcast_dim[o]);
      }
      break;
    case OpKind::kSqueeze:
    case OpKind::kPermute:
      a.dims.clear();
      for (int64_t d : n.attrs.dims) {
        const int k = f_.FineIndex(x, static_cast<int>(d));
        const size_t count = n.op == OpKind::kSqueeze ? 1 : f_.at(x, static_cast<int>(d)).size();
        for (size_t t = 0; t < count; ++t) a.dims.push_back(k + static_cast<int64_t>(t));
      }
      break;
    case OpKind::kSlice:
      a.offsets = SliceOffsets(n);
      break;
    case OpKind::kReshape: {
      auto r = ReshapeNode(n, ins[0]);
      if (!r.ok()) return r.status();
      return std::vector<ValueId>{*r};
    }
    case OpKind::kSize: {
      const Factors& fx = f_.at(x, static_cast<int>(n.attrs.axis));
      if (fx.size() > 1) {  // static factors (a symbolic axis is never split)
        return std::vector<ValueId>{
            MakeConstant(h_, static_cast<double>(StaticProduct(fx)), h_.value(out).dtype)};
      }
      a.axis = f_.FineIndex(x, static_cast<int>(n.attrs.axis));
      break;
    }
    default:
      break;
  }
  return b_.AddNode(n.op, ins, a);
}

absl::Status Rebuild::Run() {
  const size_t count = h_.nodes.size();  // the original nodes
  for (ValueId v = 0; v < static_cast<ValueId>(nv_.size()); ++v) {
    const Value& val = h_.value(v);
    if (val.def != kNone) continue;
    if (!val.is_tensor || !f_.Split(v)) {
      nv_[v] = v;
      continue;
    }
    Attrs a;
    a.shape = f_.FineShape(v);
    auto r = Op(OpKind::kReshape, {v}, a);
    if (!r.ok()) return r.status();
    nv_[v] = *r;
  }
  for (size_t i = 0; i < count; ++i) {
    const Node n = h_.nodes[i];  // a copy: adding nodes moves the vector
    std::vector<ValueId> ins;
    for (ValueId in : n.inputs) ins.push_back(nv_[in]);
    auto outs = Node1(n, ins);
    if (!outs.ok()) return outs.status();
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      nv_[n.outputs[o]] = (*outs)[o];
      if (h_.value((*outs)[o]).is_tensor && h_.value((*outs)[o]).name.empty())
        h_.value((*outs)[o]).name = h_.value(n.outputs[o]).name;
    }
  }
  for (ValueId& o : h_.outputs) {
    const ValueId fine = nv_[o];
    if (!f_.Split(o)) {
      o = fine;
      continue;
    }
    Attrs a;
    for (const Extent& e : h_.value(o).shape) a.shape.push_back(h_.Canonical(e));
    auto r = Op(OpKind::kReshape, {fine}, a);
    if (!r.ok()) return r.status();
    o = *r;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> RunReshapeViews(Graph& g, const PassOptions&, PassLog& log) {
  const auto uses = g.Uses();
  const Node* inner = nullptr;
  for (const Node& n : g.nodes) {
    if (n.op == OpKind::kReshape && !IsInputView(g, n, uses) && !IsOutputView(g, n, uses)) {
      inner = &n;
      break;
    }
  }
  if (inner == nullptr) return false;
  Factorization f(g);
  if (!f.Solve()) {
    const std::string note = absl::StrCat("kept reshape ", ValueName(g, inner->outputs[0]),
                                          " inside the graph: ", f.why());
    if (std::find(log.notes.begin(), log.notes.end(), note) == log.notes.end())
      log.notes.push_back(note);
    return false;
  }
  Graph h = g;
  Rebuild rebuild(h, f);
  if (absl::Status s = rebuild.Run(); !s.ok()) return s;
  Compact(h);
  g = std::move(h);
  return true;
}

}  // namespace fusiond
