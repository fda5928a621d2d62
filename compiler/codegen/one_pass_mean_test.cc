// One-pass var_mean (ReductionSlot::one_pass): the row mean comes from a
// plain fp32 sum over rlen, the squared deviations from Chan's merges.
// EmulatedKernel replays the multi-pass kernel's order of operations on the
// CPU (dropout layernorm forward 2048x8192, vectorize=2 block_x=256: the
// GPU check's failing schedule) and measures both ways of taking the mean
// with the GPU check's metric; KernelText checks the generated kernel takes
// the mean from the plain sum in the block and lanes combines.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/binding.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {
namespace {

constexpr int kRows = 2048, kCols = 8192, kThreads = 256, kVec = 2;

// prelude.cc's fz_chan, with its multiply-adds contracted as ptxas does
// (fz_div_count is __fdividef: a times the reciprocal).
void Chan(float& n, float& m, float& m2, float nb, float mb, float m2b) {
  const float nn = n + nb;
  const float r = nn > 0 ? nb * (1.0f / nn) : 0.0f;
  const float d = mb - m;
  m = std::fmaf(d, r, m);
  m2 = m2 + (m2b + d * d * n * r);
  n = nn;
}

struct Moments {
  float chan_mean, sum_mean, m2;
};

// One row through the kernel: per thread its chunks t, t + 256, ... of two
// elements, shifted sums turned into (count, mean, M2), then a butterfly
// over each warp (lower lane first) and the warps in order; beside them the
// plain per-thread sums, the warp's xor tree and the warps in order.
Moments KernelRow(const std::vector<float>& x) {
  std::vector<float> n(kThreads, 0), m(kThreads, 0), m2(kThreads, 0), ws(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    float wk = 0, s1 = 0;
    for (int c = t; c * kVec < kCols; c += kThreads) {
      for (int l = 0; l < kVec; ++l) {
        const float v = x[c * kVec + l];
        if (l == 0 && n[t] == 0) wk = v;
        const float d = v - wk;
        s1 += d;
        m2[t] = std::fmaf(d, d, m2[t]);
        ws[t] += v;
      }
      n[t] += kVec;
    }
    const float q = s1 * (1.0f / n[t]);
    m[t] = wk + q;
    m2[t] = std::fmaf(-s1, q, m2[t]);
  }
  for (int o = 16; o > 0; o >>= 1) {
    std::vector<float> n2 = n, mm = m, m22 = m2, ws2 = ws;
    for (int t = 0; t < kThreads; ++t) {
      const int lo = t & ~o, hi = t | o;
      float an = n[lo], am = m[lo], am2 = m2[lo];
      Chan(an, am, am2, n[hi], m[hi], m2[hi]);
      n2[t] = an, mm[t] = am, m22[t] = am2;
      ws2[t] = ws[t] + ws[t ^ o];
    }
    n = n2, m = mm, m2 = m22, ws = ws2;
  }
  float bn = n[0], bm = m[0], bm2 = m2[0], bs = ws[0];
  for (int w = 1; w < kThreads / 32; ++w) {
    Chan(bn, bm, bm2, n[w * 32], m[w * 32], m2[w * 32]);
    bs += ws[w * 32];
  }
  return {bm, bs / static_cast<float>(kCols), bm2};
}

HostTensor Column() {
  HostTensor t;
  t.shape = {kRows};
  t.data.resize(kRows);
  return t;
}

TEST(OnePassMean, EmulatedKernel) {
  double worst_chan = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    std::bernoulli_distribution keep(0.9);
    HostTensor ref_mean = Column(), ref_var = Column(), chan = Column(), sum = Column(),
               var = Column();
    std::vector<float> x(kCols);
    for (int r = 0; r < kRows; ++r) {
      // Dropout of a bf16 input, scaled by 1 / 0.9, plus a bf16 residual.
      for (float& v : x) {
        const float in = static_cast<float>(RoundTo(DataType::kBFloat16, normal(rng)));
        const float res = static_cast<float>(RoundTo(DataType::kBFloat16, normal(rng)));
        v = std::fmaf(in * (keep(rng) ? 1.0f : 0.0f), 1.11111f, res);
      }
      double s = 0;
      for (float v : x) s += v;
      const double mean = s / kCols;
      double q = 0;
      for (float v : x) q += (v - mean) * (v - mean);
      const Moments k = KernelRow(x);
      ref_mean.data[r] = mean;
      ref_var.data[r] = q / kCols;
      chan.data[r] = k.chan_mean;
      sum.data[r] = k.sum_mean;
      var.data[r] = k.m2 / static_cast<float>(kCols);
    }
    const double e_chan = MaxRelativeError(chan, ref_mean);
    const double e_sum = MaxRelativeError(sum, ref_mean);
    const double e_var = MaxRelativeError(var, ref_var);
    std::printf("seed %d: mean error merged %.3g, plain sum %.3g; variance %.3g\n",
                static_cast<int>(seed), e_chan, e_sum, e_var);
    worst_chan = std::max(worst_chan, e_chan);
    EXPECT_LT(e_sum, 1e-4);  // the GPU check's fp32 limit
    EXPECT_LT(e_sum, e_chan);
    EXPECT_LT(e_var, 1e-4);
  }
  // The merged means the kernel took before fail the limit.
  EXPECT_GT(worst_chan, 1e-4);
}

