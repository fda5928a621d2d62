"""The 4-D batch norm backward with each channel's slice kept whole in
shared memory and the next channel loaded while this one is written
(session 21; a hand-written kernel, run on the GPU host).

The pipeline's outer persistent kernel reads a channel's x and dy for the
statistics, waits at the channel group's barrier and reads them again
(from L2 and kept chunks) while it writes dx: its DRAM reads and writes
alternate by phase (docs/heuristics-tuning.md, sessions 14-18). Here G
blocks hold one channel's slice (x and dy) entirely in shared memory; the
second pass reads it there, writes dx, and refills each slot by cp.async
with the same thread's chunk of the channel this group takes next, whose
statistics it accumulates a few slots behind. Every byte is read from the
DRAM once, and reads of the next channel overlap writes of this one.

  python3 bn_ring.py N C H W [--threads T] [--blocks-per-channel G] [--lag D] [--rep MS] [--timeline 1]
                         [--tickets 1]

Checks dx, dweight and dbias against a float64 evaluation of the same
math and prints do_bench (median, L2 cleared) and CUDA-graph steady-state
times with the floor at 4.25 TB/s."""
import sys

from probe_args import probe_args

SRC = r"""
#include <cuda_bf16.h>
typedef unsigned long long u64;

__device__ __forceinline__ void cp16(void* smem, const void* gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait_group() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
__device__ __forceinline__ float lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi(unsigned w) { return __uint_as_float(w & 0xffff0000u); }

// acc += sum(dy), sum(dy * (x - mean)) over one 8-element chunk.
__device__ __forceinline__ void acc8(uint4 xv, uint4 dv, float mean, float& s1, float& s2) {
  unsigned xs[4] = {xv.x, xv.y, xv.z, xv.w}, ds[4] = {dv.x, dv.y, dv.z, dv.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float d0 = lo(ds[i]), d1 = hi(ds[i]);
    s1 += d0 + d1;
    s2 += d0 * (lo(xs[i]) - mean) + d1 * (hi(xs[i]) - mean);
  }
}

__device__ __forceinline__ void block_sum2(float& a, float& b, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31, nw = blockDim.x >> 5;
  __syncthreads();
  if (l == 0) { red[2 * w] = a; red[2 * w + 1] = b; }
  __syncthreads();
  a = 0.f; b = 0.f;
  for (int i = 0; i < nw; ++i) { a += red[2 * i]; b += red[2 * i + 1]; }
}

// Grid: GROUPS * G blocks. Ticket tk stands for channel tk / G, slice
// tk % G (n in [slice*NB, (slice+1)*NB)). Without TICKETS block i takes i,
// i + GROUPS*G, ...; with TICKETS every block takes its next ticket from a
// counter when it passes a barrier, so the blocks that share a channel are
// ones that arrived together (alike in pace). Dynamic shared memory: CHUNKS
// x and dy 16-byte chunks (slot k = chunk k of the block's slice).
extern "C" __global__ void __launch_bounds__(THREADS, 1)
bn_ring(const unsigned short* __restrict__ x, const unsigned short* __restrict__ dy,
        const unsigned short* __restrict__ w, const float* __restrict__ mean,
        const float* __restrict__ invstd, unsigned short* __restrict__ dx,
        unsigned short* __restrict__ dw, unsigned short* __restrict__ db,
        float* part, unsigned* cnt, unsigned* tick, unsigned epoch, u64* tl) {
  extern __shared__ uint4 smem[];
  __shared__ float red[64];
  __shared__ int s_tk;
  uint4* sx = smem;
  uint4* sd = smem + CHUNKS;
  const int t = threadIdx.x;
  const unsigned base = (epoch - 1) * (unsigned)(C * G + gridDim.x);
  const long long chw = (long long)C * HW;
  // Chunk k of slice b of channel c: slab k / CPS, 16-byte offset k % CPS.
  auto goff = [&](int c, int b, int k) -> long long {
    return ((long long)(b * NB + k / CPS)) * chw + (long long)c * HW + (long long)(k % CPS) * 8;
  };
  int round = 0;
  // --timeline: thread 0 records %globaltimer per round: the channel's
  // loads issued, its statistics done, its barrier passed.
  auto stamp = [&](int slot) {
    if (tl && t == 0 && round < TLR) {
      u64 v;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
      tl[(blockIdx.x * TLR + round) * 3 + slot] = v;
    }
  };
  if (t == 0) s_tk = TICKETS ? (int)(atomicAdd(tick, 1u) - base) : (int)blockIdx.x;
  __syncthreads();
  int tk = s_tk;
  int c = tk / G, b = tk % G;
  float s1 = 0.f, s2 = 0.f;
  stamp(0);
  if (c < C) {
    float m = mean[c];
#pragma unroll 1
    for (int j = 0; j < ITERS; ++j) {
      int k = t + j * THREADS;
      if (k < CHUNKS) { cp16(sx + k, x + goff(c, b, k)); cp16(sd + k, dy + goff(c, b, k)); }
      commit();
      if (j >= LAG) {
        wait_group<LAG>();
        int kk = t + (j - LAG) * THREADS;
        if (kk < CHUNKS) acc8(sx[kk], sd[kk], m, s1, s2);
      }
    }
    wait_group<0>();
    for (int j = ITERS - LAG < 0 ? 0 : ITERS - LAG; j < ITERS; ++j) {
      int kk = t + j * THREADS;
      if (kk < CHUNKS) acc8(sx[kk], sd[kk], m, s1, s2);
    }
  }
#pragma unroll 1
  while (c < C) {
    stamp(1);
    block_sum2(s1, s2, red);
    if (t == 0) {
      part[(c * G + b) * 2] = s1;
      part[(c * G + b) * 2 + 1] = s2;
      __threadfence();
      atomicAdd(cnt + c, 1u);
      while (*(volatile unsigned*)(cnt + c) < epoch * G) {}
      __threadfence();
      s_tk = TICKETS ? (int)(atomicAdd(tick, 1u) - base) : tk + GROUPS * G;
    }
    __syncthreads();
    stamp(2);
    const int tkn = s_tk, cn = tkn / G, bn = tkn % G;
    float S1 = 0.f, S2 = 0.f;
    for (int i = 0; i < G; ++i) { S1 += __ldcg(part + (c * G + i) * 2); S2 += __ldcg(part + (c * G + i) * 2 + 1); }
    const float m = mean[c], is = invstd[c];
    if (b == 0 && t == 0) {
      dw[c] = __bfloat16_as_ushort(__float2bfloat16(S2 * is));
      db[c] = __bfloat16_as_ushort(__float2bfloat16(S1));
    }
    const float inv_m = 1.0f / (float)M;
    const float a = S1 * inv_m;              // mean of dy
    const float q = S2 * is * is * inv_m;    // mean of dy * xhat, over invstd
    const float sc = is * __bfloat162float(__ushort_as_bfloat16(w[c]));
    const bool next = cn < C;
    const float mn = next ? mean[cn] : 0.f;
    s1 = 0.f; s2 = 0.f;
#pragma unroll 1
    for (int j = 0; j < ITERS; ++j) {
      int k = t + j * THREADS;
      if (k < CHUNKS) {
        uint4 xv = sx[k], dv = sd[k];
        unsigned xs[4] = {xv.x, xv.y, xv.z, xv.w}, ds[4] = {dv.x, dv.y, dv.z, dv.w}, o[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          float r0 = (lo(ds[i]) - a - (lo(xs[i]) - m) * q) * sc;
          float r1 = (hi(ds[i]) - a - (hi(xs[i]) - m) * q) * sc;
          __nv_bfloat162 p = __floats2bfloat162_rn(r0, r1);
          o[i] = *(unsigned*)&p;
        }
        long long g = goff(c, b, k);
        asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(dx + g), "r"(o[0]), "r"(o[1]),
                     "r"(o[2]), "r"(o[3]) : "memory");
        if (next) { cp16(sx + k, x + goff(cn, bn, k)); cp16(sd + k, dy + goff(cn, bn, k)); }
      }
      commit();
      if (next && j >= LAG) {
        wait_group<LAG>();
        int kk = t + (j - LAG) * THREADS;
        if (kk < CHUNKS) acc8(sx[kk], sd[kk], mn, s1, s2);
      }
    }
    ++round;
    stamp(0);  // this channel written, the next one's loads issued
    if (next) {
      wait_group<0>();
      for (int j = ITERS - LAG < 0 ? 0 : ITERS - LAG; j < ITERS; ++j) {
        int kk = t + j * THREADS;
        if (kk < CHUNKS) acc8(sx[kk], sd[kk], mn, s1, s2);
      }
    }
    tk = tkn; c = cn; b = bn;
  }
}
"""


