// fd.ops.uniform / normal / rand_like / randn_like: the Philox stream
// against published answers and an implementation of this test's own, its
// statistics (moments, chi-square), dropout's keep ratio, passes that must
// not merge distinct random ops, segmentations that must not change the
// numbers, and NVRTC compiling the kernels that use them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/ir_proto.h"
#include "compiler/ir/philox.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/passes/canonical.h"
#include "compiler/passes/optimize.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "compiler/scheduler/target.h"
#include "compiler/segmenter/segmenter.h"

namespace fusiond {
namespace {

// Philox4x32-10 written out once more, independently of compiler/ir/philox.cc.
std::array<uint32_t, 4> MyPhilox(uint64_t seed, uint64_t offset, uint64_t index) {
  uint32_t c[4] = {static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                   static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32)};
  uint32_t k[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  for (int round = 0; round < 10; ++round) {
    const uint64_t a = uint64_t{0xD2511F53} * c[0];
    const uint64_t b = uint64_t{0xCD9E8D57} * c[2];
    const uint32_t next[4] = {
        static_cast<uint32_t>(b >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(b),
        static_cast<uint32_t>(a >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(a)};
    std::memcpy(c, next, sizeof c);
    k[0] += 0x9E3779B9u;
    k[1] += 0xBB67AE85u;
  }
  return {c[0], c[1], c[2], c[3]};
}

std::string Script(const std::string& body, const std::string& inputs) {
  return absl::StrCat(
      "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
      "def fusion(fd: FusionDefinition) -> None:\n",
      body, "\nwith FusionDefinition() as fd:\n    fusion(fd)\n", inputs);
}

// Inputs from the script's list: tensors 0..n-1 mod 7 minus 3, scalars their number.
std::vector<HostTensor> ListInputs(const ParsedFusion& p) {
  std::vector<HostTensor> in;
  for (size_t i = 0; i < p.graph.inputs.size(); ++i) {
    HostTensor t;
    t.dtype = p.graph.value(p.graph.inputs[i]).dtype;
    t.shape = p.input_shapes[i];
    if (!p.graph.value(p.graph.inputs[i]).is_tensor) {
      t.data = {p.inputs[i].value};
    } else {
      for (int64_t k = 0; k < t.numel(); ++k) t.data.push_back(static_cast<double>(k % 7) - 3);
    }
    in.push_back(std::move(t));
  }
  return in;
}

std::vector<HostTensor> Reference(const std::string& body, const std::string& inputs,
                                  ParsedFusion* parsed = nullptr) {
  auto p = ParseReproScript(Script(body, inputs), "r.py");
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  auto out = Evaluate(p->graph, ListInputs(*p));
  EXPECT_TRUE(out.ok()) << out.status() << "\n" << PrintGraph(p->graph);
  if (parsed) *parsed = *std::move(p);
  return out.ok() ? *std::move(out) : std::vector<HostTensor>{};
}

constexpr char kSeeds[] =
    "    S0 = fd.define_scalar(None, dtype=DataType.Int)\n"
    "    S1 = fd.define_scalar(None, dtype=DataType.Int)\n";

TEST(Philox, KnownAnswers) {
  // Random123's known-answer vectors for philox4x32-10.
  EXPECT_EQ(Philox4x32({0, 0}, {0, 0, 0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32({0xa4093822, 0x299f31d0}, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  for (uint64_t i : {uint64_t{0}, uint64_t{1}, uint64_t{12345}, (uint64_t{1} << 32) + 7}) {
    EXPECT_EQ(Philox4x32({0x89abcdefu, 0x01234567u},
                         {static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32), 5, 9}),
              MyPhilox(0x0123456789abcdefull, (uint64_t{9} << 32) | 5, i));
  }
}

// The reference's uniform and normal outputs are the documented functions of
// (seed, offset, row-major index): uniform bit for bit from this test's own
// Philox, normal within float rounding of a libm Box-Muller.
TEST(RandomOps, ReferenceIsTheDocumentedStream) {
  ParsedFusion p;
  auto out =
      Reference(absl::StrCat(kSeeds,
                             "    T2 = fd.ops.uniform(-2.0, 3.0, shape=[6, 50], rng_seed=S0, "
                             "rng_offset=S1, dtype=DataType.Float)\n"
                             "    T3 = fd.ops.normal(1.5, 2.0, [6, 50], S0, S1, DataType.Float)\n"
                             "    T4 = fd.ops.uniform(0.0, 1.0, [6, 50], S0, S1, DataType.Double)\n"
                             "    fd.add_output(T2)\n    fd.add_output(T3)\n"
                             "    fd.add_output(T4)\n"),
                "inputs = [-77, 3]\n", &p);
  ASSERT_EQ(out.size(), 3u);
  const uint64_t seed = static_cast<uint64_t>(int64_t{-77}), offset = 3;
  for (uint64_t i = 0; i < 300; ++i) {
    // Float uniform: word i % 4 of block i / 4; double uniform and float
    // normal: words 2 (i % 2), 2 (i % 2) + 1 of block i / 2.
    const auto x4 = MyPhilox(seed, offset, i / 4);
    const float u = static_cast<float>(x4[i % 4] >> 8) / 16777216.0f;
    const float want = -2.0f + 5.0f * u;
    EXPECT_EQ(out[0].data[i], static_cast<double>(want)) << i;
    const auto x2 = MyPhilox(seed, offset, i / 2);
    const uint32_t w1 = x2[2 * (i % 2)], w2 = x2[2 * (i % 2) + 1];
    const double u53 = static_cast<double>((uint64_t{w1} << 21) | (w2 >> 11)) / 9007199254740992.0;
    EXPECT_EQ(out[2].data[i], u53) << i;
    const double u1 = static_cast<double>((w1 >> 8) + 1) / 16777216.0;
    const double u2 = static_cast<double>(w2 >> 8) / 16777216.0;
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    EXPECT_NEAR(out[1].data[i], 1.5 + 2.0 * z, 4e-6 * (1 + std::fabs(z))) << i;
    // The float normal is exactly the documented float computation.
    EXPECT_EQ(static_cast<float>(out[1].data[i]), PhiloxNormalFloat(1.5f, 2.0f, seed, offset, i));
  }
}

// Moments and a chi-square test of uniformity over 2^20 draws.
TEST(RandomOps, MomentsAndChiSquare) {
  const int n = 1 << 20;
  const int bins = 100;
  std::vector<int> count(bins, 0);
  double s = 0, s2 = 0, ns = 0, ns2 = 0, ns3 = 0, ns4 = 0;
  for (int i = 0; i < n; ++i) {
    const double u = PhiloxUniformFloat(0, 1, 2026, 12, i);
    ASSERT_TRUE(u >= 0 && u < 1) << u;
    s += u;
    s2 += u * u;
    ++count[static_cast<int>(u * bins)];
    const double z = PhiloxNormalFloat(0, 1, 2026, 12, i);
    ns += z;
    ns2 += z * z;
    ns3 += z * z * z;
    ns4 += z * z * z * z;
  }
  const double mean = s / n, var = s2 / n - mean * mean;
  // Standard errors: 1/sqrt(12 n) for the mean; 5 of them as tolerance.
  EXPECT_NEAR(mean, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(var, 1.0 / 12, 5 * std::sqrt(1.0 / 180 / n));
  double chi2 = 0;
  const double expect = static_cast<double>(n) / bins;
  for (int c : count) chi2 += (c - expect) * (c - expect) / expect;
  // 99 degrees of freedom: mean 99, sd 14; beyond 99 +- 5 sd fails.
  EXPECT_GT(chi2, 99 - 5 * 14.07);
  EXPECT_LT(chi2, 99 + 5 * 14.07);
  EXPECT_NEAR(ns / n, 0, 5 / std::sqrt(n));
  EXPECT_NEAR(ns2 / n, 1, 5 * std::sqrt(2.0 / n));
  EXPECT_NEAR(ns3 / n, 0, 5 * std::sqrt(15.0 / n));
  EXPECT_NEAR(ns4 / n, 3, 5 * std::sqrt(96.0 / n));
  // Double draws.
  double d = 0, dn2 = 0;
  for (int i = 0; i < n; ++i) {
    d += PhiloxUniformDouble(0, 1, 7, 0, i);
    const double z = PhiloxNormalDouble(0, 1, 7, 0, i);
    dn2 += z * z;
  }
  EXPECT_NEAR(d / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(dn2 / n, 1, 5 * std::sqrt(2.0 / n));
}

// Element (i, j) of a [M, N] random op is element i * N + j of the stream,
// whatever the shape; another offset or seed is another stream.
TEST(RandomOps, IndexIsTheRowMajorPositionAndStreamsDiffer) {
  auto out =
      Reference(absl::StrCat(kSeeds,
                             "    T2 = fd.ops.uniform(0.0, 1.0, [4, 1, 6], S0, S1)\n"
                             "    T3 = fd.ops.uniform(0.0, 1.0, [24], S0, S1)\n"
                             "    S4 = fd.ops.add(S1, 1)\n"
                             "    T5 = fd.ops.uniform(0.0, 1.0, [24], S0, S4)\n"
                             "    T6 = fd.ops.uniform(0.0, 1.0, [24], fd.ops.add(S0, 1), S1)\n"
                             "    fd.add_output(T2)\n    fd.add_output(T3)\n"
                             "    fd.add_output(T5)\n    fd.add_output(T6)\n"),
                "inputs = [5, 0]\n");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].data, out[1].data);
  int same_offset = 0, same_seed = 0;
  for (int i = 0; i < 24; ++i) {
    same_offset += out[1].data[i] == out[2].data[i];
    same_seed += out[1].data[i] == out[3].data[i];
  }
  EXPECT_EQ(same_offset, 0);
  EXPECT_EQ(same_seed, 0);
}

// rand_like / randn_like take the operand's shape and dtype; half and
// bfloat16 results are the float values rounded once.
TEST(RandomOps, LikeFormsAndSixteenBitTypes) {
  auto out = Reference(
      absl::StrCat("    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
                   "dtype=DataType.BFloat16)\n",
                   kSeeds,
                   "    T2 = fd.ops.rand_like(T0, rng_seed=S0, rng_offset=S1)\n"
                   "    T3 = fd.ops.randn_like(T0, S0, S1)\n"
                   "    T4 = fd.ops.uniform(0.0, 1.0, T0.shape(), S0, S1, DataType.Float)\n"
                   "    fd.add_output(T2)\n    fd.add_output(T3)\n    fd.add_output(T4)\n"),
      "inputs = [torch.randn((3, 5), dtype=torch.bfloat16), 1, 2]\n");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].dtype, DataType::kBFloat16);
  EXPECT_EQ(out[1].dtype, DataType::kBFloat16);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 5}));
  for (int i = 0; i < 15; ++i) {
    EXPECT_EQ(out[0].data[i], RoundTo(DataType::kBFloat16, out[2].data[i])) << i;
    EXPECT_EQ(out[1].data[i], RoundTo(DataType::kBFloat16,
                                      PhiloxNormalFloat(0, 1, 1, 2, static_cast<uint64_t>(i))));
  }
}

// Without rng_seed / rng_offset: seed 0 and each such op its own offset.
TEST(RandomOps, UnseededOpsAreDistinctStreams) {
  auto out = Reference(
      "    T0 = fd.ops.uniform(0.0, 1.0, [64], dtype=DataType.Float)\n"
      "    T1 = fd.ops.uniform(0.0, 1.0, [64], dtype=DataType.Float)\n"
      "    fd.add_output(T0)\n    fd.add_output(T1)\n",
      "");
  ASSERT_EQ(out.size(), 2u);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(out[0].data[i], PhiloxUniformFloat(0, 1, 0, 0, i));
    EXPECT_EQ(out[1].data[i], PhiloxUniformFloat(0, 1, 0, 1, i));
  }
}

// Seeds and offsets travel to kernels as doubles: exact up to 2^53.
TEST(RandomOps, LargeSeedsAndNegativeOffsets) {
  auto out = Reference(absl::StrCat(kSeeds,
                                    "    T2 = fd.ops.uniform(0.0, 1.0, [8], S0, S1)\n"
                                    "    fd.add_output(T2)\n"),
                       "inputs = [9007199254740991, -9007199254740991]\n");
  ASSERT_EQ(out.size(), 1u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(out[0].data[i], PhiloxUniformFloat(0, 1, uint64_t{9007199254740991},
                                                 static_cast<uint64_t>(-9007199254740991LL), i));
  }
}

TEST(RandomOps, ClearErrors) {
  auto err = [](const std::string& body) {
    auto p =
        ParseReproScript(Script(absl::StrCat(kSeeds, body, "    fd.add_output(T2)\n"), ""), "r.py");
    EXPECT_FALSE(p.ok());
    return p.ok() ? std::string() : std::string(p.status().ToString());
  };
  EXPECT_TRUE(absl::StrContains(err("    T2 = fd.ops.uniform(0.0, 1.0, [4], rng_seed=S0)\n"),
                                "has only one of rng_seed, rng_offset"));
  EXPECT_TRUE(absl::StrContains(err("    T2 = fd.ops.uniform(0.0, 1.0, [4], 1.5, S1)\n"),
                                "rng_seed is float64; it takes an integer scalar"));
  EXPECT_TRUE(
      absl::StrContains(err("    T2 = fd.ops.normal(0.0, 1.0, [4], S0, S1, DataType.Int)\n"),
                        "dtype int64 is not supported"));
  const std::string e = err("    T2 = fd.ops.uniform(0.0, 1.0, [4], S0, S1, DataType.Int)\n");
  EXPECT_TRUE(absl::StrContains(e, "r.py:")) << e;
  EXPECT_TRUE(absl::StrContains(e, "INVALID_ARGUMENT")) << e;
}

// The wire form (what clients send the daemon) keeps random ops and iota:
// read back, the graph hashes and evaluates the same.
TEST(RandomOps, WireFormRoundTrip) {
  ParsedFusion p;
  auto before = Reference(
      absl::StrCat("    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
                   "dtype=DataType.Float)\n",
                   kSeeds,
                   "    T2 = fd.ops.uniform(0.5, 2.0, T0.shape(), S0, S1, DataType.BFloat16)\n"
                   "    T3 = fd.ops.normal(0.0, 1.0, [T0.size(0), 1], S0, S1)\n"
                   "    T4 = fd.ops.iota(T0.size(1), 1, 2)\n"
                   "    fd.add_output(T2)\n    fd.add_output(T3)\n    fd.add_output(T4)\n"),
      "inputs = [torch.randn((3, 7)), 9, 10]\n", &p);
  ASSERT_EQ(before.size(), 3u);
  auto back = FromProto(ToProto(p.graph));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(CanonicalHash(*back), CanonicalHash(p.graph));
  auto after = Evaluate(*back, ListInputs(p));
  ASSERT_TRUE(after.ok()) << after.status();
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ((*after)[i].data, before[i].data) << i;
}

// Dropout keeps each element with probability 1 - p: the mask's mean is
// within 5 standard errors of 0.9 for several seeds.
TEST(RandomOps, DropoutKeepsTheRequestedFraction) {
  for (int seed : {1, 99, 123456}) {
    auto out =
        Reference(absl::StrCat("    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
                               "dtype=DataType.Float)\n",
                               kSeeds,
                               "    T2 = fd.ops.uniform(0.0, 1.0, T0.shape(), S0, S1)\n"
                               "    T3 = fd.ops.lt(T2, 0.9)\n"
                               "    T4 = fd.ops.mul(fd.ops.mul(T0, T3), 1.11111)\n"
                               "    fd.add_output(T3)\n    fd.add_output(T4)\n"),
                  absl::StrCat("inputs = [torch.randn((512, 512)), ", seed, ", 0]\n"));
    ASSERT_EQ(out.size(), 2u);
    double kept = 0;
    for (double m : out[0].data) kept += m;
    const double n = static_cast<double>(out[0].data.size());
    EXPECT_NEAR(kept / n, 0.9, 5 * std::sqrt(0.9 * 0.1 / n)) << seed;
  }
}

// CSE merges random ops only when everything that decides their values is
// equal (then their values are equal); never two ops of different seeds,
// offsets, shapes, kinds or parameters.
TEST(RandomOps, CseMergesOnlyIdenticalRandomOps) {
  auto p = ParseReproScript(
      Script(absl::StrCat(kSeeds,
                          "    T2 = fd.ops.uniform(0.0, 1.0, [8, 8], S0, S1)\n"
                          "    T3 = fd.ops.uniform(0.0, 1.0, [8, 8], S0, S1)\n"
                          "    T4 = fd.ops.uniform(0.0, 1.0, [8, 8], S0, fd.ops.add(S1, 1))\n"
                          "    T5 = fd.ops.normal(0.0, 1.0, [8, 8], S0, S1)\n"
                          "    T6 = fd.ops.uniform(0.0, 2.0, [8, 8], S0, S1)\n"
                          "    T7 = fd.ops.uniform(0.0, 1.0, [8, 8], S1, S0)\n"
                          "    T8 = fd.ops.uniform(0.0, 1.0, [64], S0, S1)\n"
                          "    T9 = fd.ops.uniform(0.0, 1.0, [8, 8], S0, S1, DataType.Double)\n"
                          "    fd.add_output(T2)\n    fd.add_output(T3)\n    fd.add_output(T4)\n"
                          "    fd.add_output(T5)\n    fd.add_output(T6)\n    fd.add_output(T7)\n"
                          "    fd.add_output(T8)\n    fd.add_output(T9)\n"),
             "inputs = [3, 4]\n"),
      "r.py");
  ASSERT_TRUE(p.ok()) << p.status();
  Graph g = p->graph;
  const std::vector<HostTensor> in = ListInputs(*p);
  auto before = Evaluate(g, in);
  ASSERT_TRUE(before.ok()) << before.status();
  std::vector<PassRecord> records;
  ASSERT_TRUE(RunOptimizationPasses(g, PassOptions{}, &records).ok());
  int random_nodes = 0;
  for (const Node& n : g.nodes) random_nodes += IsRandom(n.op);
  EXPECT_EQ(random_nodes, 7) << PrintGraph(g);  // T2 and T3 are one
  EXPECT_EQ(g.outputs[0], g.outputs[1]);
  auto after = Evaluate(g, in);
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), before->size());
  for (size_t i = 0; i < after->size(); ++i) EXPECT_EQ((*after)[i].data, (*before)[i].data) << i;
}

