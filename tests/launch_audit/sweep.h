// The audit over repro files and random graphs: each fusion at its own
// sizes and, for symbolic definitions, at realistic sizes two ways: compiled
// for those sizes (what the front ends do for a new signature) and the
// artifact compiled for the file's own sizes launched there (one artifact
// for every shape, as bench/gpu's three-shape runs and --general kernels).
#ifndef FUSIOND_TESTS_LAUNCH_AUDIT_SWEEP_H_
#define FUSIOND_TESTS_LAUNCH_AUDIT_SWEEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/launch_audit/launch_audit.h"

namespace fusiond {
namespace launch_audit {

struct SweepOptions {
  AuditOptions audit;
  bool compile_at_targets = true;  // symbolic: compiled for each target size
  bool reuse_own = true;           // symbolic: the own-size artifact launched at each target
  // Symbolic: an artifact compiled at small sizes (SmallTargets, one per
  // rank) launched at each target of that rank, as a front end's first
  // small signature would be if its artifact were reused.
  bool reuse_small = false;
  // Realistic sizes for symbolic definitions, by rank (ScaledShapes).
  std::vector<std::vector<int64_t>> targets;
};

// 64x65536, 65536x64, 8192x8192, 2x32x2048x128, 1x1x(2^24) and more.
std::vector<std::vector<int64_t>> DefaultTargets();

// 64x256, 4x16x256, 2x4x16x256 (and 16384 for rank 1).
std::vector<std::vector<int64_t>> SmallTargets();

// Every audit of one repro file; a file that does not parse or compile at
// its own sizes gives one audit with that status.
std::vector<FusionAudit> AuditFile(const std::string& path, const SweepOptions& options);

// Every *.py under `dir`, sorted.
std::vector<std::string> FusionFiles(const std::string& dir);

// The GPU check's random graph `seed` (tests/random/gpu_cases.h) at its sizes.
FusionAudit AuditRandomCase(uint64_t seed, const AuditOptions& options);

}  // namespace launch_audit
}  // namespace fusiond

#endif  // FUSIOND_TESTS_LAUNCH_AUDIT_SWEEP_H_
