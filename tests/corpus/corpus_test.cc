// For every corpus file: parse it with the front end, evaluate it on the
// reference with seeded inputs, and compare every output with the closed
// form in closed_forms.cc (written from the math, not from the ops): the
// same dtype and shape, and corpus::CheckOutput's limits (bf16 2e-2, fp32
// 1e-4, per element). Symbolic definitions run at reduced shapes (and an
// odd-sized one); static ones at their declared sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/verifier.h"
#include "compiler/reference/reference.h"
#include "tests/corpus/closed_forms.h"
#include "tests/corpus/corpus_inputs.h"
#include "tests/corpus/output_check.h"

namespace fusiond {
namespace corpus {

// Test names show the file, not the bytes.
void PrintTo(const ClosedFormCase& c, std::ostream* os) { *os << c.file; }

}  // namespace corpus

namespace {

using corpus::ClosedFormCase;
using corpus::Shapes;

std::string CorpusDir() { return FUSIOND_CORPUS_DIR; }

class CorpusClosedForm : public ::testing::TestWithParam<ClosedFormCase> {};

TEST_P(CorpusClosedForm, ReferenceMatchesClosedForm) {
  const ClosedFormCase& c = GetParam();
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
      const corpus::OutputVerdict v = corpus::CheckOutput((*ref)[k], want[k]);
      EXPECT_TRUE(v.pass) << "output " << k << ": " << v.why;
      EXPECT_FALSE(corpus::CheckOutput((*ref)[k], other[k]).pass) << "output " << k;
      std::cout << c.file << " set " << s << " output " << k << " " << DataTypeName(want[k].dtype)
                << ": error " << v.error << " (limit " << v.limit << ")\n";
    }
    std::cout << c.file << " set " << s << ": inputs + reference " << eval_s << " s\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusClosedForm, ::testing::ValuesIn(corpus::ClosedFormCases()),
                         [](const ::testing::TestParamInfo<ClosedFormCase>& info) {
                           return info.param.file.substr(0, info.param.file.size() - 3);
                         });

// Every corpus file (every *.py in the corpus folder) has a closed form
// here and parses.
TEST(Corpus, EveryFileHasAClosedForm) {
  std::set<std::string> covered, files;
  for (const ClosedFormCase& c : corpus::ClosedFormCases()) covered.insert(c.file);
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