constexpr char kDropoutLayerNorm[] = R"(import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.add(fd.ops.cast(T0, dtype=DataType.Float), fd.ops.cast(T1, dtype=DataType.Float))
    T3, T4 = fd.ops.var_mean(T2, dims=[1], correction=0, keepdim=False)
    fd.add_output(T3)
    fd.add_output(T4)


inputs = [
    torch.randn(2048, 8192, dtype=torch.bfloat16, device="cuda:0"),
    torch.randn(2048, 8192, dtype=torch.bfloat16, device="cuda:0"),
]
)";

TEST(OnePassMean, KernelText) {
  auto parsed = ParseReproScript(kDropoutLayerNorm, "one_pass_mean.py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 1u);
  const SegmentResult& seg = r->segments[0];
  HeuristicParams hp = seg.params;
  hp.multi_pass = true;
  hp.vectorize = 2;
  hp.block_x = 256;
  hp.persistent_batch = 1;
  hp.reread_rows = false;
  DecideKernelForm(AnalyzeFusion(seg.graph, SizeBinding{seg.symbol_sizes}), DefaultTarget(), &hp);
  ASSERT_TRUE(hp.one_pass_variance) << hp.ToString();
  SegmentCompileOptions so;
  so.kernel_name = "fz_one_pass_mean";
  so.symbol_sizes = seg.symbol_sizes;
  auto art = CompileSegment(seg.graph, hp, so);
  ASSERT_TRUE(art.ok()) << art.status();
  const std::string& src = art->cuda_source;
  for (const char* want :
       {"ws0 += x;", "ws0 = fz_warp_reduce<0>(ws0);", "fz_red[fz_rb][ty][3][tx >> 5] = (float)ws0;",
        "++w) ws0 += (float)fz_red[fz_rb][ty][3][w];", "rmean0 = ws0 / (float)rlen;",
        "fz_warp_chan(wn0, acc0, acc1);"}) {
    EXPECT_NE(src.find(want), std::string::npos) << want << "\n" << src;
  }
  EXPECT_NE(src.find("fz_red[2][1][4][8]"), std::string::npos);
  if (NvrtcVersion() != "none") {
    EXPECT_EQ(art->spill_bytes, 0);
  }
}

constexpr char kColumnVarMean[] = R"(import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1, T2 = fd.ops.var_mean(T0, dims=[0], correction=0, keepdim=False)
    fd.add_output(T1)
    fd.add_output(T2)


inputs = [
    torch.randn(256, 4096, dtype=torch.float32, device="cuda:0"),
]
)";

// A lanes kernel (columns as rows, generator_lanes.cc) with one-pass
// moments: the threads of a column combine their plain sums in tx order.
TEST(OnePassMean, LanesKernelText) {
  auto parsed = ParseReproScript(kColumnVarMean, "one_pass_mean_lanes.py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 1u);
  HeuristicParams hp = r->segments[0].params;
  hp.rows_per_block = 32;
  hp.block_x = 4;
  hp.block_y = 1;
  hp.vectorize = 2;
  hp.unroll = 2;
  hp.multi_pass = true;
  hp.one_pass_variance = true;
  hp.smem_bytes = 0;
  hp.grid_x = 1;
  hp.grid_y = 8;
  hp.grid_reduction = false;
  hp.persistent_batch = 2;
  auto k = GenerateKernel(r->segments[0].graph, hp, CodegenOptions{});
  ASSERT_TRUE(k.ok()) << k.status();
  for (const char* want : {"ws0 += x;", "fz_red[fz_rb][3][tx][ty] = (float)ws0;",
                           "++w) ws0 += (float)fz_red[fz_rb][3][w][ty];",
                           "rmean0 = ws0 / (float)rlen;", "fz_red[2][4][4][32]"}) {
    EXPECT_NE(k->source.find(want), std::string::npos) << want << "\n" << k->source;
  }
  if (NvrtcVersion() != "none") {
    auto bin = CompileWithNvrtc(k->source, k->name, NvrtcOptions{});
    EXPECT_TRUE(bin.ok()) << bin.status();
  }
}

}  // namespace
}  // namespace fusiond
