#include "compiler/passes/pow_constant.h"

#include <cmath>

#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

absl::StatusOr<ValueId> CastIfNeeded(Graph& g, ValueId x, DataType t) {
  if (g.value(x).dtype == t) return x;
  return AddCast(g, x, t);
}

// x^n for n >= 1 by repeated squaring, every product in x's type.
absl::StatusOr<ValueId> PowerBySquaring(Graph& g, ValueId x, int n) {
  std::optional<ValueId> result;
  ValueId square = x;
  while (true) {
    if (n & 1) {
      if (!result) {
        result = square;
      } else {
        auto m = AddOp(g, OpKind::kMul, {*result, square});
        if (!m.ok()) return m.status();
        result = *m;
      }
    }
    n >>= 1;
    if (n == 0) break;
    auto sq = AddOp(g, OpKind::kMul, {square, square});
    if (!sq.ok()) return sq.status();
    square = *sq;
  }
  return *result;
}

// The replacement for pow(x, e) with result type t, or nullopt to keep it.
absl::StatusOr<std::optional<ValueId>> Rewrite(Graph& g, ValueId x, double e, DataType t) {
  const bool is_float = IsFloatingPoint(t);
  if (t == DataType::kBool) return std::optional<ValueId>();
  if (e == 1.0) {
    auto r = CastIfNeeded(g, x, t);
    if (!r.ok()) return r.status();
    return std::optional<ValueId>(*r);
  }
  if (e == 0.0) {
    // pow(x, 0) is 1 for every x, NaN included: where(x == x, 1, 1).
    auto cond = AddOp(g, OpKind::kEq, {x, x});
    if (!cond.ok()) return cond.status();
    ValueId one = MakeConstant(g, 1.0, t);
    auto r = AddOp(g, OpKind::kWhere, {*cond, one, one});
    if (!r.ok()) return r.status();
    return std::optional<ValueId>(*r);
  }
  if (is_float && (e == 0.5 || e == -0.5)) {
    auto xt = CastIfNeeded(g, x, t);
    if (!xt.ok()) return xt.status();
    auto r = AddOp(g, e > 0 ? OpKind::kSqrt : OpKind::kRsqrt, {*xt});
    if (!r.ok()) return r.status();
    return std::optional<ValueId>(*r);
  }
  if (e != std::floor(e) || e < -4 || e > 8) return std::optional<ValueId>();
  const int n = static_cast<int>(e);
  if (n < 0 && !is_float) return std::optional<ValueId>();
  // 16-bit results: products in float while they are exact there (bf16
  // x^3 has 24 significant bits), else in float64, so the result is rounded
  // once, like the pow. 32- and 64-bit results multiply in their own type.
  DataType compute = ComputeType(t);
  if (compute != t && (n < 0 || MantissaBits(t) * (n < 0 ? -n : n) > MantissaBits(compute))) {
    compute = DataType::kDouble;
  }
  auto xc = CastIfNeeded(g, x, compute);
  if (!xc.ok()) return xc.status();
  auto p = PowerBySquaring(g, *xc, n < 0 ? -n : n);
  if (!p.ok()) return p.status();
  ValueId r = *p;
  if (n < 0) {
    auto rec = AddOp(g, OpKind::kReciprocal, {r});
    if (!rec.ok()) return rec.status();
    r = *rec;
  }
  auto back = CastIfNeeded(g, r, t);
  if (!back.ok()) return back.status();
  return std::optional<ValueId>(*back);
}

}  // namespace

absl::StatusOr<bool> RunPowConstant(Graph& g, const PassOptions&, PassLog&) {
  UseReplacer replace;
  const int count = static_cast<int>(g.nodes.size());
  for (int i = 0; i < count; ++i) {
    replace.ResolveOperands(g.nodes[i]);
    if (g.nodes[i].op != OpKind::kPow) continue;
    const ValueId x = g.nodes[i].inputs[0];
    const ValueId out = g.nodes[i].outputs[0];
    std::optional<double> e = ConstantOf(g, g.nodes[i].inputs[1]);
    if (!e) continue;
    // The result must have x's shape (a scalar exponent never broadcasts x).
    if (g.value(out).rank() != g.value(x).rank() ||
        g.value(out).is_tensor != g.value(x).is_tensor) {
      continue;
    }
    auto r = Rewrite(g, x, *e, g.value(out).dtype);
    if (!r.ok()) return r.status();
    if (!*r) continue;
    replace.Replace(out, **r);
  }
  const bool changed = replace.Apply(g);
  if (changed) Compact(g);
  return changed;
}

}  // namespace fusiond
