// Reductions (sum, max, min, prod, var, var_mean): accumulated in float64
// in the operand's row-major order, then rounded once to the result dtype.
// var and var_mean are two-pass (exact float64 mean first); the divisor is
// N - correction, and max/min propagate NaN.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/reference/eval_internal.h"

namespace fusiond {
namespace reference_internal {
namespace {

// Folds every element of `in` into acc[index of its kept axes] with f.
template <class F>
void Fold(const View& in, const Shape& acc_strides, double* acc, F f) {
  const double* src = in.data();
  ForEachRow<2>(
      in.shape, {&in.strides, &acc_strides},
      [&](const std::array<int64_t, 2>& off, int64_t len, const std::array<int64_t, 2>& inner) {
        const double* x = src + off[0];
        double* a = acc + off[1];
        if (inner[1] == 0) {
          double r = a[0];
          for (int64_t j = 0; j < len; ++j) r = f(r, x[j * inner[0]]);
          a[0] = r;
        } else {
          for (int64_t j = 0; j < len; ++j) {
            a[j * inner[1]] = f(a[j * inner[1]], x[j * inner[0]]);
          }
        }
      });
}

double MaxNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}
double MinNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : b;
}

}  // namespace

absl::StatusOr<std::vector<View>> EvalReduction(const Node& n, const View& in,
                                                const std::vector<DataType>& out_dtypes,
                                                const Shape& out_shape) {
  const int r = in.rank();
  std::vector<bool> reduced(r, false);
  for (int64_t d : n.attrs.dims) {
    if (d < 0) d += r;  // graphs may keep axes as written (-1 = last)
    if (d < 0 || d >= r) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", n.id, " (", OpName(n.op), "): axis ", d, " is out of range"));
    }
    reduced[d] = true;
  }
  // The dense shape of the result, its strides in operand index space and
  // the number of elements folded into each result.
  Shape kept, result_shape;
  int64_t count = 1;
  for (int a = 0; a < r; ++a) {
    if (!reduced[a]) kept.push_back(in.shape[a]);
    if (!reduced[a])
      result_shape.push_back(in.shape[a]);
    else if (n.attrs.keepdim)
      result_shape.push_back(1);
    if (reduced[a]) count *= in.shape[a];
  }
  if (result_shape != out_shape) {
    return absl::InvalidArgumentError(
        absl::StrCat("node ", n.id, " (", OpName(n.op), "): reducing [",
                     absl::StrJoin(in.shape, ", "), "] gives [", absl::StrJoin(result_shape, ", "),
                     "], but the output is [", absl::StrJoin(out_shape, ", "), "]"));
  }
  const Shape kept_strides = RowMajorStrides(kept);
  Shape acc_strides(r, 0);
  for (int a = 0, k = 0; a < r; ++a) {
    if (!reduced[a]) acc_strides[a] = kept_strides[k++];
  }
  View first = NewView(out_shape, out_dtypes[0]);
  double* acc = first.buf->data();
  const int64_t m = first.numel();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (n.op) {
    case OpKind::kSum:
      std::fill(acc, acc + m, 0.0);
      Fold(in, acc_strides, acc, [](double s, double x) { return s + x; });
      break;
    case OpKind::kProd:
      std::fill(acc, acc + m, 1.0);
      Fold(in, acc_strides, acc, [](double s, double x) { return s * x; });
      break;
    case OpKind::kMax:
      std::fill(acc, acc + m, -std::numeric_limits<double>::infinity());
      Fold(in, acc_strides, acc, MaxNaN);
      break;
    case OpKind::kMin:
      std::fill(acc, acc + m, std::numeric_limits<double>::infinity());
      Fold(in, acc_strides, acc, MinNaN);
      break;
    case OpKind::kVar:
    case OpKind::kVarMean: {
      std::vector<double> mean(m, 0.0);
      Fold(in, acc_strides, mean.data(), [](double s, double x) { return s + x; });
      for (double& v : mean) v = count > 0 ? v / count : nan;
      // Second pass: squared deviations from each result's own mean. The
      // mean is read through the accumulator index, as acc is.
      std::fill(acc, acc + m, 0.0);
      const double* src = in.data();
      ForEachRow<2>(
          in.shape, {&in.strides, &acc_strides},
          [&](const std::array<int64_t, 2>& off, int64_t len, const std::array<int64_t, 2>& inner) {
            const double* x = src + off[0];
            for (int64_t j = 0; j < len; ++j) {
              const int64_t o = off[1] + j * inner[1];
              const double d = x[j * inner[0]] - mean[o];
              acc[o] += d * d;
            }
          });
      const double divisor = std::max<double>(0.0, count - n.attrs.correction);
      for (int64_t i = 0; i < m; ++i) acc[i] /= divisor;
      if (n.op == OpKind::kVarMean) {
        if (out_dtypes.size() != 2) {
          return absl::InternalError("reference: var_mean needs two output types");
        }
        RoundBuffer(out_dtypes[0], acc, m);
        View mean_view = NewView(out_shape, out_dtypes[1]);
        std::copy(mean.begin(), mean.end(), mean_view.buf->data());
        RoundBuffer(out_dtypes[1], mean_view.buf->data(), m);
        return std::vector<View>{first, mean_view};
      }
      break;
    }
    default:
      return absl::InternalError(absl::StrCat("reference: ", OpName(n.op), " is not a reduction"));
  }
  RoundBuffer(out_dtypes[0], acc, m);
  return std::vector<View>{first};
}

}  // namespace reference_internal
}  // namespace fusiond
