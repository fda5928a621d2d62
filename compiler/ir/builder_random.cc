// GraphBuilder::InferIndexed: typing of the ops whose values are computed
// from their elements' indices: the random ones (uniform, normal; a pure
// function of seed, offset, element index, the two parameters and the dtype:
// compiler/ir/philox.h) and iota.
#include "absl/strings/str_cat.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/builder_internal.h"

namespace fusiond {
using builder_internal::Bad;

absl::StatusOr<std::vector<std::pair<bool, std::vector<Extent>>>> GraphBuilder::InferIndexed(
    OpKind op, const std::vector<ValueId>& in, Attrs& attrs, std::vector<DataType>& dtypes) {
  if (op == OpKind::kIota) return InferIota(op, in, attrs, dtypes);
  const bool uniform = op == OpKind::kUniform;
  const char* names[4] = {uniform ? "minval" : "mean", uniform ? "maxval" : "std", "rng_seed",
                          "rng_offset"};
  for (int k = 0; k < 4; ++k) {
    const Value& v = g_->value(in[k]);
    if (v.is_tensor) {
      return Bad(op, absl::StrCat(names[k], " is a tensor; it takes a scalar"));
    }
    if (k < 2 && v.dtype == DataType::kBool) {
      return Bad(op, absl::StrCat(names[k], " is bool; it takes a number"));
    }
    if (k >= 2 && !IsIntegral(v.dtype)) {
      return Bad(op, absl::StrCat(names[k], " is ", DataTypeName(v.dtype),
                                  "; it takes an integer scalar (DataType.Int)"));
    }
  }
  if (!attrs.dtype) return Bad(op, "needs a dtype");
  const DataType t = *attrs.dtype;
  if (!IsFloatingPoint(t) || t == DataType::kFloat8E4M3 || t == DataType::kFloat8E5M2) {
    return Bad(op, absl::StrCat("dtype ", DataTypeName(t),
                                " is not supported; Float, Double, Half or BFloat16"));
  }
  std::vector<Extent> shape = attrs.shape;
  for (Extent& e : shape) {
    if (e.size < -1 || (e.size == -1 && e.symbol == kNone)) {
      return Bad(op, "shape has a negative or unknown extent");
    }
    e = g_->Canonical(e);
  }
  attrs.shape = shape;
  dtypes = {t};
  return std::vector<std::pair<bool, std::vector<Extent>>>{{true, shape}};
}

// iota(start, step): shape [length], element i = start + step * i in dtype.
absl::StatusOr<std::vector<std::pair<bool, std::vector<Extent>>>> GraphBuilder::InferIota(
    OpKind op, const std::vector<ValueId>& in, Attrs& attrs, std::vector<DataType>& dtypes) {
  const char* names[2] = {"start", "step"};
  if (!attrs.dtype) return Bad(op, "needs a dtype");
  const DataType t = *attrs.dtype;
  if (t == DataType::kBool || t == DataType::kFloat8E4M3 || t == DataType::kFloat8E5M2) {
    return Bad(op, absl::StrCat("dtype ", DataTypeName(t),
                                " is not supported; an integer or float16/32/64, bfloat16"));
  }
  for (int k = 0; k < 2; ++k) {
    const Value& v = g_->value(in[k]);
    if (v.is_tensor) return Bad(op, absl::StrCat(names[k], " is a tensor; it takes a scalar"));
    if (v.dtype == DataType::kBool) return Bad(op, absl::StrCat(names[k], " is bool"));
    if (IsIntegral(t) && IsFloatingPoint(v.dtype)) {
      return Bad(op, absl::StrCat(names[k], " is ", DataTypeName(v.dtype), " but the dtype is ",
                                  DataTypeName(t)));
    }
  }
  if (attrs.shape.size() != 1) {
    return Bad(op, absl::StrCat("shape has ", attrs.shape.size(), " extents; iota makes [length]"));
  }
  Extent e = attrs.shape[0];
  if (e.size < -1 || (e.size == -1 && e.symbol == kNone)) {
    return Bad(op, "length is negative or unknown");
  }
  attrs.shape = {g_->Canonical(e)};
  dtypes = {t};
  return std::vector<std::pair<bool, std::vector<Extent>>>{{true, attrs.shape}};
}

}  // namespace fusiond
