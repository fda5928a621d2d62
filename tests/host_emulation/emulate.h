// A whole fusion on the host emulation: the pipeline's segments at the
// given shapes, each segment's generated CUDA C++ (GenerateKernel, as
// fusionc and the daemon make it) translated for the host, built with the
// host C++ compiler into a shared object, and launched as the manifest and
// the runtime's PlanLaunch say (grid, block, dynamic shared memory,
// parameters, intermediates, zeroed and kept workspaces).
#ifndef FUSIOND_TESTS_HOST_EMULATION_EMULATE_H_
#define FUSIOND_TESTS_HOST_EMULATION_EMULATE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/runtime/manifest.h"
#include "compiler/codegen/codegen.h"
#include "compiler/compile_result.h"
#include "compiler/reference/reference.h"
#include "tests/host_emulation/emu_runtime.h"

namespace fusiond {
namespace host_emulation {

struct PreparedKernel {
  GeneratedKernel kernel;  // kernel.source may be changed before BuildKernels
  std::string skip;        // why it is not emulated ("" when it is)
};

struct PreparedFusion {
  std::string name;  // a C identifier
  CompileResult compiled;
  runtime::Manifest manifest;
  std::vector<PreparedKernel> kernels;  // one per segment, manifest order
  std::vector<std::vector<int64_t>> input_shapes;
};

// Changes a segment's heuristics before its kernel is generated (the GPU
// variants' way to reach kernel forms small shapes never get).
using AdjustParams = std::function<void(const SegmentResult&, HeuristicParams*)>;

// Compiles `g` at `input_shapes` (no NVRTC) and generates every segment's
// kernel, named <name>_k<i>, after `adjust` when given. The manifest is
// FusionManifestJson's, read back by the runtime's parser.
absl::StatusOr<PreparedFusion> PrepareFusion(const Graph& g,
                                             const std::vector<std::vector<int64_t>>& input_shapes,
                                             const std::string& name,
                                             const AdjustParams& adjust = nullptr);

// The translated kernels of some fusions, built into shared objects (jobs
// compilers at once) and loaded.
class HostKernels {
 public:
  ~HostKernels();
  // Internal only when no temporary directory can be made; a fusion whose
  // kernels do not translate or compile has its error in Error().
  static absl::StatusOr<std::unique_ptr<HostKernels>> Build(
      const std::vector<const PreparedFusion*>& fusions, int jobs);
  // The entry of kernel `name`, or null.
  KernelEntry Find(const std::string& name) const;
  // Why fusion `name`'s kernels did not build (with the compiler's first
  // lines), or "".
  std::string Error(const std::string& fusion) const;

 private:
  HostKernels() = default;
  std::string dir_;
  std::vector<void*> handles_;
  std::map<std::string, std::string> errors_;  // by fusion name
};

// One run: inputs encoded in the manifest's dtypes, outputs and
// intermediates filled with `fill` bytes, workspaces as the manifest says
// (`kept` holds the kept ones between runs), every kernel launched in order.
// Internal for an emulation failure (naming the kernel), or a kernel that
// wrote past a buffer.
absl::StatusOr<std::vector<HostTensor>> RunOnHost(const PreparedFusion& f,
                                                  const HostKernels& kernels,
                                                  const std::vector<HostTensor>& inputs,
                                                  uint8_t fill,
                                                  std::vector<std::vector<unsigned char>>* kept);

// The value an element of `dtype` holds when each byte is `fill`.
double FillValue(DataType dtype, uint8_t fill);

}  // namespace host_emulation
}  // namespace fusiond

#endif  // FUSIOND_TESTS_HOST_EMULATION_EMULATE_H_
