#include "tests/corpus/closed_forms.h"

#include <algorithm>
#include <cmath>

namespace fusiond {
namespace corpus {
namespace {

HostTensor Make(DataType t, std::vector<int64_t> shape) {
  HostTensor r;
  r.dtype = t;
  r.shape = std::move(shape);
  r.data.assign(r.numel(), 0.0);
  return r;
}

double Bf16(double v) { return RoundTo(DataType::kBFloat16, v); }

// Rows and columns of a 2-d input.
int64_t Rows(const HostTensor& t) { return t.shape[0]; }
int64_t Cols(const HostTensor& t) { return t.shape[1]; }

}  // namespace

Tensors RmsNormForward(const Tensors& in) {
  const HostTensor &x = in[0], &w = in[1];
  const int64_t m = Rows(x), n = Cols(x);
  HostTensor y = Make(DataType::kBFloat16, {m, n});
  HostTensor rstd = Make(DataType::kFloat, {m, 1});
  for (int64_t i = 0; i < m; ++i) {
    const double* xr = &x.data[i * n];
    double ms = 0;
    for (int64_t j = 0; j < n; ++j) ms += xr[j] * xr[j];
    ms /= n;
    const double r = 1.0 / std::sqrt(ms + 1e-5);
    rstd.data[i] = r;
    for (int64_t j = 0; j < n; ++j) y.data[i * n + j] = xr[j] * r * w.data[j];
  }
  return {y, rstd};
}

Tensors RmsNormBackwardManual(const Tensors& in) {
  const HostTensor &x = in[0], &rms = in[1], &g = in[2], &w = in[3];
  const int64_t m = Rows(x), n = Cols(x);
  HostTensor gx = Make(DataType::kBFloat16, {m, n});
  HostTensor gw = Make(DataType::kBFloat16, {n});
  for (int64_t i = 0; i < m; ++i) {
    const double r = rms.data[i];
    double dot = 0;  // sum_j w g x
    for (int64_t j = 0; j < n; ++j) dot += w.data[j] * g.data[i * n + j] * x.data[i * n + j];
    const double mean_dot = dot / n;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = i * n + j;
      gx.data[k] = w.data[j] * g.data[k] / r - x.data[k] * mean_dot / (r * r * r);
      gw.data[j] += g.data[k] * x.data[k] / r;
    }
  }
  return {gx, gw};
}

namespace {

// round_rstd false: the known-wrong form without the bf16 round trip.
Tensors RmsNormBackwardThunderForm(const Tensors& in, bool round_rstd) {
  const HostTensor &w = in[0], &g = in[1], &x = in[2], &rstd = in[3];
  const int64_t m = Rows(x), n = Cols(x);
  HostTensor gw = Make(DataType::kBFloat16, {n});
  HostTensor gx = Make(DataType::kBFloat16, {m, n});
  for (int64_t i = 0; i < m; ++i) {
    const double r = rstd.data[i];
    const double r_bf16 = round_rstd ? Bf16(r) : r;  // the float -> bf16 -> float round trip
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += w.data[j] * g.data[i * n + j] * x.data[i * n + j];
    const double dot_bf16 = Bf16(dot);  // the bf16-rounded reduction
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = i * n + j;
      gx.data[k] = r_bf16 * w.data[j] * g.data[k] - x.data[k] * r * r * r * dot_bf16 / n;
      gw.data[j] += g.data[k] * x.data[k] * r_bf16;
    }
  }
  return {gw, gx};
}

// mean_term false: the known-wrong form without - mean_j(w g) in grad_x.
Tensors LayerNormBackwardThunderForm(const Tensors& in, bool mean_term) {
  const HostTensor &x = in[0], &g = in[1], &w = in[2], &mean = in[3], &rstd = in[4];
  const int64_t m = Rows(x), n = Cols(x);
  HostTensor gx = Make(DataType::kBFloat16, {m, n});
  HostTensor gw = Make(DataType::kBFloat16, {n});
  HostTensor gb = Make(DataType::kBFloat16, {n});
  std::vector<double> xhat(n);
  for (int64_t i = 0; i < m; ++i) {
    const double mu = mean.data[i], r = rstd.data[i];
    double mean_wg = 0, mean_wg_xhat = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = i * n + j;
      xhat[j] = (x.data[k] - mu) * r;
      mean_wg += w.data[j] * g.data[k];
      mean_wg_xhat += w.data[j] * g.data[k] * xhat[j];
    }
    mean_wg = mean_term ? mean_wg / n : 0.0;
    mean_wg_xhat /= n;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = i * n + j;
      gx.data[k] = r * (w.data[j] * g.data[k] - mean_wg - xhat[j] * mean_wg_xhat);
      gw.data[j] += g.data[k] * xhat[j];
      gb.data[j] += g.data[k];
    }
  }
  return {gx, gw, gb};
}

}  // namespace

