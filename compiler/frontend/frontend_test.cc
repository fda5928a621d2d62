#include "compiler/frontend/frontend.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace fusiond {
namespace {

constexpr char kHeader[] =
    "import torch\n"
    "from nvfuser import FusionDefinition, DataType\n"
    "\n"
    "def fusion(fd: FusionDefinition) -> None:\n";

constexpr char kFooter[] =
    "\nwith FusionDefinition() as fd:\n"
    "    fusion(fd)\n";

ParsedFusion MustParse(const std::string& body, const std::string& inputs = "") {
  auto r = ParseReproScript(absl::StrCat(kHeader, body, kFooter, inputs), "t.py");
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return ParsedFusion{};
  EXPECT_TRUE(VerifyGraph(r->graph).ok());
  return *std::move(r);
}

std::string ErrorOf(const std::string& text) {
  auto r = ParseReproScript(text, "t.py");
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

const Node* FindNode(const Graph& g, OpKind op) {
  for (const Node& n : g.nodes) {
    if (n.op == op) return &n;
  }
  return nullptr;
}

TEST(Frontend, BuildsGraphWithTypesAndNames) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[4, 8], contiguity=[True, None], dtype=DataType.BFloat16,"
      " is_cpu=False, stride_order=[1, 0])\n"
      "    T1 = fd.ops.cast(T0, dtype=DataType.Float)\n"
      "    T2 = fd.ops.sum(T1, dims=[1], keepdim=True, dtype=DataType.Null)\n"
      "    fd.add_output(T2)\n");
  const Graph& g = p.graph;
  ASSERT_EQ(g.inputs.size(), 1u);
  const Value& in = g.value(g.inputs[0]);
  EXPECT_EQ(in.name, "T0");
  EXPECT_EQ(in.dtype, DataType::kBFloat16);
  EXPECT_EQ(in.contiguity[1], std::nullopt);
  EXPECT_EQ(in.stride_order, (std::vector<int64_t>{1, 0}));
  ASSERT_EQ(g.outputs.size(), 1u);
  const Value& out = g.value(g.outputs[0]);
  EXPECT_EQ(out.name, "T2");
  EXPECT_EQ(out.dtype, DataType::kFloat);
  ASSERT_EQ(out.shape.size(), 2u);
  EXPECT_EQ(out.shape[1].size, 1);
  const Node* sum = FindNode(g, OpKind::kSum);
  ASSERT_NE(sum, nullptr);
  EXPECT_TRUE(sum->attrs.keepdim);
  EXPECT_FALSE(sum->attrs.dtype.has_value());  // DataType.Null: the default
  // No inputs list: the static sizes are the input shapes.
  EXPECT_EQ(p.input_shapes, (std::vector<std::vector<int64_t>>{{4, 8}}));
}

TEST(Frontend, RebindingGivesDistinctNames) {
  ParsedFusion p = MustParse(
      "    T4 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half)\n"
      "    T4 = fd.ops.cast(T4, dtype=DataType.Float)\n"
      "    T4 = fd.ops.exp(T4)\n"
      "    fd.add_output(T4)\n");
  const std::string text = PrintGraph(p.graph);
  EXPECT_TRUE(absl::StrContains(text, "T4_1 = cast(T4, dtype=float32)")) << text;
  EXPECT_TRUE(absl::StrContains(text, "T4_2 = exp(T4_1)")) << text;
  EXPECT_TRUE(absl::StrContains(text, "return T4_2")) << text;
  EXPECT_TRUE(p.input_shapes.empty());  // symbolic and no inputs list
}

TEST(Frontend, NumberLiteralsBecomeConstants) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n"
      "    T1 = fd.ops.mul(T0, 2.0)\n"
      "    T2 = fd.ops.add(T1, 3)\n"
      "    T3 = fd.ops.sub(T2, -0.5)\n"
      "    fd.add_output(T3)\n");
  std::vector<std::pair<DataType, double>> constants;
  for (const Value& v : p.graph.values) {
    if (v.is_constant()) constants.push_back({v.dtype, *v.constant});
  }
  ASSERT_EQ(constants.size(), 3u);
  EXPECT_EQ(constants[0], std::make_pair(DataType::kDouble, 2.0));
  EXPECT_EQ(constants[1], std::make_pair(DataType::kInt64, 3.0));
  EXPECT_EQ(constants[2], std::make_pair(DataType::kDouble, -0.5));
  EXPECT_EQ(p.graph.value(p.graph.outputs[0]).dtype, DataType::kFloat);
}

