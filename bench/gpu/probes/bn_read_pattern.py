"""Does the 4-D batch norm's access pattern cap DRAM bandwidth? (session 18)
Times read-only and write-only kernels over x and dy of [256, 64, 56, 56]
bf16 (two 102.8 MB tensors), 256 blocks of 256 threads (two a SM, as the
generated kernel), 16-byte vectors, four in flight a thread:
  read contiguous     both tensors front to back, grid-stride
  read by channel     the generated kernel's order: 16 channel slots x 16
                      blocks, four rounds of 16 channels, each block its
                      interleaved share of a channel (N x H x W, 6272-byte
                      runs 401408 bytes apart)
  write contiguous / write by channel   the same orders, stores only;
                      by channel also with .cs stores, in contiguous 8192-element
                      chunks a block, and a round's 16 channels in memory order
Median of 30 launches (CUDA events), in TB/s of bytes moved.
Usage: python3 bn_read_pattern.py"""
from probe_args import probe_args

probe_args(0, __doc__)
import cupy as cp  # noqa: E402  (after --help, which needs no GPU)
N, C, HW = 256, 64, 56 * 56
SRC = r"""
typedef unsigned long long u64;
typedef unsigned int u32;
#define N 256
#define C 64
#define HW 3136
#define SLOTS 16
#define BPC 16
__device__ __forceinline__ u64 off(u32 c, u32 j) { return (u64)(j / HW) * (C * HW) + (u64)c * HW + j % HW; }
extern "C" __global__ void __launch_bounds__(256, 2) rd_contig(const uint4* x, const uint4* d, u32* sink, u64 nvec) {
  u32 acc = 0;
  const u64 T = (u64)gridDim.x * 256;
  for (u64 i = blockIdx.x * 256ull + threadIdx.x; i < nvec; i += 4 * T) {
    uint4 a[4], b[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) if (i + u * T < nvec) { a[u] = x[i + u * T]; b[u] = d[i + u * T]; }
#pragma unroll
    for (int u = 0; u < 4; ++u) if (i + u * T < nvec) acc ^= a[u].x ^ a[u].w ^ b[u].y ^ b[u].z;
  }
  if (acc == 0x12345678u) sink[0] = acc;
}
extern "C" __global__ void __launch_bounds__(256, 2) rd_chan(const unsigned short* x, const unsigned short* d, u32* sink) {
  u32 acc = 0;
  const u32 slot = blockIdx.x % SLOTS, b = blockIdx.x / SLOTS;
  const u32 t = b * 256 + threadIdx.x, T = BPC * 256, rlen = N * HW;
  for (u32 it = 0; it < C / SLOTS; ++it) {
    const u32 c = it * SLOTS + slot;
    for (u32 c0 = t; c0 * 8 < rlen; c0 += 4 * T) {
      uint4 a[4], e[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) { const u32 j = (c0 + u * T) * 8; if (j < rlen) { a[u] = *(const uint4*)(x + off(c, j)); e[u] = *(const uint4*)(d + off(c, j)); } }
#pragma unroll
      for (int u = 0; u < 4; ++u) { const u32 j = (c0 + u * T) * 8; if (j < rlen) acc ^= a[u].x ^ a[u].w ^ e[u].y ^ e[u].z; }
    }
  }
  if (acc == 0x12345678u) sink[0] = acc;
}
extern "C" __global__ void __launch_bounds__(256, 2) wr_contig(uint4* y, u64 nvec) {
  const u64 T = (u64)gridDim.x * 256;
  for (u64 i = blockIdx.x * 256ull + threadIdx.x; i < nvec; i += T) y[i] = make_uint4((u32)i, 1, 2, 3);
}
extern "C" __global__ void __launch_bounds__(256, 2) wr_chan(unsigned short* y) {
  const u32 slot = blockIdx.x % SLOTS, b = blockIdx.x / SLOTS;
  const u32 t = b * 256 + threadIdx.x, T = BPC * 256, rlen = N * HW;
  for (u32 it = 0; it < C / SLOTS; ++it) {
    const u32 c = it * SLOTS + slot;
    for (u32 c0 = t; c0 * 8 < rlen; c0 += T) *(uint4*)(y + off(c, c0 * 8)) = make_uint4(c0, c, 2, 3);
  }
}
extern "C" __global__ void __launch_bounds__(256, 2) wr_chan_cs(unsigned short* y) {
  const u32 slot = blockIdx.x % SLOTS, b = blockIdx.x / SLOTS;
  const u32 t = b * 256 + threadIdx.x, T = BPC * 256, rlen = N * HW;
  for (u32 it = 0; it < C / SLOTS; ++it) {
    const u32 c = it * SLOTS + slot;
    for (u32 c0 = t; c0 * 8 < rlen; c0 += T) {
      unsigned short* p = y + off(c, c0 * 8);
      asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(c0), "r"(c), "r"(2), "r"(3) : "memory");
    }
  }
}
extern "C" __global__ void __launch_bounds__(256, 2) wr_chan_chunks(unsigned short* y) {
  // each block writes contiguous 8192-element chunks of its channel: b, b + 16, ...
  const u32 slot = blockIdx.x % SLOTS, b = blockIdx.x / SLOTS, rlen = N * HW;
  for (u32 it = 0; it < C / SLOTS; ++it) {
    const u32 c = it * SLOTS + slot;
    for (u32 g = b; g * 8192 < rlen; g += BPC)
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const u32 j = g * 8192 + (u * 256 + threadIdx.x) * 8;
        if (j < rlen) *(uint4*)(y + off(c, j)) = make_uint4(j, c, 2, 3);
      }
  }
}
extern "C" __global__ void __launch_bounds__(256, 2) wr_round_memorder(unsigned short* y) {
  // a round's 16 channels written in memory order by all 256 blocks: for each n, channels c0..c0+15 are one 100 KB run
  const u32 RUN = SLOTS * HW / 8;  // vectors in a round's run of one n
  for (u32 it = 0; it < C / SLOTS; ++it) {
    for (u32 v = blockIdx.x * 256 + threadIdx.x; v < N * RUN; v += gridDim.x * 256) {
      const u32 n = v / RUN, r = v % RUN;
      *(uint4*)(y + (unsigned long long)n * C * HW + (unsigned long long)it * SLOTS * HW + r * 8) = make_uint4(v, it, 2, 3);
    }
  }
}
"""
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
n = N * C * HW
x = cp.random.randint(0, 1 << 15, n, dtype=cp.uint16)
d = cp.random.randint(0, 1 << 15, n, dtype=cp.uint16)
y = cp.empty(n, dtype=cp.uint16)
sink = cp.zeros(1, dtype=cp.uint32)
grid, block = (256,), (256,)
nvec = n // 8
runs = {
    "read contiguous": (lambda: mod.get_function("rd_contig")(grid, block, (x, d, sink, cp.uint64(nvec))), 4 * n),
    "read by channel": (lambda: mod.get_function("rd_chan")(grid, block, (x, d, sink)), 4 * n),
    "write contiguous": (lambda: mod.get_function("wr_contig")(grid, block, (y, cp.uint64(nvec))), 2 * n),
    "write by channel": (lambda: mod.get_function("wr_chan")(grid, block, (y,)), 2 * n),
    "write by channel, .cs": (lambda: mod.get_function("wr_chan_cs")(grid, block, (y,)), 2 * n),
    "write by channel, contiguous chunks": (lambda: mod.get_function("wr_chan_chunks")(grid, block, (y,)), 2 * n),
    "write a round in memory order": (lambda: mod.get_function("wr_round_memorder")(grid, block, (y,)), 2 * n),
}
for name, (fn, nbytes) in runs.items():
    for _ in range(5):
        fn()
    times = []
    for _ in range(30):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    us = sorted(times)[len(times) // 2]
    print(f"{name:36s} {us:8.1f} us  {nbytes / us / 1e6:5.2f} TB/s")
