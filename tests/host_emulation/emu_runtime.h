// The execution model of host-emulated kernels: every CUDA thread of a block
// is a coroutine (ucontext) on the block's own OS thread, so __syncthreads
// and warp shuffles are exact meeting points and a thread that reaches one
// its peers never reach is reported as a deadlock. Blocks run on separate OS
// threads (all at once for cooperative and cluster kernels, so grid and
// cluster barriers meet as on the GPU). Shared memory is a per-block arena
// filled with 0xFF bytes (NaN) at block start, dynamic first; cp.async
// copies land only at their wait_group.
#ifndef FUSIOND_TESTS_HOST_EMULATION_EMU_RUNTIME_H_
#define FUSIOND_TESTS_HOST_EMULATION_EMU_RUNTIME_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace fusiond {
namespace host_emulation {

// A translated kernel's fz_emu_entry_<name>.
using KernelEntry = void (*)(void* const* slots);

struct GridLaunch {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_smem_bytes = 0;
  uint32_t cluster[3] = {1, 1, 1};  // __cluster_dims__

  bool cooperative = false;  // every block resident at once (grid barriers)
  double timeout_s = 60;     // a spin (grid barrier) longer than this fails
  std::string kernel;        // named when a kernel faults (SIGSEGV, SIGBUS, SIGFPE)
};

// Most threads per block and blocks per grid the emulation takes.
constexpr int kMaxEmulatedThreads = 1024;
constexpr int64_t kMaxEmulatedBlocks = 4096;

// Runs every thread of every block of the grid on `slots`. Internal naming
// the block and thread for a deadlock, a shuffle whose lanes disagree, a
// misaligned vector access, shared memory past its size or the GPU's limit,
// or a spin past timeout_s; InvalidArgument for a launch the emulation does
// not take (too many threads or blocks).
absl::Status RunGrid(KernelEntry entry, void* const* slots, const GridLaunch& launch);

}  // namespace host_emulation
}  // namespace fusiond

#endif  // FUSIOND_TESTS_HOST_EMULATION_EMU_RUNTIME_H_