TEST(Frontend, SizesShapesAndVectors) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)\n"
      "    T1 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Null)\n"
      "    V2 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)\n"
      "    T3 = fd.ops.broadcast_in_dim(T1, shape=V2, broadcast_dims=[0])\n"
      "    S4 = fd.ops.reciprocal(T0.size(1))\n"
      "    T5 = fd.ops.mul(T3, S4)\n"
      "    T6 = fd.ops.broadcast_in_dim(T5, shape=T0.shape(), broadcast_dims=[0, 1])\n"
      "    V7 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)\n"
      "    fd.add_output(T6)\n",
      "inputs = [torch.randn((3, 5), dtype=torch.float32, device='cuda:0')]\n");
  const Graph& g = p.graph;
  int sizes = 0;
  for (const Node& n : g.nodes) sizes += n.op == OpKind::kSize;
  EXPECT_EQ(sizes, 2);  // T0.size(0) is made once although used twice
  const Value& t3 = g.value(g.def(g.outputs[0])->inputs[0]);
  ASSERT_EQ(t3.rank(), 2);
  EXPECT_TRUE(g.SameExtent(t3.shape[0], g.value(g.inputs[0]).shape[0]));
  EXPECT_TRUE(g.SameExtent(t3.shape[1], Extent::Static(1)));
  const Node* rcp = FindNode(g, OpKind::kReciprocal);
  ASSERT_NE(rcp, nullptr);
  EXPECT_FALSE(g.value(rcp->outputs[0]).is_tensor);
  EXPECT_EQ(p.input_shapes, (std::vector<std::vector<int64_t>>{{3, 5}}));
}

TEST(Frontend, VarMeanUnpacksIntoTwoNames) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)\n"
      "    T1, T2 = fd.ops.var_mean(T0, dims=[1], correction=0, keepdim=False)\n"
      "    fd.add_output(T1)\n"
      "    fd.add_output(T2)\n");
  const Node* vm = FindNode(p.graph, OpKind::kVarMean);
  ASSERT_NE(vm, nullptr);
  ASSERT_EQ(vm->outputs.size(), 2u);
  EXPECT_EQ(p.graph.value(vm->outputs[0]).name, "T1");
  EXPECT_EQ(p.graph.value(vm->outputs[1]).name, "T2");
  EXPECT_EQ(vm->attrs.correction, 0);
}

TEST(Frontend, PositionalArgumentsAndNestedCalls) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor([-1], [True], DataType.Float)\n"
      "    T1 = fd.define_tensor([-1, -1], [True, True], DataType.Float)\n"
      "    fd.add_output(fd.ops.mul(fd.ops.broadcast_in_dim(T0, T1.shape(), [1]), T1))\n");
  const Graph& g = p.graph;
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_FALSE(g.value(g.outputs[0]).name.empty());
  EXPECT_TRUE(g.SameExtent(g.value(g.inputs[0]).shape[0], g.value(g.inputs[1]).shape[1]));
}

TEST(Frontend, ScalarInputsAndInputList) {
  ParsedFusion p = MustParse(
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
      "dtype=DataType.BFloat16)\n"
      "    S1 = fd.define_scalar(dtype=DataType.Double)\n"
      "    T2 = fd.ops.mul(T0, S1)\n"
      "    fd.add_output(T2)\n",
      "inputs = [\n"
      "    torch.rand((8, 16), dtype=torch.bfloat16, device='cuda:0') * 2 + 0.5,\n"
      "    0.25,\n"
      "]\n"
      "fd.execute(inputs)\n");
  ASSERT_EQ(p.inputs.size(), 2u);
  EXPECT_EQ(p.inputs[0].generator, "rand");
  EXPECT_DOUBLE_EQ(p.inputs[0].scale, 2.0);
  EXPECT_DOUBLE_EQ(p.inputs[0].offset, 0.5);
  EXPECT_EQ(p.inputs[1].generator, "scalar");
  EXPECT_DOUBLE_EQ(p.inputs[1].value, 0.25);
  EXPECT_EQ(p.input_shapes, (std::vector<std::vector<int64_t>>{{8, 16}, {}}));
  EXPECT_FALSE(p.graph.value(p.graph.inputs[1]).is_tensor);
}

