#include "compiler/codegen/prelude.h"

#include <iterator>
#include <string>

#include "compiler/ir/philox.h"

namespace fusiond {
namespace {

// Type codes are fusiond::DataType values: 1 bool, 2 int32, 3 int64,
// 4 float16, 5 bfloat16, 6 float32, 7 float64. Elements are packed
// little-endian into 32-bit words; element l of a 16-bit type lives in word
// l / 2, half l % 2. The prelude in pieces, in order (prelude.h,
// PreludePiece), each text from the line after R"PRELUDE(.
constexpr PreludePiece kPieces[] = {
    {"", R"PRELUDE(

typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

)PRELUDE"},
    {"fz_bf16_to_f32 fz_f32_to_bf16", R"PRELUDE(
__device__ __forceinline__ float fz_bf16_to_f32(u32 h) { return __uint_as_float(h << 16); }
__device__ __forceinline__ u32 fz_f32_to_bf16(float f) {
  unsigned short s;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(s) : "f"(f));
  return s;
}
)PRELUDE"},
    {"fz_f16_to_f32 fz_f32_to_f16", R"PRELUDE(
__device__ __forceinline__ float fz_f16_to_f32(u32 h) {
  float f; unsigned short s = (unsigned short)h;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(s));
  return f;
}
__device__ __forceinline__ u32 fz_f32_to_f16(float f) {
  unsigned short s;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(s) : "f"(f));
  return s;
}
)PRELUDE"},
    {"fz_tanh_approx", R"PRELUDE(
__device__ __forceinline__ float fz_tanh_approx(float x) {
  float y; asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x)); return y;
}
)PRELUDE"},
    {"fz_exp_approx", R"PRELUDE(
// exp(x) as 2^(x log2 e) on the SFU, denormals flushed: one FMUL and one
// MUFU.EX2 (__expf's non-flushing ex2 costs four instructions). Used only
// where no output is float32/float64 (ExprOptions::approx_transcendentals).
__device__ __forceinline__ float fz_exp_approx(float x) {
  float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f)); return y;
}
)PRELUDE"},
    {"fz_f64_to_f32_odd", R"PRELUDE(
// float64 -> float32 rounded to odd (toward zero, last bit set when inexact):
// the later round to a 16-bit float then rounds once, as the reference does,
// since float32 keeps at least two bits more than float16 or bfloat16.
__device__ __forceinline__ float fz_f64_to_f32_odd(double d) {
  float f = __double2float_rz(d);
  if ((double)f != d && f == f) f = __uint_as_float(__float_as_uint(f) | 1u);
  return f;
}
)PRELUDE"},
    {"fz_max fz_min", R"PRELUDE(
// NaN-propagating max/min (torch semantics) in one instruction (sm_80+).
__device__ __forceinline__ float fz_max(float a, float b) {
  float y; asm("max.NaN.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)); return y;
}
__device__ __forceinline__ float fz_min(float a, float b) {
  float y; asm("min.NaN.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b)); return y;
}
__device__ __forceinline__ double fz_max(double a, double b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ double fz_min(double a, double b) { return (a != a || a < b) ? a : b; }
template <typename T> __device__ __forceinline__ T fz_max(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T fz_min(T a, T b) { return a < b ? a : b; }

)PRELUDE"},
    {"Ty", R"PRELUDE(
template <int DT> struct Ty;
)PRELUDE"},
    {"Ty<6>", R"PRELUDE(
template <> struct Ty<6> {
  typedef float C;
  static __device__ __forceinline__ C get(const u32* w, int l) { return __uint_as_float(w[l]); }
  static __device__ __forceinline__ void put(u32* w, int l, C v) { w[l] = __float_as_uint(v); }
  static __device__ __forceinline__ C round(C v) { return v; }
  static __device__ __forceinline__ C load(const void* p) { return *(const float*)p; }
  static __device__ __forceinline__ void store(void* p, C v) { *(float*)p = v; }
};
)PRELUDE"},
    {"Ty<5>", R"PRELUDE(
template <> struct Ty<5> {
  typedef float C;
  static __device__ __forceinline__ C get(const u32* w, int l) {
    return __uint_as_float((l & 1) ? (w[l >> 1] & 0xffff0000u) : (w[l >> 1] << 16));
  }
  static __device__ __forceinline__ void put(u32* w, int l, C v) {
    w[l >> 1] |= fz_f32_to_bf16(v) << ((l & 1) * 16);
  }
  // Rounds f[0..N) into N packed elements, two per cvt.
  template <int N> static __device__ __forceinline__ void pack(u32* w, const float* f) {
#pragma unroll
    for (int l = 0; l + 1 < N; l += 2) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w[l >> 1]) : "f"(f[l + 1]), "f"(f[l]));
    if (N & 1) w[N >> 1] = fz_f32_to_bf16(f[N - 1]);
  }
  static __device__ __forceinline__ C round(C v) { return fz_bf16_to_f32(fz_f32_to_bf16(v)); }
  static __device__ __forceinline__ C load(const void* p) { return fz_bf16_to_f32(*(const unsigned short*)p); }
  static __device__ __forceinline__ void store(void* p, C v) { *(unsigned short*)p = (unsigned short)fz_f32_to_bf16(v); }
};
)PRELUDE"},
    {"Ty<4>", R"PRELUDE(
template <> struct Ty<4> {
  typedef float C;
  static __device__ __forceinline__ C get(const u32* w, int l) {
    return fz_f16_to_f32((l & 1) ? (w[l >> 1] >> 16) : (w[l >> 1] & 0xffffu));
  }
  static __device__ __forceinline__ void put(u32* w, int l, C v) {
    w[l >> 1] |= fz_f32_to_f16(v) << ((l & 1) * 16);
  }
  template <int N> static __device__ __forceinline__ void pack(u32* w, const float* f) {
#pragma unroll
    for (int l = 0; l + 1 < N; l += 2) asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w[l >> 1]) : "f"(f[l + 1]), "f"(f[l]));
    if (N & 1) w[N >> 1] = fz_f32_to_f16(f[N - 1]);
  }
  static __device__ __forceinline__ C round(C v) { return fz_f16_to_f32(fz_f32_to_f16(v)); }
  static __device__ __forceinline__ C load(const void* p) { return fz_f16_to_f32(*(const unsigned short*)p); }
  static __device__ __forceinline__ void store(void* p, C v) { *(unsigned short*)p = (unsigned short)fz_f32_to_f16(v); }
};
)PRELUDE"},
    {"Ty<7>", R"PRELUDE(
template <> struct Ty<7> {
  typedef double C;
  static __device__ __forceinline__ C get(const u32* w, int l) { return __hiloint2double(w[2 * l + 1], w[2 * l]); }
  static __device__ __forceinline__ void put(u32* w, int l, C v) {
    w[2 * l] = (u32)__double2loint(v); w[2 * l + 1] = (u32)__double2hiint(v);
  }
  static __device__ __forceinline__ C round(C v) { return v; }
  static __device__ __forceinline__ C load(const void* p) { return *(const double*)p; }
  static __device__ __forceinline__ void store(void* p, C v) { *(double*)p = v; }
};
)PRELUDE"},
    {"Ty<3>", R"PRELUDE(
template <> struct Ty<3> {
  typedef i64 C;
  static __device__ __forceinline__ C get(const u32* w, int l) { return (i64)(((u64)w[2 * l + 1] << 32) | w[2 * l]); }
  static __device__ __forceinline__ void put(u32* w, int l, C v) { w[2 * l] = (u32)v; w[2 * l + 1] = (u32)((u64)v >> 32); }
  static __device__ __forceinline__ C round(C v) { return v; }
  static __device__ __forceinline__ C load(const void* p) { return *(const i64*)p; }
  static __device__ __forceinline__ void store(void* p, C v) { *(i64*)p = v; }
};
)PRELUDE"},
    {"Ty<2>", R"PRELUDE(
template <> struct Ty<2> {
  typedef int C;
  static __device__ __forceinline__ C get(const u32* w, int l) { return (int)w[l]; }
  static __device__ __forceinline__ void put(u32* w, int l, C v) { w[l] = (u32)v; }
  static __device__ __forceinline__ C round(C v) { return v; }
  static __device__ __forceinline__ C load(const void* p) { return *(const int*)p; }
  static __device__ __forceinline__ void store(void* p, C v) { *(int*)p = v; }
};
)PRELUDE"},
    {"Ty<1>", R"PRELUDE(
template <> struct Ty<1> {
  typedef bool C;
  static __device__ __forceinline__ C get(const u32* w, int l) { return ((w[l >> 2] >> ((l & 3) * 8)) & 0xffu) != 0; }
  static __device__ __forceinline__ void put(u32* w, int l, C v) { w[l >> 2] |= (v ? 1u : 0u) << ((l & 3) * 8); }
  static __device__ __forceinline__ C round(C v) { return v; }
  static __device__ __forceinline__ C load(const void* p) { return *(const unsigned char*)p != 0; }
  static __device__ __forceinline__ void store(void* p, C v) { *(unsigned char*)p = v ? 1 : 0; }
};

)PRELUDE"},
    {"Chunk", R"PRELUDE(
// Loads / stores of B bytes (B in 1, 2, 4, 8, 16) into packed words.
// st: one vector store (st.global.v4 / .v2): NVVM split the plain 16-byte
// store of packed words into four 4-byte ones. stcs: the same store with
// the evict-first (streaming) hint, st.global.cs (16, 8 and 4 bytes).
// Loads stay plain: __ldg (ld.global.nc) on every input cost softmax
// backward 16384x4096 spills at four blocks of 128 threads (so two ran,
// 144 registers).
template <int B> struct Chunk;
)PRELUDE"},
    {"Chunk<16>", R"PRELUDE(
template <> struct Chunk<16> {
  static __device__ __forceinline__ void ld(u32* w, const void* p) {
    uint4 t = *(const uint4*)p; w[0] = t.x; w[1] = t.y; w[2] = t.z; w[3] = t.w;
  }
  static __device__ __forceinline__ void st(void* p, const u32* w) {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
  }
  static __device__ __forceinline__ void stcs(void* p, const u32* w) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
  }
};
)PRELUDE"},
    {"Chunk<8>", R"PRELUDE(
template <> struct Chunk<8> {
  static __device__ __forceinline__ void ld(u32* w, const void* p) { uint2 t = *(const uint2*)p; w[0] = t.x; w[1] = t.y; }
  static __device__ __forceinline__ void st(void* p, const u32* w) {
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" :: "l"(p), "r"(w[0]), "r"(w[1]) : "memory");
  }
  static __device__ __forceinline__ void stcs(void* p, const u32* w) {
    asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" :: "l"(p), "r"(w[0]), "r"(w[1]) : "memory");
  }
};
)PRELUDE"},
    {"Chunk<4>", R"PRELUDE(
template <> struct Chunk<4> {
  static __device__ __forceinline__ void ld(u32* w, const void* p) { w[0] = *(const u32*)p; }
  static __device__ __forceinline__ void st(void* p, const u32* w) { *(u32*)p = w[0]; }
  static __device__ __forceinline__ void stcs(void* p, const u32* w) {
    asm volatile("st.global.cs.u32 [%0], %1;" :: "l"(p), "r"(w[0]) : "memory");
  }
};
)PRELUDE"},
    {"Chunk<2>", R"PRELUDE(
template <> struct Chunk<2> {
  static __device__ __forceinline__ void ld(u32* w, const void* p) { w[0] = *(const unsigned short*)p; }
  static __device__ __forceinline__ void st(void* p, const u32* w) { *(unsigned short*)p = (unsigned short)w[0]; }
  static __device__ __forceinline__ void stcs(void* p, const u32* w) { st(p, w); }
};
)PRELUDE"},
    {"Chunk<1>", R"PRELUDE(
template <> struct Chunk<1> {
  static __device__ __forceinline__ void ld(u32* w, const void* p) { w[0] = *(const unsigned char*)p; }
  static __device__ __forceinline__ void st(void* p, const u32* w) { *(unsigned char*)p = (unsigned char)w[0]; }
  static __device__ __forceinline__ void stcs(void* p, const u32* w) { st(p, w); }
};
)PRELUDE"},
    {"VW", R"PRELUDE(
template <int N> struct VW { static constexpr int value = N; };

)PRELUDE"},
    {"fz_comb", R"PRELUDE(
// Reduction operators: 0 sum, 1 max, 2 min, 3 prod.
template <int OP, typename T> __device__ __forceinline__ T fz_comb(T a, T b) {
  if (OP == 0) return a + b;
  if (OP == 1) return fz_max(a, b);
  if (OP == 2) return fz_min(a, b);
  return a * b;
}
)PRELUDE"},
    {"fz_div_count", R"PRELUDE(
// Divisions by a count in float: the fast division (2 ulp); IEEE division's
// slow path cost registers in every kernel that merges.
__device__ __forceinline__ float fz_div_count(float a, float n) { return __fdividef(a, n); }
__device__ __forceinline__ double fz_div_count(double a, double n) { return a / n; }
)PRELUDE"},
    {"fz_weight", R"PRELUDE(
template <typename T> __device__ __forceinline__ T fz_weight(T nb, T nn) { return nn > T(0) ? fz_div_count(nb, nn) : T(0); }
)PRELUDE"},
    {"fz_chan", R"PRELUDE(
// Chan et al.'s pairwise update of (count, mean, sum of squared deviations)
// with another group's (one-pass var/var_mean); empty groups (count 0) merge
// as no-ops.
template <typename T> __device__ __forceinline__ void fz_chan(T& n, T& m, T& m2, T nb, T mb, T m2b) {
  const T nn = n + nb;
  const T r = fz_weight(nb, nn);
  const T d = mb - m;
  m += d * r;
  m2 += m2b + d * d * n * r;
  n = nn;
}
)PRELUDE"},
    {"fz_warp_chan", R"PRELUDE(
// Butterfly over the warp; each pair merges (lower lane, upper lane), so
// both lanes end with the same bits.
template <typename T> __device__ __forceinline__ void fz_warp_chan(T& n, T& m, T& m2) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const T nb = __shfl_xor_sync(0xffffffffu, n, o), mb = __shfl_xor_sync(0xffffffffu, m, o),
            m2b = __shfl_xor_sync(0xffffffffu, m2, o);
    const bool up = (threadIdx.x & o) != 0;
    T an = up ? nb : n, am = up ? mb : m, am2 = up ? m2b : m2;
    fz_chan(an, am, am2, up ? n : nb, up ? m : mb, up ? m2 : m2b);
    n = an; m = am; m2 = am2;
  }
}
)PRELUDE"},
    {"fz_warp_reduce", R"PRELUDE(
template <int OP, typename T> __device__ __forceinline__ T fz_warp_reduce(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fz_comb<OP, T>(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

)PRELUDE"},
    {"fz_bar_sync FZ_GROUP_WORDS", R"PRELUDE(
// Grid barrier for cooperative launches, cooperative groups' scheme: block
// 0 adds 2^31 - (nb - 1), every other block 1, so a barrier adds exactly
// 2^31: bit 31 of bar[0] flips when the last block arrives and the low bits
// come back to their value (the word is zeroed once and kept across
// launches). One release atomic per block, then acquire loads until the bit
// flips; bar.sync carries both orders to the rest of the block. (A counter
// reset by the last block plus a generation word cost that block two more
// L2 round trips: 1.6 us from its arrival to the others' release on the
// H200, bench/gpu/timeline.py.)
#define FZ_GROUP_WORDS 124  // kMaxBarrierGroups (prelude.h)
__device__ __forceinline__ void fz_bar_sync(u32* bar, u32 nb, bool leader) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const u32 inc = leader ? 0x80000000u - (nb - 1) : 1u;
    u32 old, now;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(bar), "r"(inc) : "memory");
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(bar) : "memory");
    } while (((now ^ old) & 0x80000000u) == 0);
  }
  __syncthreads();
}
)PRELUDE"},
    {"fz_grid_sync", R"PRELUDE(
__device__ __forceinline__ void fz_grid_sync(u32* bar) {
  fz_bar_sync(bar, gridDim.x * gridDim.y, blockIdx.x == 0 && blockIdx.y == 0);
}
)PRELUDE"},
    {"fz_group_sync", R"PRELUDE(
// The same barrier among the gridDim.y blocks that share row group
// blockIdx.x (their partials of a split row), one word per group, 32 bytes
// apart, after the 128 bytes of grid-wide words: groups run apart from each
// other instead of in lockstep. More groups than the words: the grid barrier.
__device__ __forceinline__ void fz_group_sync(u32* bar) {
  if (gridDim.x > FZ_GROUP_WORDS) {
    fz_grid_sync(bar);
  } else {
    fz_bar_sync(bar + 32 + 8 * blockIdx.x, gridDim.y, blockIdx.y == 0);
  }
}
)PRELUDE"},
    {"fz_st_partial", R"PRELUDE(
// A column partial row (inner-outer persistent kernels) that the epilogue
// reads back after the grid barrier, stored with an L2 evict-last policy:
// the rows other blocks still stream past it would otherwise push it out
// to the DRAM before the epilogue reads it back (layernorm backward
// 4096x16384 on the H200, steady state 114.1 -> 106.9 us).
__device__ __forceinline__ void fz_st_partial(float* p, float4 v) {
  u64 pol;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;"
               :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(pol) : "memory");
}
)PRELUDE"},
    {"fz_cp_async", R"PRELUDE(
// Asynchronous global -> shared copies of B bytes (4, 8 or 16; sm_80+): the
// staged row buffers. Each thread copies and later reads only its own
// chunks, so waiting for its own groups is all the synchronization needed.
template <int B> __device__ __forceinline__ void fz_cp_async(void* s, const void* g) {
  const u32 sa = (u32)__cvta_generic_to_shared(s);
  if (B == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(sa), "l"(g) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" :: "r"(sa), "l"(g), "n"(B) : "memory");
  }
}
)PRELUDE"},
    {"fz_cp_commit", R"PRELUDE(
__device__ __forceinline__ void fz_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
)PRELUDE"},
    {"fz_cp_wait", R"PRELUDE(
template <int N> __device__ __forceinline__ void fz_cp_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
)PRELUDE"},
};

