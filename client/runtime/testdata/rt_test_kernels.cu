// Hand-written kernels for the runtime's GPU tests (compiled with nvcc to a
// cubin at build time). They exercise every parameter kind of the manifest:
// inputs, outputs, an intermediate, zeroed workspaces, a scalar (double),
// sizes (int64), a two-kernel sequence and a cooperative launch.
#include <cstdint>

// Each warp sums one row of x [rows, cols] into rowsum[row]; thread 0 of
// every block counts the block in *blocks_seen (a zeroed workspace).
extern "C" __global__ void rt_row_sum(const float* x, float* rowsum, unsigned* blocks_seen,
                                      int64_t rows, int64_t cols) {
  int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  if (row < rows) {
    float acc = 0.f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) acc += x[row * cols + c];
    for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (threadIdx.x == 0) rowsum[row] = acc;
  }
  if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(blocks_seen, 1u);
}

// out = alpha * (x - rowsum / cols); count[0] = the number of blocks the
// first kernel counted (proves kernel order and workspace zeroing).
extern "C" __global__ void rt_center(const float* x, const float* rowsum, float* out, float* count,
                                     const unsigned* blocks_seen, double alpha, int64_t rows,
                                     int64_t cols) {
  int64_t n = rows * cols;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = i / cols;
    out[i] = float(alpha * double(x[i] - rowsum[r] / float(cols)));
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) count[0] = float(*blocks_seen);
}

// Sum of x [n] with a grid-wide barrier through a zeroed workspace; only
// correct when every block is resident at once (a cooperative launch).
// After the barrier every block writes the total to per_block[blockIdx.x].
extern "C" __global__ void rt_coop_total(const float* x, float* total, float* per_block, float* acc,
                                         unsigned* arrived, int64_t n) {
  __shared__ float partial[256];
  float v = 0.f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    v += x[i];
  }
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(acc, partial[0]);
    __threadfence();
    atomicAdd(arrived, 1u);
    while (atomicAdd(arrived, 0u) < gridDim.x) {
    }
    __threadfence();
    float t = atomicAdd(acc, 0.f);
    per_block[blockIdx.x] = t;
    if (blockIdx.x == 0) total[0] = t;
  }
}