// A definition the segmenter splits (a random tensor reduced over both
// axes: no one kernel reduces rows and columns): the segments, run one after
// another, give the whole graph's numbers bit for bit, and the random op is
// computed by exactly one segment.
TEST(RandomOps, SegmentsKeepTheStream) {
  auto p = ParseReproScript(
      Script(absl::StrCat("    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
                          "dtype=DataType.Float)\n",
                          kSeeds,
                          "    T2 = fd.ops.uniform(0.0, 1.0, T0.shape(), S0, S1)\n"
                          "    T3 = fd.ops.mul(T0, T2)\n"
                          "    T4 = fd.ops.sum(T3, dims=[1], keepdim=False, dtype=DataType.Null)\n"
                          "    T5 = fd.ops.sum(T3, dims=[0], keepdim=False, dtype=DataType.Null)\n"
                          "    T6 = fd.ops.broadcast_in_dim(T5, shape=T0.shape(), "
                          "broadcast_dims=[1])\n"
                          "    T7 = fd.ops.mul(T6, T2)\n"
                          "    fd.add_output(T4)\n    fd.add_output(T7)\n    fd.add_output(T2)\n"),
             "inputs = [torch.randn((96, 160)), 11, 22]\n"),
      "r.py");
  ASSERT_TRUE(p.ok()) << p.status();
  Graph g = p->graph;
  std::vector<PassRecord> records;
  ASSERT_TRUE(RunOptimizationPasses(g, PassOptions{}, &records).ok());
  auto sizes = BindShapes(g, p->input_shapes);
  ASSERT_TRUE(sizes.ok());
  auto segments = SegmentFusion(g, *sizes, *LookupTarget("sm_90"));
  ASSERT_TRUE(segments.ok()) << segments.status();
  ASSERT_GE(segments->size(), 2u) << PrintGraph(g);
  const std::vector<HostTensor> in = ListInputs(*p);
  auto whole = Evaluate(g, in);
  ASSERT_TRUE(whole.ok());
  std::map<ValueId, HostTensor> env;
  for (size_t i = 0; i < g.inputs.size(); ++i) env[g.inputs[i]] = in[i];
  int random_segments = 0;
  for (const Segment& s : *segments) {
    int r = 0;
    for (const Node& n : s.graph.nodes) r += IsRandom(n.op);
    random_segments += r > 0;
    std::vector<HostTensor> ins;
    for (ValueId v : s.source_inputs) ins.push_back(env.at(v));
    auto outs = Evaluate(s.graph, ins);
    ASSERT_TRUE(outs.ok()) << outs.status();
    for (size_t j = 0; j < s.source_outputs.size(); ++j) env[s.source_outputs[j]] = (*outs)[j];
  }
  EXPECT_EQ(random_segments, 1);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    EXPECT_EQ(env.at(g.outputs[i]).data, (*whole)[i].data) << i;
  }
}