TEST(Frontend, InputGenerators) {
  const std::string body =
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
      "dtype=DataType.BFloat16)\n"
      "    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n"
      "    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)\n"
      "    T3 = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=DataType.Half)\n"
      "    T4 = fd.ops.cast(T0, dtype=DataType.Float)\n"
      "    fd.add_output(T4)\n";
  ParsedFusion p = MustParse(
      body,
      "inputs = [\n"
      "    torch.softmax(torch.randn((4, 1 << 3), device='cuda:0'), dim=-1).to(torch.bfloat16),\n"
      "    torch.testing.make_tensor((8,), dtype=torch.float32, device='cuda:0', low=-1, high=3),\n"
      "    torch.full((8,), 7, dtype=torch.int64, device='cuda:0'),\n"
      "    torch.ones(2, 3, dtype=torch.float16),\n"
      "]\n");
  ASSERT_EQ(p.inputs.size(), 4u);
  EXPECT_EQ(p.inputs[0].generator, "softmax");
  EXPECT_EQ(p.inputs[0].softmax_dim, -1);
  EXPECT_EQ(p.inputs[0].dtype, DataType::kBFloat16);
  EXPECT_EQ(p.inputs[0].shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(p.inputs[1].generator, "make_tensor");
  EXPECT_DOUBLE_EQ(p.inputs[1].offset, -1);
  EXPECT_DOUBLE_EQ(p.inputs[1].scale, 4);
  EXPECT_EQ(p.inputs[2].generator, "full");
  EXPECT_DOUBLE_EQ(p.inputs[2].value, 7);
  EXPECT_EQ(p.inputs[3].generator, "ones");
  EXPECT_EQ(p.inputs[3].shape, (std::vector<int64_t>{2, 3}));
}

TEST(Frontend, WithoutTheDefWrapper) {
  auto r = ParseReproScript(
      "\"\"\"A repro script with a docstring,\n over two lines.\"\"\"\n"
      "from nvfuser import FusionDefinition, DataType\n"
      "torch.manual_seed(0)\n"
      "with FusionDefinition() as fd:\n"
      "    T0 = fd.define_tensor(shape=[2], contiguity=[True], dtype=DataType.Float)\n"
      "    T1 = fd.ops.relu(T0)  # a comment\n"
      "    fd.add_output(T1)\n"
      "print(fd)\n",
      "w.py");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->graph.nodes.size(), 1u);
}

TEST(Frontend, ErrorsAreLocatedWithExpectation) {
  const std::string msg = ErrorOf(absl::StrCat(
      kHeader,
      "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n"
      "    T1 = fd.ops.sum(T0, dims=[1])\n"
      "    fd.add_output(T1)\n"));
  EXPECT_TRUE(absl::StartsWith(msg, "t.py:6:10: sum: axis 1 is out of range for rank 1")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "; expected ")) << msg;
}

TEST(Frontend, EmptyAndBlankInputs) {
  EXPECT_TRUE(absl::StartsWith(ErrorOf(""), "t.py:1:1: no fusion definition found")) << ErrorOf("");
  EXPECT_TRUE(absl::StrContains(ErrorOf("\n\n# c\n"), "no fusion definition found"));
  EXPECT_TRUE(absl::StrContains(ErrorOf(std::string("\0\0", 2)), "unexpected byte 0x00"));
}

