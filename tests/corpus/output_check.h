// The one check of a generated kernel's output against a reference, the
// same as bench/gpu/checks.py's: the dtype must be the reference's, and
// MaxRelativeError (per element, floor 1e-3 of the output's largest value)
// at most OutputTolerance(dtype): bf16 2e-2, fp16 2e-3 (about two steps of
// the type: the output's own rounding plus one bf16 intermediate that the
// definition rounds, such as a reduction cast to bf16, landing on the other
// side because the kernel sums in another order; a lost term or a lost
// rounding scores 3e-2 or more: output_check_test.cc), fp32 and fp64 1e-4,
// integers and bools exact. NaN or infinity where the reference has none fails.
#ifndef FUSIOND_TESTS_CORPUS_OUTPUT_CHECK_H_
#define FUSIOND_TESTS_CORPUS_OUTPUT_CHECK_H_

#include <string>

#include "compiler/reference/reference.h"

namespace fusiond {
namespace corpus {

// The largest accepted MaxRelativeError for an output of dtype t.
double OutputTolerance(DataType t);

struct OutputVerdict {
  double error = 0;  // MaxRelativeError (+inf for a dtype or shape mismatch)
  double limit = 0;  // OutputTolerance(want.dtype)
  bool pass = false;
  std::string why;  // empty when pass; else what failed, with the figures
};

// `got` (a kernel's output, values decoded to double, dtype as produced)
// against `want` (a reference of the declared dtype).
OutputVerdict CheckOutput(const HostTensor& got, const HostTensor& want);

}  // namespace corpus
}  // namespace fusiond

#endif  // FUSIOND_TESTS_CORPUS_OUTPUT_CHECK_H_
