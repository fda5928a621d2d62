// Host tensors through a loaded fusion on the GPU (the C++ runtime's
// RunInto, which launches each kernel with the dynamic shared memory and
// grid its manifest gives): for the end-to-end test and the random-graph
// check.
#ifndef FUSIOND_TESTS_RUNTIME_E2E_GPU_RUN_H_
#define FUSIOND_TESTS_RUNTIME_E2E_GPU_RUN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "client/runtime/loaded_fusion.h"
#include "compiler/reference/reference.h"

namespace fusiond {

// Copies `inputs` (one per manifest input; a scalar input's one value is
// passed as a number) to the device, the first tensor one element past its
// allocation when `misalign` (the runtime then copies it for kernels that
// need aligned inputs); allocates the outputs with every byte `fill` (0xFF:
// NaN in every float type), runs and reads the outputs back with the dtypes
// the manifest declares. The planner's FailedPrecondition (shapes outside a
// specialized kernel's class) comes back as it is; device errors are Internal.
absl::StatusOr<std::vector<HostTensor>> RunOnGpu(runtime::LoadedFusion& fusion,
                                                 const std::vector<HostTensor>& inputs,
                                                 uint8_t fill, bool misalign = false);

// The bits of `v`, a value of fp8 type `t` (kFloat8E4M3 or kFloat8E5M2:
// the reference's inputs and outputs are rounded to it already); NaN is
// S.1111111. InvalidArgument for any other value or type.
absl::StatusOr<uint8_t> Float8Bits(double v, runtime::ElementType t);

// The value every element of a `dtype` output holds when each byte is
// `fill` (so a check can find elements no kernel wrote).
double FilledValue(DataType dtype, uint8_t fill);

}  // namespace fusiond

#endif  // FUSIOND_TESTS_RUNTIME_E2E_GPU_RUN_H_
