// Closed-form math for every corpus fusion, written from the math each
// file's comment describes (not from its ops), in plain float64 C++. The
// corpus test compares the reference interpreter's outputs with these.
//
// Each function takes the fusion's inputs in the file's order (values
// already rounded to their dtypes) and returns its outputs in order, with
// the declared output dtypes and shapes; values are not rounded to the
// output dtype except where the file's comment says an intermediate is.
#ifndef FUSIOND_TESTS_CORPUS_CLOSED_FORMS_H_
#define FUSIOND_TESTS_CORPUS_CLOSED_FORMS_H_

#include <functional>
#include <string>
#include <vector>

#include "compiler/reference/reference.h"

namespace fusiond {
namespace corpus {

using Tensors = std::vector<HostTensor>;
using Shapes = std::vector<std::vector<int64_t>>;

// y = x * rstd * w, rstd = 1 / sqrt(mean_j(x^2) + 1e-5). Outputs y, rstd [M, 1].
Tensors RmsNormForward(const Tensors& in);
// Inputs x, rms [M, 1], g, w. With r = rms: grad_x = w g / r -
// x mean_j(w g x) / r^3; grad_w = sum_i g x / r.
Tensors RmsNormBackwardManual(const Tensors& in);
// Inputs w, g, x, rstd [M, 1]. grad_w = sum_i g x bf16(rstd); grad_x =
// bf16(rstd) w g - x rstd^3 bf16(sum_j w g x) / N. Outputs grad_w, grad_x.
Tensors RmsNormBackwardThunder(const Tensors& in);
// Inputs x, g, w, mean [M, 1], rstd [M, 1]. xhat = (x - mean) rstd;
// grad_x = rstd (w g - mean_j(w g) - xhat mean_j(w g xhat));
// grad_w = sum_i g xhat; grad_b = sum_i g.
Tensors LayerNormBackwardThunder(const Tensors& in);
// Inputs x [N, C, L], g, w [C], mean [C], invstd [C]. Per channel c over
// (n, l): xhat = (x - mean) invstd; grad_x = w invstd (g - E[g] - xhat
// E[g xhat]); grad_w = sum g xhat; grad_b = sum g.
Tensors BatchNormBackwardThunder(const Tensors& in);
// Inputs x, w, b. Biased variance and mean over each row; rstd =
// 1/sqrt(var + 1e-5); y = (x - mean) rstd w + b. Outputs y, mean [M, 1],
// rstd [M, 1].
Tensors LayerNormForward(const Tensors& in);
// Known-wrong forms, for tests that show a check fails them: grad_x
// without its mean-gradient term (- mean_j(w g)), and rstd not rounded
// through bf16 (r in place of bf16(r)).
Tensors LayerNormBackwardThunderWithoutMeanGradient(const Tensors& in);
Tensors RmsNormBackwardThunderWithoutRstdRounding(const Tensors& in);
// y = exp(x) / sum_j exp(x) per row (evaluated stably).
Tensors SoftmaxForward(const Tensors& in);
// Inputs y (a softmax), dy. dx = y (dy - sum_j dy y).
Tensors SoftmaxBackward(const Tensors& in);
// z = x + bias; y = z/2 (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))).
Tensors BiasGeluForward(const Tensors& in);

// A corpus file with its closed form.
struct ClosedFormCase {
  std::string file;  // "softmax_bwd.py"
  std::function<Tensors(const Tensors&)> closed_form;
  // Reduced shape sets a symbolic definition runs at; empty: the file's own.
  std::vector<Shapes> shape_sets;
  // Inputs that must be real softmax rows (corpus::MakeCorpusInputs).
  std::vector<int> softmax_inputs;
};

// Every corpus file's case (tests/corpus/fusions/*.py).
const std::vector<ClosedFormCase>& ClosedFormCases();
// The case of the file `stem`.py, or null.
const ClosedFormCase* FindClosedForm(const std::string& stem);

}  // namespace corpus
}  // namespace fusiond

#endif  // FUSIOND_TESTS_CORPUS_CLOSED_FORMS_H_
