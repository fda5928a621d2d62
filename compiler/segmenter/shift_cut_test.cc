// Where the segmenter cuts in front of a shift op whose operand depends on a
// reduction result: at the reduction results (the operand's kernel
// recomputes the rest at shifted indices), not at the whole operand; the
// segments evaluated one after another equal the definition.
#include "compiler/segmenter/shift_cut.h"

#include <map>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "compiler/segmenter/recompute.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

ParsedFusion Parse(const std::string& body) {
  auto p = ParseReproScript(
      absl::StrCat("import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
                   "def fusion(fd: FusionDefinition) -> None:\n",
                   body, "\nwith FusionDefinition() as fd:\n    fusion(fd)\n"),
      "s.py");
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : ParsedFusion{};
}

// The segments SegmentFusion chooses, and those it chose without the shift
// cut rule (ShiftOperandCones).
struct Cuts {
  std::vector<Segment> chosen;
  std::vector<Segment> greedy;
};

Cuts Segmented(const ParsedFusion& p) {
  Cuts c;
  auto sizes = BindShapes(p.graph, p.input_shapes);
  EXPECT_TRUE(sizes.ok()) << sizes.status();
  if (!sizes.ok()) return c;
  const Target t = *LookupTarget("sm_90");
  auto chosen = SegmentFusion(p.graph, *sizes, t);
  EXPECT_TRUE(chosen.ok()) << chosen.status();
  auto greedy = Partition(p.graph, *sizes, t, 0, nullptr, nullptr);
  EXPECT_TRUE(greedy.ok()) << greedy.status();
  if (chosen.ok()) c.chosen = *std::move(chosen);
  if (!greedy.ok()) return c;
  c.greedy = *std::move(greedy);
  // SegmentFusion's second try without the rule: the pointwise cones of the
  // crossing values that read only graph inputs recomputed.
  const std::set<NodeId> cones = CrossingCones(p.graph, c.greedy);
  if (cones.empty()) return c;
  auto recomputed = Partition(p.graph, *sizes, t, 0, &cones, nullptr);
  EXPECT_TRUE(recomputed.ok()) << recomputed.status();
  if (recomputed.ok() && 10 * Traffic(*recomputed) < 9 * Traffic(c.greedy))
    c.greedy = *std::move(recomputed);
  return c;
}

// Names of the original values segment k reads from earlier segments.
std::string Crossing(const Graph& g, const Segment& s) {
  std::string out;
  for (ValueId v : s.source_inputs) {
    if (!g.IsInput(v)) absl::StrAppend(&out, out.empty() ? "" : ", ", TypeString(g, v));
  }
  return out;
}

// Input k holds small distinct values; the segments run one after another on
// the CPU reference must give the definition's outputs.
void ExpectSegmentsEqualDefinition(const ParsedFusion& p, const std::vector<Segment>& segs) {
  std::vector<HostTensor> in;
  for (size_t i = 0; i < p.graph.inputs.size(); ++i) {
    HostTensor t;
    t.dtype = p.graph.value(p.graph.inputs[i]).dtype;
    t.shape = p.input_shapes[i];
    for (int64_t k = 0; k < t.numel(); ++k)
      t.data.push_back(RoundTo(t.dtype, (k * 37 % 101) / 8.0 - i));
    in.push_back(std::move(t));
  }
  auto want = Evaluate(p.graph, in);
  ASSERT_TRUE(want.ok()) << want.status();
  std::map<ValueId, HostTensor> env;
  for (size_t i = 0; i < in.size(); ++i) env[p.graph.inputs[i]] = in[i];
  for (const Segment& s : segs) {
    std::vector<HostTensor> ins;
    for (ValueId v : s.source_inputs) {
      ASSERT_TRUE(env.count(v)) << ValueName(p.graph, v);
      ins.push_back(env.at(v));
    }
    auto outs = Evaluate(s.graph, ins);
    ASSERT_TRUE(outs.ok()) << outs.status() << "\n" << PrintGraph(s.graph);
    for (size_t j = 0; j < s.source_outputs.size(); ++j) env[s.source_outputs[j]] = (*outs)[j];
  }
  for (size_t i = 0; i < p.graph.outputs.size(); ++i) {
    ASSERT_TRUE(env.count(p.graph.outputs[i]));
    EXPECT_EQ(env.at(p.graph.outputs[i]).data, (*want)[i].data) << "output " << i;
  }
}

