// The random graphs of the GPU check (fusiond_random_gpu_bundle here,
// fusiond_random_gpu_check on the device): the same seed gives the same graph
// and shapes on both machines. Unlike the CPU tests' graphs (at most 512
// elements), these have realistic sizes, rotating over five kinds of
// universe so every scheduler, shared-memory staging and cluster launches
// come up: 2-D rows of up to 8192, 2-D wide rows (16K-64K), 3-D (batch-norm
// like), norm-backward-like (more reductions, up to 2^21 elements) and small
// odd 1-D/2-D; the others at most 2^20 elements.
#ifndef FUSIOND_TESTS_RANDOM_GPU_CASES_H_
#define FUSIOND_TESTS_RANDOM_GPU_CASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/random/random_graph.h"

namespace fusiond {

// The generator's options for `seed` (its universe kind is seed % 5).
RandomGraphOptions GpuRandomOptions(uint64_t seed);

// RandomGraphWithShapes(seed, GpuRandomOptions(seed)).
RandomGraphCase GpuRandomCase(uint64_t seed);

// The six scheduler names (SchedulerName), which the check must see pass.
std::vector<std::string> AllSchedulerNames();

}  // namespace fusiond

#endif  // FUSIOND_TESTS_RANDOM_GPU_CASES_H_
