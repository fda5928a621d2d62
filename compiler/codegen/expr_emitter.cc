#include "compiler/codegen/expr_emitter.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

bool IsF32Like(DataType t) {
  return t == DataType::kFloat || t == DataType::kBFloat16 || t == DataType::kHalf ||
         t == DataType::kFloat8E4M3 || t == DataType::kFloat8E5M2;
}

std::string Conv(DataType from, DataType to, const std::string& e) {
  if (ComputeTypeName(from) == std::string(ComputeTypeName(to))) return e;
  if (to == DataType::kBool) return absl::StrCat("((", e, ") != 0)");
  // float64 to a 16-bit float: rounded once (through float32 rounded to odd).
  if (from == DataType::kDouble && (to == DataType::kHalf || to == DataType::kBFloat16)) {
    return absl::StrCat("fz_f64_to_f32_odd(", e, ")");
  }
  return absl::StrCat("((", ComputeTypeName(to), ")(", e, "))");
}

// Name of a float or double math function.
std::string Fn(const char* name, DataType t) {
  return IsF32Like(t) ? absl::StrCat(name, "f") : std::string(name);
}

}  // namespace

const char* ComputeTypeName(DataType t) {
  switch (t) {
    case DataType::kBool:
      return "bool";
    case DataType::kInt32:
      return "int";
    case DataType::kInt64:
      return "i64";
    case DataType::kDouble:
      return "double";
    default:
      return "float";
  }
}

std::string Literal(double v, DataType t) {
  // The value the CPU reference gives the constant: rounded to t (a finite
  // double beyond a format's range is +-inf, an integer wraps to its width).
  const double r = fusiond::RoundTo(t, v);
  if (t == DataType::kBool) return r != 0 ? "true" : "false";
  if (IsIntegral(t)) {
    // r is a whole number in [-2^63, 2^63); -2^63 has no literal of its own.
    if (r <= -9223372036854775808.0) {
      return absl::StrCat("((", ComputeTypeName(t), ")(-9223372036854775807LL - 1LL))");
    }
    return absl::StrCat("((", ComputeTypeName(t), ")", static_cast<long long>(r), "LL)");
  }
  const bool f = IsF32Like(t);
  if (std::isnan(r))
    return f ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
  if (std::isinf(r)) {
    std::string s = f ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
    return r < 0 ? "(-" + s + ")" : s;
  }
  // Finite and exact in the compute type: 9 (float) or 17 (double)
  // significant digits read back to the same value, subnormals included.
  char buf[64];
  if (f) {
    std::snprintf(buf, sizeof(buf), "%.9ef", static_cast<double>(static_cast<float>(r)));
  } else {
    std::snprintf(buf, sizeof(buf), "%.17e", r);
  }
  return absl::StrCat("(", buf, ")");
}

std::string RoundTo(DataType t, const std::string& expr) {
  if (t == DataType::kBFloat16) return absl::StrCat("Ty<5>::round(", expr, ")");
  if (t == DataType::kHalf) return absl::StrCat("Ty<4>::round(", expr, ")");
  if (t == DataType::kFloat8E4M3) return absl::StrCat("Ty<8>::round(", expr, ")");
  if (t == DataType::kFloat8E5M2) return absl::StrCat("Ty<9>::round(", expr, ")");
  return expr;
}