// Only in kernels with thread-block clusters, so the others' source (and
// cache keys) stay as they were.
const char kClusterPrelude[] = R"PRELUDE(
// Thread-block clusters (sm_90+; generator_cluster.cc): the cluster-wide
// barrier (release/acquire, so shared-memory stores before it are visible
// to the cluster after it) and a float4 load from the shared memory of the
// cluster's block `rank` at the address p has in this block.
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ void fz_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ float4 fz_dsmem_ld4(const float4* p, u32 rank) {
  u32 a = (u32)__cvta_generic_to_shared(p), r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(r) : "memory");
  return v;
}
#endif
)PRELUDE";

// Only in kernels whose offsets divide by run-time extents (symbolic
// definitions), so the others' source stays as it was.
const char kDividerPrelude[] = R"PRELUDE(
// Division by a run-time extent d (1 <= d <= 2^31) of any n < 2^32 as a
// multiply-high and a shift (Granlund and Montgomery's round-up method):
// s = ceil(log2 d), m = floor(2^32 (2^s - d) / d) + 1, n / d = (umulhi(n, m)
// + n) >> s, the sum in 64 bits. fz_div_make runs once per thread; an
// extent outside [1, 2^31] makes a divisor by 1 (fz_q32 is false then, and
// the kernel divides in 64 bits instead).
struct FzDiv { u32 d, m, s; };
__device__ __forceinline__ FzDiv fz_div_make(i64 d) {
  FzDiv v;
  v.d = d < 1 || d > 0x80000000LL ? 1u : (u32)d;
  v.s = 32 - __clz(v.d - 1);
  v.m = (u32)(((u64)1 << 32) * (((u64)1 << v.s) - v.d) / v.d + 1);
  return v;
}
__device__ __forceinline__ u32 fz_div(u32 n, FzDiv v) {
  return (u32)(((u64)__umulhi(n, v.m) + n) >> v.s);
}
)PRELUDE";

