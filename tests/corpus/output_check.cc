#include "tests/corpus/output_check.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fusiond {
namespace corpus {

double OutputTolerance(DataType t) {
  switch (t) {
    case DataType::kBFloat16:
      return 2e-2;
    case DataType::kHalf:
      return 2e-3;
    case DataType::kFloat:
    case DataType::kDouble:
      return 1e-4;
    default:
      return 0.0;  // integers and bools: equal
  }
}

OutputVerdict CheckOutput(const HostTensor& got, const HostTensor& want) {
  OutputVerdict v;
  v.limit = OutputTolerance(want.dtype);
  if (got.dtype != want.dtype) {
    v.error = std::numeric_limits<double>::infinity();
    v.why =
        absl::StrCat("dtype ", DataTypeName(got.dtype), ", expected ", DataTypeName(want.dtype));
    return v;
  }
  if (got.shape != want.shape) {
    v.error = std::numeric_limits<double>::infinity();
    v.why = absl::StrCat("shape [", absl::StrJoin(got.shape, ","), "], expected [",
                         absl::StrJoin(want.shape, ","), "]");
    return v;
  }
  v.error = MaxRelativeError(got, want);
  v.pass = v.error <= v.limit;
  if (!v.pass) {
    v.why = absl::StrFormat("%s error %.3g > %.0e", DataTypeName(want.dtype), v.error, v.limit);
  }
  return v;
}

}  // namespace corpus
}  // namespace fusiond
