// RandomInputs and MaxRelativeError: the two helpers every test that
// compares against the reference uses.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

// Uniform in (0, 1]: 53 random bits, never zero (so log() is finite).
double Uniform01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53;
}

// Standard normals by the Box-Muller transform, two per pair of uniforms.
class NormalSource {
 public:
  explicit NormalSource(std::mt19937_64* rng) : rng_(rng) {}
  double Next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = Uniform01(*rng_), u2 = Uniform01(*rng_);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 6.283185307179586 * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

 private:
  std::mt19937_64* rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace

std::vector<HostTensor> RandomInputs(const Graph& g,
                                     const std::vector<std::vector<int64_t>>& shapes,
                                     uint64_t seed) {
  std::mt19937_64 rng(seed);
  NormalSource normal(&rng);
  std::vector<HostTensor> out;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    HostTensor t;
    t.dtype = v.dtype;
    if (i < shapes.size()) {
      t.shape = shapes[i];
    } else {
      for (const Extent& e : v.shape) {
        Extent c = g.Canonical(e);
        t.shape.push_back(c.is_static() ? c.size : 1);
      }
    }
    const int64_t n = std::max<int64_t>(0, t.numel());
    t.data.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      double x;
      if (IsFloatingPoint(t.dtype)) {
        x = normal.Next();
      } else if (t.dtype == DataType::kBool) {
        x = static_cast<double>(rng() & 1);
      } else {
        x = static_cast<double>(static_cast<int64_t>(rng() % 9) - 4);
      }
      t.data[k] = RoundTo(t.dtype, x);
    }
    out.push_back(std::move(t));
  }
  return out;
}

double MaxRelativeError(const HostTensor& a, const HostTensor& b, double floor) {
  const double inf = std::numeric_limits<double>::infinity();
  if (a.shape != b.shape || a.data.size() != b.data.size()) return inf;
  double scale = 0;
  for (double y : b.data) {
    if (std::isfinite(y)) scale = std::max(scale, std::fabs(y));
  }
  const double denom_floor = std::max(floor * scale, 1e-30);
  double worst = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    const double x = a.data[i], y = b.data[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) && std::isnan(y)) continue;
      return inf;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x == y) continue;
      return inf;
    }
    worst = std::max(worst, std::fabs(x - y) / std::max(std::fabs(y), denom_floor));
  }
  return worst;
}

}  // namespace fusiond
