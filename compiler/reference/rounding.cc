// Rounding of float64 values to the value set of each element type.
//
// bf16 and fp16 are rounded directly from the double's bits (one rounding,
// to nearest, ties to even), including their subnormals, overflow to
// infinity and NaN; fp32 uses the hardware float conversion, which does the
// same. Integers truncate toward zero and wrap modulo 2^width; bool is 0/1.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "compiler/reference/eval_internal.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

// A binary floating-point format: `precision` significand bits including
// the implicit one, `min_exp` the exponent of the smallest normal (2^min_exp)
// and `max_exp` the exponent of the largest finite binade.
struct FloatFormat {
  int precision;
  int min_exp;
  int max_exp;
};

constexpr FloatFormat kBFloat16{8, -126, 127};
constexpr FloatFormat kHalf{11, -14, 15};

double RoundToFormat(double v, const FloatFormat& f) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const bool negative = (bits >> 63) != 0;
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return v;  // inf and NaN stay as they are
  // Double subnormals (and zero) are far below the smallest subnormal of
  // any format here: they round to a signed zero.
  if (biased == 0) return negative ? -0.0 : 0.0;
  const int exp = biased - 1023;  // v = 1.fraction * 2^exp
  const uint64_t sig = (uint64_t{1} << 52) | fraction;
  // Bits of the 53-bit significand that do not fit: more when the result
  // is subnormal in the target format.
  int drop = 52 - (f.precision - 1);
  if (exp < f.min_exp) drop += f.min_exp - exp;
  if (drop >= 54) return negative ? -0.0 : 0.0;  // below half the smallest subnormal
  uint64_t kept = sig >> drop;
  const uint64_t rest = sig & ((uint64_t{1} << drop) - 1);
  const uint64_t half = uint64_t{1} << (drop - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  double r = std::ldexp(static_cast<double>(kept), exp - 52 + drop);
  const double max_finite =
      std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.max_exp);
  if (r > max_finite) r = std::numeric_limits<double>::infinity();
  return negative ? -r : r;
}

// Truncates toward zero and wraps into a signed integer of `width` bits.
// NaN and infinities become 0 (the wrap of an infinite value is undefined).
double WrapToInt(double v, int width) {
  if (!std::isfinite(v)) return 0.0;
  double t = std::trunc(v);
  const double span = std::ldexp(1.0, width);
  const double half = std::ldexp(1.0, width - 1);
  if (t >= -half && t < half) return t == 0 ? 0.0 : t;
  t = std::fmod(t, span);  // exact
  if (t >= half) t -= span;
  if (t < -half) t += span;
  return t == 0 ? 0.0 : t;
}

}  // namespace

double RoundTo(DataType dtype, double v) {
  switch (dtype) {
    case DataType::kBool: return v != 0 ? 1.0 : 0.0;  // NaN is true
    case DataType::kInt32: return WrapToInt(v, 32);
    case DataType::kInt64: return WrapToInt(v, 64);
    case DataType::kHalf: return RoundToFormat(v, kHalf);
    case DataType::kBFloat16: return RoundToFormat(v, kBFloat16);
    case DataType::kFloat: return static_cast<double>(static_cast<float>(v));
    case DataType::kDouble: return v;
  }
  return v;
}

namespace reference_internal {

void RoundBuffer(DataType dtype, double* p, int64_t n) {
  switch (dtype) {
    case DataType::kDouble:
      return;
    case DataType::kFloat:
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(p[i]);
      return;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) p[i] = RoundToFormat(p[i], kBFloat16);
      return;
    case DataType::kHalf:
      for (int64_t i = 0; i < n; ++i) p[i] = RoundToFormat(p[i], kHalf);
      return;
    default:
      for (int64_t i = 0; i < n; ++i) p[i] = RoundTo(dtype, p[i]);
      return;
  }
}

}  // namespace reference_internal
}  // namespace fusiond
