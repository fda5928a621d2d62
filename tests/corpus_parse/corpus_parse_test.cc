#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/binding.h"
#include "compiler/ir/ir_proto.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/verifier.h"

namespace fusiond {
namespace {

std::vector<std::string> Scripts(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".py") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Parses, verifies, round-trips and checks the inputs of one script.
void CheckScript(const std::string& path) {
  SCOPED_TRACE(path);
  auto parsed = ParseReproFile(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Graph& g = parsed->graph;
  ASSERT_TRUE(VerifyGraph(g).ok()) << VerifyGraph(g);
  EXPECT_FALSE(g.outputs.empty());

  // Wire format: graph -> bytes -> graph prints the same and re-encodes to
  // the same bytes.
  std::string bytes;
  ASSERT_TRUE(ToProto(g).SerializeToString(&bytes));
  fusiond::v1::FusionGraph decoded;
  ASSERT_TRUE(decoded.ParseFromString(bytes));
  auto back = FromProto(decoded);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(PrintGraph(*back), PrintGraph(g));
  std::string again;
  ASSERT_TRUE(ToProto(*back).SerializeToString(&again));
  EXPECT_EQ(again, bytes);

  // Input shapes: one per graph input, equal to the inputs list, and they
  // bind the definition's size symbols.
  ASSERT_EQ(parsed->inputs.size(), g.inputs.size()) << "every script has an inputs list";
  ASSERT_EQ(parsed->input_shapes.size(), g.inputs.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const InputSpec& spec = parsed->inputs[i];
    const Value& v = g.value(g.inputs[i]);
    if (!v.is_tensor) {
      EXPECT_TRUE(parsed->input_shapes[i].empty());
      continue;
    }
    EXPECT_EQ(parsed->input_shapes[i], spec.shape) << "input " << i;
    EXPECT_EQ(spec.dtype, v.dtype) << "input " << i;
    EXPECT_EQ(static_cast<int>(spec.shape.size()), v.rank()) << "input " << i;
  }
  auto binding = BindShapes(g, parsed->input_shapes);
  EXPECT_TRUE(binding.ok()) << binding.status();
}

TEST(CorpusParse, EveryCorpusScript) {
  const std::vector<std::string> scripts = Scripts(FUSIOND_CORPUS_DIR);
  ASSERT_GE(scripts.size(), 9u) << "corpus not found at " << FUSIOND_CORPUS_DIR;
  for (const std::string& path : scripts) CheckScript(path);
}

TEST(CorpusParse, EveryExample) {
  const std::vector<std::string> scripts = Scripts(FUSIOND_EXAMPLES_DIR);
  ASSERT_GE(scripts.size(), 2u) << "examples not found at " << FUSIOND_EXAMPLES_DIR;
  for (const std::string& path : scripts) CheckScript(path);
}

// What the corpus README says about each file: inputs, outputs, and the
// shape the inputs list gives (so a parser that drops a statement or
// misreads the list fails here).
TEST(CorpusParse, CountsAndShapesMatchTheReadme) {
  struct Expect {
    size_t inputs, outputs;
    std::vector<int64_t> first_shape;
    DataType first_dtype;
  };
  const std::map<std::string, Expect> expected = {
      {"batchnorm_bwd_thunder.py", {5, 3, {16, 128, 768}, DataType::kBFloat16}},
      {"bias_gelu_fwd.py", {2, 1, {8192, 8192}, DataType::kBFloat16}},
      {"layernorm_bwd_thunder.py", {5, 3, {2048, 8192}, DataType::kBFloat16}},
      {"layernorm_fwd.py", {3, 3, {2048, 8192}, DataType::kBFloat16}},
      {"rmsnorm_bwd_manual.py", {4, 2, {2048, 8192}, DataType::kBFloat16}},
      {"rmsnorm_bwd_thunder.py", {4, 2, {8192}, DataType::kBFloat16}},
      {"rmsnorm_fwd.py", {2, 2, {2048, 8192}, DataType::kBFloat16}},
      {"softmax_bwd.py", {2, 1, {4096, 16384}, DataType::kBFloat16}},
      {"softmax_fwd.py", {1, 1, {4096, 16384}, DataType::kBFloat16}},
  };
  for (const auto& [name, want] : expected) {
    SCOPED_TRACE(name);
    auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/" + name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->graph.inputs.size(), want.inputs);
    EXPECT_EQ(parsed->graph.outputs.size(), want.outputs);
    ASSERT_FALSE(parsed->input_shapes.empty());
    EXPECT_EQ(parsed->input_shapes[0], want.first_shape);
    EXPECT_EQ(parsed->graph.value(parsed->graph.inputs[0]).dtype, want.first_dtype);
  }
}

TEST(CorpusParse, GeneratorsOfTheInputsLists) {
  auto rms = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/rmsnorm_bwd_manual.py");
  ASSERT_TRUE(rms.ok()) << rms.status();
  EXPECT_EQ(rms->inputs[1].generator, "rand");
  EXPECT_DOUBLE_EQ(rms->inputs[1].offset, 0.5);
  auto sm = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/softmax_bwd.py");
  ASSERT_TRUE(sm.ok()) << sm.status();
  EXPECT_EQ(sm->inputs[0].generator, "softmax");
  EXPECT_EQ(sm->inputs[0].softmax_dim, -1);
  EXPECT_EQ(sm->inputs[0].dtype, DataType::kBFloat16);
}

}  // namespace
}  // namespace fusiond
