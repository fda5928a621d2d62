#include "compiler/scheduler/target.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace fusiond {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;

// Numbers from NVIDIA's CUDA C++ Programming Guide (compute capability
// tables) and the data sheets of the named parts (the L2 of B200 as
// measured by Chips and Cheese, 126 MB).
const std::vector<Target>& Table() {
  static const std::vector<Target>* table = new std::vector<Target>{
      {"sm_80", "A100 SXM", 108, 65536, 255, 164 * kKiB, 163 * kKiB, 2048, 1024, 32, 32, 40 * kMiB},
      {"sm_86", "A40 / RTX A6000", 84, 65536, 255, 100 * kKiB, 99 * kKiB, 1536, 1024, 16, 32,
       6 * kMiB},
      {"sm_89", "L40S", 142, 65536, 255, 100 * kKiB, 99 * kKiB, 1536, 1024, 24, 32, 96 * kMiB},
      {"sm_90", "H100/H200 SXM", 132, 65536, 255, 228 * kKiB, 227 * kKiB, 2048, 1024, 32, 32,
       50 * kMiB},
      {"sm_100", "B200", 148, 65536, 255, 228 * kKiB, 227 * kKiB, 2048, 1024, 32, 32, 126 * kMiB},
  };
  return *table;
}

}  // namespace

std::vector<std::string> KnownArchs() {
  std::vector<std::string> names;
  for (const Target& t : Table()) names.push_back(t.arch);
  return names;
}

absl::StatusOr<Target> LookupTarget(const std::string& arch) {
  for (const Target& t : Table()) {
    if (t.arch == arch) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown architecture \"", arch,
                                                 "\"; known: ", absl::StrJoin(KnownArchs(), ", ")));
}

const Target& DefaultTarget() {
  static const Target* target = new Target(*LookupTarget("sm_90"));
  return *target;
}

bool HasClusters(const Target& t) {
  int major = 0;
  return absl::SimpleAtoi(absl::StripPrefix(t.arch, "sm_"), &major) && major >= 90;
}

}  // namespace fusiond
