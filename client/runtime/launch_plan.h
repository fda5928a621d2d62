// What one run of a fusion needs, computed from the manifest and the input
// shapes alone (no GPU): symbol values, every tensor's shape, workspace
// sizes and each kernel's grid, block and dynamic shared memory.
#ifndef FUSIOND_CLIENT_RUNTIME_LAUNCH_PLAN_H_
#define FUSIOND_CLIENT_RUNTIME_LAUNCH_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/runtime/manifest.h"

namespace fusiond {
namespace runtime {

using Shape = std::vector<int64_t>;

struct KernelLaunch {
  int kernel = 0;  // index into Manifest::kernels
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t smem_bytes = 0;
};

struct LaunchPlan {
  SymbolValues symbols;
  std::vector<Shape> output_shapes;
  std::vector<Shape> intermediate_shapes;
  std::vector<int64_t> workspace_bytes;
  std::vector<KernelLaunch> launches;  // in manifest order
};

// Number of elements (1 for rank 0).
int64_t NumElements(const Shape& s);
std::string ShapeToString(const Shape& s);  // "[2048, 8192]"

// input_shapes: one per manifest input (empty for scalar inputs).
// InvalidArgument when the count, a rank or an extent disagrees with the
// manifest ("input T5 (index 1) axis 0 is 1024 but the manifest wants s0 =
// 2048"), or when a launch dimension is out of CUDA's limits.
// FailedPrecondition when a kernel's "requires" fails for these shapes
// ("kernel K (S) was compiled for shapes where s1 is a multiple of 8; these
// inputs give s1 = 100: compile the fusion for these shapes ...").
absl::StatusOr<LaunchPlan> PlanLaunch(const Manifest& m, const std::vector<Shape>& input_shapes);

}  // namespace runtime
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_RUNTIME_LAUNCH_PLAN_H_
