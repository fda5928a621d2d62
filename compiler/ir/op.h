// The operator set of the fusion IR and static facts about each operator.
#ifndef FUSIOND_COMPILER_IR_OP_H_
#define FUSIOND_COMPILER_IR_OP_H_

#include <optional>
#include <string_view>

namespace fusiond {

// What a node computes. The numeric values are part of the wire format
// (proto/fusion.proto's OpKind mirrors them) and must not change.
enum class OpKind : int {
  // Unary pointwise.
  kAbs = 1,
  kNeg,
  kExp,
  kExp2,
  kLog,
  kLog1p,
  kExpm1,
  kSqrt,
  kRsqrt,
  kReciprocal,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kErf,
  kErfc,
  kRelu,
  kLogicalNot,
  kFloor,
  kCeil,
  kSign,
  kRound,
  kTrunc,
  kLog2,
  kLog10,
  kIsNan,
  kIsInf,
  kIsFinite,
  kBitwiseNot,
  // Binary pointwise.
  kAdd = 30,
  kSub,
  kMul,
  kDiv,
  kPow,
  kFmod,
  kMaximum,
  kMinimum,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kLogicalAnd,
  kLogicalOr,
  kAtan2,
  kRemainder,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kBitwiseLeftShift,
  kBitwiseRightShift,
  // Ternary pointwise.
  kWhere = 60,
  kClamp,  // (x, min, max)
  // Type conversion.
  kCast = 70,
  // Shape (metadata) ops.
  kBroadcastInDim = 80,
  kBroadcast,
  kExpand,
  kSqueeze,
  kReshape,
  kPermute,
  // Reductions over `dims`.
  kSum = 100,
  kMax,
  kMin,
  kProd,
  kVar,
  // Two outputs: (variance, mean).
  kVarMean = 110,
  // Scalar: the extent of one axis of a tensor.
  kSize = 120,
  // Tensors computed from their elements' indices. Random ones (lo/mean,
  // hi/std, seed, offset): counter-based Philox, a pure function of (seed,
  // offset, element index); compiler/ir/philox.h. iota (start, step).
  kUniform = 130,
  kNormal,
  kIota,
  // Ops whose element i reads an operand at a shifted index along some axes:
  // slice (offsets: starts, ends, strides per axis), pad (operand, value;
  // offsets: low and high width per axis), cat (operands; axis).
  kSlice = 140,
  kPad,
  kCat,
};

enum class OpCategory {
  kUnary,
  kBinary,
  kTernary,
  kCast,
  kShape,
  kReduction,
  kVarMean,
  kSize,
  kIndexed,  // uniform, normal, iota
  kShift,    // slice, pad, cat
};

OpCategory CategoryOf(OpKind op);
// The front-end name, as in `fd.ops.<name>`: "add", "broadcast_in_dim", ...
const char* OpName(OpKind op);
std::optional<OpKind> ParseOpName(std::string_view name);
// True for integer-only bitwise ops (and, or, xor, not, shifts); and, or,
// xor and not also take bools.
bool IsBitwiseOp(OpKind op);
// True for ops whose result is bool (comparisons, logical ops, isnan, isinf,
// isfinite).
bool IsPredicateOp(OpKind op);
// True for unary ops that always produce floating point (exp, tanh, ...):
// an integer operand is promoted to float32 first.
bool IsFloatOnlyUnary(OpKind op);
// True for pointwise ops (unary, binary, ternary, cast).
bool IsPointwise(OpKind op);
// True when the op only changes how elements are indexed (broadcast, expand,
// squeeze, reshape, permute).
bool IsShapeOp(OpKind op);
bool IsReduction(OpKind op);  // sum, max, min, prod, var, var_mean
bool IsRandom(OpKind op);     // uniform, normal
bool IsIndexed(OpKind op);    // uniform, normal, iota: values from element indices
bool IsShift(OpKind op);      // slice, pad, cat: operands read at shifted indices

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_OP_H_