Tensors RmsNormBackwardThunder(const Tensors& in) { return RmsNormBackwardThunderForm(in, true); }
Tensors RmsNormBackwardThunderWithoutRstdRounding(const Tensors& in) {
  return RmsNormBackwardThunderForm(in, false);
}
Tensors LayerNormBackwardThunder(const Tensors& in) {
  return LayerNormBackwardThunderForm(in, true);
}
Tensors LayerNormBackwardThunderWithoutMeanGradient(const Tensors& in) {
  return LayerNormBackwardThunderForm(in, false);
}

Tensors BatchNormBackwardThunder(const Tensors& in) {
  const HostTensor &x = in[0], &g = in[1], &w = in[2], &mean = in[3], &invstd = in[4];
  const int64_t nb = x.shape[0], c = x.shape[1], l = x.shape[2];
  HostTensor gx = Make(DataType::kBFloat16, {nb, c, l});
  HostTensor gw = Make(DataType::kBFloat16, {c});
  HostTensor gb = Make(DataType::kBFloat16, {c});
  auto at = [&](int64_t a, int64_t ch, int64_t e) { return (a * c + ch) * l + e; };
  const double count = static_cast<double>(nb * l);
  for (int64_t ch = 0; ch < c; ++ch) {
    const double mu = mean.data[ch], s = invstd.data[ch];
    double sum_g = 0, sum_g_xhat = 0;
    for (int64_t a = 0; a < nb; ++a) {
      for (int64_t e = 0; e < l; ++e) {
        const int64_t k = at(a, ch, e);
        sum_g += g.data[k];
        sum_g_xhat += g.data[k] * (x.data[k] - mu) * s;
      }
    }
    gw.data[ch] = sum_g_xhat;
    gb.data[ch] = sum_g;
    for (int64_t a = 0; a < nb; ++a) {
      for (int64_t e = 0; e < l; ++e) {
        const int64_t k = at(a, ch, e);
        const double xhat = (x.data[k] - mu) * s;
        gx.data[k] = w.data[ch] * s * (g.data[k] - sum_g / count - xhat * sum_g_xhat / count);
      }
    }
  }
  return {gx, gw, gb};
}

Tensors LayerNormForward(const Tensors& in) {
  const HostTensor &x = in[0], &w = in[1], &b = in[2];
  const int64_t m = Rows(x), n = Cols(x);
  HostTensor y = Make(DataType::kBFloat16, {m, n});
  HostTensor mean = Make(DataType::kFloat, {m, 1});
  HostTensor rstd = Make(DataType::kFloat, {m, 1});
  for (int64_t i = 0; i < m; ++i) {
    const double* xr = &x.data[i * n];
    double mu = 0;
    for (int64_t j = 0; j < n; ++j) mu += xr[j];
    mu /= n;
    double var = 0;
    for (int64_t j = 0; j < n; ++j) var += (xr[j] - mu) * (xr[j] - mu);
    var /= n;
    const double r = 1.0 / std::sqrt(var + 1e-5);
    mean.data[i] = mu;
    rstd.data[i] = r;
    for (int64_t j = 0; j < n; ++j) y.data[i * n + j] = (xr[j] - mu) * r * w.data[j] + b.data[j];
  }
  return {y, mean, rstd};
}