// Dropout fused with the norms: one kernel each (tests/ops/fusions holds the
// GPU check definitions); every generated kernel compiles with NVRTC.
TEST(RandomOps, DropoutFusesWithNorms) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  for (const char* stem :
       {"dropout_layernorm_fwd_2048x8192", "dropout_rmsnorm_fwd_2048x8192", "dropout_bwd_2048x8192",
        "dropout_layernorm_bwd_2048x8192", "random_ops_1024x4096"}) {
    SCOPED_TRACE(stem);
    auto p = ParseReproFile(absl::StrCat(FUSIOND_OPS_FUSIONS_DIR, "/", stem, ".py"));
    ASSERT_TRUE(p.ok()) << p.status();
    auto compiled = CompileFusion(p->graph, p->input_shapes, CompileOptions{});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    // random_ops' [N] output is a kernel of its own (a second segment).
    EXPECT_EQ(compiled->segments.size(), absl::StartsWith(stem, "random_ops") ? 2u : 1u);
    for (const SegmentResult& s : compiled->segments) {
      ASSERT_TRUE(s.kernel.has_value());
      EXPECT_FALSE(s.kernel->binary.empty());
      EXPECT_TRUE(absl::StrContains(s.kernel->cuda_source, "fz_philox"));
    }
  }
}

