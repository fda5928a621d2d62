// Online softmax (HeuristicParams::online_softmax, online_softmax.h): which
// sums the plan pairs with their max, the kernel text (one pass fewer over
// the input, the rescale, the merges of every combine path), NVRTC builds
// without spills, and the device functions' numbers against the two-pass
// formula, compiled by the host's C++ compiler (no GPU).
#include "compiler/codegen/online_softmax.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/codegen/generator.h"
#include "compiler/codegen/kernel_plan.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/binding.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/kernel_heuristics.h"

namespace fusiond {
namespace {

// A repro script of one fusion over T0 [m, n] bf16; `body` defines T1.. and
// adds the outputs.
std::string Script(int64_t m, int64_t n, const std::string& body) {
  return absl::StrCat(
      "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n\n"
      "def f(fd: FusionDefinition) -> None:\n"
      "    T0 = fd.define_tensor(shape=[",
      m, ", ", n,
      "], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)\n"
      "    T1 = fd.ops.cast(T0, dtype=DataType.Float)\n",
      body, "\n\nwith FusionDefinition() as fd:\n    f(fd)\n\ninputs = [\n    torch.randn((", m,
      ", ", n, "), dtype=torch.bfloat16, device=\"cuda:0\"),\n]\nfd.execute(inputs)\n");
}

// Softmax over dim `d` of T1, written as exp(T1 - broadcast(max)).
std::string Softmax(int64_t m, int64_t n, int d) {
  const int keep = 1 - d;
  return Script(m, n,
                absl::StrCat("    T2 = fd.ops.max(T1, dims=[", d,
                             "], keepdim=False, dtype=DataType.Null)\n"
                             "    T3 = fd.ops.broadcast_in_dim(T2, shape=[",
                             m, ", ", n, "], broadcast_dims=[", keep,
                             "])\n"
                             "    T4 = fd.ops.sub(T1, T3)\n"
                             "    T5 = fd.ops.exp(T4)\n"
                             "    T6 = fd.ops.sum(T5, dims=[",
                             d,
                             "], keepdim=False, dtype=DataType.Null)\n"
                             "    T7 = fd.ops.broadcast_in_dim(T6, shape=[",
                             m, ", ", n, "], broadcast_dims=[", keep,
                             "])\n"
                             "    T8 = fd.ops.div(T5, T7)\n"
                             "    T9 = fd.ops.cast(T8, dtype=DataType.BFloat16)\n"
                             "    fd.add_output(T9)"));
}

// Softmax over the rows with a log2e scaling before the max, a keepdim max,
// exp2, and the subtraction as an add of a negated max (negated before its
// broadcast).
std::string ScaledExp2Softmax(int64_t m, int64_t n) {
  return Script(
      m, n,
      absl::StrCat("    S2 = fd.define_scalar(1.4426950408889634, dtype=DataType.Double)\n"
                   "    T3 = fd.ops.mul(T1, S2)\n"
                   "    T4 = fd.ops.max(T3, dims=[1], keepdim=True, dtype=DataType.Null)\n"
                   "    T5 = fd.ops.neg(T4)\n"
                   "    T6 = fd.ops.broadcast_in_dim(T5, shape=[",
                   m, ", ", n,
                   "], broadcast_dims=[0, 1])\n"
                   "    T7 = fd.ops.add(T3, T6)\n"
                   "    T8 = fd.ops.exp2(T7)\n"
                   "    T9 = fd.ops.sum(T8, dims=[1], keepdim=False, dtype=DataType.Null)\n"
                   "    T10 = fd.ops.broadcast_in_dim(T9, shape=[",
                   m, ", ", n,
                   "], broadcast_dims=[0])\n"
                   "    T11 = fd.ops.div(T8, T10)\n"
                   "    T12 = fd.ops.cast(T11, dtype=DataType.BFloat16)\n"
                   "    fd.add_output(T12)"));
}

// exp(T1 - max(T1 * 2)): the max is of another value, so no pair.
std::string MismatchedMax(int64_t m, int64_t n) {
  return Script(
      m, n,
      absl::StrCat("    S2 = fd.define_scalar(2.0, dtype=DataType.Double)\n"
                   "    T3 = fd.ops.mul(T1, S2)\n"
                   "    T4 = fd.ops.max(T3, dims=[1], keepdim=False, dtype=DataType.Null)\n"
                   "    T5 = fd.ops.broadcast_in_dim(T4, shape=[",
                   m, ", ", n,
                   "], broadcast_dims=[0])\n"
                   "    T6 = fd.ops.sub(T1, T5)\n"
                   "    T7 = fd.ops.exp(T6)\n"
                   "    T8 = fd.ops.sum(T7, dims=[1], keepdim=False, dtype=DataType.Null)\n"
                   "    T9 = fd.ops.broadcast_in_dim(T8, shape=[",
                   m, ", ", n,
                   "], broadcast_dims=[0])\n"
                   "    T10 = fd.ops.div(T7, T9)\n"
                   "    T11 = fd.ops.cast(T10, dtype=DataType.BFloat16)\n"
                   "    fd.add_output(T11)"));
}

// The fusion's one segment, as the pipeline schedules it (no code).
struct Segment {
  Graph graph;
  HeuristicParams params;
  std::vector<int64_t> symbol_sizes;
};

Segment OneSegment(const std::string& text) {
  auto parsed = ParseReproScript(text, "online.py");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return {};
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  EXPECT_EQ(r->segments.size(), 1u);
  const SegmentResult& s = r->segments[0];
  return {s.graph, s.params, s.symbol_sizes};
}

HeuristicParams With(const Segment& s, bool online) {
  HeuristicParams hp = s.params;
  hp.online_softmax = online;
  return hp;
}

absl::StatusOr<KernelPlan> Plan(const Segment& s, bool online) {
  return codegen_internal::PlanKernelFor(s.graph, With(s, online));
}

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The field is named only when set, so other kernels' hashes and manifests
// stay as they were.
TEST(OnlineSoftmaxParams, NamedOnlyWhenSet) {
  HeuristicParams a, b;
  b.online_softmax = true;
  EXPECT_FALSE(a == b);
  EXPECT_NE(a.Hash(), b.Hash());
  EXPECT_EQ(a.ToString().find("online_softmax"), std::string::npos);
  EXPECT_EQ(a.ToJson().find("online_softmax"), std::string::npos);
  EXPECT_NE(b.ToString().find(" online_softmax=true"), std::string::npos);
  EXPECT_NE(b.ToJson().find(",\"online_softmax\":true}"), std::string::npos);
}

TEST(OnlineSoftmaxPlan, PairsTheSumWithItsMaxInOneStage) {
  for (const std::string& text : {Softmax(65536, 1024, 0), Softmax(512, 65536, 1),
                                  Softmax(4096, 16384, 1), ScaledExp2Softmax(512, 65536)}) {
    const Segment s = OneSegment(text);
    auto two = Plan(s, false);
    auto one = Plan(s, true);
    ASSERT_TRUE(two.ok() && one.ok());
    EXPECT_EQ(two->num_stages, 2);
    EXPECT_EQ(one->num_stages, 1);
    ASSERT_EQ(one->row_slots.size(), 2u);
    const ReductionSlot& mx = one->row_slots[0];
    const ReductionSlot& sum = one->row_slots[1];
    EXPECT_TRUE(mx.online && sum.online);
    EXPECT_EQ(s.graph.node(mx.node).op, OpKind::kMax);
    EXPECT_EQ(s.graph.node(sum.node).op, OpKind::kSum);
    EXPECT_EQ(mx.partner, sum.node);
    EXPECT_EQ(sum.partner, mx.node);
    EXPECT_EQ(sum.stage, 0);
    EXPECT_EQ(mx.online_exp2, text == ScaledExp2Softmax(512, 65536));
    EXPECT_EQ(OnlinePartnerSlot(*one, 0), 1);
    EXPECT_EQ(OnlinePartnerSlot(*one, 1), 0);
  }
}

TEST(OnlineSoftmaxPlan, LeavesOtherReductionsAlone) {
  const Segment s = OneSegment(MismatchedMax(512, 4096));
  auto one = Plan(s, true);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->num_stages, 2);
  for (const ReductionSlot& sl : one->row_slots) EXPECT_FALSE(sl.online);
}

// Every corpus kernel but the softmaxes is the same text with the field set;
// the softmax forward loses its second reduction pass.
TEST(OnlineSoftmaxKernel, OnlySoftmaxKernelsChange) {
  for (const char* stem :
       {"bias_gelu_fwd", "softmax_bwd", "rmsnorm_fwd", "layernorm_fwd", "rmsnorm_bwd_manual",
        "layernorm_bwd_thunder", "batchnorm_bwd_thunder"}) {
    std::ifstream in(std::string(FUSIOND_CORPUS_DIR) + "/" + stem + ".py");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto parsed = ParseReproScript(text, stem);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    CompileOptions o;
    o.generate_code = false;
    auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const SegmentResult& seg : r->segments) {
      HeuristicParams hp = seg.params;
      CodegenOptions co;
      co.symbol_sizes = seg.symbol_sizes;
      auto base = GenerateKernel(seg.graph, hp, co);
      hp.online_softmax = true;
      auto online = GenerateKernel(seg.graph, hp, co);
      ASSERT_TRUE(base.ok() && online.ok()) << stem;
      EXPECT_EQ(base->source, online->source) << stem;
    }
  }
}