Tensors SoftmaxForward(const Tensors& in) {
  const HostTensor& x = in[0];
  const int64_t m = Rows(x), n = Cols(x);
  HostTensor y = Make(DataType::kBFloat16, {m, n});
  for (int64_t i = 0; i < m; ++i) {
    const double* xr = &x.data[i * n];
    double top = -INFINITY;
    for (int64_t j = 0; j < n; ++j) top = std::max(top, xr[j]);
    double z = 0;
    for (int64_t j = 0; j < n; ++j) z += std::exp(xr[j] - top);
    for (int64_t j = 0; j < n; ++j) y.data[i * n + j] = std::exp(xr[j] - top) / z;
  }
  return {y};
}

Tensors SoftmaxBackward(const Tensors& in) {
  const HostTensor &y = in[0], &dy = in[1];
  const int64_t m = Rows(y), n = Cols(y);
  HostTensor dx = Make(DataType::kBFloat16, {m, n});
  for (int64_t i = 0; i < m; ++i) {
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += dy.data[i * n + j] * y.data[i * n + j];
    for (int64_t j = 0; j < n; ++j) {
      dx.data[i * n + j] = y.data[i * n + j] * (dy.data[i * n + j] - dot);
    }
  }
  return {dx};
}

Tensors BiasGeluForward(const Tensors& in) {
  const HostTensor &x = in[0], &bias = in[1];
  const int64_t m = Rows(x), n = Cols(x);
  HostTensor y = Make(DataType::kBFloat16, {m, n});
  const double k = std::sqrt(2.0 / M_PI);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double z = x.data[i * n + j] + bias.data[j];
      y.data[i * n + j] = 0.5 * z * (1.0 + std::tanh(k * (z + 0.044715 * z * z * z)));
    }
  }
  return {y};
}

namespace {

// [M, N] and [N] shaped inputs at two reduced sizes, one odd.
std::vector<Shapes> RowShapes(const std::vector<std::vector<char>>& kinds) {
  std::vector<Shapes> sets;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{64, 512}, {7, 33}}) {
    Shapes s;
    for (const auto& k : kinds) {
      std::vector<int64_t> shape;
      for (char c : k) shape.push_back(c == 'M' ? m : c == 'N' ? n : 1);
      s.push_back(shape);
    }
    sets.push_back(s);
  }
  return sets;
}

}  // namespace

const std::vector<ClosedFormCase>& ClosedFormCases() {
  static const auto* cases = new std::vector<ClosedFormCase>{
      {"rmsnorm_bwd_thunder.py", RmsNormBackwardThunder, {}, {}},
      {"rmsnorm_bwd_manual.py",
       RmsNormBackwardManual,
       RowShapes({{'M', 'N'}, {'M', '1'}, {'M', 'N'}, {'N'}}),
       {}},
      {"layernorm_bwd_thunder.py", LayerNormBackwardThunder, {}, {}},
      {"batchnorm_bwd_thunder.py", BatchNormBackwardThunder, {}, {}},
      {"layernorm_fwd.py", LayerNormForward, RowShapes({{'M', 'N'}, {'N'}, {'N'}}), {}},
      {"rmsnorm_fwd.py", RmsNormForward, RowShapes({{'M', 'N'}, {'N'}}), {}},
      {"softmax_fwd.py", SoftmaxForward, RowShapes({{'M', 'N'}}), {}},
      {"softmax_bwd.py", SoftmaxBackward, RowShapes({{'M', 'N'}, {'M', 'N'}}), {0}},
      {"bias_gelu_fwd.py", BiasGeluForward, RowShapes({{'M', 'N'}, {'N'}}), {}},
  };
  return *cases;
}

const ClosedFormCase* FindClosedForm(const std::string& stem) {
  for (const ClosedFormCase& c : ClosedFormCases()) {
    if (c.file == stem + ".py") return &c;
  }
  return nullptr;
}

}  // namespace corpus
}  // namespace fusiond
