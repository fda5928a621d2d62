// What compilation produces for one segment: the kernel, its source, the
// NVRTC report and the launch recipe. Plain data shared by the pipeline,
// the cache and the server.
#ifndef FUSIOND_COMPILER_ARTIFACT_H_
#define FUSIOND_COMPILER_ARTIFACT_H_

#include <string>
#include <vector>

namespace fusiond {

struct KernelArtifact {
  std::string kernel_name;
  std::string cuda_source;
  // cubin bytes for `arch` (or PTX text when `is_ptx`), empty when NVRTC is
  // not available on this machine.
  std::string binary;
  bool is_ptx = false;
  std::string arch;                          // "sm_90"
  std::vector<std::string> compile_options;  // as passed to NVRTC
  // ptxas' report.
  int registers = -1;
  int spill_bytes = 0;
  int static_smem_bytes = 0;
  // The launch recipe, argument bindings, intermediates and outputs as one
  // JSON object (see docs/manifest.md).
  std::string manifest_json;
  double codegen_micros = 0;
  double nvrtc_micros = 0;
  // NVRTC's output came from an NvrtcOutputCache (the same kernel text was
  // compiled before in this process); nvrtc_micros is then the lookup's.
  bool nvrtc_reused = false;
};

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_ARTIFACT_H_
