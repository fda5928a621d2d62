// For every corpus file: parse it with the front end, evaluate it on the
// reference with seeded inputs, and compare every output with the closed
// form in closed_forms.cc (relative error 1e-2, see MaxRelativeError).
// Symbolic definitions run at reduced shapes (and an odd-sized one);
// static ones at their declared sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/verifier.h"
#include "compiler/reference/reference.h"
#include "tests/corpus/closed_forms.h"
#include "tests/corpus/corpus_inputs.h"

namespace fusiond {
namespace {

using Shapes = std::vector<std::vector<int64_t>>;

struct CorpusCase {
  std::string file;
  std::function<corpus::Tensors(const corpus::Tensors&)> closed_form;
  // Shape sets to run; empty: the file's declared input shapes.
  std::vector<Shapes> shape_sets;
  // Inputs that must be real softmax rows.
  std::vector<int> softmax_inputs;
};

std::string CorpusDir() { return FUSIOND_CORPUS_DIR; }

// [M, N] and [N] shaped inputs at two reduced sizes.
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

std::vector<CorpusCase> Cases() {
  return {
      {"rmsnorm_bwd_thunder.py", corpus::RmsNormBackwardThunder, {}, {}},
      {"rmsnorm_bwd_manual.py",
       corpus::RmsNormBackwardManual,
       RowShapes({{'M', 'N'}, {'M', '1'}, {'M', 'N'}, {'N'}}),
       {}},
      {"layernorm_bwd_thunder.py", corpus::LayerNormBackwardThunder, {}, {}},
      {"batchnorm_bwd_thunder.py", corpus::BatchNormBackwardThunder, {}, {}},
      {"layernorm_fwd.py", corpus::LayerNormForward, RowShapes({{'M', 'N'}, {'N'}, {'N'}}), {}},
      {"rmsnorm_fwd.py", corpus::RmsNormForward, RowShapes({{'M', 'N'}, {'N'}}), {}},
      {"softmax_fwd.py", corpus::SoftmaxForward, RowShapes({{'M', 'N'}}), {}},
      {"softmax_bwd.py", corpus::SoftmaxBackward, RowShapes({{'M', 'N'}, {'M', 'N'}}), {0}},
      {"bias_gelu_fwd.py", corpus::BiasGeluForward, RowShapes({{'M', 'N'}, {'N'}}), {}},
  };
}

class CorpusClosedForm : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(CorpusClosedForm, ReferenceMatchesClosedForm) {
  const CorpusCase& c = GetParam();
  auto parsed = ParseReproFile(CorpusDir() + "/" + c.file);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(VerifyGraph(parsed->graph).ok()) << VerifyGraph(parsed->graph);
  std::vector<Shapes> sets = c.shape_sets;
  if (sets.empty()) {
    ASSERT_FALSE(parsed->input_shapes.empty()) << c.file << " declares no shapes";
    sets.push_back(parsed->input_shapes);
  }
  for (size_t s = 0; s < sets.size(); ++s) {
    SCOPED_TRACE(::testing::Message() << c.file << " shape set " << s);
    const auto start = std::chrono::steady_clock::now();
    auto inputs = corpus::MakeCorpusInputs(parsed->graph, parsed->inputs, sets[s], 1234 + s,
                                           c.softmax_inputs);
    auto ref = Evaluate(parsed->graph, inputs);
    ASSERT_TRUE(ref.ok()) << ref.status();
    const double eval_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    corpus::Tensors want = c.closed_form(inputs);
    ASSERT_EQ(ref->size(), want.size());
    // The same closed form on other inputs (each input's values in reverse
    // order: same distributions, other pairings) must be far off; this shows
    // the comparison can fail.
    corpus::Tensors reversed = inputs;
    for (HostTensor& t : reversed) std::reverse(t.data.begin(), t.data.end());
    corpus::Tensors other = c.closed_form(reversed);
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ((*ref)[k].shape, want[k].shape) << "output " << k;
      EXPECT_EQ((*ref)[k].dtype, want[k].dtype) << "output " << k;
      const double err = MaxRelativeError((*ref)[k], want[k]);
      EXPECT_LE(err, 1e-2) << "output " << k;
      EXPECT_GT(MaxRelativeError((*ref)[k], other[k]), 1e-2) << "output " << k;
      std::cout << c.file << " set " << s << " output " << k << ": error " << err << "\n";
    }
    std::cout << c.file << " set " << s << ": inputs + reference " << eval_s << " s\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusClosedForm, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<CorpusCase>& info) {
                           std::string n = info.param.file.substr(0, info.param.file.size() - 3);
                           return n;
                         });

// Every corpus file (every *.py in the corpus folder) has a closed form
// here and parses.
TEST(Corpus, EveryFileHasAClosedForm) {
  std::set<std::string> covered, files;
  for (const CorpusCase& c : Cases()) covered.insert(c.file);
  for (const auto& e : std::filesystem::directory_iterator(CorpusDir())) {
    if (e.path().extension() == ".py") files.insert(e.path().filename().string());
  }
  EXPECT_EQ(files.size(), 9u);
  EXPECT_EQ(covered, files);
  for (const std::string& f : files) {
    EXPECT_TRUE(ParseReproFile(CorpusDir() + "/" + f).ok()) << f;
  }
}

}  // namespace
}  // namespace fusiond
