#include "compiler/passes/constant_folding.h"

#include <algorithm>
#include <cmath>

#include "compiler/passes/rewrite.h"

namespace fusiond {
namespace {

std::optional<double> Round(DataType t, double v) {
  switch (t) {
    case DataType::kDouble:
      return v;
    case DataType::kFloat:
      return static_cast<double>(static_cast<float>(v));
    case DataType::kBool:
      return v != 0 ? 1.0 : 0.0;
    case DataType::kInt32:
    case DataType::kInt64: {
      if (!std::isfinite(v) || std::fabs(v) > 9007199254740992.0) return std::nullopt;
      double r = std::trunc(v);
      if (t == DataType::kInt32 && (r < -2147483648.0 || r > 2147483647.0)) return std::nullopt;
      return r;
    }
    default:
      return std::nullopt;  // 16-bit floats: leave them to the kernel
  }
}

std::optional<double> Unary(OpKind op, double x) {
  switch (op) {
    case OpKind::kAbs:
      return std::fabs(x);
    case OpKind::kNeg:
      return -x;
    case OpKind::kExp:
      return std::exp(x);
    case OpKind::kExp2:
      return std::exp2(x);
    case OpKind::kLog:
      return std::log(x);
    case OpKind::kLog1p:
      return std::log1p(x);
    case OpKind::kExpm1:
      return std::expm1(x);
    case OpKind::kSqrt:
      return std::sqrt(x);
    case OpKind::kRsqrt:
      return 1.0 / std::sqrt(x);
    case OpKind::kReciprocal:
      return 1.0 / x;
    case OpKind::kSin:
      return std::sin(x);
    case OpKind::kCos:
      return std::cos(x);
    case OpKind::kTanh:
      return std::tanh(x);
    case OpKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case OpKind::kErf:
      return std::erf(x);
    case OpKind::kErfc:
      return std::erfc(x);
    case OpKind::kRelu:
      return x > 0 ? x : 0.0;
    case OpKind::kLogicalNot:
      return x == 0 ? 1.0 : 0.0;
    case OpKind::kFloor:
      return std::floor(x);
    case OpKind::kCeil:
      return std::ceil(x);
    default:
      return std::nullopt;
  }
}

std::optional<double> Binary(OpKind op, double a, double b) {
  switch (op) {
    case OpKind::kAdd:
      return a + b;
    case OpKind::kSub:
      return a - b;
    case OpKind::kMul:
      return a * b;
    case OpKind::kDiv:
      return a / b;
    case OpKind::kPow:
      return std::pow(a, b);
    case OpKind::kFmod:
      return std::fmod(a, b);
    case OpKind::kMaximum:
      return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
    case OpKind::kMinimum:
      return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
    case OpKind::kEq:
      return a == b ? 1.0 : 0.0;
    case OpKind::kNe:
      return a != b ? 1.0 : 0.0;
    case OpKind::kLt:
      return a < b ? 1.0 : 0.0;
    case OpKind::kLe:
      return a <= b ? 1.0 : 0.0;
    case OpKind::kGt:
      return a > b ? 1.0 : 0.0;
    case OpKind::kGe:
      return a >= b ? 1.0 : 0.0;
    case OpKind::kLogicalAnd:
      return (a != 0 && b != 0) ? 1.0 : 0.0;
    case OpKind::kLogicalOr:
      return (a != 0 || b != 0) ? 1.0 : 0.0;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<double> FoldScalar(OpKind op, const std::vector<double>& args,
                                 const std::vector<DataType>& arg_types, DataType result,
                                 const Attrs& attrs) {
  // Operands are first converted to the result type (as a kernel would),
  // except for comparisons, logical ops and casts, which read them as they are.
  std::vector<double> in = args;
  if (!IsPredicateOp(op) && op != OpKind::kCast && op != OpKind::kWhere) {
    for (double& v : in) {
      auto r = Round(result, v);
      if (!r) return std::nullopt;
      v = *r;
    }
  }
  std::optional<double> v;
  switch (CategoryOf(op)) {
    case OpCategory::kUnary:
      v = Unary(op, in[0]);
      break;
    case OpCategory::kBinary:
      // Division of integer tensors is true division (the result type is
      // float); of integer scalars it rounds toward zero (trunc below).
      if ((op == OpKind::kFmod || op == OpKind::kDiv) && IsIntegral(result) && in[1] == 0) {
        return std::nullopt;
      }
      v = Binary(op, in[0], in[1]);
      break;
    case OpCategory::kTernary:
      if (op == OpKind::kClamp) {  // min(max(x, lo), hi), NaN from any operand
        if (std::isnan(in[0]) || std::isnan(in[1]) || std::isnan(in[2])) return Round(result, NAN);
        v = std::min(std::max(in[0], in[1]), in[2]);
        break;
      }
      v = in[0] != 0 ? in[1] : in[2];
      break;
    case OpCategory::kCast:
      v = in[0];
      break;
    default:
      return std::nullopt;
  }
  if (!v) return std::nullopt;
  return Round(result, *v);
}

absl::StatusOr<bool> RunConstantFolding(Graph& g, const PassOptions&, PassLog&) {
  UseReplacer replace;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    replace.ResolveOperands(g.nodes[i]);
    const Node& n = g.nodes[i];
    const ValueId out = n.outputs[0];
    if (g.value(out).is_tensor) continue;
    std::optional<double> folded;
    if (n.op == OpKind::kSize) {
      const Value& t = g.value(n.inputs[0]);
      Extent e = g.Canonical(t.shape[n.attrs.axis]);
      if (e.is_static()) folded = static_cast<double>(e.size);
    } else {
      std::vector<double> args;
      std::vector<DataType> types;
      bool all_constant = true;
      for (ValueId in : n.inputs) {
        auto c = ConstantOf(g, in);
        if (!c) {
          all_constant = false;
          break;
        }
        args.push_back(*c);
        types.push_back(g.value(in).dtype);
      }
      if (all_constant) folded = FoldScalar(n.op, args, types, g.value(out).dtype, n.attrs);
    }
    if (!folded) continue;
    const DataType t = g.value(out).dtype;
    replace.Replace(out, MakeConstant(g, *folded, t));
  }
  const bool changed = replace.Apply(g);
  if (changed) Compact(g);
  return changed;
}

}  // namespace fusiond
