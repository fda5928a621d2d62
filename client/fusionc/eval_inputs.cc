#include "client/fusionc/eval_inputs.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace fusionc {
namespace {

// Uniform in [0, 1) from 53 random bits.
double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Softmax over axis `dim` of t (in place, in float64, then rounded).
void Softmax(HostTensor& t, int64_t dim) {
  const int64_t rank = static_cast<int64_t>(t.shape.size());
  if (rank == 0 || t.data.empty()) return;
  if (dim < 0) dim += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t a = 0; a < dim; ++a) outer *= t.shape[a];
  for (int64_t a = dim + 1; a < rank; ++a) inner *= t.shape[a];
  const int64_t n = t.shape[dim];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) -> double& { return t.data[(o * n + k) * inner + i]; };
      double m = -INFINITY, sum = 0;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, at(k));
      for (int64_t k = 0; k < n; ++k) sum += std::exp(at(k) - m);
      for (int64_t k = 0; k < n; ++k) at(k) = RoundTo(t.dtype, std::exp(at(k) - m) / sum);
    }
  }
}

}  // namespace

std::vector<HostTensor> MakeEvalInputs(const ParsedFusion& parsed,
                                       const std::vector<std::vector<int64_t>>& shapes,
                                       uint64_t seed) {
  std::vector<HostTensor> inputs = RandomInputs(parsed.graph, shapes, seed);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  for (size_t i = 0; i < inputs.size() && i < parsed.inputs.size(); ++i) {
    const InputSpec& spec = parsed.inputs[i];
    HostTensor& t = inputs[i];
    const bool is_float = IsFloatingPoint(t.dtype);
    const std::string& gen = spec.generator;
    if (gen == "scalar") {
      for (double& x : t.data) x = RoundTo(t.dtype, spec.value);
      continue;
    }
    if (gen == "softmax") {
      if (is_float) Softmax(t, spec.softmax_dim);
      continue;
    }
    for (double& x : t.data) {
      double base = x;  // "randn": RandomInputs' draw
      if (gen == "zeros")
        base = 0;
      else if (gen == "ones")
        base = 1;
      else if (gen == "full")
        base = spec.value;
      else if (gen == "rand" || gen == "make_tensor")
        base = Uniform(rng);
      else if (gen == "randn" && !is_float)
        continue;  // keep the small integers
      double v = base * spec.scale + spec.offset;
      if (gen == "make_tensor" && t.dtype == DataType::kBool)
        v = rng() & 1;
      else if (gen == "make_tensor" && !is_float)
        v = std::floor(v);
      x = RoundTo(t.dtype, v);
    }
  }
  return inputs;
}

}  // namespace fusionc
}  // namespace fusiond