def main():
    args = probe_args(4, __doc__)
    n, c, h, wd = (int(a) for a in args[:4])
    opt = {"--threads": 512, "--blocks-per-channel": 16, "--lag": 4, "--rep": 200, "--timeline": 0, "--tickets": 0}
    rest = args[4:]
    for i in range(0, len(rest), 2):
        if rest[i] not in opt or i + 1 >= len(rest):
            sys.exit(f"bn_ring.py: unknown or incomplete option {rest[i]}")
        opt[rest[i]] = int(rest[i + 1])
    T, G, LAG = opt["--threads"], opt["--blocks-per-channel"], opt["--lag"]
    hw = h * wd
    if n % G or (hw * 2) % 16:
        sys.exit("bn_ring.py: N must divide by G and H*W*2 by 16")
    nb = n // G
    cps = hw * 2 // 16
    chunks = nb * cps
    iters = (chunks + T - 1) // T
    smem = chunks * 32
    import cupy as cp
    import numpy as np
    import torch
    from triton.testing import do_bench
    props = torch.cuda.get_device_properties(0)
    # Blocks a SM: 228 KiB of shared memory, 1 KiB reserved a block.
    per_sm = min(2048 // T, 233472 // (smem + 256 + 1024))
    groups = props.multi_processor_count * per_sm // G
    groups = min(groups, c)
    while c % groups:
        groups -= 1
    tlr = 2 * (c // groups) + 2
    defs = (f"#define THREADS {T}\n#define G {G}\n#define NB {nb}\n#define CPS {cps}\n#define CHUNKS {chunks}\n"
            f"#define ITERS {iters}\n#define LAG {LAG}\n#define C {c}\n#define HW {hw}\n#define GROUPS {groups}\n"
            f"#define M {n * hw}\n#define TICKETS {opt['--tickets']}\n#define TLR {tlr}\n")
    mod = cp.RawModule(code=defs + SRC, options=("-std=c++17",))
    fn = mod.get_function("bn_ring")
    fn.max_dynamic_shared_size_bytes = smem
    print(f"bn_ring [{n}, {c}, {h}, {wd}] bf16: {groups} groups x {G} blocks of {T} threads ({per_sm} a SM), "
          f"{chunks} chunks a block ({smem} B of shared memory), {iters} iterations a channel, lag {LAG}; "
          f"registers {fn.num_regs}, local {fn.local_size_bytes} B")

    dev = "cuda"
    x = torch.randn(n, c, h, wd, device=dev).to(torch.bfloat16)
    dy = torch.randn(n, c, h, wd, device=dev).to(torch.bfloat16)
    w = torch.randn(c, device=dev).to(torch.bfloat16)
    mean = torch.randn(c, device=dev) * 0.1
    invstd = torch.rand(c, device=dev) + 0.5
    dx = torch.empty_like(x)
    dw = torch.empty(c, device=dev, dtype=torch.bfloat16)
    db = torch.empty(c, device=dev, dtype=torch.bfloat16)
    part = torch.empty(c * G * 2, device=dev, dtype=torch.float32)
    cnt = torch.zeros(c, device=dev, dtype=torch.int32)
    tick = torch.zeros(1, device=dev, dtype=torch.int32)
    epoch = [0]
    tl = torch.zeros(groups * G * tlr * 3, device=dev, dtype=torch.int64)
    tlp = [0]

    def launch(xi=x, dyi=dy, dxo=dx):
        epoch[0] += 1
        ptrs = (xi, dyi, w, mean, invstd, dxo, dw, db, part, cnt, tick)
        fn((groups * G,), (T,), tuple(np.uint64(p.data_ptr()) for p in ptrs) + (np.uint32(epoch[0]), np.uint64(tlp[0])),
           shared_mem=smem)

    launch()
    torch.cuda.synchronize()
    xd, dyd = x.double(), dy.double()
    xhat = (xd - mean.double().view(1, c, 1, 1)) * invstd.double().view(1, c, 1, 1)
    s1 = dyd.sum((0, 2, 3))
    s2 = (dyd * xhat).sum((0, 2, 3))
    m = n * hw
    ref = (dyd - (s1 / m).view(1, c, 1, 1) - xhat * (s2 / m).view(1, c, 1, 1)) * \
        (invstd.double() * w.double()).view(1, c, 1, 1)
    def rel(a, b):
        return ((a.double() - b).abs().max() / b.abs().max()).item()
    errs = (rel(dx, ref), rel(dw, s2), rel(db, s1))
    ok = all(e < 1e-2 for e in errs)
    print(f"max relative error dx {errs[0]:.1e} dweight {errs[1]:.1e} dbias {errs[2]:.1e}: {'PASS' if ok else 'FAIL'}")
    nbytes = 3 * x.numel() * 2
    floor = nbytes / 4.25e12 * 1e6
    us = do_bench(launch, warmup=25, rep=opt["--rep"], return_mode="median") * 1e3
    # Steady state: rotated input sets in one CUDA graph (as run.py).
    sets = [(x, dy, dx)] + [(x.clone(), dy.clone(), torch.empty_like(x)) for _ in range(2)]
    for _ in range(2):
        for s in sets:
            launch(*s)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = 48
    start.record()
    for i in range(reps):
        launch(*sets[i % len(sets)])
    stop.record()
    torch.cuda.synchronize()
    steady = start.elapsed_time(stop) * 1e3 / reps
    print(f"do_bench {us:.1f} us ({100 * floor / us:.0f}% of copy, floor {floor:.1f}); "
          f"back-to-back rotated {steady:.1f} us ({100 * floor / steady:.0f}%)")
    if opt["--timeline"]:
        tlp[0] = tl.data_ptr()
        launch()
        torch.cuda.synchronize()
        tlp[0] = 0
        a = tl.view(groups * G, tlr, 3).cpu().numpy().astype(np.int64)
        t0 = a[:, 0, 0].min()
        print("round: blocks, loads issued (med, max), stats done (med, max), barrier passed (med, max); "
              "us, one launch, no flush")
        for r in range(tlr):
            sel = a[:, r, 0] > 0
            if not sel.any():
                break
            cols = [(a[sel, r, i] - t0) / 1000.0 for i in range(3)]
            has = [col[a[sel, r, i] > 0] for i, col in enumerate(cols)]
            print(f"{r:5d} {int(sel.sum()):4d} " + "  ".join(
                f"{np.median(v):8.2f} {v.max():8.2f}" if len(v) else f"{'-':>8} {'-':>8}" for v in has))
    if not ok:
        sys.exit(1)


main()