namespace {

// The ops of one operand (and casts) as an expression of the result's
// compute type, unrounded; false when n.op is not one of them.
bool EmitUnary(const Graph& g, const Node& n, const std::vector<std::string>& ops,
               const ExprOptions& options, std::string* out) {
  const DataType rt = g.value(n.outputs[0]).dtype;
  auto in_t = [&](int i) { return g.value(n.inputs[i]).dtype; };
  auto arg = [&](int i) { return Conv(in_t(i), rt, ops[i]); };
  const bool fl = IsFloatingPoint(rt);
  const bool approx = options.approx_transcendentals && IsF32Like(rt);
  std::string& e = *out;
  switch (n.op) {
    case OpKind::kCast:
      e = Conv(in_t(0), rt, ops[0]);
      break;
    case OpKind::kAbs:
      e = fl ? absl::StrCat(Fn("fabs", rt), "(", arg(0), ")")
             : absl::StrCat("(", arg(0), " < 0 ? -", arg(0), " : ", arg(0), ")");
      break;
    case OpKind::kNeg:
      e = absl::StrCat("(-", arg(0), ")");
      break;
    case OpKind::kExp:
      e = absl::StrCat(approx ? "fz_exp_approx" : Fn("exp", rt), "(", arg(0), ")");
      break;
    case OpKind::kExp2:
      e = absl::StrCat(Fn("exp2", rt), "(", arg(0), ")");
      break;
    case OpKind::kLog:
      e = absl::StrCat(approx ? "__logf" : Fn("log", rt), "(", arg(0), ")");
      break;
    case OpKind::kLog1p:
      e = absl::StrCat(Fn("log1p", rt), "(", arg(0), ")");
      break;
    case OpKind::kExpm1:
      e = absl::StrCat(Fn("expm1", rt), "(", arg(0), ")");
      break;
    case OpKind::kSqrt:
      e = absl::StrCat(Fn("sqrt", rt), "(", arg(0), ")");
      break;
    case OpKind::kRsqrt:
      e = absl::StrCat(Fn("rsqrt", rt), "(", arg(0), ")");
      break;
    case OpKind::kReciprocal:
      e = absl::StrCat("(", Literal(1, rt), " / ", arg(0), ")");
      break;
    case OpKind::kSin:
      e = absl::StrCat(Fn("sin", rt), "(", arg(0), ")");
      break;
    case OpKind::kCos:
      e = absl::StrCat(Fn("cos", rt), "(", arg(0), ")");
      break;
    case OpKind::kTanh:
      e = absl::StrCat(approx ? "fz_tanh_approx" : Fn("tanh", rt), "(", arg(0), ")");
      break;
    case OpKind::kSigmoid:
      e = absl::StrCat("(", Literal(1, rt), " / (", Literal(1, rt), " + ",
                       approx ? "fz_exp_approx" : Fn("exp", rt), "(-", arg(0), ")))");
      break;
    case OpKind::kErf:
      e = absl::StrCat(Fn("erf", rt), "(", arg(0), ")");
      break;
    case OpKind::kErfc:
      e = absl::StrCat(Fn("erfc", rt), "(", arg(0), ")");
      break;
    case OpKind::kRelu:
      e = absl::StrCat("fz_max(", arg(0), ", ", Literal(0, rt), ")");
      break;
    case OpKind::kLogicalNot:
      e = absl::StrCat("(!", Conv(in_t(0), DataType::kBool, ops[0]), ")");
      break;
    case OpKind::kFloor:
      e = fl ? absl::StrCat(Fn("floor", rt), "(", arg(0), ")") : arg(0);
      break;
    case OpKind::kCeil:
      e = fl ? absl::StrCat(Fn("ceil", rt), "(", arg(0), ")") : arg(0);
      break;
    case OpKind::kSign:  // (0 < x) - (x < 0): 0 for zeros and NaN
      e = absl::StrCat("((", ComputeTypeName(rt), ")((", Literal(0, rt), " < ", arg(0), ") - (",
                       arg(0), " < ", Literal(0, rt), ")))");
      break;
    case OpKind::kRound:
      e = fl ? absl::StrCat(Fn("rint", rt), "(", arg(0), ")") : arg(0);
      break;
    case OpKind::kTrunc:
      e = fl ? absl::StrCat(Fn("trunc", rt), "(", arg(0), ")") : arg(0);
      break;
    case OpKind::kLog2:
      e = absl::StrCat(Fn("log2", rt), "(", arg(0), ")");
      break;
    case OpKind::kLog10:
      e = absl::StrCat(Fn("log10", rt), "(", arg(0), ")");
      break;
    case OpKind::kIsNan:
    case OpKind::kIsInf:
    case OpKind::kIsFinite: {
      const char* fn = n.op == OpKind::kIsNan   ? "isnan"
                       : n.op == OpKind::kIsInf ? "isinf"
                                                : "isfinite";
      e = IsFloatingPoint(in_t(0)) ? absl::StrCat("((bool)", fn, "(", ops[0], "))")
                                   : (n.op == OpKind::kIsFinite ? "true" : "false");
      break;
    }
    case OpKind::kBitwiseNot:
      e = absl::StrCat(rt == DataType::kBool ? "(!" : "(~", arg(0), ")");
      break;
    default:
      return false;
  }
  return true;
}

// base ** exponent: small constant exponents of floats as products, a
// square root or a reciprocal; integer pow is refused.
absl::StatusOr<std::string> EmitPow(const Graph& g, const Node& n, const std::string& b,
                                    const std::string& exponent) {
  const DataType rt = g.value(n.outputs[0]).dtype;
  const bool fl = IsFloatingPoint(rt);
  const Value& ex = g.value(n.inputs[1]);
  if (ex.is_constant() && fl) {
    const double c = *ex.constant;
    if (c == 1) return b;
    if (c == 2) return absl::StrCat("(", b, " * ", b, ")");
    if (c == 3) return absl::StrCat("(", b, " * ", b, " * ", b, ")");
    if (c == 0.5) return absl::StrCat(Fn("sqrt", rt), "(", b, ")");
    if (c == -1) return absl::StrCat("(", Literal(1, rt), " / ", b, ")");
  }
  if (!fl) {
    return absl::UnimplementedError(absl::StrCat("codegen: integer pow (node ", n.id, ")"));
  }
  return absl::StrCat(Fn("pow", rt), "(", b, ", ", exponent, ")");
}

}  // namespace

