// The CPU reference interpreter: evaluates any valid graph in float64 with
// the rounding of each declared dtype (bf16/fp16/fp32 results are rounded to
// nearest-even exactly as the hardware does). It is the oracle for every
// later stage: passes must preserve its results and GPU results are compared
// against it.
#ifndef FUSIOND_COMPILER_REFERENCE_REFERENCE_H_
#define FUSIOND_COMPILER_REFERENCE_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"

namespace fusiond {

// A dense row-major host tensor. Values are held as doubles already rounded
// to `dtype` (a scalar is a tensor with an empty shape and one element).
struct HostTensor {
  DataType dtype = DataType::kFloat;
  std::vector<int64_t> shape;
  std::vector<double> data;

  int64_t numel() const;
};

// Rounds v to the nearest value representable in dtype (round to nearest
// even for floats; truncation toward zero, then wrap, for integers).
double RoundTo(DataType dtype, double v);

// Evaluates g on `inputs` (one per graph input, in order). Returns the
// outputs in order. InvalidArgument when inputs disagree with the definition.
absl::StatusOr<std::vector<HostTensor>> Evaluate(
    const Graph& g, const std::vector<HostTensor>& inputs);

// Seeded random inputs for g at the given shapes (one per input): standard
// normal for floats, small integers for ints, coin flips for bools.
std::vector<HostTensor> RandomInputs(const Graph& g,
                                     const std::vector<std::vector<int64_t>>& shapes,
                                     uint64_t seed);

// Largest |a-b| / max(|b|, floor) over all elements; floor keeps tiny
// reference values from dominating. NaN anywhere gives +inf.
double MaxRelativeError(const HostTensor& a, const HostTensor& b, double floor = 1e-3);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_REFERENCE_REFERENCE_H_