TEST(Frontend, MissingFileIsNotFound) {
  auto r = ParseReproFile("/nonexistent/dir/x.py");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

// Hostile inputs finish quickly and fail cleanly: deep nesting, a very long
// chain of definitions, a huge list and megabytes of garbage.
TEST(Frontend, HugeInputsStayBoundedAndLinear) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(absl::StrContains(ErrorOf(std::string(100000, '(')), "nested deeper than"));
  EXPECT_TRUE(absl::StrContains(ErrorOf("x = " + std::string(200000, '-') + "1\n"),
                                "too many nested unary operators"));
  std::string chain = absl::StrCat(
      kHeader, "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n");
  const int n = 10000;
  for (int i = 0; i < n; ++i) absl::StrAppend(&chain, "    T", i + 1, " = fd.ops.neg(T", i, ")\n");
  absl::StrAppend(&chain, "    fd.add_output(T", n, ")\n");
  auto r = ParseReproScript(chain, "chain.py");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->graph.nodes.size(), static_cast<size_t>(n));
  // The same name rebound many times: fresh names must not be quadratic.
  std::string rebind = absl::StrCat(
      kHeader, "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n");
  for (int i = 0; i < n; ++i) absl::StrAppend(&rebind, "    T0 = fd.ops.neg(T0)\n");
  absl::StrAppend(&rebind, "    fd.add_output(T0)\n");
  r = ParseReproScript(rebind, "rebind.py");
  ASSERT_TRUE(r.ok()) << r.status();
  std::string big_list = "x = [";
  for (int i = 0; i < 300000; ++i) big_list += "1, ";
  big_list += "]\n";
  EXPECT_TRUE(absl::StrContains(ErrorOf(big_list), "a list of 300000 entries"));
  // A long list bound to a name and used many times is refused up front
  // rather than copied at every use.
  std::string many_uses = absl::StrCat(kHeader, "    x = [");
  for (int i = 0; i < 100; ++i) absl::StrAppend(&many_uses, "1, ");
  absl::StrAppend(&many_uses, "]\n");
  for (int i = 0; i < 100000; ++i) absl::StrAppend(&many_uses, "    y = x\n");
  EXPECT_TRUE(absl::StrContains(ErrorOf(many_uses), "t.py:5:9: a list of 100 entries"))
      << ErrorOf(many_uses);
  EXPECT_TRUE(
      absl::StrContains(ErrorOf(std::string((16 << 20) + 1, ' ')), "t.py:1:1: the script is"));
  std::string many_keywords = "f(";
  for (int i = 0; i < 200000; ++i) absl::StrAppend(&many_keywords, "k", i, "=1, ");
  EXPECT_TRUE(absl::StrContains(ErrorOf(many_keywords + ")\n"), "more than 256 arguments"));
  std::string garbage(2 << 20, 'a');
  for (size_t i = 0; i < garbage.size(); i += 7) garbage[i] = ' ';
  EXPECT_FALSE(ParseReproScript(garbage, "g.py").ok());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 60.0);  // about 1 s in a release build, 20 s under ASan
}

// Random corruption of a valid script never crashes and always gives either
// a valid graph or a located InvalidArgument.
TEST(Frontend, MutatedScriptsFailCleanly) {
  const std::string base = absl::StrCat(
      kHeader,
      "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], "
      "dtype=DataType.BFloat16)\n"
      "    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)\n"
      "    T2 = fd.ops.cast(T0, dtype=DataType.Float)\n"
      "    T3, T4 = fd.ops.var_mean(T2, dims=[1], correction=0, keepdim=False)\n"
      "    V5 = fd.define_vector([T0.size(0), 1], dtype=DataType.Int)\n"
      "    T6 = fd.ops.broadcast_in_dim(T4, shape=V5, broadcast_dims=[0])\n"
      "    S7 = fd.ops.reciprocal(T0.size(1))\n"
      "    T8 = fd.ops.mul(T6, S7)\n"
      "    T9 = fd.ops.broadcast_in_dim(T8, shape=T0.shape(), broadcast_dims=[0, 1])\n"
      "    T10 = fd.ops.sub(T2, T9)\n"
      "    T11 = fd.ops.broadcast_in_dim(fd.ops.cast(T1, dtype=DataType.Float), shape=T0.shape(), "
      "broadcast_dims=[1])\n"
      "    T12 = fd.ops.cast(fd.ops.mul(T10, T11), dtype=DataType.BFloat16)\n"
      "    fd.add_output(T12)\n",
      kFooter,
      "inputs = [\n"
      "    torch.randn((16, 32), dtype=torch.bfloat16, device='cuda:0'),\n"
      "    torch.rand((32,), dtype=torch.bfloat16, device='cuda:0') + 0.5,\n"
      "]\n");
  ASSERT_TRUE(ParseReproScript(base, "m.py").ok());
  std::mt19937 rng(1234);
  const std::string alphabet = "()[],.=:-+*#\"'\\ \n\t0123456789TSfdxyz_\x80\xff";
  int ok = 0, failed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          s.erase(pos, 1 + rng() % 8);
          break;
        case 2:
          s.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 3:
          s.resize(pos);
          break;
      }
      if (s.empty()) s = "x";
    }
    auto r = ParseReproScript(s, "m.py");
    if (r.ok()) {
      ++ok;
      EXPECT_TRUE(VerifyGraph(r->graph).ok());
    } else {
      ++failed;
      ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status() << "\n" << s;
      ASSERT_TRUE(absl::StartsWith(r.status().message(), "m.py:")) << r.status();
    }
  }
  EXPECT_GT(failed, 1000);
  EXPECT_GT(ok, 0);
}