// The lanes softmax over dim 0 at 65536x1024 (split over 64 blocks a column
// group): one reduction pass instead of two, a rescale a chunk, and (max,
// sum) merges in the block and workspace combines.
TEST(OnlineSoftmaxKernel, LanesSoftmaxReadsTheInputTwice) {
  const Segment s = OneSegment(Softmax(65536, 1024, 0));
  ASSERT_EQ(s.params.rows_per_block, 32) << s.params.ToString();
  ASSERT_GT(s.params.grid_x, 1) << s.params.ToString();
  CodegenOptions co;
  auto base = GenerateKernel(s.graph, With(s, false), co);
  auto online = GenerateKernel(s.graph, With(s, true), co);
  ASSERT_TRUE(base.ok() && online.ok());
  const std::string& b = base->source;
  const std::string& k = online->source;
  // Input loads: one per pass over the column.
  const std::string load = "Ty<5>::load(in0 + ro_in0(j + l))";
  EXPECT_EQ(Count(b, load), 3);
  EXPECT_EQ(Count(k, load), 2);
  EXPECT_EQ(Count(b, "auto body"), 2);
  EXPECT_EQ(Count(k, "auto body"), 1);
  EXPECT_NE(k.find("fz_os_chunk<2, VV>(acc0, acc1, ox0);"), std::string::npos);
  EXPECT_NE(k.find("ox0[l] = (float)e1;"), std::string::npos);
  EXPECT_NE(k.find("for (int w = 1; w < 16; ++w) fz_os_merge<2>(acc0, acc1, "
                   "(float)fz_red[fz_rb][0][w][ty], (float)fz_red[fz_rb][1][w][ty]);"),
            std::string::npos);
  EXPECT_NE(k.find("acc0 = (-__int_as_float(0x7f800000)); acc1 = 0.0f;"), std::string::npos);
  EXPECT_NE(k.find("fz_os_merge<2>(acc0, acc1, (float)part[base + (size_t)b * 2 + 0], "
                   "(float)part[base + (size_t)b * 2 + 1]);"),
            std::string::npos);
  // One group barrier a row instead of two.
  EXPECT_EQ(Count(b, "fz_group_sync(bar)"), 2);
  EXPECT_EQ(Count(k, "fz_group_sync(bar)"), 1);
  EXPECT_EQ(b.find("fz_os_"), std::string::npos);
}

