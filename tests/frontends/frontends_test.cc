// Definitions as real front ends print them for common training models
// (tests/frontends/fusions/*.py, nvFuser's repro form), each with its
// expected outcome in a `# expect:` line:
//   compiles      - parses, compiles through the whole pipeline at its
//                   inputs list's sizes (NVRTC too, when this build has it),
//                   and at small sizes the optimized graph cut into the
//                   segments the kernels are made from, each evaluated by the
//                   CPU reference in turn, gives the reference's outputs of
//                   the definition as written (the GPU checks' tolerance);
//   refused OP    - out of scope: refused with InvalidArgument or
//                   Unimplemented naming OP;
//   pending OP    - being built: either refused naming OP (not an internal
//                   error of another kind) or compiles and checks as above.
// Small sizes: every integer literal of the script that is a multiple of 16
// and at least 128 divided by 16, or the map of a `# small: A->B, ...` line
// (for shapes whose factors must stay related, such as slices and reshapes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/reference/reference.h"
#include "tests/corpus/corpus_inputs.h"
#include "tests/corpus/output_check.h"
#include "tests/frontends/small_sizes.h"

namespace fusiond {
namespace {

struct Expectation {
  std::string kind;                          // "compiles", "refused", "pending"
  std::string op;                            // the op a refusal names
  std::map<std::string, std::string> small;  // `# small:` literal map (empty: the rule)
};

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> FusionStems() {
  std::vector<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(FUSIOND_FRONTENDS_FUSIONS_DIR)) {
    if (e.path().extension() == ".py") stems.push_back(e.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

std::string PathOf(const std::string& stem) {
  return absl::StrCat(FUSIOND_FRONTENDS_FUSIONS_DIR, "/", stem, ".py");
}

// A definition file through the pipeline, without code generation.
absl::StatusOr<CompileResult> CompileWithoutCode(const std::string& stem) {
  auto p = ParseReproFile(PathOf(stem));
  if (!p.ok()) return p.status();
  CompileOptions options;
  options.generate_code = false;
  return CompileFusion(p->graph, p->input_shapes, options);
}

// The `# expect:` and `# small:` lines; kind stays empty without an expect line.
Expectation ReadExpectation(const std::string& text) {
  Expectation x;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "# expect:")) {
      std::vector<std::string> words =
          absl::StrSplit(absl::StripAsciiWhitespace(line), ' ', absl::SkipEmpty());
      if (!words.empty()) x.kind = words[0];
      if (words.size() > 1) x.op = words[1];
    }
  }
  x.small = SmallSizesMap(text);
  return x;
}

// Inputs for a parsed script: its inputs list's generators at its shapes,
// scalar inputs at their listed values.
std::vector<HostTensor> ListedInputs(const ParsedFusion& p) {
  std::vector<HostTensor> in = corpus::MakeCorpusInputs(p.graph, p.inputs, p.input_shapes, 34);
  for (size_t i = 0; i < in.size() && i < p.inputs.size(); ++i) {
    if (!p.graph.value(p.graph.inputs[i]).is_tensor) in[i].data = {p.inputs[i].value};
  }
  return in;
}

// At small sizes: the reference's outputs of the definition against the
// outputs of the compiled fusion's segments evaluated one after another.
void CheckSegmentsAgainstReference(const std::string& text, const Expectation& x,
                                   const std::string& stem) {
  const std::string small_text = ShrinkToSmallSizes(text, x.small);
  auto p = ParseReproScript(small_text, stem + ".small.py");
  ASSERT_TRUE(p.ok()) << "the small form does not parse (add a `# small:` line): " << p.status();
  ASSERT_EQ(p->input_shapes.size(), p->graph.inputs.size());
  const std::vector<HostTensor> in = ListedInputs(*p);
  auto want = Evaluate(p->graph, in);
  ASSERT_TRUE(want.ok()) << want.status();
  CompileOptions options;
  options.generate_code = false;
  auto compiled = CompileFusion(p->graph, p->input_shapes, options);
  ASSERT_TRUE(compiled.ok()) << "small sizes: " << compiled.status();
  const Graph& g = compiled->optimized;
  ASSERT_EQ(g.inputs.size(), in.size());
  std::map<ValueId, HostTensor> env;
  for (size_t i = 0; i < in.size(); ++i) env[g.inputs[i]] = in[i];
  for (size_t k = 0; k < compiled->segments.size(); ++k) {
    const SegmentResult& s = compiled->segments[k];
    std::vector<HostTensor> ins;
    for (ValueId v : s.source_inputs) {
      ASSERT_TRUE(env.count(v)) << "segment " << k << " reads " << ValueName(g, v)
                                << " before any segment made it";
      ins.push_back(env.at(v));
    }
    auto outs = Evaluate(s.graph, ins);
    ASSERT_TRUE(outs.ok()) << "segment " << k << ": " << outs.status() << "\n"
                           << PrintGraph(s.graph);
    ASSERT_EQ(outs->size(), s.source_outputs.size());
    for (size_t j = 0; j < outs->size(); ++j) env[s.source_outputs[j]] = (*outs)[j];
  }
  ASSERT_EQ(g.outputs.size(), want->size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    ASSERT_TRUE(env.count(g.outputs[i])) << "output " << i << " is made by no segment";
    const corpus::OutputVerdict v = corpus::CheckOutput(env.at(g.outputs[i]), (*want)[i]);
    EXPECT_TRUE(v.pass) << "output " << i << ": " << v.why;
  }
}

// A refusal: InvalidArgument or Unimplemented whose message names the op.
void ExpectRefusalNaming(const absl::Status& s, const std::string& op, const std::string& stage) {
  EXPECT_TRUE(absl::StrContains(s.message(), op))
      << stage << " refused without naming " << op << ": " << s;
  EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument ||
              s.code() == absl::StatusCode::kUnimplemented)
      << stage << ": " << s;
}

