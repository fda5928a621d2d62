// One text of the random-number code, compiled here for the CPU reference
// and handed to the kernels as their prelude's random section. Every
// floating-point step goes through fz_rng_* primitives that are exact IEEE
// operations on both sides (this file is compiled with -ffp-contract=off, the
// device side uses the __*_rn intrinsics), so both compute the same bits.
#include "compiler/ir/philox.h"

#include <cmath>
#include <cstring>
#include <string>

// The shared code. X is FZ_RNG_EXPAND (code) or FZ_RNG_STRINGIZE (text);
// no '//' comments and no preprocessor lines inside (FZ_RNG_BLOCK, the
// Philox block's linkage, is defined by each side).
#define FZ_RNG_EXPAND(...) __VA_ARGS__
#define FZ_RNG_STRINGIZE(...) #__VA_ARGS__
#define FZ_PHILOX_CODE(X)                                                                          \
  X(                                                                                               \
      struct FzPhilox4 { unsigned x[4]; }; FZ_RNG_BLOCK FzPhilox4 fz_philox(                       \
          unsigned long long seed, unsigned long long offset, unsigned long long index) {          \
        unsigned c0 = (unsigned)index, c1 = (unsigned)(index >> 32);                               \
        unsigned c2 = (unsigned)offset, c3 = (unsigned)(offset >> 32);                             \
        unsigned k0 = (unsigned)seed, k1 = (unsigned)(seed >> 32);                                 \
        for (int r = 0; r < 10; ++r) {                                                             \
          if (r > 0) {                                                                             \
            k0 += 0x9E3779B9u;                                                                     \
            k1 += 0xBB67AE85u;                                                                     \
          }                                                                                        \
          const unsigned long long p0 = (unsigned long long)0xD2511F53u * c0;                      \
          const unsigned long long p1 = (unsigned long long)0xCD9E8D57u * c2;                      \
          const unsigned n0 = (unsigned)(p1 >> 32) ^ c1 ^ k0;                                      \
          const unsigned n2 = (unsigned)(p0 >> 32) ^ c3 ^ k1;                                      \
          c1 = (unsigned)p1;                                                                       \
          c3 = (unsigned)p0;                                                                       \
          c0 = n0;                                                                                 \
          c2 = n2;                                                                                 \
        }                                                                                          \
        FzPhilox4 o;                                                                               \
        o.x[0] = c0;                                                                               \
        o.x[1] = c1;                                                                               \
        o.x[2] = c2;                                                                               \
        o.x[3] = c3;                                                                               \
        return o;                                                                                  \
      } /* [0, 1) from 24 bits, (0, 1] with plus_one. */                                           \
      inline float fz_rng_u24(unsigned x, unsigned plus_one) {                                     \
        return fz_rng_fmul((float)((x >> 8) + plus_one), 0x1p-24f);                                \
      } inline double fz_rng_u53(unsigned a, unsigned b, unsigned plus_one) {                      \
        const unsigned long long m =                                                               \
            ((unsigned long long)a << 21) | (unsigned long long)(b >> 11);                         \
        return fz_rng_dmul((double)(m + plus_one), 0x1p-53);                                       \
      } /* log x for x in [2^-24, 1]: x = m 2^e, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s). */ \
      inline float fz_rng_logf(float x) {                                                          \
        const unsigned b = fz_rng_fbits(x);                                                        \
        int e = (int)(b >> 23) - 127;                                                              \
        float m = fz_rng_ffrom((b & 0x7fffffu) | 0x3f800000u);                                     \
        if (m > 0x1.6a09e6p+0f) {                                                                  \
          m = fz_rng_fmul(m, 0.5f);                                                                \
          e += 1;                                                                                  \
        }                                                                                          \
        const float s = fz_rng_fdiv(fz_rng_fsub(m, 1.0f), fz_rng_fadd(m, 1.0f));                   \
        const float s2 = fz_rng_fmul(s, s);                                                        \
        float p = (float)(1.0 / 13.0);                                                             \
        p = fz_rng_ffma(p, s2, (float)(1.0 / 11.0));                                               \
        p = fz_rng_ffma(p, s2, (float)(1.0 / 9.0));                                                \
        p = fz_rng_ffma(p, s2, (float)(1.0 / 7.0));                                                \
        p = fz_rng_ffma(p, s2, (float)(1.0 / 5.0));                                                \
        p = fz_rng_ffma(p, s2, (float)(1.0 / 3.0));                                                \
        p = fz_rng_ffma(p, s2, 1.0f);                                                              \
        return fz_rng_ffma((float)e, 0x1.62e430p-1f, fz_rng_fmul(fz_rng_fadd(s, s), p));           \
      } inline double fz_rng_logd(double x) {                                                      \
        const unsigned long long b = fz_rng_dbits(x);                                              \
        int e = (int)(b >> 52) - 1023;                                                             \
        double m = fz_rng_dfrom((b & 0xfffffffffffffull) | 0x3ff0000000000000ull);                 \
        if (m > 0x1.6a09e667f3bcdp+0) {                                                            \
          m = fz_rng_dmul(m, 0.5);                                                                 \
          e += 1;                                                                                  \
        }                                                                                          \
        const double s = fz_rng_ddiv(fz_rng_dsub(m, 1.0), fz_rng_dadd(m, 1.0));                    \
        const double s2 = fz_rng_dmul(s, s);                                                       \
        double p = 1.0 / 25.0;                                                                     \
        for (int k = 11; k >= 0; --k) p = fz_rng_dfma(p, s2, 1.0 / (double)(2 * k + 1));           \
        return fz_rng_dfma((double)e, 0x1.62e42fefa39efp-1, fz_rng_dmul(fz_rng_dadd(s, s), p));    \
      } /* cos(2 pi u) for u in [0, 1): folded to |t| <= pi / 4, then a sine or cosine series. */  \
      inline float fz_rng_cos2pif(float u) {                                                       \
        float w = u > 0.5f ? fz_rng_fsub(1.0f, u) : u;                                             \
        float sign = 1.0f;                                                                         \
        bool sine = false;                                                                         \
        if (w > 0.375f) {                                                                          \
          w = fz_rng_fsub(0.5f, w);                                                                \
          sign = -1.0f;                                                                            \
        } else if (w > 0.125f) {                                                                   \
          w = fz_rng_fsub(0.25f, w);                                                               \
          sine = true;                                                                             \
        }                                                                                          \
        const float t = fz_rng_fmul(w, 0x1.921fb6p+2f);                                            \
        const float t2 = fz_rng_fmul(t, t);                                                        \
        float r;                                                                                   \
        if (sine) {                                                                                \
          float p = (float)(-1.0 / 39916800.0);                                                    \
          p = fz_rng_ffma(p, t2, (float)(1.0 / 362880.0));                                         \
          p = fz_rng_ffma(p, t2, (float)(-1.0 / 5040.0));                                          \
          p = fz_rng_ffma(p, t2, (float)(1.0 / 120.0));                                            \
          p = fz_rng_ffma(p, t2, (float)(-1.0 / 6.0));                                             \
          r = fz_rng_ffma(fz_rng_fmul(t, t2), p, t);                                               \
        } else {                                                                                   \
          float p = (float)(1.0 / 479001600.0);                                                    \
          p = fz_rng_ffma(p, t2, (float)(-1.0 / 3628800.0));                                       \
          p = fz_rng_ffma(p, t2, (float)(1.0 / 40320.0));                                          \
          p = fz_rng_ffma(p, t2, (float)(-1.0 / 720.0));                                           \
          p = fz_rng_ffma(p, t2, (float)(1.0 / 24.0));                                             \
          p = fz_rng_ffma(p, t2, -0.5f);                                                           \
          r = fz_rng_ffma(t2, p, 1.0f);                                                            \
        }                                                                                          \
        return fz_rng_fmul(sign, r);                                                               \
      } inline double fz_rng_cos2pid(double u) {                                                   \
        double w = u > 0.5 ? fz_rng_dsub(1.0, u) : u;                                              \
        double sign = 1.0;                                                                         \
        bool sine = false;                                                                         \
        if (w > 0.375) {                                                                           \
          w = fz_rng_dsub(0.5, w);                                                                 \
          sign = -1.0;                                                                             \
        } else if (w > 0.125) {                                                                    \
          w = fz_rng_dsub(0.25, w);                                                                \
          sine = true;                                                                             \
        }                                                                                          \
        const double t = fz_rng_dmul(w, 0x1.921fb54442d18p+2);                                     \
        const double t2 = fz_rng_dmul(t, t);                                                       \
        /* 1 / n! for n = 2..19, alternating signs applied below. */                               \
        double f[20];                                                                              \
        f[0] = 1.0;                                                                                \
        for (int n = 1; n < 20; ++n) f[n] = f[n - 1] / (double)n;                                  \
        double p = 0.0;                                                                            \
        const int first = sine ? 3 : 2;                                                            \
        for (int n = sine ? 19 : 18; n >= first; n -= 2) {                                         \
          p = fz_rng_dfma(p, t2, ((n - first) / 2) % 2 == 0 ? -f[n] : f[n]);                       \
        }                                                                                          \
        const double r = sine ? fz_rng_dfma(fz_rng_dmul(t, t2), p, t) : fz_rng_dfma(t2, p, 1.0);   \
        return fz_rng_dmul(sign, r);                                                               \
      } /* Word k of a block, without indexing an array (registers only). */                       \
      inline unsigned fz_rng_word(const FzPhilox4& r, unsigned k) {                                \
        return k == 0u ? r.x[0] : k == 1u ? r.x[1] : k == 2u ? r.x[2] : r.x[3];                    \
      } /* Element i takes word i % 4 of block i / 4 (float uniform), words                        \
           2 (i % 2) and 2 (i % 2) + 1 of block i / 2 (float normal, double                        \
           uniform), or all of block i (double normal). */                                         \
      inline float fz_uniform_f(float lo, float hi, unsigned long long seed,                       \
                                unsigned long long offset, unsigned long long index) {             \
        const FzPhilox4 r = fz_philox(seed, offset, index >> 2);                                   \
        const float u = fz_rng_u24(fz_rng_word(r, (unsigned)index & 3u), 0u);                      \
        return fz_rng_fadd(lo, fz_rng_fmul(fz_rng_fsub(hi, lo), u));                               \
      } inline double fz_uniform_d(double lo, double hi, unsigned long long seed,                  \
                                   unsigned long long offset, unsigned long long index) {          \
        const FzPhilox4 r = fz_philox(seed, offset, index >> 1);                                   \
        const unsigned k = ((unsigned)index & 1u) * 2u;                                            \
        const double u = fz_rng_u53(fz_rng_word(r, k), fz_rng_word(r, k + 1u), 0u);                \
        return fz_rng_dadd(lo, fz_rng_dmul(fz_rng_dsub(hi, lo), u));                               \
      } inline float fz_normal_f(float mean, float sd, unsigned long long seed,                    \
                                 unsigned long long offset, unsigned long long index) {            \
        const FzPhilox4 r = fz_philox(seed, offset, index >> 1);                                   \
        const unsigned k = ((unsigned)index & 1u) * 2u;                                            \
        const float radius =                                                                       \
            fz_rng_fsqrt(fz_rng_fmul(-2.0f, fz_rng_logf(fz_rng_u24(fz_rng_word(r, k), 1u))));      \
        const float z =                                                                            \
            fz_rng_fmul(radius, fz_rng_cos2pif(fz_rng_u24(fz_rng_word(r, k + 1u), 0u)));           \
        return fz_rng_fadd(mean, fz_rng_fmul(sd, z));                                              \
      } inline double fz_normal_d(double mean, double sd, unsigned long long seed,                 \
                                  unsigned long long offset, unsigned long long index) {           \
        const FzPhilox4 r = fz_philox(seed, offset, index);                                        \
        const double u1 = fz_rng_u53(r.x[0], r.x[1], 1u);                                          \
        const double radius = fz_rng_dsqrt(fz_rng_dmul(-2.0, fz_rng_logd(u1)));                    \
        const double z = fz_rng_dmul(radius, fz_rng_cos2pid(fz_rng_u53(r.x[2], r.x[3], 0u)));      \
        return fz_rng_dadd(mean, fz_rng_dmul(sd, z));                                              \
      })