// The inner multi-pass softmax at 512x65536 (exp2 of a scaled, add-of-neg
// form): warp shuffles of (max, sum) pairs and the warps' merge.
TEST(OnlineSoftmaxKernel, InnerSoftmaxMergesWarps) {
  const Segment s = OneSegment(ScaledExp2Softmax(512, 65536));
  ASSERT_TRUE(s.params.multi_pass) << s.params.ToString();
  CodegenOptions co;
  auto online = GenerateKernel(s.graph, With(s, true), co);
  ASSERT_TRUE(online.ok()) << online.status();
  const std::string& k = online->source;
  EXPECT_NE(k.find("fz_os_chunk<1, VV>(acc0, acc1, ox0);"), std::string::npos);
  EXPECT_NE(k.find("fz_warp_os<1>(acc0, acc1);"), std::string::npos);
  EXPECT_NE(k.find("++w) fz_os_merge<1>(acc0, acc1, (float)fz_red[fz_rb][ty][0][w], "
                   "(float)fz_red[fz_rb][ty][1][w]);"),
            std::string::npos);
  EXPECT_EQ(Count(k, "auto body"), 1);
}

// To cubins (sm_90) without spills: the lanes kernel as the pipeline splits
// it, with kept chunks in registers and shared memory, over a cluster, and
// the inner kernels (multi-pass and persistent).
TEST(OnlineSoftmaxKernel, CompilesWithoutSpills) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  struct Case {
    std::string text;
    const char* what;
    int64_t split = 0, groups = 0;
    bool kept = false, smem = false, cluster = false;
  };
  const std::vector<Case> cases = {
      {Softmax(65536, 1024, 0), "lanes 65536x1024"},
      {Softmax(65536, 1024, 0), "lanes kept 64", 64, 2, true},
      {Softmax(65536, 1024, 0), "lanes smem 32", 32, 4, true, true},
      {Softmax(2048, 8192, 0), "lanes cluster 2", 2, 132, false, false, true},
      {Softmax(512, 65536, 1), "inner multi-pass 512x65536"},
      {ScaledExp2Softmax(512, 65536), "inner exp2 512x65536"},
      {Softmax(4096, 16384, 1), "inner persistent 4096x16384"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Segment s = OneSegment(c.text);
    HeuristicParams hp = With(s, true);
    if (c.split > 0) {
      hp.lanes_in_registers = c.kept;
      hp.smem_buffer = c.smem;
      hp.cluster_rows = c.cluster;
      hp.grid_x = c.split;
      hp.grid_y = c.groups;
      hp.grid_reduction = c.split > 1;
      DecideKernelForm(AnalyzeFusion(s.graph, SizeBinding{s.symbol_sizes}), DefaultTarget(), &hp);
    }
    SegmentCompileOptions so;
    so.kernel_name = "fz_online";
    so.symbol_sizes = s.symbol_sizes;
    auto art = CompileSegment(s.graph, hp, so);
    ASSERT_TRUE(art.ok()) << art.status();
    EXPECT_EQ(art->spill_bytes, 0) << hp.ToString();
    EXPECT_NE(art->cuda_source.find("fz_os_chunk<"), std::string::npos);
    if (c.cluster) {
      EXPECT_NE(art->cuda_source.find("fz_os_merge<2>(acc0, acc1, fz_dsmem_ld4"),
                std::string::npos);
    }
  }
}