// Float column operands (Generator::FloatColumn): the staged-rows path reads a
// column's elements from floats in shared memory, the other paths from its
// packed storage words; one element read serves both.
const char kFloatColumnPrelude[] = R"PRELUDE(
template <int DT> __device__ __forceinline__ typename Ty<DT>::C fz_elem(const u32* w, int l) {
  return Ty<DT>::get(w, l);
}
template <int DT> __device__ __forceinline__ float fz_elem(const float* w, int l) { return w[l]; }
)PRELUDE";

// Row chunks read in two steps (HeuristicParams::reread_rows), the way
// torch.compile's Triton kernels read a row they reduce and then write
// from: fz_ld_keep for the reductions (L1 and L2 evict_last), fz_ld_done
// when the output pass loads the chunk again (L1 and L2 evict_first; asm
// volatile, so it stays after the block reductions). Chunks under 4 bytes
// load plainly. Appended only to kernels that use them.
const char kRereadPrelude[] = R"PRELUDE(
template <int B> __device__ __forceinline__ void fz_ld_keep(u32* w, const void* p) { Chunk<B>::ld(w, p); }
template <int B> __device__ __forceinline__ void fz_ld_done(u32* w, const void* p) { Chunk<B>::ld(w, p); }
template <> __device__ __forceinline__ void fz_ld_keep<16>(u32* w, const void* p) {
  u64 pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p), "l"(pol));
}
template <> __device__ __forceinline__ void fz_ld_done<16>(u32* w, const void* p) {
  u64 pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p), "l"(pol));
}
template <> __device__ __forceinline__ void fz_ld_keep<8>(u32* w, const void* p) {
  u64 pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm("ld.global.L1::evict_last.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;" : "=r"(w[0]), "=r"(w[1]) : "l"(p), "l"(pol));
}
template <> __device__ __forceinline__ void fz_ld_done<8>(u32* w, const void* p) {
  u64 pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("ld.global.L1::evict_first.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;" : "=r"(w[0]), "=r"(w[1]) : "l"(p), "l"(pol));
}
template <> __device__ __forceinline__ void fz_ld_keep<4>(u32* w, const void* p) {
  u64 pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm("ld.global.L1::evict_last.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(w[0]) : "l"(p), "l"(pol));
}
template <> __device__ __forceinline__ void fz_ld_done<4>(u32* w, const void* p) {
  u64 pol;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("ld.global.L1::evict_first.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(w[0]) : "l"(p), "l"(pol));
}
)PRELUDE";

}  // namespace

