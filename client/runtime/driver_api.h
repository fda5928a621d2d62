// The CUDA driver API, loaded at run time from libcuda.so.1 (dlopen) instead
// of linked: the runtime builds, links and runs its CPU tests on machines with
// no driver at all, and every entry point reports Unavailable there. Only the
// CUDA headers are needed at build time.
#ifndef FUSIOND_CLIENT_RUNTIME_DRIVER_API_H_
#define FUSIOND_CLIENT_RUNTIME_DRIVER_API_H_

#include <cuda.h>

#include "absl/status/statusor.h"

// X(function) for every driver function the runtime (and its tests) call.
// Names go through cuda.h's macros, so cuMemAlloc resolves cuMemAlloc_v2.
// clang-format off
#define FUSIOND_DRIVER_FUNCTIONS(X) \
  X(cuInit) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet)                      \
  X(cuDeviceGetCount) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain)             \
  X(cuDevicePrimaryCtxRelease) X(cuCtxPushCurrent) X(cuCtxPopCurrent)                 \
  X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData)                          \
  X(cuModuleGetFunction) X(cuModuleUnload) X(cuFuncSetAttribute)                      \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuLaunchKernel)                    \
  X(cuLaunchCooperativeKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync)          \
  X(cuMemFreeAsync) X(cuMemsetD8Async) X(cuMemsetD32) X(cuMemcpyAsync)                \
  X(cuMemcpy2DAsync) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuStreamSynchronize)
// clang-format on

namespace fusiond {
namespace runtime {

struct DriverApi {
#define FUSIOND_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  FUSIOND_DRIVER_FUNCTIONS(FUSIOND_DRIVER_MEMBER)
#undef FUSIOND_DRIVER_MEMBER
};

// Loads libcuda.so.1 and resolves every function, once per process.
// Unavailable (with dlerror's text) when the library or a function is
// missing. Does not call cuInit.
absl::StatusOr<const DriverApi*> Driver();

// The loaded driver. Only valid once Driver() has returned OK (every path
// that reaches a driver call went through CheckGpuAvailable or Load first).
const DriverApi& Cu();

}  // namespace runtime
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_RUNTIME_DRIVER_API_H_