// The device functions, compiled for the host: a column in chunks of 8
// folded by several "threads", merged in a tree, against the two-pass
// max and sum of exp(x - max) in double.
class OnlineMath : public ::testing::Test {
 protected:
  using Chunk = void (*)(float*, float*, const float*);
  using Merge = void (*)(float*, float*, float, float);

  static void SetUpTestSuite() {
    std::string src =
        "#include <cmath>\n#include <cstring>\n#define __device__\n#define __forceinline__ inline\n"
        "static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; "
        "}\n"
        "static inline float fz_max(float a, float b) { return a != a ? a : b != b ? b : a > b ? "
        "a : b; }\n"
        "template <typename T> T __shfl_xor_sync(unsigned, T v, int) { return v; }\n"
        "static inline float fz_exp_approx(float x) { return exp2f(x * 1.44269504088896341f); "
        "}\n";
    src += OnlineSoftmaxPrelude();
    // Wrappers for each exponential E (0 expf, 1 exp2f, 2 the SFU's exp).
    for (int e = 0; e < 3; ++e) {
      for (int n : {1, 8}) {
        absl::StrAppend(&src, "extern \"C\" void chunk", n, "_", e,
                        "(float* m, float* s, const float* x) { fz_os_chunk<", e, ", ", n,
                        ">(*m, *s, x); }\n");
      }
      absl::StrAppend(&src, "extern \"C\" void merge_", e,
                      "(float* m, float* s, float m2, float s2) { fz_os_merge<", e,
                      ">(*m, *s, m2, s2); }\n");
    }
    dir_ = (std::filesystem::temp_directory_path() / absl::StrCat("fusiond_online_", getpid()))
               .string();
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/os.cc") << src;
    const std::string cmd = absl::StrCat("c++ -std=c++17 -O1 -shared -fPIC -o ", dir_, "/os.so ",
                                         dir_, "/os.cc 2>", dir_, "/log");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << src;
    lib_ = dlopen((dir_ + "/os.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
  }
  static void TearDownTestSuite() {
    if (lib_ != nullptr) dlclose(lib_);
    std::filesystem::remove_all(dir_);
  }
  template <typename F>
  static F Fn(const char* name) {
    return reinterpret_cast<F>(dlsym(lib_, name));
  }

  // (max, sum of exp(x - max)) of x as `threads` threads of chunks of 8
  // (the tail element by element), merged in a tree, with exponential e.
  static std::pair<float, float> Online(const std::vector<float>& x, int threads, int e) {
    Chunk c8 = Fn<Chunk>(absl::StrCat("chunk8_", e).c_str());
    Chunk c1 = Fn<Chunk>(absl::StrCat("chunk1_", e).c_str());
    Merge mg = Fn<Merge>(absl::StrCat("merge_", e).c_str());
    const float ninf = -std::numeric_limits<float>::infinity();
    std::vector<float> m(threads, ninf), s(threads, 0.0f);
    const size_t whole = x.size() / 8 * 8;
    for (size_t c = 0; c < whole / 8; ++c) c8(&m[c % threads], &s[c % threads], &x[c * 8]);
    for (size_t j = whole; j < x.size(); ++j) c1(&m[j % threads], &s[j % threads], &x[j]);
    for (int w = 1; w < threads; w *= 2) {
      for (int t = 0; t + w < threads; t += 2 * w) mg(&m[t], &s[t], m[t + w], s[t + w]);
    }
    return {m[0], s[0]};
  }

  // The two-pass form in double; -inf elements add 0 (a column of them sums
  // to 0, where exp(-inf - -inf) would be NaN: its outputs are NaN either way).
  static std::pair<double, double> TwoPass(const std::vector<float>& x, int e) {
    double m = -std::numeric_limits<double>::infinity();
    for (float v : x) m = std::isnan(v) || std::isnan(m) ? NAN : std::max<double>(m, v);
    double s = 0;
    for (float v : x) {
      if (v == -std::numeric_limits<float>::infinity()) continue;
      s += e == 1 ? std::exp2(v - m) : std::exp(v - m);
    }
    return {m, s};
  }

  void ExpectClose(const std::vector<float>& x, int threads, int e) {
    const auto [m, s] = Online(x, threads, e);
    const auto [rm, rs] = TwoPass(x, e);
    SCOPED_TRACE(absl::StrCat("n=", x.size(), " threads=", threads, " e=", e));
    if (std::isnan(rm) || std::isnan(rs)) {
      EXPECT_TRUE(std::isnan(s)) << s;
      return;
    }
    EXPECT_EQ(static_cast<double>(m), rm);
    EXPECT_FALSE(std::isnan(s));
    EXPECT_NEAR(s, rs, 1e-4 * std::max(1.0, rs));
  }

  static inline std::string dir_;
  static inline void* lib_ = nullptr;
};

TEST_F(OnlineMath, MatchesTheTwoPassForm) {
  std::mt19937 rng(7);
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int trial = 0; trial < 40; ++trial) {
    const size_t n = 1 + rng() % 3000;
    // Ordinary values, large magnitudes (exp would overflow unshifted),
    // rising values (a rescale at every chunk) and masked -inf elements.
    const float scale = trial % 4 == 1 ? 1e4f : trial % 4 == 2 ? 300.0f : 3.0f;
    std::normal_distribution<float> d(trial % 4 == 1 ? 5e4f : 0.0f, scale);
    std::vector<float> x(n);
    for (size_t j = 0; j < n; ++j) {
      x[j] = trial % 4 == 3 ? 0.01f * static_cast<float>(j) : d(rng);
      if (trial % 5 == 0 && rng() % 3 == 0) x[j] = ninf;
    }
    for (int threads : {1, 3, 16}) {
      for (int e = 0; e < 3; ++e) ExpectClose(x, threads, e);
    }
  }
}

TEST_F(OnlineMath, NegativeInfinityAndNaN) {
  const float ninf = -std::numeric_limits<float>::infinity();
  // A column of -inf: max -inf and sum 0, no NaN, however it is split.
  for (size_t n : {1, 7, 8, 100}) {
    const std::vector<float> all(n, ninf);
    for (int threads : {1, 2, 16}) {
      const auto [m, s] = Online(all, threads, 0);
      EXPECT_EQ(m, ninf);
      EXPECT_EQ(s, 0.0f);
    }
  }
  // -inf before and after finite values (threads holding only -inf merge
  // with the others as no-ops).
  std::vector<float> x(64, ninf);
  x[40] = 2.0f;
  x[41] = -1.0f;
  ExpectClose(x, 16, 0);
  x[0] = 3.0f;
  ExpectClose(x, 1, 2);
  // A NaN propagates to the sum as the two-pass form's would.
  x[10] = std::numeric_limits<float>::quiet_NaN();
  for (int threads : {1, 4}) {
    const auto [m, s] = Online(x, threads, 0);
    EXPECT_TRUE(std::isnan(s));
  }
  // Merges of empty partials are exact no-ops.
  float m = ninf, s = 0.0f;
  Fn<Merge>("merge_0")(&m, &s, ninf, 0.0f);
  EXPECT_EQ(m, ninf);
  EXPECT_EQ(s, 0.0f);
  m = 1.5f, s = 2.0f;
  Fn<Merge>("merge_0")(&m, &s, ninf, 0.0f);
  EXPECT_EQ(m, 1.5f);
  EXPECT_EQ(s, 2.0f);
  float m2 = ninf, s2 = 0.0f;
  Fn<Merge>("merge_0")(&m2, &s2, 1.5f, 2.0f);
  EXPECT_EQ(m2, 1.5f);
  EXPECT_EQ(s2, 2.0f);
}

}  // namespace
}  // namespace fusiond
