// The kernel runtime: loads a compiled fusion (manifest.json + cubins, see
// docs/manifest.md) into the current CUDA device's primary context and runs
// it on a stream: binds symbols from the input shapes, allocates outputs,
// intermediates and workspaces (zeroing those that ask for it), launches the
// kernels in order (cooperatively where the manifest says so). Needs only
// the CUDA driver API; no compiler, no protobuf, no daemon.
//
//   auto fusion = LoadedFusion::Load("artifacts/rmsnorm_bwd_manual");
//   auto outputs = (*fusion)->Run({RunArg::Tensor(x), ...}, RunOptions{});
#ifndef FUSIOND_CLIENT_RUNTIME_LOADED_FUSION_H_
#define FUSIOND_CLIENT_RUNTIME_LOADED_FUSION_H_

#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/runtime/launch_plan.h"
#include "client/runtime/manifest.h"

namespace fusiond {
namespace runtime {

// A view of device memory the caller owns.
struct TensorArg {
  CUdeviceptr data = 0;
  ElementType dtype = ElementType::kFloat32;
  Shape shape;
  // Element strides; empty means dense row-major. Non-contiguous inputs, and
  // dense ones whose `data` is not as aligned as a kernel's "align" asks, are
  // copied to a runtime-allocated dense buffer before launch.
  std::vector<int64_t> strides;
};

// One argument per manifest input: a tensor, or a number for scalar inputs.
struct RunArg {
  static RunArg Tensor(TensorArg t) {
    RunArg a;
    a.tensor = std::move(t);
    return a;
  }
  static RunArg Scalar(double v) {
    RunArg a;
    a.is_scalar = true;
    a.scalar = v;
    return a;
  }
  // A 0-dim CPU tensor for a scalar input (the manifest's cpu_tensor): one
  // element of `dtype` at `host`, read when the kernels' arguments are packed.
  static RunArg HostScalar(const void* host, ElementType dtype) {
    RunArg a;
    a.is_scalar = true;
    a.host = host;
    a.tensor.dtype = dtype;
    return a;
  }
  TensorArg tensor;
  bool is_scalar = false;
  double scalar = 0;
  const void* host = nullptr;  // HostScalar's element, else null
};

// The double a kernel gets for a scalar argument: the number, or the value
// of HostScalar's element (float16, bfloat16 and fp8 widened exactly).
double ScalarValue(const RunArg& a);

// The checks Run and RunInto make before planning (no GPU): one argument per
// manifest input, a scalar where it wants a scalar, each tensor and 0-dim
// CPU tensor of the input's dtype. The input shapes for PlanLaunch, or
// InvalidArgument naming the input.
absl::StatusOr<std::vector<Shape>> CheckRunArgs(const Manifest& m, const std::vector<RunArg>& args);
// RunInto's outputs: one per manifest output, dense, of its dtype and of the
// shape `plan` gives. InvalidArgument naming the output otherwise.
absl::Status CheckOutputArgs(const Manifest& m, const LaunchPlan& plan,
                             const std::vector<TensorArg>& outputs);

// Device memory owned by the runtime's caller after Run (freed on destruction).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(CUdeviceptr ptr, size_t bytes) : ptr_(ptr), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  CUdeviceptr get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

struct OutputTensor {
  DeviceBuffer buffer;
  ElementType dtype = ElementType::kFloat32;
  Shape shape;
  TensorArg view() const { return TensorArg{buffer.get(), dtype, shape, {}}; }
};

struct RunOptions {
  // Stream to launch on. Default: the legacy default stream (nullptr).
  CUstream stream = nullptr;
  // Wait for the kernels to finish before returning (surfaces launch faults
  // as the Run's status). Default: false.
  bool synchronize = false;
};

struct LoadOptions {
  // CUDA device ordinal whose primary context is used. Default: 0.
  int device = 0;
};

// Thread-safe: Run/RunInto may be called from several threads at once.
class LoadedFusion {
 public:
  // Reads DIR/manifest.json and every kernel binary it names, then loads the
  // modules. InvalidArgument for a malformed manifest, NotFound for a missing
  // file, Unavailable when there is no usable GPU or driver.
  static absl::StatusOr<std::unique_ptr<LoadedFusion>> Load(const std::string& dir,
                                                            const LoadOptions& options = {});
  // Same from memory: the manifest text and binary file name -> bytes.
  static absl::StatusOr<std::unique_ptr<LoadedFusion>> LoadFromMemory(
      const std::string& manifest_json, const std::map<std::string, std::string>& binaries,
      const LoadOptions& options = {});
  ~LoadedFusion();

  const Manifest& manifest() const { return manifest_; }

  // Allocates the outputs and runs every kernel on options.stream.
  // FailedPrecondition, launching nothing, when a kernel's "requires" fails
  // for these input shapes (compile the fusion for them instead).
  absl::StatusOr<std::vector<OutputTensor>> Run(const std::vector<RunArg>& args,
                                                const RunOptions& options = {});
  // Runs into caller-provided dense outputs of the planned shapes and dtypes.
  // InvalidArgument when an output's pointer is not as aligned as a kernel's
  // "align" asks ("output 0 at 0x... is not 16-byte aligned, which kernel K
  // needs").
  absl::Status RunInto(const std::vector<RunArg>& args, const std::vector<TensorArg>& outputs,
                       const RunOptions& options = {});

 private:
  LoadedFusion() = default;
  absl::StatusOr<LaunchPlan> Plan(const std::vector<RunArg>& args) const;
  absl::Status Launch(const LaunchPlan& plan, const std::vector<RunArg>& args,
                      const std::vector<CUdeviceptr>& outputs, const RunOptions& options);

  Manifest manifest_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::vector<CUmodule> modules_;                // one per kernel
  std::vector<CUfunction> functions_;            // one per kernel
  std::vector<RequiredAlignment> input_align_;   // one per input
  std::vector<RequiredAlignment> output_align_;  // one per output
  // A "keep" workspace for this stream: zeroed when first allocated.
  absl::StatusOr<CUdeviceptr> KeptWorkspace(CUstream stream, size_t index, size_t bytes);

  std::mutex mu_;                      // guards smem_opt_in_ and kept_
  std::vector<uint32_t> smem_opt_in_;  // dynamic smem already allowed per kernel
  std::map<std::pair<CUstream, size_t>, DeviceBuffer> kept_;  // by (stream, workspace)
};

// OK when cuInit succeeds and a device exists; Unavailable otherwise (the
// GPU tests skip on that).
absl::Status CheckGpuAvailable();

}  // namespace runtime
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_RUNTIME_LOADED_FUSION_H_
