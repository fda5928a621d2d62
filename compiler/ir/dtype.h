// Element types of fusion values and the promotion rules between them.
#ifndef FUSIOND_COMPILER_IR_DTYPE_H_
#define FUSIOND_COMPILER_IR_DTYPE_H_

#include <optional>
#include <string>
#include <string_view>

namespace fusiond {

// The element type of a tensor or scalar. The numeric values are part of the
// wire format (proto/fusion.proto mirrors them) and must not change.
enum class DataType : int {
  kBool = 1,
  kInt32 = 2,
  kInt64 = 3,
  kHalf = 4,
  kBFloat16 = 5,
  kFloat = 6,
  kDouble = 7,
  // 8-bit floats of fp8 training: e4m3fn (no infinities; max 448, overflow
  // is NaN) and e5m2 (IEEE-like; max 57344, overflow is infinity).
  kFloat8E4M3 = 8,
  kFloat8E5M2 = 9,
};

// "bool", "int32", "int64", "float16", "bfloat16", "float32", "float64",
// "float8_e4m3fn", "float8_e5m2".
const char* DataTypeName(DataType t);
// Inverse of DataTypeName; also accepts nvFuser's names ("Float", "BFloat16",
// "Half", "Double", "Int", "Int32", "Bool", "Float8_e4m3fn", "Float8_e5m2").
std::optional<DataType> ParseDataType(std::string_view name);
// Bytes per element.
int DataTypeSize(DataType t);
bool IsFloatingPoint(DataType t);
bool IsIntegral(DataType t);  // int32, int64 (not bool)
// Number of significand bits including the implicit one (bf16: 8, fp16: 11,
// fp32: 24, fp64: 53); 0 for non-float types.
int MantissaBits(DataType t);
// True when every value of `from` is exactly representable in `to`.
bool IsLosslessCast(DataType from, DataType to);

// Why `v` cannot be a constant of dtype t, or "" when it can: an integral
// constant is a whole number within the int64 range (int32 wraps as a cast
// would), a bool 0 or 1; a floating one any value (NaN and infinities too).
std::string ConstantValueProblem(double v, DataType t);
// PyTorch-style promotion of two tensor operand types.
DataType PromoteTypes(DataType a, DataType b);
// The type in which the generated code computes a value of type t: float
// for the 16- and 8-bit floats, t otherwise.
DataType ComputeType(DataType t);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_IR_DTYPE_H_