namespace fusiond {
namespace {

// Host primitives: plain IEEE operations (no contraction in this file).
float fz_rng_fadd(float a, float b) { return a + b; }
float fz_rng_fsub(float a, float b) { return a - b; }
float fz_rng_fmul(float a, float b) { return a * b; }
float fz_rng_fdiv(float a, float b) { return a / b; }
float fz_rng_fsqrt(float a) { return std::sqrt(a); }
float fz_rng_ffma(float a, float b, float c) { return std::fma(a, b, c); }
unsigned fz_rng_fbits(float a) {
  unsigned b;
  std::memcpy(&b, &a, sizeof b);
  return b;
}
float fz_rng_ffrom(unsigned b) {
  float a;
  std::memcpy(&a, &b, sizeof a);
  return a;
}
double fz_rng_dadd(double a, double b) { return a + b; }
double fz_rng_dsub(double a, double b) { return a - b; }
double fz_rng_dmul(double a, double b) { return a * b; }
double fz_rng_ddiv(double a, double b) { return a / b; }
double fz_rng_dsqrt(double a) { return std::sqrt(a); }
double fz_rng_dfma(double a, double b, double c) { return std::fma(a, b, c); }
unsigned long long fz_rng_dbits(double a) {
  unsigned long long b;
  std::memcpy(&b, &a, sizeof b);
  return b;
}
double fz_rng_dfrom(unsigned long long b) {
  double a;
  std::memcpy(&a, &b, sizeof a);
  return a;
}

// The Philox block is inlined here; kernels call it (__noinline__): one copy
// instead of one per element and stage halved NVRTC's time and took 16
// registers off dropout + LayerNorm (2048x8192: 2.27 -> 0.86 s, 184 -> 168
// registers; 162 without the random op).
#define FZ_RNG_BLOCK inline
FZ_PHILOX_CODE(FZ_RNG_EXPAND)

// Device primitives: the round-to-nearest intrinsics, which NVVM never
// contracts or approximates.
constexpr char kDevicePrimitives[] = R"(
#define FZ_RNG_BLOCK __noinline__
__device__ __forceinline__ float fz_rng_fadd(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float fz_rng_fsub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float fz_rng_fmul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float fz_rng_fdiv(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float fz_rng_fsqrt(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ float fz_rng_ffma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ unsigned fz_rng_fbits(float a) { return __float_as_uint(a); }
__device__ __forceinline__ float fz_rng_ffrom(unsigned b) { return __uint_as_float(b); }
__device__ __forceinline__ double fz_rng_dadd(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double fz_rng_dsub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double fz_rng_dmul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double fz_rng_ddiv(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double fz_rng_dsqrt(double a) { return __dsqrt_rn(a); }
__device__ __forceinline__ double fz_rng_dfma(double a, double b, double c) { return __fma_rn(a, b, c); }
__device__ __forceinline__ unsigned long long fz_rng_dbits(double a) { return (unsigned long long)__double_as_longlong(a); }
__device__ __forceinline__ double fz_rng_dfrom(unsigned long long b) { return __longlong_as_double((long long)b); }
)";

}  // namespace

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 2> key, std::array<uint32_t, 4> ctr) {
  // fz_philox takes the key and counter as 64-bit halves.
  const FzPhilox4 r = fz_philox(uint64_t{key[1]} << 32 | key[0], uint64_t{ctr[3]} << 32 | ctr[2],
                                uint64_t{ctr[1]} << 32 | ctr[0]);
  return {r.x[0], r.x[1], r.x[2], r.x[3]};
}

float PhiloxUniformFloat(float lo, float hi, uint64_t seed, uint64_t offset, uint64_t index) {
  return fz_uniform_f(lo, hi, seed, offset, index);
}
double PhiloxUniformDouble(double lo, double hi, uint64_t seed, uint64_t offset, uint64_t index) {
  return fz_uniform_d(lo, hi, seed, offset, index);
}
float PhiloxNormalFloat(float mean, float std, uint64_t seed, uint64_t offset, uint64_t index) {
  return fz_normal_f(mean, std, seed, offset, index);
}
double PhiloxNormalDouble(double mean, double std, uint64_t seed, uint64_t offset, uint64_t index) {
  return fz_normal_d(mean, std, seed, offset, index);
}

const char* PhiloxDeviceSource() {
  static const std::string* text =
      new std::string(std::string(kDevicePrimitives) + FZ_PHILOX_CODE(FZ_RNG_STRINGIZE) + "\n");
  return text->c_str();
}

}  // namespace fusiond
