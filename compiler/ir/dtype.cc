#include "compiler/ir/dtype.h"

#include <cmath>

namespace fusiond {

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kBool:
      return "bool";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kHalf:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kFloat:
      return "float32";
    case DataType::kDouble:
      return "float64";
    case DataType::kFloat8E4M3:
      return "float8_e4m3fn";
    case DataType::kFloat8E5M2:
      return "float8_e5m2";
  }
  return "invalid";
}

std::optional<DataType> ParseDataType(std::string_view n) {
  if (n == "bool" || n == "Bool") return DataType::kBool;
  if (n == "int32" || n == "Int32") return DataType::kInt32;
  if (n == "int64" || n == "Int" || n == "Int64") return DataType::kInt64;
  if (n == "float16" || n == "Half") return DataType::kHalf;
  if (n == "bfloat16" || n == "BFloat16") return DataType::kBFloat16;
  if (n == "float32" || n == "Float") return DataType::kFloat;
  if (n == "float64" || n == "Double") return DataType::kDouble;
  if (n == "float8_e4m3fn" || n == "Float8_e4m3fn") return DataType::kFloat8E4M3;
  if (n == "float8_e5m2" || n == "Float8_e5m2") return DataType::kFloat8E5M2;
  return std::nullopt;
}

int DataTypeSize(DataType t) {
  switch (t) {
    case DataType::kBool:
      return 1;
    case DataType::kInt32:
      return 4;
    case DataType::kInt64:
      return 8;
    case DataType::kHalf:
      return 2;
    case DataType::kBFloat16:
      return 2;
    case DataType::kFloat:
      return 4;
    case DataType::kDouble:
      return 8;
    case DataType::kFloat8E4M3:
      return 1;
    case DataType::kFloat8E5M2:
      return 1;
  }
  return 0;
}

bool IsFloatingPoint(DataType t) {
  return t == DataType::kHalf || t == DataType::kBFloat16 || t == DataType::kFloat ||
         t == DataType::kDouble || t == DataType::kFloat8E4M3 || t == DataType::kFloat8E5M2;
}

bool IsIntegral(DataType t) { return t == DataType::kInt32 || t == DataType::kInt64; }

int MantissaBits(DataType t) {
  switch (t) {
    case DataType::kHalf:
      return 11;
    case DataType::kBFloat16:
      return 8;
    case DataType::kFloat:
      return 24;
    case DataType::kDouble:
      return 53;
    case DataType::kFloat8E4M3:
      return 4;
    case DataType::kFloat8E5M2:
      return 3;
    default:
      return 0;
  }
}

namespace {
// Exponent range rank: wider range holds every finite value of a narrower one.
int ExponentRank(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3:
      return 0;  // within fp16's range and precision
    case DataType::kFloat8E5M2:
      return 1;  // fp16's exponent
    case DataType::kHalf:
      return 1;
    case DataType::kBFloat16:
      return 2;
    case DataType::kFloat:
      return 2;
    case DataType::kDouble:
      return 3;
    default:
      return 0;
  }
}
}  // namespace

bool IsLosslessCast(DataType from, DataType to) {
  if (from == to) return true;
  if (from == DataType::kBool) return true;
  if (IsIntegral(from)) {
    if (IsIntegral(to)) return DataTypeSize(to) >= DataTypeSize(from);
    if (IsFloatingPoint(to)) return MantissaBits(to) >= 8 * DataTypeSize(from);
    return false;
  }
  if (IsFloatingPoint(from) && IsFloatingPoint(to)) {
    return MantissaBits(to) >= MantissaBits(from) && ExponentRank(to) >= ExponentRank(from);
  }
  return false;
}

DataType PromoteTypes(DataType a, DataType b) {
  if (a == b) return a;
  if (a == DataType::kBool) return b;
  if (b == DataType::kBool) return a;
  const bool fa = IsFloatingPoint(a), fb = IsFloatingPoint(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (!fa && !fb) return DataTypeSize(a) >= DataTypeSize(b) ? a : b;
  // Both floating point and different: bf16 with fp16 promotes to float.
  if (DataTypeSize(a) == DataTypeSize(b)) return DataType::kFloat;
  return DataTypeSize(a) > DataTypeSize(b) ? a : b;
}

DataType ComputeType(DataType t) {
  if (t == DataType::kHalf || t == DataType::kBFloat16 || t == DataType::kFloat8E4M3 ||
      t == DataType::kFloat8E5M2) {
    return DataType::kFloat;
  }
  return t;
}

std::string ConstantValueProblem(double v, DataType t) {
  if (t == DataType::kBool) return v == 0 || v == 1 ? "" : "a bool constant is 0 or 1";
  if (!IsIntegral(t)) return "";
  if (v != std::trunc(v)) return "an integer constant must be a whole number";
  // [-2^63, 2^63): what converts to int64 exactly.
  if (v < -9223372036854775808.0 || v >= 9223372036854775808.0) {
    return "an integer constant must lie within the int64 range";
  }
  return "";
}

}  // namespace fusiond
