// What a generated kernel needs from CUDA, for host C++ (g++/clang++): the
// built-in variables, barriers, warp shuffles, shared memory, atomics, vector
// types and intrinsics. Included first by every translated kernel
// (translate.h); the execution model (one coroutine per CUDA thread, one OS
// thread per block) is emu_runtime.cc's, reached through the fz_emu_* calls.
// Inline PTX is rewritten to the host helpers below by translate.cc.
#ifndef FUSIOND_TESTS_HOST_EMULATION_CUDA_HOST_H_
#define FUSIOND_TESTS_HOST_EMULATION_CUDA_HOST_H_

#include <math.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __CUDA_ARCH__ 900

#include "emu_abi.h"

#define threadIdx (fz_emu_self()->tid)
#define blockIdx (fz_emu_self()->bid)
#define blockDim (fz_emu_self()->bdim)
#define gridDim (fz_emu_self()->gdim)
#define warpSize 32

inline void __syncthreads() { fz_emu_syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { fz_emu_syncwarp(mask); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __nanosleep(unsigned) { fz_emu_spin(); }

// Vector types with CUDA's alignment.
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(16) double2 {
  double x, y;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline double2 make_double2(double x, double y) { return {x, y}; }

// Warp shuffles: each lane publishes its value, the lanes of `mask` meet,
// each reads its source lane, and they meet again before the slots are reused.
template <typename T>
inline T fz_emu_exchange(unsigned mask, T v, int src) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  FzEmuThread* t = fz_emu_self();
  std::memcpy(&t->warp_slots[t->lane], &v, sizeof(T));
  fz_emu_syncwarp(mask);
  T r = v;
  if (src != t->lane) {
    if (((mask >> src) & 1u) == 0) fz_emu_fail("a shuffle reads a lane outside its mask");
    std::memcpy(&r, &t->warp_slots[src], sizeof(T));
  }
  fz_emu_syncwarp(mask);
  return r;
}
template <typename T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const int lane = fz_emu_self()->lane;
  return fz_emu_exchange(mask, v, lane / width * width + (src % width));
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const int lane = fz_emu_self()->lane;
  const int src = lane ^ lane_mask;
  return fz_emu_exchange(mask, v, src / width > lane / width ? lane : src);
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
  const int lane = fz_emu_self()->lane;
  return fz_emu_exchange(mask, v, lane % width + (int)d >= width ? lane : lane + (int)d);
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
  const int lane = fz_emu_self()->lane;
  return fz_emu_exchange(mask, v, lane % width < (int)d ? lane : lane - (int)d);
}

// Atomics (device-wide: blocks run on separate OS threads).
template <typename T>
inline T atomicAdd(T* p, T v) {
  if constexpr (std::is_integral<T>::value) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  } else {
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST), next;
    do {
      next = old + v;
    } while (!__atomic_compare_exchange(p, &old, &next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
  }
}
template <typename T>
inline T atomicMax(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (old < v &&
         !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
template <typename T>
inline T atomicMin(T* p, T v) {
  T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v < old &&
         !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
template <typename T>
inline T atomicExch(T* p, T v) {
  return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
template <typename T>
inline T atomicCAS(T* p, T compare, T v) {
  __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}

// Bit casts and the intrinsics kernels and the preludes use.
template <typename To, typename From>
inline To fz_emu_bits(From f) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To t;
  std::memcpy(&t, &f, sizeof(t));
  return t;
}
inline float __int_as_float(int i) { return fz_emu_bits<float>(i); }
inline float __uint_as_float(unsigned u) { return fz_emu_bits<float>(u); }
inline int __float_as_int(float f) { return fz_emu_bits<int>(f); }
inline unsigned __float_as_uint(float f) { return fz_emu_bits<unsigned>(f); }
inline double __longlong_as_double(long long i) { return fz_emu_bits<double>(i); }
inline long long __double_as_longlong(double d) { return fz_emu_bits<long long>(d); }
inline double __hiloint2double(int hi, int lo) {
  return fz_emu_bits<double>(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);
}
inline int __double2loint(double d) { return (int)(unsigned)fz_emu_bits<unsigned long long>(d); }
inline int __double2hiint(double d) { return (int)(fz_emu_bits<unsigned long long>(d) >> 32); }
// float64 -> float32 toward zero (the rounding mode set only for this conversion).
inline float __double2float_rz(double d) {
  float f = (float)d;  // round to nearest; step back one ulp toward zero when it went away
  if (std::isfinite(f) ? std::fabs((double)f) > std::fabs(d) : !std::isinf(d) && !std::isnan(d)) {
    f = std::nextafter(f, 0.0f);
  }
  return f;
}
inline size_t __cvta_generic_to_shared(const void* p) { return fz_emu_cvta_shared(p); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned __umulhi(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline int __float2int_rn(float f) { return (int)nearbyintf(f); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
// __expf is 2^(x log2 e) on the SFU (two ulp plus the product's rounding).
inline float __expf(float x) { return exp2f(x * 1.44269504088896341f); }
inline float __logf(float x) { return logf(x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// Host equivalents of the PTX that translate.cc rewrites.
// cvt.rn.bf16.f32: round to nearest, ties to even; NaN stays a (quiet) NaN.
inline unsigned short fz_emu_f32_to_bf16(float f) {
  const unsigned u = fz_emu_bits<unsigned>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
// cvt.f32.f16: exact.
inline float fz_emu_f16_to_f32(unsigned short h) {
  const unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return fz_emu_bits<float>(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    const float v = (float)m * 5.9604644775390625e-8f;  // m 2^-24
    return sign ? -v : v;
  }
  return fz_emu_bits<float>(sign | ((e + 112u) << 23) | (m << 13));
}
// cvt.rn.f16.f32: round to nearest, ties to even, overflow to infinity.
inline unsigned short fz_emu_f32_to_f16(float f) {
  const unsigned u = fz_emu_bits<unsigned>(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned short)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // rounds to >= 65520
  if (a < 0x38800000u) {  // below 2^-14: subnormal, in units of 2^-24
    const float v = fz_emu_bits<float>(a) * 16777216.0f;
    return (unsigned short)(sign | (unsigned)nearbyintf(v));
  }
  const unsigned r = a + 0xfffu + ((a >> 13) & 1u);
  return (unsigned short)(sign | (((r >> 23) - 112u) << 10) | ((r >> 13) & 0x3ffu));
}
// tanh.approx.f32 (max relative error 2^-10.987 per the PTX manual): float tanh.
inline float fz_emu_tanh_approx(float x) { return tanhf(x); }
// ex2.approx.ftz.f32: 2^x, subnormal inputs and results flushed to zero.
inline float fz_emu_ex2_ftz(float x) {
  if (fabsf(x) < 1.17549435e-38f) x = 0.0f;
  const float y = exp2f(x);
  return y < 1.17549435e-38f ? 0.0f : y;
}
// max.NaN.f32 / min.NaN.f32: NaN when either operand is NaN; -0 < +0.
inline float fz_emu_max_nan(float a, float b) {
  if (a != a || b != b) return fz_emu_bits<float>(0x7fffffffu);
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline float fz_emu_min_nan(float a, float b) {
  if (a != a || b != b) return fz_emu_bits<float>(0x7fffffffu);
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
inline unsigned* fz_emu_words(const void* p, int bytes) {
  fz_emu_check_align(p, bytes);
  return (unsigned*)p;
}

// Calls a kernel with 8-byte parameter slots (a pointer, a double or an
// int64 each, as the runtimes pack them).
template <typename A>
inline A fz_emu_arg(const void* slot) {
  static_assert(sizeof(A) == 8, "kernel parameters are 8 bytes");
  A a;
  std::memcpy(&a, slot, sizeof(a));
  return a;
}
template <typename... A, size_t... I>
inline void fz_emu_invoke(void (*f)(A...), void* const* slots, std::index_sequence<I...>) {
  f(fz_emu_arg<A>(slots[I])...);
}
template <typename... A>
inline void fz_emu_invoke(void (*f)(A...), void* const* slots) {
  fz_emu_invoke(f, slots, std::index_sequence_for<A...>());
}

#endif  // FUSIOND_TESTS_HOST_EMULATION_CUDA_HOST_H_
