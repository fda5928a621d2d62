#include "compiler/passes/shape_chains.h"

#include <algorithm>
#include <numeric>

#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

bool SameShape(const Graph& g, const std::vector<Extent>& a, const std::vector<Extent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!g.SameExtent(a[i], b[i])) return false;
  }
  return true;
}

Attrs BroadcastAttrs(std::vector<Extent> shape, std::vector<int64_t> dims) {
  Attrs a;
  a.shape = std::move(shape);
  a.broadcast_dims = std::move(dims);
  return a;
}

// The replacement of node n (a shape op), or nullopt when none applies.
absl::StatusOr<std::optional<ValueId>> Simplify(Graph& g, const Node& n) {
  using Result = std::optional<ValueId>;
  const ValueId x = n.inputs[0];
  const Value& xv = g.value(x);
  const Value& out = g.value(n.outputs[0]);
  const Node* d = g.def(x);
  switch (n.op) {
    case OpKind::kBroadcast: {
      std::vector<int64_t> dims;
      for (size_t i = 0; i < n.attrs.is_broadcast_dim.size(); ++i) {
        if (!n.attrs.is_broadcast_dim[i]) dims.push_back(static_cast<int64_t>(i));
      }
      auto r = AddOp(g, OpKind::kBroadcastInDim, {x}, BroadcastAttrs(out.shape, dims));
      if (!r.ok()) return r.status();
      return Result(*r);
    }
    case OpKind::kExpand: {
      std::vector<int64_t> dims(xv.rank());
      std::iota(dims.begin(), dims.end(), 0);
      auto r = AddOp(g, OpKind::kBroadcastInDim, {x}, BroadcastAttrs(out.shape, dims));
      if (!r.ok()) return r.status();
      return Result(*r);
    }
    case OpKind::kBroadcastInDim: {
      if (SameShape(g, xv.shape, out.shape)) return Result(x);
      if (d && d->op == OpKind::kBroadcastInDim) {
        std::vector<int64_t> dims;
        for (int64_t inner : d->attrs.broadcast_dims) {
          dims.push_back(n.attrs.broadcast_dims[inner]);
        }
        auto r =
            AddOp(g, OpKind::kBroadcastInDim, {d->inputs[0]}, BroadcastAttrs(n.attrs.shape, dims));
        if (!r.ok()) return r.status();
        return Result(*r);
      }
      if (d && d->op == OpKind::kSqueeze) {
        // Give each squeezed (size-1) axis of y a free output axis in order.
        const ValueId y = d->inputs[0];
        const int yr = g.value(y).rank();
        const auto& sq = d->attrs.dims;
        const auto& bd = n.attrs.broadcast_dims;
        const int out_rank = static_cast<int>(n.attrs.shape.size());
        std::vector<int64_t> dims;
        int64_t prev = -1;
        size_t kept = 0;
        for (int a = 0; a < yr; ++a) {
          if (!std::binary_search(sq.begin(), sq.end(), a)) {
            prev = bd[kept++];
            dims.push_back(prev);
            continue;
          }
          int64_t limit = kept < bd.size() ? bd[kept] : out_rank;
          int64_t o = prev + 1;
          while (o < limit && std::find(bd.begin(), bd.end(), o) != bd.end()) ++o;
          if (o >= limit) return Result();
          dims.push_back(o);
          prev = o;
        }
        auto r = AddOp(g, OpKind::kBroadcastInDim, {y}, BroadcastAttrs(n.attrs.shape, dims));
        if (!r.ok()) return r.status();
        return Result(*r);
      }
      return Result();
    }
    case OpKind::kSqueeze: {
      if (n.attrs.dims.empty()) return Result(x);
      if (d && d->op == OpKind::kBroadcastInDim) {
        const auto& bd = d->attrs.broadcast_dims;
        const auto& sq = n.attrs.dims;
        for (int64_t s : sq) {
          if (std::find(bd.begin(), bd.end(), s) != bd.end()) return Result();
        }
        std::vector<Extent> shape;
        for (int i = 0; i < static_cast<int>(d->attrs.shape.size()); ++i) {
          if (!std::binary_search(sq.begin(), sq.end(), i)) shape.push_back(d->attrs.shape[i]);
        }
        std::vector<int64_t> dims;
        for (int64_t b : bd) {
          dims.push_back(b - (std::lower_bound(sq.begin(), sq.end(), b) - sq.begin()));
        }
        auto r = AddOp(g, OpKind::kBroadcastInDim, {d->inputs[0]}, BroadcastAttrs(shape, dims));
        if (!r.ok()) return r.status();
        return Result(*r);
      }
      return Result();
    }
    case OpKind::kReshape: {
      if (SameShape(g, xv.shape, out.shape)) return Result(x);
      if (d && d->op == OpKind::kReshape) {
        Attrs a;
        a.shape = n.attrs.shape;
        auto r = AddOp(g, OpKind::kReshape, {d->inputs[0]}, a);
        if (!r.ok()) return r.status();
        return Result(*r);
      }
      return Result();
    }
    case OpKind::kPermute: {
      for (size_t i = 0; i < n.attrs.dims.size(); ++i) {
        if (n.attrs.dims[i] != static_cast<int64_t>(i)) return Result();
      }
      return Result(x);
    }
    default:
      return Result();
  }
}

// One sweep over the nodes present at the start; true when it rewrote any.
absl::StatusOr<bool> Sweep(Graph& g) {
  UseReplacer replace;
  const int count = static_cast<int>(g.nodes.size());
  for (int i = 0; i < count; ++i) {
    replace.ResolveOperands(g.nodes[i]);
    const Node n = g.nodes[i];
    if (!IsShapeOp(n.op)) continue;
    auto r = Simplify(g, n);
    if (!r.ok()) return r.status();
    if (*r) replace.Replace(n.outputs[0], **r);
  }
  return replace.Apply(g);
}

}  // namespace

absl::StatusOr<bool> RunShapeChains(Graph& g, const PassOptions&, PassLog&) {
  bool changed = false;
  for (int guard = 0; guard < 10000; ++guard) {
    auto swept = Sweep(g);
    if (!swept.ok()) return swept.status();
    if (!*swept) break;
    changed = true;
    Compact(g);
  }
  return changed;
}

}  // namespace fusiond
