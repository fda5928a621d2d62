// Concrete inputs for `fusionc eval` (and anything else that wants to run a
// parsed script the way its inputs list describes): seeded random tensors
// from the reference interpreter's RandomInputs, reshaped by each entry's
// generator (rand, zeros, ones, full, make_tensor ranges, softmax, `* k`,
// `+ k`, Python numbers for scalar inputs).
#ifndef FUSIOND_CLIENT_FUSIONC_EVAL_INPUTS_H_
#define FUSIOND_CLIENT_FUSIONC_EVAL_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/frontend.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace fusionc {

// One HostTensor per graph input at `shapes`. Entries of parsed.inputs (when
// the script has a list) pick the distribution; otherwise RandomInputs'
// standard normals / small integers / coin flips.
std::vector<HostTensor> MakeEvalInputs(const ParsedFusion& parsed,
                                       const std::vector<std::vector<int64_t>>& shapes,
                                       uint64_t seed);

}  // namespace fusionc
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_FUSIONC_EVAL_INPUTS_H_
