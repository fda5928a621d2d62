#include "compiler/ir/op.h"

#include <array>
#include <string_view>
#include <utility>

namespace fusiond {
namespace {

struct OpInfo {
  OpKind op;
  std::string_view name;
  OpCategory category;
};

constexpr OpInfo kOps[] = {
    {OpKind::kAbs, "abs", OpCategory::kUnary},
    {OpKind::kNeg, "neg", OpCategory::kUnary},
    {OpKind::kExp, "exp", OpCategory::kUnary},
    {OpKind::kExp2, "exp2", OpCategory::kUnary},
    {OpKind::kLog, "log", OpCategory::kUnary},
    {OpKind::kLog1p, "log1p", OpCategory::kUnary},
    {OpKind::kExpm1, "expm1", OpCategory::kUnary},
    {OpKind::kSqrt, "sqrt", OpCategory::kUnary},
    {OpKind::kRsqrt, "rsqrt", OpCategory::kUnary},
    {OpKind::kReciprocal, "reciprocal", OpCategory::kUnary},
    {OpKind::kSin, "sin", OpCategory::kUnary},
    {OpKind::kCos, "cos", OpCategory::kUnary},
    {OpKind::kTanh, "tanh", OpCategory::kUnary},
    {OpKind::kSigmoid, "sigmoid", OpCategory::kUnary},
    {OpKind::kErf, "erf", OpCategory::kUnary},
    {OpKind::kErfc, "erfc", OpCategory::kUnary},
    {OpKind::kRelu, "relu", OpCategory::kUnary},
    {OpKind::kLogicalNot, "logical_not", OpCategory::kUnary},
    {OpKind::kFloor, "floor", OpCategory::kUnary},
    {OpKind::kCeil, "ceil", OpCategory::kUnary},
    {OpKind::kSign, "sign", OpCategory::kUnary},
    {OpKind::kRound, "round", OpCategory::kUnary},
    {OpKind::kTrunc, "trunc", OpCategory::kUnary},
    {OpKind::kLog2, "log2", OpCategory::kUnary},
    {OpKind::kLog10, "log10", OpCategory::kUnary},
    {OpKind::kIsNan, "isnan", OpCategory::kUnary},
    {OpKind::kIsInf, "isinf", OpCategory::kUnary},
    {OpKind::kIsFinite, "isfinite", OpCategory::kUnary},
    {OpKind::kBitwiseNot, "bitwise_not", OpCategory::kUnary},
    {OpKind::kAdd, "add", OpCategory::kBinary},
    {OpKind::kSub, "sub", OpCategory::kBinary},
    {OpKind::kMul, "mul", OpCategory::kBinary},
    {OpKind::kDiv, "div", OpCategory::kBinary},
    {OpKind::kPow, "pow", OpCategory::kBinary},
    {OpKind::kFmod, "fmod", OpCategory::kBinary},
    {OpKind::kMaximum, "maximum", OpCategory::kBinary},
    {OpKind::kMinimum, "minimum", OpCategory::kBinary},
    {OpKind::kEq, "eq", OpCategory::kBinary},
    {OpKind::kNe, "ne", OpCategory::kBinary},
    {OpKind::kLt, "lt", OpCategory::kBinary},
    {OpKind::kLe, "le", OpCategory::kBinary},
    {OpKind::kGt, "gt", OpCategory::kBinary},
    {OpKind::kGe, "ge", OpCategory::kBinary},
    {OpKind::kLogicalAnd, "logical_and", OpCategory::kBinary},
    {OpKind::kLogicalOr, "logical_or", OpCategory::kBinary},
    {OpKind::kAtan2, "atan2", OpCategory::kBinary},
    {OpKind::kRemainder, "remainder", OpCategory::kBinary},
    {OpKind::kBitwiseAnd, "bitwise_and", OpCategory::kBinary},
    {OpKind::kBitwiseOr, "bitwise_or", OpCategory::kBinary},
    {OpKind::kBitwiseXor, "bitwise_xor", OpCategory::kBinary},
    {OpKind::kBitwiseLeftShift, "bitwise_left_shift", OpCategory::kBinary},
    {OpKind::kBitwiseRightShift, "bitwise_right_shift", OpCategory::kBinary},
    {OpKind::kWhere, "where", OpCategory::kTernary},
    {OpKind::kClamp, "clamp", OpCategory::kTernary},
    {OpKind::kCast, "cast", OpCategory::kCast},
    {OpKind::kBroadcastInDim, "broadcast_in_dim", OpCategory::kShape},
    {OpKind::kBroadcast, "broadcast", OpCategory::kShape},
    {OpKind::kExpand, "expand", OpCategory::kShape},
    {OpKind::kSqueeze, "squeeze", OpCategory::kShape},
    {OpKind::kReshape, "reshape", OpCategory::kShape},
    {OpKind::kPermute, "permute", OpCategory::kShape},
    {OpKind::kSum, "sum", OpCategory::kReduction},
    {OpKind::kMax, "max", OpCategory::kReduction},
    {OpKind::kMin, "min", OpCategory::kReduction},
    {OpKind::kProd, "prod", OpCategory::kReduction},
    {OpKind::kVar, "var", OpCategory::kReduction},
    {OpKind::kVarMean, "var_mean", OpCategory::kVarMean},
    {OpKind::kSize, "size", OpCategory::kSize},
    {OpKind::kUniform, "uniform", OpCategory::kIndexed},
    {OpKind::kNormal, "normal", OpCategory::kIndexed},
    {OpKind::kIota, "iota", OpCategory::kIndexed},
    {OpKind::kSlice, "slice", OpCategory::kShift},
    {OpKind::kPad, "pad", OpCategory::kShift},
    {OpKind::kCat, "cat", OpCategory::kShift},
};

const OpInfo* Find(OpKind op) {
  for (const OpInfo& info : kOps) {
    if (info.op == op) return &info;
  }
  return nullptr;
}

}  // namespace

OpCategory CategoryOf(OpKind op) {
  const OpInfo* info = Find(op);
  return info ? info->category : OpCategory::kUnary;
}

const char* OpName(OpKind op) {
  const OpInfo* info = Find(op);
  return info ? info->name.data() : "invalid_op";
}

std::optional<OpKind> ParseOpName(std::string_view name) {
  for (const OpInfo& info : kOps) {
    if (info.name == name) return info.op;
  }
  return std::nullopt;
}

bool IsPredicateOp(OpKind op) {
  switch (op) {
    case OpKind::kEq:
    case OpKind::kNe:
    case OpKind::kLt:
    case OpKind::kLe:
    case OpKind::kGt:
    case OpKind::kGe:
    case OpKind::kLogicalAnd:
    case OpKind::kLogicalOr:
    case OpKind::kLogicalNot:
    case OpKind::kIsNan:
    case OpKind::kIsInf:
    case OpKind::kIsFinite:
      return true;
    default:
      return false;
  }
}

bool IsBitwiseOp(OpKind op) {
  switch (op) {
    case OpKind::kBitwiseNot:
    case OpKind::kBitwiseAnd:
    case OpKind::kBitwiseOr:
    case OpKind::kBitwiseXor:
    case OpKind::kBitwiseLeftShift:
    case OpKind::kBitwiseRightShift:
      return true;
    default:
      return false;
  }
}

bool IsFloatOnlyUnary(OpKind op) {
  switch (op) {
    case OpKind::kExp:
    case OpKind::kExp2:
    case OpKind::kLog:
    case OpKind::kLog1p:
    case OpKind::kExpm1:
    case OpKind::kSqrt:
    case OpKind::kRsqrt:
    case OpKind::kReciprocal:
    case OpKind::kSin:
    case OpKind::kCos:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
    case OpKind::kErf:
    case OpKind::kErfc:
    case OpKind::kLog2:
    case OpKind::kLog10:
      return true;
    default:
      return false;
  }
}

bool IsPointwise(OpKind op) {
  OpCategory c = CategoryOf(op);
  return c == OpCategory::kUnary || c == OpCategory::kBinary || c == OpCategory::kTernary ||
         c == OpCategory::kCast;
}

bool IsShapeOp(OpKind op) { return CategoryOf(op) == OpCategory::kShape; }

bool IsReduction(OpKind op) {
  OpCategory c = CategoryOf(op);
  return c == OpCategory::kReduction || c == OpCategory::kVarMean;
}

bool IsRandom(OpKind op) { return op == OpKind::kUniform || op == OpKind::kNormal; }

bool IsIndexed(OpKind op) { return CategoryOf(op) == OpCategory::kIndexed; }

bool IsShift(OpKind op) { return CategoryOf(op) == OpCategory::kShift; }

}  // namespace fusiond