// fp8 element types, appended only to kernels that read or write them (so
// no other kernel's text changes). Conversions from float round to nearest,
// ties to even, in one step: e4m3fn has no infinities (what rounds past 448
// is NaN), e5m2 overflows to infinity; as PyTorch's conversions.
const char kFp8Prelude[] = R"PRELUDE(
__device__ __forceinline__ float fz_e4m3_to_f32(u32 b) {
  const u32 s = (b & 0x80u) << 24, e = (b >> 3) & 15u, m = b & 7u;
  if (e == 15u && m == 7u) return __uint_as_float(s | 0x7fc00000u);
  if (e == 0u) return __uint_as_float(s | __float_as_uint((float)m * 0.001953125f));
  return __uint_as_float(s | ((e + 120u) << 23) | (m << 20));
}
__device__ __forceinline__ u32 fz_f32_to_e4m3(float f) {
  const u32 u = __float_as_uint(f), s = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a >= 0x43f00000u) return s | 0x7fu;  // >= 480, infinity or NaN: NaN
  if (a < 0x3c800000u) return s | (u32)__float2int_rn(__uint_as_float(a) * 512.0f);  // subnormal
  const u32 r = a + 0x7ffffu + ((a >> 20) & 1u);
  return s | ((((r >> 23) - 120u) << 3) | ((r >> 20) & 7u));
}
__device__ __forceinline__ float fz_e5m2_to_f32(u32 b) { return fz_f16_to_f32((b & 0xffu) << 8); }
__device__ __forceinline__ u32 fz_f32_to_e5m2(float f) {
  const u32 u = __float_as_uint(f), s = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return s | 0x7fu;   // NaN
  if (a >= 0x47700000u) return s | 0x7cu;  // rounds past 57344: infinity
  if (a < 0x38800000u) return s | (u32)__float2int_rn(__uint_as_float(a) * 65536.0f);  // subnormal
  const u32 r = a + 0xfffffu + ((a >> 21) & 1u);
  return s | ((((r >> 23) - 112u) << 2) | ((r >> 21) & 3u));
}
template <> struct Ty<8> {
  typedef float C;
  static __device__ __forceinline__ C get(const u32* w, int l) { return fz_e4m3_to_f32((w[l >> 2] >> ((l & 3) * 8)) & 0xffu); }
  static __device__ __forceinline__ void put(u32* w, int l, C v) { w[l >> 2] |= fz_f32_to_e4m3(v) << ((l & 3) * 8); }
  static __device__ __forceinline__ C round(C v) { return fz_e4m3_to_f32(fz_f32_to_e4m3(v)); }
  static __device__ __forceinline__ C load(const void* p) { return fz_e4m3_to_f32(*(const unsigned char*)p); }
  static __device__ __forceinline__ void store(void* p, C v) { *(unsigned char*)p = (unsigned char)fz_f32_to_e4m3(v); }
};
template <> struct Ty<9> {
  typedef float C;
  static __device__ __forceinline__ C get(const u32* w, int l) { return fz_e5m2_to_f32((w[l >> 2] >> ((l & 3) * 8)) & 0xffu); }
  static __device__ __forceinline__ void put(u32* w, int l, C v) { w[l >> 2] |= fz_f32_to_e5m2(v) << ((l & 3) * 8); }
  static __device__ __forceinline__ C round(C v) { return fz_e5m2_to_f32(fz_f32_to_e5m2(v)); }
  static __device__ __forceinline__ C load(const void* p) { return fz_e5m2_to_f32(*(const unsigned char*)p); }
  static __device__ __forceinline__ void store(void* p, C v) { *(unsigned char*)p = (unsigned char)fz_f32_to_e5m2(v); }
};
)PRELUDE";

std::vector<PreludePiece> DevicePreludePieces() {
  std::vector<PreludePiece> pieces(std::begin(kPieces), std::end(kPieces));
  for (PreludePiece& p : pieces) ++p.text;  // the newline after R"PRELUDE(
  return pieces;
}

const char* DevicePrelude() {
  static const std::string* whole = [] {
    auto* s = new std::string;
    for (const PreludePiece& p : DevicePreludePieces()) *s += p.text;
    return s;
  }();
  return whole->c_str();
}

const char* Fp8Prelude() { return kFp8Prelude; }
const char* ClusterPrelude() { return kClusterPrelude; }
const char* DividerPrelude() { return kDividerPrelude; }
const char* FloatColumnPrelude() { return kFloatColumnPrelude; }
const char* RereadPrelude() { return kRereadPrelude; }

const char* RandomPrelude() { return PhiloxDeviceSource(); }

}  // namespace fusiond