absl::StatusOr<std::string> EmitPointwise(const Graph& g, const Node& n,
                                          const std::vector<std::string>& ops,
                                          const ExprOptions& options) {
  const DataType rt = g.value(n.outputs[0]).dtype;
  auto in_t = [&](int i) { return g.value(n.inputs[i]).dtype; };
  auto arg = [&](int i) { return Conv(in_t(i), rt, ops[i]); };
  const bool fl = IsFloatingPoint(rt);
  std::string e;
  if (EmitUnary(g, n, ops, options, &e)) return RoundTo(rt, e);
  switch (n.op) {
    case OpKind::kAdd:
      e = absl::StrCat("(", arg(0), " + ", arg(1), ")");
      break;
    case OpKind::kSub:
      e = absl::StrCat("(", arg(0), " - ", arg(1), ")");
      break;
    case OpKind::kMul:
      e = absl::StrCat("(", arg(0), " * ", arg(1), ")");
      break;
    case OpKind::kDiv:
      e = absl::StrCat("(", arg(0), " / ", arg(1), ")");
      break;
    case OpKind::kPow: {
      auto pow = EmitPow(g, n, arg(0), arg(1));
      if (!pow.ok()) return pow.status();
      e = *pow;
      break;
    }
    case OpKind::kFmod:
      e = fl ? absl::StrCat(Fn("fmod", rt), "(", arg(0), ", ", arg(1), ")")
             : absl::StrCat("(", arg(0), " % ", arg(1), ")");
      break;
    case OpKind::kAtan2:
      e = absl::StrCat(Fn("atan2", rt), "(", arg(0), ", ", arg(1), ")");
      break;
    case OpKind::kRemainder: {  // the divisor's sign; an integer remainder by 0 is 0
      const std::string t = ComputeTypeName(rt);
      const std::string r = fl ? absl::StrCat(Fn("fmod", rt), "(a, b)") : "(b == 0 ? (T)0 : a % b)";
      e = absl::StrCat("([](", t, " a, ", t, " b) { typedef ", t, " T; const T r = ", r,
                       "; return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r; }(", arg(0),
                       ", ", arg(1), "))");
      break;
    }
    case OpKind::kBitwiseAnd:
    case OpKind::kBitwiseOr:
    case OpKind::kBitwiseXor: {
      const bool b = rt == DataType::kBool;
      const char* op = n.op == OpKind::kBitwiseAnd  ? (b ? " && " : " & ")
                       : n.op == OpKind::kBitwiseOr ? (b ? " || " : " | ")
                                                    : (b ? " != " : " ^ ");
      e = absl::StrCat("(", arg(0), op, arg(1), ")");
      break;
    }
    case OpKind::kBitwiseLeftShift:
    case OpKind::kBitwiseRightShift: {
      // In 64 bits; counts outside [0, 64) give 0 (left) or the sign (right),
      // and the result wraps to the result's width, as the CPU reference.
      const std::string body =
          n.op == OpKind::kBitwiseLeftShift
              ? "(b >= 0 && b < 64) ? (i64)((unsigned long long)a << b) : (i64)0"
              : "(b >= 0 && b < 64) ? (a >> b) : (a < 0 ? (i64)-1 : (i64)0)";
      e = absl::StrCat("((", ComputeTypeName(rt), ")([](i64 a, i64 b) { return ", body, "; }(",
                       arg(0), ", ", arg(1), ")))");
      break;
    }
    case OpKind::kMaximum:
      e = absl::StrCat("fz_max(", arg(0), ", ", arg(1), ")");
      break;
    case OpKind::kMinimum:
      e = absl::StrCat("fz_min(", arg(0), ", ", arg(1), ")");
      break;
    case OpKind::kEq:
    case OpKind::kNe:
    case OpKind::kLt:
    case OpKind::kLe:
    case OpKind::kGt:
    case OpKind::kGe: {
      const DataType ct = PromoteTypes(in_t(0), in_t(1));
      const char* op = n.op == OpKind::kEq   ? " == "
                       : n.op == OpKind::kNe ? " != "
                       : n.op == OpKind::kLt ? " < "
                       : n.op == OpKind::kLe ? " <= "
                       : n.op == OpKind::kGt ? " > "
                                             : " >= ";
      e = absl::StrCat("(", Conv(in_t(0), ct, ops[0]), op, Conv(in_t(1), ct, ops[1]), ")");
      break;
    }
    case OpKind::kLogicalAnd:
      e = absl::StrCat("(", Conv(in_t(0), DataType::kBool, ops[0]), " && ",
                       Conv(in_t(1), DataType::kBool, ops[1]), ")");
      break;
    case OpKind::kLogicalOr:
      e = absl::StrCat("(", Conv(in_t(0), DataType::kBool, ops[0]), " || ",
                       Conv(in_t(1), DataType::kBool, ops[1]), ")");
      break;
    case OpKind::kWhere:
      e = absl::StrCat("(", Conv(in_t(0), DataType::kBool, ops[0]), " ? ",
                       Conv(in_t(1), rt, ops[1]), " : ", Conv(in_t(2), rt, ops[2]), ")");
      break;
    case OpKind::kClamp:  // min(max(x, lo), hi), NaN from any side
      e = absl::StrCat("fz_min(fz_max(", arg(0), ", ", arg(1), "), ", arg(2), ")");
      break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("codegen: ", OpName(n.op), " is not pointwise (node ", n.id, ")"));
  }
  return RoundTo(rt, e);
}