class FrontendDefinition : public ::testing::TestWithParam<std::string> {};

TEST_P(FrontendDefinition, MeetsItsExpectation) {
  const std::string stem = GetParam();
  const std::string text = ReadFile(PathOf(stem));
  const Expectation x = ReadExpectation(text);
  ASSERT_TRUE(x.kind == "compiles" || x.kind == "refused" || x.kind == "pending")
      << stem << ": no `# expect: compiles | refused OP | pending OP` line";
  ASSERT_TRUE(x.kind == "compiles" || !x.op.empty()) << stem << ": the expect line names no op";
  auto p = ParseReproScript(text, stem + ".py");
  if (!p.ok()) {
    ASSERT_NE(x.kind, "compiles") << p.status();
    ExpectRefusalNaming(p.status(), x.op, "the front end");
    return;
  }
  ASSERT_FALSE(p->input_shapes.empty()) << "no inputs list with concrete sizes";
  CompileOptions options;
  options.generate_code = NvrtcVersion() != "none";
  auto compiled = CompileFusion(p->graph, p->input_shapes, options);
  if (!compiled.ok()) {
    ASSERT_NE(x.kind, "compiles") << compiled.status() << "\n" << PrintGraph(p->graph);
    // Pending ops may still be refused by a stage that lacks them; that
    // stage's internal "not generated yet" is the one accepted exception.
    if (x.kind == "pending" && compiled.status().code() == absl::StatusCode::kInternal) {
      EXPECT_TRUE(absl::StrContains(compiled.status().message(), x.op + " are not generated yet"))
          << compiled.status();
      return;
    }
    ExpectRefusalNaming(compiled.status(), x.op, "the compiler");
    return;
  }
  ASSERT_NE(x.kind, "refused") << "out-of-scope " << x.op << " compiled";
  std::string kinds;
  for (const SegmentResult& s : compiled->segments) {
    kinds += absl::StrCat(kinds.empty() ? "" : ", ", SchedulerName(s.kind));
    if (!options.generate_code) continue;
    ASSERT_TRUE(s.kernel.has_value());
    EXPECT_FALSE(s.kernel->binary.empty());
  }
  RecordProperty("kernels", kinds);
  CheckSegmentsAgainstReference(text, x, stem);
}