// Random values in every kind of kernel the schedulers make: each compiles
// with NVRTC (the GPU check runs the dropout fusions; these cover the
// element, row and column scopes of the other kinds).
TEST(RandomOps, CompileInEveryKernelKind) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const std::string x =
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)\n";
  const std::string drop = absl::StrCat(
      kSeeds,
      "    T2 = fd.ops.mul(T0, fd.ops.lt(fd.ops.uniform(0.0, 1.0, T0.shape(), S0, S1), 0.9))\n");
  struct Case {
    std::string name, body, shape;
  };
  const std::vector<Case> cases = {
      {"outer normalization (mean over dim 0, back to the elements)",
       "    T3 = fd.ops.sum(T2, dims=[0], keepdim=False, dtype=DataType.Null)\n"
       "    T4 = fd.ops.broadcast_in_dim(T3, shape=T0.shape(), broadcast_dims=[1])\n"
       "    fd.add_output(fd.ops.sub(T2, T4))\n",
       "(8192, 256)"},
      {"softmax over dim 0",
       "    T3 = fd.ops.max(T2, dims=[0], keepdim=False, dtype=DataType.Null)\n"
       "    T4 = fd.ops.exp(fd.ops.sub(T2, fd.ops.broadcast_in_dim(T3, shape=T0.shape(), "
       "broadcast_dims=[1])))\n"
       "    T5 = fd.ops.sum(T4, dims=[0], keepdim=False, dtype=DataType.Null)\n"
       "    fd.add_output(fd.ops.div(T4, fd.ops.broadcast_in_dim(T5, shape=T0.shape(), "
       "broadcast_dims=[1])))\n",
       "(2048, 8192)"},
      {"wide rows (multi-pass)",
       "    T3 = fd.ops.sum(T2, dims=[1], keepdim=False, dtype=DataType.Null)\n"
       "    T4 = fd.ops.broadcast_in_dim(T3, shape=T0.shape(), broadcast_dims=[0])\n"
       "    fd.add_output(fd.ops.sub(T2, T4))\n",
       "(128, 131072)"},
      {"a random value per row ([M, 1])",
       "    T3 = fd.ops.uniform(0.0, 1.0, [T0.size(0), 1], S0, S1)\n"
       "    T4 = fd.ops.add(T2, T3)\n"
       "    T5 = fd.ops.sum(T4, dims=[1], keepdim=False, dtype=DataType.Null)\n"
       "    fd.add_output(fd.ops.div(T4, fd.ops.broadcast_in_dim(T5, shape=T0.shape(), "
       "broadcast_dims=[0])))\n",
       "(1024, 4096)"},
      {"row and column reductions (inner-outer)",
       "    T3 = fd.ops.sum(T2, dims=[1], keepdim=False, dtype=DataType.Null)\n"
       "    T4 = fd.ops.sum(T2, dims=[0], keepdim=False, dtype=DataType.Null)\n"
       "    T5 = fd.ops.sub(T2, fd.ops.broadcast_in_dim(T3, shape=T0.shape(), "
       "broadcast_dims=[0]))\n"
       "    fd.add_output(T5)\n    fd.add_output(T4)\n",
       "(2048, 4096)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto p = ParseReproScript(Script(absl::StrCat(x, drop, c.body),
                                     absl::StrCat("inputs = [torch.randn(", c.shape, "), 5, 6]\n")),
                              "k.py");
    ASSERT_TRUE(p.ok()) << p.status();
    auto compiled = CompileFusion(p->graph, p->input_shapes, CompileOptions{});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    bool random = false;
    for (const SegmentResult& s : compiled->segments) {
      ASSERT_TRUE(s.kernel.has_value());
      EXPECT_FALSE(s.kernel->binary.empty());
      random |= absl::StrContains(s.kernel->cuda_source, "fz_uniform_f(");
    }
    EXPECT_TRUE(random);
  }
}

}  // namespace
}  // namespace fusiond