// The same over every corpus script with line- and token-level edits too.
// FUSIOND_FUZZ_ITERATIONS / FUSIOND_FUZZ_SEED give longer or other runs (e.g.
// under ASan).
TEST(Frontend, MutatedCorpusScriptsFailCleanly) {
  std::vector<std::string> bases;
  for (const char* name : {"batchnorm_bwd_thunder.py", "layernorm_fwd.py", "rmsnorm_bwd_manual.py",
                           "softmax_bwd.py", "bias_gelu_fwd.py"}) {
    std::ifstream in(std::string(FUSIOND_CORPUS_DIR) + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_FALSE(text.str().empty()) << name;
    bases.push_back(text.str());
  }
  const char* snippets[] = {"fd.ops.",
                            "DataType.Null",
                            "-1",
                            "1 << 62",
                            "[",
                            "]",
                            "(",
                            ")",
                            ",",
                            "=",
                            "T0",
                            "inputs = [",
                            "\"",
                            "'''",
                            "\\\n",
                            "**",
                            "def f(fd):\n",
                            "T0.size(7)",
                            "T0.shape()",
                            "0.0",
                            "True",
                            "None",
                            "\n",
                            "    ",
                            "fd.add_output(S19)\n",
                            "99999999999999999999",
                            "\xc3\xa9",
                            "#"};
  int iterations = 2000;
  if (const char* env = std::getenv("FUSIOND_FUZZ_ITERATIONS")) iterations = std::atoi(env);
  unsigned seed = 99;
  if (const char* env = std::getenv("FUSIOND_FUZZ_SEED"))
    seed = static_cast<unsigned>(std::atoi(env));
  std::mt19937 rng(seed);
  int failed = 0;
  for (int iter = 0; iter < iterations; ++iter) {
    std::string s = bases[rng() % bases.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t pos = rng() % s.size();
      switch (rng() % 5) {
        case 0:
          s.insert(pos, snippets[rng() % (sizeof(snippets) / sizeof(snippets[0]))]);
          break;
        case 1:
          s.erase(pos, 1 + rng() % 16);
          break;
        case 2:
          s[pos] = static_cast<char>(rng() % 256);
          break;
        case 3: {  // duplicate a line
          const size_t start = s.rfind('\n', pos);
          const size_t end = s.find('\n', pos);
          const size_t b = start == std::string::npos ? 0 : start + 1;
          if (end != std::string::npos) s.insert(b, s.substr(b, end - b + 1));
          break;
        }
        case 4: {  // delete a line
          const size_t start = s.rfind('\n', pos);
          const size_t end = s.find('\n', pos);
          const size_t b = start == std::string::npos ? 0 : start + 1;
          s.erase(b, end == std::string::npos ? std::string::npos : end - b + 1);
          break;
        }
      }
    }
    auto r = ParseReproScript(s, "c.py");
    if (r.ok()) {
      ASSERT_TRUE(VerifyGraph(r->graph).ok());
    } else {
      ++failed;
      ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status() << "\n" << s;
      ASSERT_TRUE(absl::StartsWith(r.status().message(), "c.py:")) << r.status();
    }
  }
  EXPECT_GT(failed, iterations / 3);
}

}  // namespace
}  // namespace fusiond
