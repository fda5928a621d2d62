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

// Parses "--shapes" text: one entry per graph input separated by ';', sizes
// within an entry separated by 'x' or ',' ("2048x8192;8192"); an empty entry
// or "scalar" is a scalar input.
absl::StatusOr<std::vector<std::vector<int64_t>>> ParseShapes(const std::string& text);

// One HostTensor per graph input at `shapes`. Entries of parsed.inputs (when
// the script has a list) pick the distribution; otherwise RandomInputs'
// standard normals / small integers / coin flips.
std::vector<HostTensor> MakeEvalInputs(const ParsedFusion& parsed,
                                       const std::vector<std::vector<int64_t>>& shapes,
                                       uint64_t seed);

}  // namespace fusionc
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_FUSIONC_EVAL_INPUTS_H_
