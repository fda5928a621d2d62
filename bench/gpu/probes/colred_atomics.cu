// Probe (session 8; bench/results/gpu-2026-11-30-s8-colred-probe.log):
// column partials of 132 blocks x 8192 columns (fp32), summed to 8192 bf16
// outputs: (A) partial rows + grid barrier + every block sums a
// 64-column tile (what the generator emits), (B) red.global.add.v4.f32 into
// one fp32 row + a ticket, the last block converts and re-zeroes it.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cstdio>
namespace cg = cooperative_groups;
constexpr int C = 8192, T = 512;
__global__ void __launch_bounds__(T, 1) partials(float* wcol, __nv_bfloat16* out, int nc) {
  float acc[16];
  for (int q = 0; q < 16; ++q) acc[q] = blockIdx.x * 0.001f + q;
  for (int c = 0; c < nc; ++c)
  for (int k = 0; k < 2; ++k) {
    int j = (threadIdx.x + k * T) * 8;
    float* d = wcol + ((size_t)blockIdx.x * nc + c) * C + j;
    *(float4*)d = make_float4(acc[k*8], acc[k*8+1], acc[k*8+2], acc[k*8+3]);
    *(float4*)(d + 4) = make_float4(acc[k*8+4], acc[k*8+5], acc[k*8+6], acc[k*8+7]);
  }
  cg::this_grid().sync();
  __shared__ float4 red[16][16];
  const int P = gridDim.x, lane = threadIdx.x % 16, grp = threadIdx.x / 16;
  for (int c = 0; c < nc; ++c)
  for (int c0 = blockIdx.x * 64; c0 < C; c0 += gridDim.x * 64) {
    float4 s = make_float4(0, 0, 0, 0);
#pragma unroll 4
    for (int p = grp; p < P; p += 32) {
      float4 v = *(const float4*)(wcol + ((size_t)p * nc + c) * C + c0 + lane * 4);
      s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    s.x += __shfl_xor_sync(~0u, s.x, 16); s.y += __shfl_xor_sync(~0u, s.y, 16);
    s.z += __shfl_xor_sync(~0u, s.z, 16); s.w += __shfl_xor_sync(~0u, s.w, 16);
    if ((threadIdx.x & 31) < 16) red[threadIdx.x >> 5][lane] = s;
    __syncthreads();
    if (threadIdx.x < 64) {
      float t = 0;
      for (int w = 0; w < 16; ++w) t += ((float*)red[w])[threadIdx.x];
      out[c * C + c0 + threadIdx.x] = __float2bfloat16(t);
    }
    __syncthreads();
  }
}
__global__ void __launch_bounds__(T, 1) atomics(float* acc_g, unsigned* ticket, __nv_bfloat16* out, int nc, int rot) {
  float acc[16];
  for (int q = 0; q < 16; ++q) acc[q] = blockIdx.x * 0.001f + q;
  const int tt = rot ? (threadIdx.x + blockIdx.x * 37) % T : threadIdx.x;
  for (int c = 0; c < nc; ++c)
  for (int k = 0; k < 2; ++k) {
    int j = (tt + k * T) * 8;
    float* d = acc_g + c * C + j;
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(d), "f"(acc[k*8]), "f"(acc[k*8+1]), "f"(acc[k*8+2]), "f"(acc[k*8+3]) : "memory");
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(d + 4), "f"(acc[k*8+4]), "f"(acc[k*8+5]), "f"(acc[k*8+6]), "f"(acc[k*8+7]) : "memory");
  }
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned old;
    asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(old) : "l"(ticket) : "memory");
    last = old == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  for (int j = threadIdx.x * 4; j < nc * C; j += T * 4) {
    float4 v;
    asm volatile("ld.relaxed.gpu.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(acc_g + j) : "memory");
    *(float4*)(acc_g + j) = make_float4(0, 0, 0, 0);
    out[j] = __float2bfloat16(v.x); out[j+1] = __float2bfloat16(v.y); out[j+2] = __float2bfloat16(v.z); out[j+3] = __float2bfloat16(v.w);
  }
  if (threadIdx.x == 0) *ticket = 0;
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *wcol, *accg; unsigned* ticket; __nv_bfloat16* out;
  cudaMalloc(&wcol, (size_t)sms * 2 * C * 4); cudaMalloc(&accg, 2 * C * 4); cudaMalloc(&ticket, 4);
  cudaMalloc(&out, 2 * C * 2); cudaMemset(accg, 0, 2 * C * 4); cudaMemset(ticket, 0, 4);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int nc = 1; nc <= 2; ++nc) {
    for (int mode = 0; mode < 3; ++mode) {
      const int R = 200;
      auto launch = [&]() {
        if (mode == 0) { void* args[] = {&wcol, &out, &nc}; cudaLaunchCooperativeKernel((void*)partials, sms, T, args); }
        else atomics<<<sms, T>>>(accg, ticket, out, nc, mode == 2);
      };
      for (int i = 0; i < 20; ++i) launch();
      cudaEventRecord(a);
      for (int i = 0; i < R; ++i) launch();
      cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      // check the sums: sum over blocks of (b*0.001 + q)
      __nv_bfloat16 h[16]; cudaMemcpy(h, out, 32, cudaMemcpyDeviceToHost);
      printf("columns x%d %-22s %7.2f us/launch  out[1]=%.2f (err %s)\n", nc,
             mode == 0 ? "partials+grid sync" : mode == 1 ? "red.v4 atomics" : "red.v4 atomics rotated",
             ms * 1e3 / R, __bfloat162float(h[1]), cudaGetErrorString(cudaGetLastError()));
    }
  }
}