constexpr char kCentred[] =
    "    T0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
    "dtype=DataType.BFloat16)\n"
    "    T1 = fd.ops.cast(T0, DataType.Float)\n"
    "    T2 = fd.ops.broadcast_in_dim(fd.ops.sum(T1, dims=[1]), shape=[64, 256], "
    "broadcast_dims=[0])\n"
    "    T3 = fd.ops.slice(fd.ops.sub(T1, T2), [0, 128], [64, 256])\n"
    "    fd.add_output(T3)\n";

constexpr char kPadNormalized[] =
    "    T0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], dtype=DataType.Float)\n"
    "    T1 = fd.ops.mul(fd.ops.sum(T0, dims=[1]), 1.0 / 256)\n"
    "    T2 = fd.ops.sub(T0, fd.ops.broadcast_in_dim(T1, shape=[64, 256], broadcast_dims=[0]))\n"
    "    T3 = fd.ops.mul(fd.ops.sum(fd.ops.mul(T2, T2), dims=[1]), 1.0 / 256)\n"
    "    T4 = fd.ops.rsqrt(fd.ops.add(T3, 1e-5))\n"
    "    T5 = fd.ops.mul(T2, fd.ops.broadcast_in_dim(T4, shape=[64, 256], broadcast_dims=[0]))\n"
    "    fd.add_output(fd.ops.pad(T5, [1, 3]))\n";

// The greedy partition alone of a slice of x - mean(x) joins the
// subtraction to the sum's kernel and cuts at the centred [64, 256] tensor
// (65536 bytes written and read); the rule alone cuts at the [64] sum (256
// bytes) and the slice's kernel recomputes cast(x) - sum from x at the
// shifted indices. SegmentFusion cuts at the sum.
TEST(ShiftCut, SliceOfCentredRowsCutsAtTheSum) {
  const ParsedFusion p = Parse(kCentred);
  const SizeBinding sizes = *BindShapes(p.graph, p.input_shapes);
  const Target t = *LookupTarget("sm_90");
  auto plain = Partition(p.graph, sizes, t, 0, nullptr, nullptr);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(plain->size(), 2u);
  EXPECT_EQ(Crossing(p.graph, (*plain)[1]), "float32[64, 256]");
  EXPECT_TRUE(absl::StrContains((*plain)[1].boundary_reason, "(65536 bytes)"))
      << (*plain)[1].boundary_reason;
  const std::vector<std::vector<NodeId>> cones = ShiftOperandCones(p.graph);
  auto ruled = Partition(p.graph, sizes, t, 0, nullptr, &cones);
  ASSERT_TRUE(ruled.ok()) << ruled.status();
  ASSERT_EQ(ruled->size(), 2u);
  EXPECT_EQ(Crossing(p.graph, (*ruled)[1]), "float32[64]");
  EXPECT_LT(Traffic(*ruled), Traffic(*plain));
  ExpectSegmentsEqualDefinition(p, *ruled);
  const Cuts c = Segmented(p);
  ASSERT_EQ(c.chosen.size(), 2u);
  const std::string& why = c.chosen[1].boundary_reason;
  EXPECT_TRUE(absl::StrContains(why, "reads t2 : float32[64] (256 bytes) from segment 0")) << why;
  EXPECT_TRUE(absl::StrContains(why, "slice T3 reads t2, a sum result, at shifted indices")) << why;
  ExpectSegmentsEqualDefinition(p, c.chosen);
}

// A pad of layer-norm-like rows: SegmentFusion without the rule cut at the
// centred rows and the [64] scale (65792 bytes); with it, at the two [64]
// sums (512 bytes), and the reason says so with the bytes of both.
TEST(ShiftCut, PadOfNormalizedRowsCutsAtTheSums) {
  const ParsedFusion p = Parse(kPadNormalized);
  const Cuts c = Segmented(p);
  ASSERT_EQ(c.greedy.size(), 2u);
  EXPECT_EQ(Crossing(p.graph, c.greedy[1]), "float32[64, 256], float32[64]");
  EXPECT_TRUE(absl::StrContains(c.greedy[1].boundary_reason, "(65792 bytes)"))
      << c.greedy[1].boundary_reason;
  ASSERT_EQ(c.chosen.size(), 2u);
  EXPECT_EQ(Crossing(p.graph, c.chosen[1]), "float32[64], float32[64]");
  const std::string& why = c.chosen[1].boundary_reason;
  EXPECT_TRUE(absl::StrContains(why, "(512 bytes) from segment 0")) << why;
  EXPECT_TRUE(absl::StrContains(why, "pad t16 reads t7, a sum result, at shifted indices")) << why;
  EXPECT_TRUE(absl::StrContains(why, "198656 bytes through memory in all, 263680 when cut at"))
      << why;
  ExpectSegmentsEqualDefinition(p, c.chosen);
  ExpectSegmentsEqualDefinition(p, c.greedy);
}

