// DefinitionLowering::ArithmeticOp: nvFuser arithmetic whose meaning differs
// from the IR op of the same name, or that has no IR op:
//   div(a, b)       integer operands, one a tensor: nvFuser truncates (C
//                   division; Thunder's floor_divide of integers builds on
//                   it), where the IR's div of integer tensors is true
//                   division. Written as (a - fmod(a, b)) / b in float64,
//                   exact while |a| < 2^53, cast back to the promoted
//                   integer type; a divisor of 0 divides by 1 (nvFuser's
//                   result is undefined there). Other operands: the IR's div.
//   truediv(a, b)   true division: the IR's div, integer scalars as doubles.
//   signbit(x)      x < 0, and for floats also -0.0 (1 / x < 0 where x == 0);
//                   false for NaN whatever its sign bit.
// and the names nvFuser's direct-bindings printer uses for its IR's ops:
//   isneginf, isposinf  is_neginf / is_posinf
//   mod(a, b)           C's remainder (the IR's fmod)
//   fmax, fmin          maximum / minimum that ignore a NaN operand
//   frac(x)             x - trunc(x)
#include "absl/strings/str_cat.h"
#include "compiler/frontend/definition.h"
#include "compiler/frontend/special_math.h"
#include "compiler/ir/printer.h"

namespace fusiond {
namespace frontend {
namespace {

bool IsIntegerNotBool(DataType t) { return IsIntegral(t) && t != DataType::kBool; }

}  // namespace

absl::StatusOr<ValueId> DefinitionLowering::TruncatingDivide(ValueId a, ValueId b) {
  ValueId divisor = b;
  const Value& bv = g_->value(b);
  if (!bv.is_constant() || *bv.constant == 0) {
    auto zero = b_.Binary(OpKind::kEq, b, b_.DefineConstant(0, DataType::kInt64));
    if (!zero.ok()) return zero.status();
    auto d = b_.Where(*zero, b_.DefineConstant(1, DataType::kInt64), b);
    if (!d.ok()) return d.status();
    divisor = *d;
  }
  auto r = b_.Binary(OpKind::kFmod, a, divisor);
  if (!r.ok()) return r.status();
  const DataType t = g_->value(*r).dtype;
  auto exact = b_.Binary(OpKind::kSub, a, *r);  // a multiple of the divisor
  if (!exact.ok()) return exact.status();
  auto num = b_.Cast(*exact, DataType::kDouble);
  if (!num.ok()) return num.status();
  auto den = b_.Cast(divisor, DataType::kDouble);
  if (!den.ok()) return den.status();
  auto q = b_.Binary(OpKind::kDiv, *num, *den);
  if (!q.ok()) return q.status();
  return b_.Cast(*q, t);
}

// fmax / fmin: the other operand where one is NaN (NaN only when both are).
absl::StatusOr<ValueId> DefinitionLowering::NanIgnoringExtreme(OpKind op, ValueId a, ValueId b) {
  auto m = b_.Binary(op, a, b);
  if (!m.ok()) return m;
  if (!IsFloatingPoint(g_->value(*m).dtype)) return m;
  auto a_nan = b_.Unary(OpKind::kIsNan, a);
  if (!a_nan.ok()) return a_nan;
  auto b_nan = b_.Unary(OpKind::kIsNan, b);
  if (!b_nan.ok()) return b_nan;
  auto not_b = b_.Where(*b_nan, a, *m);
  if (!not_b.ok()) return not_b;
  return b_.Where(*a_nan, b, *not_b);
}

absl::StatusOr<ValueId> DefinitionLowering::SignBit(ValueId x) {
  const DataType t = g_->value(x).dtype;
  auto zero = b_.DefineConstant(0, DataType::kInt64);
  auto negative = b_.Binary(OpKind::kLt, x, zero);
  if (!negative.ok() || !IsFloatingPoint(t)) return negative;
  auto is_zero = b_.Binary(OpKind::kEq, x, zero);
  if (!is_zero.ok()) return is_zero.status();
  auto inv = b_.Unary(OpKind::kReciprocal, x);  // -inf for -0.0
  if (!inv.ok()) return inv.status();
  auto negative_zero = b_.Binary(OpKind::kLt, *inv, zero);
  if (!negative_zero.ok()) return negative_zero.status();
  return b_.Where(*is_zero, *negative_zero, *negative);
}

std::optional<absl::StatusOr<PyValue>> DefinitionLowering::ArithmeticOp(const Expr& call,
                                                                        const Expr& op_name) {
  const std::string& name = op_name.text;
  static const char* kNames[] = {"div", "truediv", "signbit", "isneginf", "isposinf",
                                 "mod", "fmax",    "fmin",    "frac"};
  bool known = false;
  for (const char* n : kNames) known |= name == n;
  if (!known) return std::nullopt;
  const std::string fname = absl::StrCat("fd.ops.", name);
  const bool unary =
      name == "signbit" || name == "isneginf" || name == "isposinf" || name == "frac";
  const std::vector<std::string> params =
      unary ? std::vector<std::string>{"x"} : std::vector<std::string>{"lhs", "rhs"};
  auto args = BindArguments(call, fname, params, params.size(), errors_);
  if (!args.ok()) return absl::StatusOr<PyValue>(args.status());
  std::vector<ValueId> x;
  for (const Expr* a : *args) {
    auto v = Operand(*a);
    if (!v.ok()) return absl::StatusOr<PyValue>(v.status());
    x.push_back(*v);
  }
  absl::StatusOr<ValueId> out;
  if (name == "signbit") {
    out = SignBit(x[0]);
  } else if (name == "isneginf" || name == "isposinf") {
    out = InfSignValue(b_, name == "isneginf" ? "is_neginf" : "is_posinf", x[0]);
  } else if (name == "frac") {
    auto t = b_.Unary(OpKind::kTrunc, x[0]);
    out = t.ok() ? b_.Binary(OpKind::kSub, x[0], *t) : t;
  } else if (name == "mod") {
    out = b_.Binary(OpKind::kFmod, x[0], x[1]);
  } else if (name == "fmax" || name == "fmin") {
    out = NanIgnoringExtreme(name == "fmax" ? OpKind::kMaximum : OpKind::kMinimum, x[0], x[1]);
  } else {
    const Value& a = g_->value(x[0]);
    const Value& b = g_->value(x[1]);
    const bool integers = IsIntegerNotBool(a.dtype) && IsIntegerNotBool(b.dtype);
    if (name == "div" && integers && (a.is_tensor || b.is_tensor)) {
      out = TruncatingDivide(x[0], x[1]);
    } else if (name == "truediv" && integers && !a.is_tensor && !b.is_tensor) {
      auto l = b_.Cast(x[0], DataType::kDouble);
      auto r = b_.Cast(x[1], DataType::kDouble);
      out = l.ok() && r.ok() ? b_.Binary(OpKind::kDiv, *l, *r) : (l.ok() ? r : l);
    } else {
      out = b_.Binary(OpKind::kDiv, x[0], x[1]);
    }
  }
  if (!out.ok()) {
    return absl::StatusOr<PyValue>(
        errors_.At(call.loc, out.status(),
                   unary ? absl::StrCat(fname, "(x) of a numeric tensor or scalar")
                         : absl::StrCat(fname,
                                        "(lhs, rhs) with operands of equal rank (or scalars) that "
                                        "broadcast")));
  }
  return absl::StatusOr<PyValue>(ValueOf(*out));
}

}  // namespace frontend
}  // namespace fusiond
