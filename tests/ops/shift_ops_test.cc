// fd.ops.slice / pad / cat: parsed from repro scripts in nvFuser's forms,
// typed by the builder, evaluated by the CPU reference (against values
// computed here by hand), kept apart by the passes, carried by the wire form;
// the pipeline refuses them with Unimplemented (no kernels read shifted
// indices yet).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/ir_proto.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/canonical.h"
#include "compiler/passes/optimize.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"

namespace fusiond {
namespace {

std::string Script(const std::string& body, const std::string& inputs) {
  return absl::StrCat(
      "import torch\nfrom nvfuser import FusionDefinition, DataType\n\n"
      "def fusion(fd: FusionDefinition) -> None:\n",
      body, "\nwith FusionDefinition() as fd:\n    fusion(fd)\n", inputs);
}

// Input k of the script holds 100 * k + its row-major element index.
std::vector<HostTensor> Inputs(const ParsedFusion& p) {
  std::vector<HostTensor> in;
  for (size_t i = 0; i < p.graph.inputs.size(); ++i) {
    HostTensor t;
    t.dtype = p.graph.value(p.graph.inputs[i]).dtype;
    t.shape = p.input_shapes[i];
    for (int64_t k = 0; k < t.numel(); ++k) t.data.push_back(100.0 * i + k);
    in.push_back(std::move(t));
  }
  return in;
}

std::vector<HostTensor> Evaluated(const std::string& body, const std::string& inputs,
                                  ParsedFusion* parsed = nullptr) {
  auto p = ParseReproScript(Script(body, inputs), "s.py");
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  auto out = Evaluate(p->graph, Inputs(*p));
  EXPECT_TRUE(out.ok()) << out.status() << "\n" << PrintGraph(p->graph);
  if (parsed) *parsed = *p;
  return out.ok() ? *std::move(out) : std::vector<HostTensor>{};
}

std::string Error(const std::string& body) {
  auto p = ParseReproScript(Script(body, ""), "s.py");
  EXPECT_FALSE(p.ok());
  return p.ok() ? std::string() : std::string(p.status().message());
}

constexpr char k3x4[] =
    "    T0 = fd.define_tensor(shape=[3, 4], contiguity=[True, True], dtype=DataType.Float)\n";

TEST(ShiftOps, SliceWithStartsEndsStridesAndNegativeIndices) {
  // T0 = [[0 1 2 3] [4 5 6 7] [8 9 10 11]].
  auto out =
      Evaluated(absl::StrCat(k3x4,
                             "    T1 = fd.ops.slice(T0, start_indices=[1, 0], end_indices=[3, 4], "
                             "strides=[1, 2])\n"
                             "    T2 = fd.ops.slice(T0, [-2, 1], [100, -1])\n"
                             "    T3 = fd.ops.slice(T0, [0, 3], [3, 1])\n"
                             "    fd.add_output(T1)\n    fd.add_output(T2)\n"
                             "    fd.add_output(T3)\n"),
                "");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out[0].data, (std::vector<double>{4, 6, 8, 10}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out[1].data, (std::vector<double>{5, 6, 9, 10}));
  EXPECT_EQ(out[2].shape, (std::vector<int64_t>{3, 0}));  // start past end: empty
}

TEST(ShiftOps, PadPairsFromTheLastAxisWithAValueRoundedToTheDtype) {
  auto out = Evaluated(
      "    T0 = fd.define_tensor(shape=[2, 2], contiguity=[True, True], "
      "dtype=DataType.BFloat16)\n"
      "    T1 = fd.ops.pad(T0, [1, 0, 0, 1], 0.1)\n"
      "    T2 = fd.ops.pad(T0, [0, 2])\n"
      "    fd.add_output(T1)\n    fd.add_output(T2)\n",
      "");
  ASSERT_EQ(out.size(), 2u);
  const double v = RoundTo(DataType::kBFloat16, 0.1);
  EXPECT_NE(v, 0.1);
  EXPECT_EQ(out[0].dtype, DataType::kBFloat16);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(out[0].data, (std::vector<double>{v, 0, 1, v, 2, 3, v, v, v}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(out[1].data, (std::vector<double>{0, 1, 0, 0, 2, 3, 0, 0}));
}

TEST(ShiftOps, CatAlongEitherAxisOfStridedOperands) {
  auto out =
      Evaluated(absl::StrCat(k3x4,
                             "    T1 = fd.define_tensor(shape=[3, 2], contiguity=[True, True], "
                             "dtype=DataType.Float)\n"
                             "    T2 = fd.ops.cat([T1, T0], dim=-1)\n"
                             "    T3 = fd.ops.permute(T0, dims=[1, 0])\n"
                             "    T4 = fd.ops.cat([T3, fd.ops.slice(T3, [0, 0], [1, 3])], 0)\n"
                             "    fd.add_output(T2)\n    fd.add_output(T4)\n"),
                "");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(out[0].data, (std::vector<double>{100, 101, 0, 1, 2, 3, 102, 103, 4, 5, 6, 7, 104, 105,
                                              8, 9, 10, 11}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(out[1].data, (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 0, 4, 8}));
}

// Rotary embedding, halves rotated: out = cat([-x2, x1], D) * sin + x * cos.
constexpr char kRotary[] =
    "    T0 = fd.define_tensor(shape=[1, 2, 3, 4], contiguity=[True, True, True, True], "
    "dtype=DataType.Float)\n"
    "    T1 = fd.define_tensor(shape=[1, 2, 3, 4], contiguity=[True, True, True, True], "
    "dtype=DataType.Float)\n"
    "    T2 = fd.define_tensor(shape=[1, 2, 3, 4], contiguity=[True, True, True, True], "
    "dtype=DataType.Float)\n"
    "    T3 = fd.ops.slice(T0, start_indices=[0, 0, 0, 0], end_indices=[1, 2, 3, 2], "
    "strides=[1, 1, 1, 1])\n"
    "    T4 = fd.ops.slice(T0, start_indices=[0, 0, 0, 2], end_indices=[1, 2, 3, 4], "
    "strides=[1, 1, 1, 1])\n"
    "    T5 = fd.ops.neg(T4)\n"
    "    T6 = fd.ops.cat([T5, T3], dim=-1)\n"
    "    T7 = fd.ops.add(fd.ops.mul(T6, T1), fd.ops.mul(T0, T2))\n"
    "    fd.add_output(T7)\n";

TEST(ShiftOps, RotaryEmbeddingMatchesAHandComputation) {
  ParsedFusion p;
  auto out = Evaluated(kRotary, "", &p);
  ASSERT_EQ(out.size(), 1u);
  const std::vector<HostTensor> in = Inputs(p);
  for (int64_t row = 0; row < 6; ++row) {
    for (int64_t d = 0; d < 4; ++d) {
      const int64_t k = row * 4 + d;
      const double x = in[0].data[k], rotated = d < 2 ? -in[0].data[k + 2] : in[0].data[k - 2];
      EXPECT_EQ(out[0].data[k], rotated * in[1].data[k] + x * in[2].data[k]) << k;
    }
  }
  // The passes keep the two slices apart (they differ only in offsets).
  Graph g = p.graph;
  std::vector<PassRecord> records;
  ASSERT_TRUE(RunOptimizationPasses(g, PassOptions{}, &records).ok());
  int slices = 0;
  for (const Node& n : g.nodes) slices += n.op == OpKind::kSlice;
  EXPECT_EQ(slices, 2) << PrintGraph(g);
  auto after = Evaluate(g, in);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)[0].data, out[0].data);
  // The wire form carries offsets and axis.
  auto back = FromProto(ToProto(p.graph));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(CanonicalHash(*back), CanonicalHash(p.graph));
  auto wire = Evaluate(*back, in);
  ASSERT_TRUE(wire.ok()) << wire.status();
  EXPECT_EQ((*wire)[0].data, out[0].data);
  // One kernel: the cat's operands are read from x at shifted indices.
  auto compiled = CompileFusion(p.graph, p.input_shapes, CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_EQ(compiled->segments.size(), 1u);
}

// What a kernel can read at shifted indices and where the segmenter cuts;
// every kernel is generated (and compiled, where NVRTC is present).
TEST(ShiftOps, SegmentsCutOnlyBeforeValuesAKernelCannotReadShifted) {
  auto compile = [](const std::string& body) {
    auto p = ParseReproScript(Script(body, ""), "s.py");
    EXPECT_TRUE(p.ok()) << p.status();
    return CompileFusion(p->graph, p->input_shapes, CompileOptions{});
  };
  const std::string x =
      "    T0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], "
      "dtype=DataType.BFloat16)\n";
  // A sum over a slice of an input: one reduction kernel.
  auto sum = compile(absl::StrCat(x,
                                  "    T1 = fd.ops.slice(T0, [0, 16], [64, 144])\n"
                                  "    fd.add_output(fd.ops.sum(fd.ops.cast(T1, DataType.Float), "
                                  "dims=[1]))\n"));
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->segments.size(), 1u);
  EXPECT_NE(sum->segments[0].kind, SchedulerKind::kPointwise);
  // pad + pointwise, then a sum of the padded rows: one kernel.
  auto pad = compile(
      absl::StrCat(x,
                   "    T1 = fd.ops.pad(fd.ops.mul(fd.ops.cast(T0, DataType.Float), 2.0), [1, 3])\n"
                   "    T2 = fd.ops.exp(T1)\n    fd.add_output(T2)\n"
                   "    fd.add_output(fd.ops.sum(T2, dims=[1]))\n"));
  ASSERT_TRUE(pad.ok()) << pad.status();
  EXPECT_EQ(pad->segments.size(), 1u);
  // A slice of values computed from a reduction result: two kernels, cut
  // where the slice would read the sum at shifted indices.
  auto centred = compile(
      absl::StrCat(x,
                   "    T1 = fd.ops.cast(T0, DataType.Float)\n"
                   "    T2 = fd.ops.broadcast_in_dim(fd.ops.sum(T1, dims=[1]), shape=[64, 256], "
                   "broadcast_dims=[0])\n"
                   "    T3 = fd.ops.slice(fd.ops.sub(T1, T2), [0, 128], [64, 256])\n"
                   "    fd.add_output(T3)\n"));
  ASSERT_TRUE(centred.ok()) << centred.status();
  ASSERT_EQ(centred->segments.size(), 2u);
  const std::string& why = centred->segments[1].boundary_reason;
  EXPECT_TRUE(absl::StrContains(why, "slice T3 reads ")) << why;
  EXPECT_TRUE(absl::StrContains(why, ", a sum result, at shifted indices")) << why;
}

// Offsets from the wire form are checked as the front end's are.
TEST(ShiftOps, WireFormOffsetsAreChecked) {
  auto p = ParseReproScript(Script(absl::StrCat(k3x4,
                                                "    T1 = fd.ops.slice(T0, [0, 1], [3, 4])\n"
                                                "    T2 = fd.ops.cat([T0, T0], 0)\n"
                                                "    fd.add_output(T1)\n    fd.add_output(T2)\n"),
                                   ""),
                            "s.py");
  ASSERT_TRUE(p.ok()) << p.status();
  auto with = [&](auto edit) {
    v1::FusionGraph proto = ToProto(p->graph);
    edit(proto);
    auto g = FromProto(proto);
    return g.ok() ? std::string("ok") : std::string(g.status().message());
  };
  // A huge stride gives one element (no overflow).
  EXPECT_EQ(with([](v1::FusionGraph& w) { w.mutable_nodes(0)->set_offsets(5, INT64_MAX); }), "ok");
  EXPECT_TRUE(
      absl::StrContains(with([](v1::FusionGraph& w) { w.mutable_nodes(0)->set_offsets(0, -1); }),
                        "node 0 (slice): slice: axis 0: start -1 and end 3 do not make a range"));
  EXPECT_TRUE(absl::StrContains(
      with([](v1::FusionGraph& w) { w.mutable_nodes(0)->mutable_offsets()->RemoveLast(); }),
      "takes a start, an end and a stride per axis (6 offsets for rank 2), got 5"));
  EXPECT_TRUE(
      absl::StrContains(with([](v1::FusionGraph& w) { w.mutable_nodes(1)->clear_operands(); }),
                        "takes a list of at least one tensor, got none"));
  EXPECT_TRUE(
      absl::StrContains(with([](v1::FusionGraph& w) { w.mutable_nodes(1)->add_offsets(1); }),
                        "sets offsets, which cat does not read"));
}

TEST(ShiftOps, DifferentOffsetsHashApart) {
  auto hash = [](const std::string& starts) {
    auto p = ParseReproScript(Script(absl::StrCat(k3x4, "    T1 = fd.ops.slice(T0, ", starts,
                                                  ", [3, 4])\n    fd.add_output(T1)\n"),
                                     ""),
                              "s.py");
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? CanonicalHash(p->graph) : 0;
  };
  EXPECT_NE(hash("[0, 1]"), hash("[0, 2]"));
}

TEST(ShiftOps, ClearLocatedErrors) {
  auto has = [](const std::string& body, const std::string& want) {
    const std::string e = Error(absl::StrCat(k3x4, body, "    fd.add_output(T1)\n"));
    EXPECT_TRUE(absl::StrContains(e, want)) << e;
    EXPECT_TRUE(absl::StrContains(e, "s.py:6:")) << e;
  };
  has("    T1 = fd.ops.slice(T0, [0], [1])\n", "start_indices has 1 entries for rank 2");
  has("    T1 = fd.ops.slice(T0, [0, 0], [3, 4], [1, 0])\n", "axis 1: stride 0 is not positive");
  has("    T1 = fd.ops.slice(T0, [0, 5], [3, 6], manual_normalization=1)\n",
      "end 6 is past the extent 4");
  has("    T1 = fd.ops.pad(T0, [1, 1, 1])\n", "pad_widths has 3 entries");
  has("    T1 = fd.ops.pad(T0, [-1, 0])\n", "must not be negative");
  has("    T1 = fd.ops.pad(T0, [1, 0], T0)\n", "the fill value is a tensor");
  has("    T1 = fd.ops.cat([T0, fd.ops.cast(T0, DataType.Half)], 0)\n",
      "operand 1 is float16, operand 0 is float32");
  has("    T1 = fd.ops.cat([T0, fd.ops.slice(T0, [0, 0], [3, 2])], 0)\n",
      "operand 1 has extent 2 on axis 1, operand 0 4");
  has("    T1 = fd.ops.cat([T0, T0], 2)\n", "axis 2 is out of range for rank 2");
  has("    T1 = fd.ops.cat(T0, 0)\n", "tensors is the tensor T0");
  // Symbolic extents: kept whole, never moved.
  const std::string e = Error(
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)\n"
      "    T1 = fd.ops.pad(T0, [1, 1])\n    fd.add_output(T1)\n");
  EXPECT_TRUE(absl::StrContains(e, "axis 1 has a symbolic extent")) << e;
}

}  // namespace
}  // namespace fusiond
