// The CPU reference interpreter: evaluates any valid graph in float64 with
// the rounding of each declared dtype (bf16/fp16/fp32 results are rounded to
// nearest-even exactly as the hardware does). It is the oracle for every
// later stage: passes must preserve its results and GPU results are compared
// against it.
//
// Semantics, op by op: every node computes in float64 from operands that
// already hold values of their own dtype, then rounds its result once to
// the result's dtype (RoundTo). Reductions accumulate in float64 and round
// once at the end. Scalars are rank-0 values and broadcast against tensors,
// as do rank-0 tensors; an axis of extent 1 broadcasts against any extent.
// maximum/minimum/max/min/relu propagate NaN. div is true division. Integer
// values are held exactly up to 2^53 (beyond that float64 rounds them).
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
// even for floats, with subnormals, overflow to +-inf and NaN kept;
// truncation toward zero, then wrap modulo 2^width, for integers, with NaN
// and +-inf giving 0; nonzero (and NaN) to 1 for bool).
double RoundTo(DataType dtype, double v);

struct EvaluateOptions {
  // Largest number of elements any one value may have; beyond it Evaluate
  // fails with ResourceExhausted instead of allocating. Default: 2^30.
  int64_t max_elements = int64_t{1} << 30;
};

// Evaluates g on `inputs` (one per graph input, in order; a scalar input is
// a HostTensor with an empty shape and one element). Returns the outputs in
// order. InvalidArgument when the graph fails VerifyGraph or the inputs
// disagree with the definition (count, scalar/tensor, dtype, rank, extents,
// data size). Input data are rounded to their dtype before use.
absl::StatusOr<std::vector<HostTensor>> Evaluate(const Graph& g,
                                                 const std::vector<HostTensor>& inputs);
absl::StatusOr<std::vector<HostTensor>> Evaluate(const Graph& g,
                                                 const std::vector<HostTensor>& inputs,
                                                 const EvaluateOptions& options);

// Seeded random inputs for g at the given shapes (one per input; an empty
// shape for a scalar input): standard normal for floats (rounded to the
// dtype), integers uniform in [-4, 4], coin flips for bools. The same seed
// gives the same values on every platform (mt19937_64 and our own
// Box-Muller transform). Missing shapes default to the declared static
// extents with symbolic axes of size 1.
std::vector<HostTensor> RandomInputs(const Graph& g,
                                     const std::vector<std::vector<int64_t>>& shapes,
                                     uint64_t seed);

// The error of `a` (a result under test) against `b` (the reference):
//
//   max over elements i of |a_i - b_i| / max(|b_i|, floor * M),
//   M = the largest finite |b_j| (at least 1e-30)
//
// i.e. a per-element relative error whose denominator never drops below
// `floor` times the tensor's own scale, so values that are tiny only by
// cancellation do not dominate, and the result does not depend on the
// overall scale of the data. With the default floor, one bf16 rounding step
// of difference costs at most 2^-7 (0.0078), so "bf16 within 1e-2" holds
// for results that differ by at most one final rounding and catches any
// real error; fp32 results are compared with 1e-4 (or a larger floor).
// Elements that are NaN in both, or the same infinity in both, match (0).
// A NaN or infinity in only one of them, or a different shape, gives +inf.
// Two empty tensors give 0.
double MaxRelativeError(const HostTensor& a, const HostTensor& b, double floor = 1e-3);

}  // namespace fusiond

#endif  // FUSIOND_COMPILER_REFERENCE_REFERENCE_H_