absl::StatusOr<std::string> EmitIndexed(const Graph& g, const Node& n,
                                        const std::vector<std::string>& operands,
                                        const std::string& index) {
  const DataType rt = g.value(n.outputs[0]).dtype;
  if (n.op == OpKind::kIota && operands.size() == 2) {
    // start + step * i: in i64 for integers, else in double with the product
    // and the sum each rounded (as the reference), then the dtype's rounding.
    if (IsIntegral(rt)) {
      return Conv(DataType::kInt64, rt,
                  absl::StrCat("((i64)(", operands[0], ") + (i64)(", operands[1], ") * (i64)(",
                               index, "))"));
    }
    return RoundTo(rt,
                   Conv(DataType::kDouble, rt,
                        absl::StrCat("__dadd_rn((double)(", operands[0], "), __dmul_rn((double)(",
                                     operands[1], "), (double)(", index, ")))")));
  }
  if (!IsRandom(n.op) || operands.size() != 4) {
    return absl::InternalError(absl::StrCat("codegen: ", OpName(n.op), " (node ", n.id,
                                            ") is not an op computed from indices"));
  }
  const bool d = rt == DataType::kDouble;
  const char* t = d ? "double" : "float";
  const std::string e = absl::StrCat(
      n.op == OpKind::kUniform ? "fz_uniform_" : "fz_normal_", d ? "d" : "f", "((", t, ")(",
      operands[0], "), (", t, ")(", operands[1], "), (unsigned long long)(", operands[2],
      "), (unsigned long long)(", operands[3], "), (unsigned long long)(", index, "))");
  return RoundTo(rt, e);
}

}  // namespace fusiond
