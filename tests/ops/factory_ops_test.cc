// fd.ops.full / zeros / ones: a broadcast of the fill value, parsed from
// repro scripts, evaluated by the CPU reference and compiled through the
// whole pipeline (pointwise, reduction and direct outputs).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
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

// Parses, evaluates on the script's input shapes with inputs 0..n-1 per
// tensor, compiles; returns the reference outputs.
std::vector<HostTensor> RunAndCompile(const std::string& body, const std::string& inputs) {
  auto p = ParseReproScript(Script(body, inputs), "f.py");
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  const Graph& g = p->graph;
  std::vector<HostTensor> in;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    HostTensor t;
    t.dtype = g.value(g.inputs[i]).dtype;
    t.shape = p->input_shapes[i];
    for (int64_t k = 0; k < t.numel(); ++k) t.data.push_back(static_cast<double>(k % 7) - 3);
    in.push_back(std::move(t));
  }
  auto out = Evaluate(g, in);
  EXPECT_TRUE(out.ok()) << out.status() << "\n" << PrintGraph(g);
  if (!out.ok()) return {};
  if (NvrtcVersion() != "none") {
    auto compiled = CompileFusion(g, p->input_shapes, CompileOptions{});
    EXPECT_TRUE(compiled.ok()) << compiled.status() << "\n" << PrintGraph(g);
    if (compiled.ok()) {
      for (const SegmentResult& s : compiled->segments) {
        EXPECT_TRUE(s.kernel.has_value() && !s.kernel->binary.empty());
      }
    }
  }
  return *std::move(out);
}

constexpr char kInput[] =
    "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)\n";

TEST(FactoryOps, FullMasksWithMinusInfinity) {
  auto out = RunAndCompile(
      absl::StrCat(kInput,
                   "    T1 = fd.ops.full(shape=T0.shape(), fill_value=float(\"-inf\"), "
                   "dtype=DataType.Float)\n"
                   "    T2 = fd.ops.where(fd.ops.gt(T0, 0.0), T0, T1)\n"
                   "    T3 = fd.ops.max(T2, dims=[1], keepdim=False, dtype=DataType.Null)\n"
                   "    fd.add_output(T2)\n    fd.add_output(T3)\n"),
      "inputs = [torch.randn((4, 3), dtype=torch.float32)]\n");
  ASSERT_EQ(out.size(), 2u);
  const double inf = std::numeric_limits<double>::infinity();
  // Inputs -3 -2 -1 / 0 1 2 / 3 -3 -2 / -1 0 1.
  EXPECT_EQ(out[0].data,
            (std::vector<double>{-inf, -inf, -inf, -inf, 1, 2, 3, -inf, -inf, -inf, -inf, 1}));
  EXPECT_EQ(out[1].data, (std::vector<double>{-inf, 2, 3, 1}));
}

TEST(FactoryOps, ZerosAndOnesAsOutputsAndInReductions) {
  auto out = RunAndCompile(
      absl::StrCat(kInput,
                   "    T1 = fd.ops.ones(shape=[T0.size(0), 3], dtype=DataType.BFloat16)\n"
                   "    T2 = fd.ops.zeros([T0.size(0), T0.size(1)], DataType.Int)\n"
                   "    T3 = fd.ops.add(T0, T1)\n"
                   "    T4 = fd.ops.sum(fd.ops.mul(T3, fd.ops.cast(T2, DataType.Float)), dims=[0], "
                   "keepdim=False, dtype=DataType.Null)\n"
                   "    fd.add_output(T1)\n    fd.add_output(T2)\n    fd.add_output(T4)\n"),
      "inputs = [torch.randn((5, 3), dtype=torch.float32)]\n");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].dtype, DataType::kBFloat16);
  EXPECT_EQ(out[0].data, std::vector<double>(15, 1.0));
  EXPECT_EQ(out[1].dtype, DataType::kInt64);
  EXPECT_EQ(out[1].data, std::vector<double>(15, 0.0));
  EXPECT_EQ(out[2].data, std::vector<double>(3, 0.0));
}

TEST(FactoryOps, ClearErrors) {
  auto err = [](const std::string& body) {
    auto p =
        ParseReproScript(Script(absl::StrCat(kInput, body, "    fd.add_output(T1)\n"), ""), "f.py");
    EXPECT_FALSE(p.ok());
    return p.ok() ? std::string() : std::string(p.status().message());
  };
  EXPECT_TRUE(absl::StrContains(err("    T1 = fd.ops.full([2], T0, DataType.Float)\n"),
                                "fill_value is T0, a tensor"));
  EXPECT_TRUE(absl::StrContains(err("    T1 = fd.ops.full([2])\n"),
                                "fd.ops.full is missing argument 'fill_value'"));
  // slice / pad / cat with bad arguments: located errors (shift_ops_test.cc
  // has the rest).
  for (const char* op : {"slice", "pad", "cat"}) {
    const std::string e = err(absl::StrCat("    T1 = fd.ops.", op, "(T0, [0], [1])\n"));
    EXPECT_TRUE(absl::StrContains(e, "f.py:6:")) << e;
  }
  EXPECT_TRUE(absl::StrContains(err("    T1 = fd.ops.iota(8, dtype=DataType.Bool)\n"),
                                "iota: dtype bool is not supported"));
  EXPECT_TRUE(absl::StrContains(err("    T1 = fd.ops.iota(8, 0.5, 1, DataType.Int)\n"),
                                "iota: start is float64 but the dtype is int64"));
}

// fd.ops.iota(length, start, step, dtype): start + step * i over [length],
// the length a number or a size; positions scaled and broadcast as rotary
// embeddings use them.
TEST(FactoryOps, Iota) {
  auto out = RunAndCompile(
      absl::StrCat(kInput,
                   "    T1 = fd.ops.iota(T0.size(1), dtype=DataType.Int)\n"
                   "    T2 = fd.ops.iota(4, 2.0, -0.5, DataType.Float)\n"
                   "    T3 = fd.ops.iota(length=3, start=5, step=3, dtype=DataType.Int32)\n"
                   "    T4 = fd.ops.broadcast_in_dim(fd.ops.cast(T1, DataType.Float), "
                   "shape=T0.shape(), broadcast_dims=[1])\n"
                   "    T5 = fd.ops.mul(T0, T4)\n"
                   "    fd.add_output(T1)\n    fd.add_output(T2)\n    fd.add_output(T3)\n"
                   "    fd.add_output(T5)\n"),
      "inputs = [torch.randn((2, 5), dtype=torch.float32)]\n");
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dtype, DataType::kInt64);
  EXPECT_EQ(out[0].data, (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(out[1].data, (std::vector<double>{2, 1.5, 1, 0.5}));
  EXPECT_EQ(out[2].dtype, DataType::kInt32);
  EXPECT_EQ(out[2].data, (std::vector<double>{5, 8, 11}));
  // Inputs -3 -2 -1 0 1 / 2 3 -3 -2 -1, times the column index.
  EXPECT_EQ(out[3].data, (std::vector<double>{0, -2, -2, 0, 4, 0, 3, -6, -6, -4}));
}

}  // namespace
}  // namespace fusiond