INSTANTIATE_TEST_SUITE_P(Fusions, FrontendDefinition, ::testing::ValuesIn(FusionStems()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Whole-tensor reductions (fp8 amax, AMP's found_inf, a mean loss) share
// their one row among the SMs instead of leaving it to one block.
TEST(FrontendDefinitions, WholeTensorReductionsSplitOverBlocks) {
  for (const char* stem :
       {"fp8_amax_scale_cast_e4m3", "amp_unscale_found_inf", "mse_loss_fwd_bwd"}) {
    SCOPED_TRACE(stem);
    auto compiled = CompileWithoutCode(stem);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    ASSERT_EQ(compiled->segments.size(), 1u);
    const HeuristicParams& hp = compiled->segments[0].params;
    EXPECT_EQ(hp.outer_size, 1);
    EXPECT_GE(hp.grid_x * hp.grid_y, 64) << hp.ToString();
  }
}

// Masks built from iotas (causal, sliding window, ALiBi) compare the same
// iota broadcast along rows and along columns; a kernel computes an iota
// from the one axis it lies on, so each broadcast must read its own copy
// (compiler/passes/index_copies.h), or both sides read the same index.
TEST(FrontendDefinitions, IotasBroadcastAlongTwoAxesAreCopied) {
  for (const char* stem : {"attn_causal_softmax_fwd", "mistral_sliding_window_causal_mask",
                           "alibi_bias_broadcast_expand_softmax"}) {
    SCOPED_TRACE(stem);
    auto compiled = CompileWithoutCode(stem);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    const Graph& g = compiled->optimized;
    const auto uses = g.Uses();
    int iotas = 0;
    for (const Node& n : g.nodes) {
      if (n.op != OpKind::kIota) continue;
      ++iotas;
      EXPECT_EQ(uses[n.outputs[0]].size(), 1u) << PrintGraph(g);
    }
    EXPECT_GE(iotas, 2);
    // Operands broadcast along their extent-1 axes ([H, 1, 1] * [1, S, S])
    // are placed from the result: no kernel boundary at the bias.
    EXPECT_EQ(compiled->segments.size(), 1u);
  }
}

// A permute is index remapping: the attention heads transposed on their way
// out of a pointwise or a norm fusion stay one kernel.
TEST(FrontendDefinitions, PermutesStayInOneKernel) {
  for (const auto& [stem, kind] :
       {std::pair<const char*, SchedulerKind>{"attn_out_transpose_heads_bf16",
                                              SchedulerKind::kPointwise},
        {"qk_rmsnorm_reshape_permute_heads", SchedulerKind::kInnerPersistent}}) {
    SCOPED_TRACE(stem);
    auto compiled = CompileWithoutCode(stem);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    ASSERT_EQ(compiled->segments.size(), 1u);
    EXPECT_EQ(compiled->segments[0].kind, kind);
  }
}

// x + x^T on a square x: the permuted operand has x's shape, so shapes
// alone would put both reads of x on the same axes (2x). Such a kernel is
// refused, or the permute is computed by a kernel of its own.
TEST(FrontendDefinitions, AValueAndItsPermuteAreNotReadInOneLayout) {
  auto p = ParseReproScript(
      "def f(fd : FusionDefinition) -> None :\n"
      "    T0 = fd.define_tensor(shape=[64, 64], contiguity=[True, True], "
      "dtype=DataType.Float)\n"
      "    T1 = fd.ops.permute(T0, dims=[1, 0])\n"
      "    fd.add_output(fd.ops.add(T0, T1))\n",
      "xt.py");
  ASSERT_TRUE(p.ok()) << p.status();
  CompileOptions options;
  options.generate_code = false;
  auto compiled = CompileFusion(p->graph, {{64, 64}}, options);
  if (compiled.ok()) {
    EXPECT_GE(compiled->segments.size(), 2u);
  } else {
    EXPECT_TRUE(absl::StrContains(compiled.status().message(), "two layouts")) << compiled.status();
  }
}

// |x[:, None] - x[None, :]|: one input broadcast along two axes in one
// expression. Refused naming the broadcast and why (it reached code
// generation's "two axes fall on reference axis" before), or, once
// supported, compiled to more than a copy of one layout.
TEST(FrontendDefinitions, AnInputBroadcastAlongTwoAxesIsRefusedByName) {
  auto p = ParseReproScript(
      "def f(fd : FusionDefinition) -> None :\n"
      "    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)\n"
      "    T1 = fd.ops.broadcast_in_dim(T0, shape=[T0.size(0), 1], broadcast_dims=[0])\n"
      "    T2 = fd.ops.broadcast_in_dim(T0, shape=[1, T0.size(0)], broadcast_dims=[1])\n"
      "    fd.add_output(fd.ops.sub(T1, T2))\n",
      "pair.py");
  ASSERT_TRUE(p.ok()) << p.status();
  CompileOptions options;
  options.generate_code = false;
  auto compiled = CompileFusion(p->graph, {{64}}, options);
  if (compiled.ok()) {
    EXPECT_GE(compiled->segments.size(), 2u);
    return;
  }
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument) << compiled.status();
  for (const char* what : {"broadcast_in_dim(T0)", "two axes", "not supported"}) {
    EXPECT_TRUE(absl::StrContains(compiled.status().message(), what)) << compiled.status();
  }
}

// The sweep covers what the issue asks for: enough definitions, and every
// one with an expectation the test above can hold it to.
TEST(FrontendDefinitions, SweepIsComplete) {
  const std::vector<std::string> stems = FusionStems();
  EXPECT_GE(stems.size(), 25u);
  int refused = 0;
  for (const std::string& stem : stems) {
    const Expectation x = ReadExpectation(ReadFile(PathOf(stem)));
    EXPECT_FALSE(x.kind.empty()) << stem;
    refused += x.kind == "refused";
  }
  EXPECT_GE(refused, 1);
}

}  // namespace
}  // namespace fusiond
