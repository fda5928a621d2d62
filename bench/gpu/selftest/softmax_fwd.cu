// Harness self-test, NOT a fusiond kernel: a plain hand-written softmax over
// the last axis of a bf16 [rows, cols] tensor, laid out the way fusionc's
// artifacts are (manifest.json + cubin). It lets bench/gpu/run.py exercise
// its "ours" path (runtime launch, NaN-poisoned outputs, float64 check, one
// cubin at three shapes) before or independently of the code generator.
// Results from it are tagged "selftest" and never reported as ours.
#include <cuda_bf16.h>

#include <cstdint>

__device__ float BlockReduce(float v, bool is_max, float* scratch) {
  for (int off = 16; off > 0; off /= 2) {
    float o = __shfl_down_sync(0xffffffffu, v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? scratch[lane] : (is_max ? -INFINITY : 0.f);
    for (int off = 16; off > 0; off /= 2) {
      float o = __shfl_down_sync(0xffffffffu, v, off);
      v = is_max ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  float r = scratch[0];
  __syncthreads();
  return r;
}

extern "C" __global__ void selftest_softmax_fwd(const __nv_bfloat16* x, __nv_bfloat16* y,
                                                int64_t rows, int64_t cols) {
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const __nv_bfloat16* xr = x + row * cols;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, __bfloat162float(xr[c]));
    m = BlockReduce(m, true, scratch);
    float s = 0.f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      s += __expf(__bfloat162float(xr[c]) - m);
    s = BlockReduce(s, false, scratch);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      y[row * cols + c] = __float2bfloat16(__expf(__bfloat162float(xr[c]) - m) / s);
    }
  }
}
