// Target descriptions: the per-architecture limits the heuristics size
// kernels against (SM count, registers, shared memory, threads). One table
// entry per supported --arch; LookupTarget is the only way in.
#ifndef FUSIOND_COMPILER_SCHEDULER_TARGET_H_
#define FUSIOND_COMPILER_SCHEDULER_TARGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fusiond {

struct Target {
  std::string arch;          // "sm_90"
  std::string device;        // the part the numbers describe ("H100/H200 SXM")
  int sm_count = 0;          // streaming multiprocessors
  int registers_per_sm = 0;  // 32-bit registers
  int max_registers_per_thread = 255;
  int64_t smem_per_sm = 0;     // bytes of shared memory per SM
  int64_t smem_per_block = 0;  // bytes a block may use (opt-in maximum)
  int max_threads_per_sm = 0;
  int max_threads_per_block = 1024;
  int max_blocks_per_sm = 0;
  int warp_size = 32;
  int64_t l2_bytes = 0;  // the L2 cache of the named part
};

// InvalidArgument naming the known architectures for anything else.
absl::StatusOr<Target> LookupTarget(const std::string& arch);
// "sm_80", "sm_86", "sm_89", "sm_90", "sm_100".
std::vector<std::string> KnownArchs();
// The target options default to: sm_90 (H100/H200 SXM).
const Target& DefaultTarget();
// Thread-block clusters and distributed shared memory: sm_90 and later.
bool HasClusters(const Target& t);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_SCHEDULER_TARGET_H_
