// NVRTC: CUDA C++ source -> cubin (or PTX when this NVRTC does not know the
// requested architecture as a real target), with ptxas' resource report.
#ifndef FUSIOND_COMPILER_NVRTC_NVRTC_COMPILER_H_
#define FUSIOND_COMPILER_NVRTC_NVRTC_COMPILER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fusiond {

struct NvrtcOptions {
  // Target, "sm_80" ... "sm_100". Default: "sm_90".
  std::string arch = "sm_90";
  // Extra NVRTC options appended after ours. Default: none.
  std::vector<std::string> extra;
};

struct NvrtcOutput {
  std::string binary;  // cubin bytes, or PTX text when is_ptx
  bool is_ptx = false;
  std::string arch;                  // what the binary is for ("sm_90" or "compute_90")
  std::vector<std::string> options;  // as passed to nvrtcCompileProgram
  std::string log;                   // NVRTC's program log (ptxas report included)
  int registers = -1;                // ptxas: registers per thread
  int spill_bytes = 0;               // ptxas: spill stores + spill loads
  int static_smem_bytes = 0;         // ptxas: static shared memory
  double micros = 0;                 // wall time of the compile
};

// Compiles `source`, whose entry point is `kernel_name` (extern "C").
// Internal with the NVRTC log and the kernel name when compilation fails;
// Unavailable when this build has no NVRTC. Safe to call from several threads
// at once (each call is its own NVRTC program; CompileKernels relies on it).
absl::StatusOr<NvrtcOutput> CompileWithNvrtc(const std::string& source,
                                             const std::string& kernel_name,
                                             const NvrtcOptions& options);

// Keeps the heap that compiles grow in the process, and maps `prefault_bytes`
// of it in the calling thread's malloc arena now. glibc hands a compile's
// freed memory back to the kernel (it trims the heap top and unmaps blocks
// over its mmap threshold), so every compile page-faulted its working memory
// in again: ~3,500 faults, 6-10 ms of rmsnorm_bwd_manual's ~135 ms of CPU on
// the dev VM. The settings (heap tops up to 256 MiB kept, blocks up to 32 MiB
// from the heap) are process-wide and set once; the pre-fault runs each
// call. The arenas of other threads keep their heap after their own first
// compile. A no-op without glibc. Returns the microseconds it took.
double KeepNvrtcHeap(size_t prefault_bytes);

// "13.0", or "none" without NVRTC. Part of the cache key.
std::string NvrtcVersion();

// The options every compile passes besides --gpu-architecture and
// NvrtcOptions::extra (none without NVRTC). Part of the cache key.
// FUSIOND_NVRTC_FAST_COMPILE=min|mid|max in the environment adds
// --Ofast-compile=LEVEL (shorter compiles, other code: off by default until
// the GPU shows it costs no kernel speed; docs/results.md, "Cold compile
// levers"); any other value fails every compile with InvalidArgument.
std::vector<std::string> NvrtcFlags();

// FUSIOND_NVRTC_FAST_COMPILE's value ("" when unset), and whether it is one
// NvrtcFlags accepts ("", 0, min, mid, max).
std::string FastCompileLevel();
bool FastCompileLevelValid(const std::string& level);

// Parses ptxas' "-v" report in a log into out's registers, spill bytes and
// shared memory (for the function `kernel_name`; any function when empty).
void ParsePtxasReport(const std::string& log, const std::string& kernel_name, NvrtcOutput* out);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_NVRTC_NVRTC_COMPILER_H_
