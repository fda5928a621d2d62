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
// fp8: e5m2 is IEEE-like; e4m3fn is rounded as a format whose largest binade
// reaches 480, and what rounds above 448 (its largest finite) is NaN, as in
// PyTorch's conversion (e4m3fn has no infinities).
constexpr FloatFormat kE5M2{3, -14, 15};
constexpr FloatFormat kE4M3{4, -6, 8};

constexpr double MaxFinite(const FloatFormat& f) {
  // (2 - 2^(1-p)) * 2^max_exp, built by repeated doubling (constexpr).
  double m = 2.0, ulp = 1.0, scale = 1.0;
  for (int i = 1; i < f.precision; ++i) ulp /= 2;
  m -= ulp;
  for (int i = 0; i < f.max_exp; ++i) scale *= 2;
  return m * scale;
}

template <const FloatFormat& f>
double RoundToFormat(double v) {
  constexpr double kMaxFinite = MaxFinite(f);
  constexpr int kDropNormal = 52 - (f.precision - 1);
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const bool negative = (bits >> 63) != 0;
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased == 0x7ff) return v;  // inf and NaN stay as they are
  // Double subnormals (and zero) are far below the smallest subnormal of
  // any format here: they round to a signed zero.
  if (biased == 0) return negative ? -0.0 : 0.0;
  const int exp = biased - 1023;  // v = 1.fraction * 2^exp
  if (exp >= f.min_exp) {
    // Normal in the target: round the fraction bits in place; a carry out
    // of the fraction correctly bumps the exponent.
    const uint64_t half = uint64_t{1} << (kDropNormal - 1);
    const uint64_t odd = (bits >> kDropNormal) & 1;
    uint64_t r = (bits + half - 1 + odd) & ~((uint64_t{1} << kDropNormal) - 1);
    double out;
    std::memcpy(&out, &r, sizeof out);
    if (std::fabs(out) > kMaxFinite) {
      return negative ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    }
    return out;
  }
  // Subnormal in the target: round the 53-bit significand to fewer bits.
  const uint64_t sig = (uint64_t{1} << 52) | (bits & ((uint64_t{1} << 52) - 1));
  const int drop = kDropNormal + (f.min_exp - exp);
  if (drop >= 54) return negative ? -0.0 : 0.0;  // below half the smallest subnormal
  uint64_t kept = sig >> drop;
  const uint64_t rest = sig & ((uint64_t{1} << drop) - 1);
  const uint64_t half = uint64_t{1} << (drop - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  const double r = std::ldexp(static_cast<double>(kept), exp - 52 + drop);
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
    case DataType::kBool:
      return v != 0 ? 1.0 : 0.0;  // NaN is true
    case DataType::kInt32:
      return WrapToInt(v, 32);
    case DataType::kInt64:
      return WrapToInt(v, 64);
    case DataType::kHalf:
      return RoundToFormat<kHalf>(v);
    case DataType::kBFloat16:
      return RoundToFormat<kBFloat16>(v);
    case DataType::kFloat:
      return static_cast<double>(static_cast<float>(v));
    case DataType::kDouble:
      return v;
    case DataType::kFloat8E5M2:
      return RoundToFormat<kE5M2>(v);
    case DataType::kFloat8E4M3: {
      const double r = RoundToFormat<kE4M3>(v);
      return std::fabs(r) > 448 ? std::numeric_limits<double>::quiet_NaN() : r;
    }
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
      for (int64_t i = 0; i < n; ++i) p[i] = RoundToFormat<kBFloat16>(p[i]);
      return;
    case DataType::kHalf:
      for (int64_t i = 0; i < n; ++i) p[i] = RoundToFormat<kHalf>(p[i]);
      return;
    default:
      for (int64_t i = 0; i < n; ++i) p[i] = RoundTo(dtype, p[i]);
      return;
  }
}

}  // namespace reference_internal
}  // namespace fusiond
