#include "tests/corpus/corpus_inputs.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace fusiond {
namespace corpus {
namespace {

double Uniform01(std::mt19937_64& rng) { return (rng() >> 11) * 0x1.0p-53; }

// Fills v with standard normals (Box-Muller, two per pair of uniforms).
void FillNormal(std::mt19937_64& rng, std::vector<double>& v) {
  for (size_t i = 0; i < v.size(); i += 2) {
    const double u1 = 1.0 - Uniform01(rng);  // (0, 1]
    const double u2 = Uniform01(rng);
    const double r = std::sqrt(-2.0 * std::log(u1));
    v[i] = r * std::cos(6.283185307179586 * u2);
    if (i + 1 < v.size()) v[i + 1] = r * std::sin(6.283185307179586 * u2);
  }
}

// Softmax over the last axis, in place.
void SoftmaxRows(std::vector<double>& v, int64_t row) {
  if (row <= 0) return;
  for (size_t s = 0; s + row <= v.size(); s += row) {
    double top = *std::max_element(v.begin() + s, v.begin() + s + row);
    double z = 0;
    for (int64_t j = 0; j < row; ++j) z += std::exp(v[s + j] - top);
    for (int64_t j = 0; j < row; ++j) v[s + j] = std::exp(v[s + j] - top) / z;
  }
}

}  // namespace

std::vector<HostTensor> MakeCorpusInputs(const Graph& g, const std::vector<InputSpec>& specs,
                                         const std::vector<std::vector<int64_t>>& shapes,
                                         uint64_t seed, const std::vector<int>& softmax_inputs) {
  std::mt19937_64 rng(seed);
  std::vector<HostTensor> out;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    HostTensor t;
    t.dtype = g.value(g.inputs[i]).dtype;
    t.shape = i < shapes.size() ? shapes[i] : std::vector<int64_t>{};
    const InputSpec spec = i < specs.size() ? specs[i] : InputSpec{};
    const bool softmax =
        spec.generator == "softmax" || std::find(softmax_inputs.begin(), softmax_inputs.end(),
                                                 static_cast<int>(i)) != softmax_inputs.end();
    t.data.resize(t.numel());
    if (!softmax && (spec.generator == "rand" || spec.generator == "make_tensor")) {
      for (double& v : t.data) v = Uniform01(rng);
    } else if (!softmax && spec.generator == "zeros") {
      std::fill(t.data.begin(), t.data.end(), 0.0);
    } else if (!softmax && spec.generator == "ones") {
      std::fill(t.data.begin(), t.data.end(), 1.0);
    } else {
      FillNormal(rng, t.data);  // randn, softmax and anything unknown
    }
    if (softmax) {
      SoftmaxRows(t.data, t.shape.empty() ? 1 : t.shape.back());
    } else if (spec.generator != "zeros" && spec.generator != "ones") {
      for (double& v : t.data) v = v * spec.scale + spec.offset;
    }
    for (double& v : t.data) v = RoundTo(t.dtype, v);  // RoundTo is cheap
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace corpus
}  // namespace fusiond
