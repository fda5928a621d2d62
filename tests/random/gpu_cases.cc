#include "tests/random/gpu_cases.h"

#include "compiler/scheduler/heuristics.h"

namespace fusiond {

RandomGraphOptions GpuRandomOptions(uint64_t seed) {
  RandomGraphOptions o;
  o.num_ops = 12;
  o.min_rank = 2;
  o.max_elements = int64_t{1} << 20;
  switch (seed % 5) {
    case 0:  // rows up to 8192 wide
      o.max_rank = 2;
      o.extent_choices = {7, 333, 1024, 2048, 4096, 8192};
      break;
    case 1:  // rows too wide for one block
      o.max_rank = 2;
      o.extent_choices = {2, 16, 32, 16384, 32768, 65536};
      break;
    case 2:  // three axes: per-channel reductions
      o.max_rank = 3;
      o.extent_choices = {3, 16, 128, 768, 1024};
      break;
    case 3:  // norm-backward-like: row and column reductions of wide rows
      o.max_rank = 2;
      o.extent_choices = {32, 64, 512, 4096, 8192, 16384, 32768};
      o.max_elements = int64_t{1} << 21;
      o.extra_reductions = 4;
      o.num_ops = 16;
      break;
    default:  // small and odd
      o.min_rank = 1;
      o.max_rank = 2;
      o.extent_choices = {1, 5, 31, 257, 1000};
      o.max_elements = int64_t{1} << 18;
      break;
  }
  return o;
}

RandomGraphCase GpuRandomCase(uint64_t seed) {
  return RandomGraphWithShapes(seed, GpuRandomOptions(seed));
}

std::vector<std::string> AllSchedulerNames() {
  std::vector<std::string> names;
  for (SchedulerKind k : {SchedulerKind::kPointwise, SchedulerKind::kInnerReduction,
                          SchedulerKind::kOuterReduction, SchedulerKind::kInnerPersistent,
                          SchedulerKind::kOuterPersistent, SchedulerKind::kInnerOuterPersistent}) {
    names.push_back(SchedulerName(k));
  }
  return names;
}

}  // namespace fusiond
