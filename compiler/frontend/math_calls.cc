// DefinitionLowering::MathOp: nvFuser's unary math ops the IR has no node
// for, written with IR ops (fd.ops.silu, atan, tan, sinh, cosh, asin, acos,
// atanh; Thunder prints the trigonometric ones, nvFuser's own tests silu;
// asinh, acosh, lgamma, erfinv, is_neginf, is_posinf in special_math.cc).
// Each is computed in float32 for integer, bool and 16- or 8-bit float
// tensors (double for integer scalars), and a 16- or 8-bit float result is
// rounded once to the operand's type, as nvFuser's float ops do. The forms
// avoid cancellation: sinh from expm1, asin / acos from atan2 with
// sqrt((1 - x)(1 + x)), atanh from log1p(x) - log1p(-x).
#include "absl/strings/str_cat.h"
#include "compiler/frontend/definition.h"
#include "compiler/frontend/special_math.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
namespace {

bool IsMathOp(const std::string& name) {
  static const char* kNames[] = {"silu",   "atan",   "tan",       "sinh",     "cosh",
                                 "asin",   "acos",   "atanh",     "asinh",    "acosh",
                                 "lgamma", "erfinv", "is_neginf", "is_posinf"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<ValueId> DefinitionLowering::MathValue(const std::string& name, ValueId x) {
  if (name == "is_neginf" || name == "is_posinf") return InfSignValue(b_, name, x);
  const Value& xv = g_->value(x);
  const DataType in = xv.dtype;
  const bool reduced = IsFloatingPoint(in) && ComputeType(in) != in;
  DataType t = in;
  if (!IsFloatingPoint(in)) t = xv.is_tensor ? DataType::kFloat : DataType::kDouble;
  if (reduced) t = DataType::kFloat;
  if (t != in) {
    auto c = b_.Cast(x, t);
    if (!c.ok()) return c.status();
    x = *c;
  }
  auto k = [&](double v) { return b_.DefineConstant(v, DataType::kDouble); };
  auto un = [&](OpKind op, ValueId a) { return b_.Unary(op, a); };
  auto bin = [&](OpKind op, ValueId a, ValueId b) { return b_.Binary(op, a, b); };
  // sqrt((1 - x) * (1 + x)): the cosine of asin(x), exact near |x| = 1.
  auto cos_of_asin = [&]() -> absl::StatusOr<ValueId> {
    auto lo = bin(OpKind::kSub, k(1), x);
    if (!lo.ok()) return lo;
    auto hi = bin(OpKind::kAdd, k(1), x);
    if (!hi.ok()) return hi;
    auto p = bin(OpKind::kMul, *lo, *hi);
    if (!p.ok()) return p;
    return un(OpKind::kSqrt, *p);
  };
  absl::StatusOr<ValueId> r;
  if (name == "silu") {
    auto s = un(OpKind::kSigmoid, x);
    r = s.ok() ? bin(OpKind::kMul, x, *s) : s;
  } else if (name == "atan") {
    r = bin(OpKind::kAtan2, x, k(1));
  } else if (name == "tan") {
    auto s = un(OpKind::kSin, x);
    auto c = un(OpKind::kCos, x);
    r = s.ok() && c.ok() ? bin(OpKind::kDiv, *s, *c) : (s.ok() ? c : s);
  } else if (name == "sinh" || name == "cosh") {
    const bool sinh = name == "sinh";
    auto neg = un(OpKind::kNeg, x);
    if (!neg.ok()) return neg;
    auto a = un(sinh ? OpKind::kExpm1 : OpKind::kExp, x);
    auto b = un(sinh ? OpKind::kExpm1 : OpKind::kExp, *neg);
    auto s = a.ok() && b.ok() ? bin(sinh ? OpKind::kSub : OpKind::kAdd, *a, *b) : (a.ok() ? b : a);
    r = s.ok() ? bin(OpKind::kMul, *s, k(0.5)) : s;
  } else if (name == "asin" || name == "acos") {
    auto c = cos_of_asin();
    if (!c.ok()) return c;
    r = name == "asin" ? bin(OpKind::kAtan2, x, *c) : bin(OpKind::kAtan2, *c, x);
  } else if (IsSpecialMathOp(name)) {
    r = SpecialMathValue(b_, name, x, t);
  } else {  // atanh(x) = (log1p(x) - log1p(-x)) / 2: terms of opposite signs
    auto neg = un(OpKind::kNeg, x);
    if (!neg.ok()) return neg;
    auto a = un(OpKind::kLog1p, x);
    auto b = un(OpKind::kLog1p, *neg);
    auto d = a.ok() && b.ok() ? bin(OpKind::kSub, *a, *b) : (a.ok() ? b : a);
    r = d.ok() ? bin(OpKind::kMul, *d, k(0.5)) : d;
  }
  if (!r.ok() || !reduced) return r;
  return b_.Cast(*r, in);
}

std::optional<absl::StatusOr<PyValue>> DefinitionLowering::MathOp(const Expr& call,
                                                                  const Expr& op_name) {
  const std::string& name = op_name.text;
  if (name == "triu" || name == "tril") return TriangleOp(call, name);
  if (!IsMathOp(name)) return std::nullopt;
  const std::string fname = absl::StrCat("fd.ops.", name);
  auto args = BindArguments(call, fname, {"x"}, 1, errors_);
  if (!args.ok()) return absl::StatusOr<PyValue>(args.status());
  auto x = Operand(*(*args)[0]);
  if (!x.ok()) return absl::StatusOr<PyValue>(x.status());
  auto out = MathValue(name, *x);
  if (!out.ok()) {
    return absl::StatusOr<PyValue>(errors_.At(
        call.loc, out.status(), absl::StrCat(fname, "(x) of a numeric tensor or scalar")));
  }
  return absl::StatusOr<PyValue>(ValueOf(*out));
}

}  // namespace frontend
}  // namespace fusiond