// The same through the pipeline's passes: the compiled segments read the
// two sums.
TEST(ShiftCut, PadOfNormalizedRowsThroughThePipeline) {
  const ParsedFusion p = Parse(kPadNormalized);
  CompileOptions o;
  o.generate_code = false;
  auto r = CompileFusion(p.graph, p.input_shapes, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->segments.size(), 2u);
  std::string crossing;
  for (ValueId v : r->segments[1].source_inputs) {
    if (!r->optimized.IsInput(v))
      absl::StrAppend(&crossing, crossing.empty() ? "" : ", ", TypeString(r->optimized, v));
  }
  EXPECT_EQ(crossing, "float32[64], float32[64]") << r->segments[1].boundary_reason;
}

// When the operand's sub-graph reads more than the operand weighs (three
// inputs of its size), the cut at the operand moves fewer bytes and stays.
TEST(ShiftCut, OperandCutKeptWhenTheFrontierWeighsMore) {
  const ParsedFusion p = Parse(
      "    T0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T1 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T2 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T3 = fd.ops.add(fd.ops.mul(T0, T1), T2)\n"
      "    T4 = fd.ops.broadcast_in_dim(fd.ops.sum(T3, dims=[1]), shape=[64, 256], "
      "broadcast_dims=[0])\n"
      "    fd.add_output(fd.ops.slice(fd.ops.sub(T3, T4), [0, 128], [64, 256]))\n");
  const Cuts c = Segmented(p);
  ASSERT_EQ(c.chosen.size(), 2u);
  EXPECT_EQ(Crossing(p.graph, c.chosen[1]), "float32[64, 256]") << c.chosen[1].boundary_reason;
  EXPECT_EQ(Traffic(c.chosen), Traffic(c.greedy));
  const std::vector<std::vector<NodeId>> cones = ShiftOperandCones(p.graph);
  auto ruled = Partition(p.graph, *BindShapes(p.graph, p.input_shapes), *LookupTarget("sm_90"), 0,
                         nullptr, &cones);
  ASSERT_TRUE(ruled.ok()) << ruled.status();
  EXPECT_GT(Traffic(*ruled), Traffic(c.chosen));
  ExpectSegmentsEqualDefinition(p, c.chosen);
}

// The halves of centred rows swapped by cat (tests/ops/fusions'
// slice_of_centered at a small size), and the centred rows also an output:
// the cut moves only the [64] mean, the segments equal the definition.
TEST(ShiftCut, CatOfCentredRowsAndAnOutputOperand) {
  const std::string x =
      "    T0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T2 = fd.ops.mul(fd.ops.sum(T0, dims=[1]), 1.0 / 256)\n"
      "    T4 = fd.ops.sub(T0, fd.ops.broadcast_in_dim(T2, shape=[64, 256], "
      "broadcast_dims=[0]))\n"
      "    T5 = fd.ops.slice(T4, [0, 128], [64, 256])\n"
      "    T6 = fd.ops.slice(T4, [0, 0], [64, 128])\n"
      "    fd.add_output(fd.ops.mul(fd.ops.cat([T5, T6], dim=1), 2.0))\n";
  for (const std::string& body : {x, x + "    fd.add_output(T4)\n"}) {
    const ParsedFusion p = Parse(body);
    const Cuts c = Segmented(p);
    ASSERT_EQ(c.chosen.size(), 2u) << body;
    EXPECT_EQ(Crossing(p.graph, c.chosen[1]), "float32[64]") << c.chosen[1].boundary_reason;
    EXPECT_LE(Traffic(c.chosen), Traffic(c.greedy));
    ExpectSegmentsEqualDefinition(p, c.chosen);
  }
}

// Only shift ops that read a reduction result get cones; a graph with none
// keeps the greedy partition.
TEST(ShiftCut, ConesOnlyBehindUnreadableValues) {
  const ParsedFusion p = Parse(
      "    T0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T1 = fd.ops.slice(fd.ops.exp(T0), [0, 16], [64, 144])\n"
      "    fd.add_output(T1)\n");
  EXPECT_TRUE(ShiftOperandCones(p.graph).empty());
  const std::vector<std::vector<NodeId>> cones = ShiftOperandCones(Parse(kCentred).graph);
  ASSERT_EQ(cones.size(), 1u);
  EXPECT_EQ(cones[0].size(), 3u);  // the slice, the subtraction, the cast
}

}  // namespace
}  // namespace fusiond
