// The float16 bits of a double that float16 represents exactly (a value the
// CPU reference has already rounded to float16): test inputs written as the
// device reads them.
#ifndef FUSIOND_TESTS_UTIL_HALF_BITS_H_
#define FUSIOND_TESTS_UTIL_HALF_BITS_H_

#include <cmath>
#include <cstdint>

namespace fusiond {

inline uint16_t HalfBits(double d) {
  if (std::isnan(d)) return 0x7e00;
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double a = std::fabs(d);
  if (std::isinf(a)) return sign | 0x7c00;
  if (a == 0) return sign;
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  const int field = e - 1 + 15;
  if (field >= 1) {
    return sign | static_cast<uint16_t>(field << 10) |
           static_cast<uint16_t>(std::lround((2 * m - 1) * 1024));
  }
  return sign | static_cast<uint16_t>(std::lround(std::ldexp(a, 24)));  // subnormal
}

}  // namespace fusiond

#endif  // FUSIOND_TESTS_UTIL_HALF_BITS_H_
