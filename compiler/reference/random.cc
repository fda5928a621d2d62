// The reference's ops computed from element indices: the random ones with
// the same Philox stream as the kernels (compiler/ir/philox.h), element by
// element in row-major order, and iota.
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "compiler/ir/philox.h"
#include "compiler/reference/eval_internal.h"

namespace fusiond {
namespace reference_internal {
namespace {

// start + step * i, in double with the product and the sum each rounded
// (this file is compiled without contraction, as the kernels' iota), then
// rounded to the dtype.
View Iota(const std::vector<const View*>& in, DataType out_dtype, const Shape& out_shape) {
  const double start = in[0]->data()[0], step = in[1]->data()[0];
  View out = NewView(out_shape, out_dtype);
  double* dst = out.buf->data();
  const int64_t count = out.numel();
  for (int64_t i = 0; i < count; ++i) {
    const double product = step * static_cast<double>(i);
    dst[i] = start + product;
  }
  RoundBuffer(out_dtype, dst, count);
  return out;
}

}  // namespace

absl::StatusOr<View> EvalIndexed(const Node& n, const std::vector<const View*>& in,
                                 DataType out_dtype, const Shape& out_shape) {
  if (n.op == OpKind::kIota && in.size() == 2) return Iota(in, out_dtype, out_shape);
  if (in.size() != 4) {
    return absl::InternalError(
        absl::StrCat("reference: ", OpName(n.op), " node ", n.id, " has ", in.size(), " operands"));
  }
  const double a = in[0]->data()[0], b = in[1]->data()[0];
  // Integer scalars hold whole numbers; seed and offset are their 64-bit
  // two's complement. Kernels receive them as doubles (exact up to 2^53)
  // and convert as the GPU does (cvt.rzi.s64.f64): saturating, NaN to 0.
  auto word = [](double v) {
    int64_t w = 0;
    if (v >= 9223372036854775808.0) {
      w = INT64_MAX;
    } else if (v <= -9223372036854775808.0) {
      w = INT64_MIN;
    } else if (v == v) {
      w = static_cast<int64_t>(v);
    }
    return static_cast<uint64_t>(w);
  };
  const uint64_t seed = word(in[2]->data()[0]), offset = word(in[3]->data()[0]);
  View out = NewView(out_shape, out_dtype);
  double* dst = out.buf->data();
  const int64_t count = out.numel();
  const bool uniform = n.op == OpKind::kUniform;
  if (out_dtype == DataType::kDouble) {
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t k = static_cast<uint64_t>(i);
      dst[i] = uniform ? PhiloxUniformDouble(a, b, seed, offset, k)
                       : PhiloxNormalDouble(a, b, seed, offset, k);
    }
  } else {
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t k = static_cast<uint64_t>(i);
      dst[i] = uniform ? PhiloxUniformFloat(fa, fb, seed, offset, k)
                       : PhiloxNormalFloat(fa, fb, seed, offset, k);
    }
    RoundBuffer(out_dtype, dst, count);  // half, bfloat16: rounded once
  }
  return out;
}

}  // namespace reference_internal
}  // namespace fusiond
