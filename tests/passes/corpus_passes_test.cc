// The corpus (tests/corpus/fusions/*.py) through the passes and the pipeline:
// (a) after the passes no graph has pow with an integer exponent, a no-op
//     cast or a lossless cast chain, and every pass preserves the reference
//     results (at reduced sizes);
// (c) canonical hashes ignore names and the order of independent lines;
// (d) every file compiles to exactly one segment with the README's scheduler;
// (e) both rmsnorm backward definitions get identical heuristic parameters.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "compiler/frontend/frontend.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/canonical.h"
#include "compiler/pipeline.h"
#include "tests/corpus/corpus_inputs.h"
#include "tests/passes/pass_check.h"

namespace fusiond {
namespace {

std::string ReadCorpus(const std::string& file) {
  std::ifstream f(std::string(FUSIOND_CORPUS_DIR) + "/" + file);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The README table.
const std::map<std::string, SchedulerKind>& Expected() {
  static const auto* table = new std::map<std::string, SchedulerKind>{
      {"rmsnorm_bwd_thunder.py", SchedulerKind::kInnerOuterPersistent},
      {"rmsnorm_bwd_manual.py", SchedulerKind::kInnerOuterPersistent},
      {"layernorm_bwd_thunder.py", SchedulerKind::kInnerOuterPersistent},
      {"batchnorm_bwd_thunder.py", SchedulerKind::kOuterPersistent},
      {"layernorm_fwd.py", SchedulerKind::kInnerPersistent},
      {"rmsnorm_fwd.py", SchedulerKind::kInnerPersistent},
      {"softmax_fwd.py", SchedulerKind::kInnerPersistent},
      {"softmax_bwd.py", SchedulerKind::kInnerPersistent},
      {"bias_gelu_fwd.py", SchedulerKind::kPointwise},
  };
  return *table;
}

ParsedFusion Parse(const std::string& text, const std::string& name) {
  auto p = ParseReproScript(text, name);
  EXPECT_TRUE(p.ok()) << name << ": " << p.status();
  return p.ok() ? *std::move(p) : ParsedFusion{};
}

// The script with every whole number token in `sizes` replaced (one pass,
// so 8192 -> 128 and 128 -> 8 do not chain): the same definition at
// reduced sizes, for the reference.
std::string Shrink(const std::string& text) {
  static const std::map<std::string, std::string> sizes = {
      {"2048", "48"}, {"4096", "40"}, {"8192", "96"}, {"16384", "72"}, {"768", "24"}, {"128", "8"}};
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) &&
        (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])))) {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      std::string tok = text.substr(i, j - i);
      bool whole = j == text.size() || !std::isalnum(static_cast<unsigned char>(text[j]));
      auto it = sizes.find(tok);
      out += whole && it != sizes.end() ? it->second : tok;
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

class CorpusPasses : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusPasses, NoForbiddenPatternsAfterThePasses) {
  ParsedFusion f = Parse(ReadCorpus(GetParam()), GetParam());
  CompileOptions options;
  options.generate_code = false;  // passes and schedules only
  auto r = CompileFusion(f.graph, f.input_shapes, options);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> found = ForbiddenPatterns(r->optimized);
  EXPECT_TRUE(found.empty()) << found.front() << "\n" << PrintGraph(r->optimized);
  // The check itself sees them in the unoptimized corpus.
  if (GetParam() == "batchnorm_bwd_thunder.py" || GetParam() == "bias_gelu_fwd.py") {
    EXPECT_FALSE(ForbiddenPatterns(f.graph).empty());
  }
}

TEST_P(CorpusPasses, EveryPassPreservesTheReferenceResults) {
  ParsedFusion f = Parse(Shrink(ReadCorpus(GetParam())), GetParam());
  ASSERT_FALSE(f.input_shapes.empty());
  for (int64_t n : f.input_shapes[0]) EXPECT_LT(n, 100) << "the sizes did not shrink";
  for (uint64_t seed : {1, 2}) {
    auto inputs = corpus::MakeCorpusInputs(f.graph, f.inputs, f.input_shapes, seed);
    EXPECT_EQ(CheckPassesPreserve(f.graph, inputs), "") << GetParam();
  }
}

TEST_P(CorpusPasses, OneSegmentWithTheReadmeScheduler) {
  ParsedFusion f = Parse(ReadCorpus(GetParam()), GetParam());
  for (const char* arch : {"sm_80", "sm_90", "sm_100"}) {
    CompileOptions options;
    options.generate_code = false;  // passes and schedules only
    options.arch = arch;
    auto r = CompileFusion(f.graph, f.input_shapes, options);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->segments.size(), 1u) << GetParam() << " " << arch;
    EXPECT_EQ(r->segments[0].kind, Expected().at(GetParam()))
        << GetParam() << ": got " << SchedulerName(r->segments[0].kind) << " because "
        << r->segments[0].scheduler_reason;
    EXPECT_EQ(r->segments[0].params.kind, r->segments[0].kind);
    EXPECT_FALSE(r->segments[0].scheduler_reason.empty());
    std::string json = CompileResultToJson(*r);
    for (const char* key : {"\"segments\":[{\"scheduler\":", "\"heuristics\":{",
                            "\"canonical_hash\":", "\"passes\":["}) {
      EXPECT_NE(json.find(key), std::string::npos) << key;
    }
  }
}

TEST_P(CorpusPasses, CanonicalHashIgnoresNamesAndIndependentOrder) {
  const std::string text = ReadCorpus(GetParam());
  // Rename every T<n> / S<n> / V<n> to X<n> / Y<n> / Z<n>.
  std::string renamed;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool starts = (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))) &&
                  i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]));
    if (starts && (c == 'T' || c == 'S' || c == 'V')) c = c == 'T' ? 'X' : c == 'S' ? 'Y' : 'Z';
    renamed += c;
  }
  ParsedFusion a = Parse(text, GetParam());
  ParsedFusion b = Parse(renamed, GetParam());
  EXPECT_NE(PrintGraph(a.graph), PrintGraph(b.graph));
  EXPECT_EQ(CanonicalHash(a.graph), CanonicalHash(b.graph));
  CompileOptions options;
  options.generate_code = false;  // passes and schedules only
  auto ra = CompileFusion(a.graph, a.input_shapes, options);
  auto rb = CompileFusion(b.graph, b.input_shapes, options);
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(ra->canonical_hash, rb->canonical_hash);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusPasses,
                         ::testing::Values("rmsnorm_bwd_thunder.py", "rmsnorm_bwd_manual.py",
                                           "layernorm_bwd_thunder.py", "batchnorm_bwd_thunder.py",
                                           "layernorm_fwd.py", "rmsnorm_fwd.py", "softmax_fwd.py",
                                           "softmax_bwd.py", "bias_gelu_fwd.py"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

TEST(CanonicalHash, IndependentDefinitionsInAnotherOrder) {
  // Two independent lines of softmax_bwd swapped (the two input casts).
  const std::string text = ReadCorpus("softmax_bwd.py");
  const std::string l1 = "    T2 = fd.ops.cast(T0, dtype=DataType.Float)\n";
  const std::string l2 = "    T3 = fd.ops.cast(T1, dtype=DataType.Float)\n";
  size_t p = text.find(l1 + l2);
  ASSERT_NE(p, std::string::npos);
  std::string swapped = text;
  swapped.replace(p, l1.size() + l2.size(), l2 + l1);
  Graph a = Parse(text, "a").graph, b = Parse(swapped, "b").graph;
  EXPECT_NE(PrintGraph(a), PrintGraph(b));
  EXPECT_EQ(CanonicalHash(a), CanonicalHash(b));
  EXPECT_EQ(PrintGraph(CanonicalForm(a)), PrintGraph(CanonicalForm(b)));
  // And a different function hashes differently.
  EXPECT_NE(CanonicalHash(a), CanonicalHash(Parse(ReadCorpus("softmax_fwd.py"), "c").graph));
  EXPECT_NE(CanonicalHash(Parse(ReadCorpus("rmsnorm_bwd_thunder.py"), "d").graph),
            CanonicalHash(Parse(ReadCorpus("rmsnorm_bwd_manual.py"), "e").graph));
}

TEST(RmsNormBackward, ThunderAndManualGetIdenticalHeuristics) {
  ParsedFusion thunder = Parse(ReadCorpus("rmsnorm_bwd_thunder.py"), "thunder");
  ParsedFusion manual = Parse(ReadCorpus("rmsnorm_bwd_manual.py"), "manual");
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100"}) {
    CompileOptions options;
    options.generate_code = false;  // passes and schedules only
    options.arch = arch;
    auto t = CompileFusion(thunder.graph, thunder.input_shapes, options);
    auto m = CompileFusion(manual.graph, manual.input_shapes, options);
    ASSERT_TRUE(t.ok() && m.ok());
    ASSERT_EQ(t->segments.size(), 1u);
    ASSERT_EQ(m->segments.size(), 1u);
    EXPECT_EQ(t->segments[0].kind, m->segments[0].kind);
    EXPECT_EQ(t->segments[0].params.ToString(), m->segments[0].params.ToString()) << arch;
    EXPECT_EQ(t->segments[0].params.Hash(), m->segments[0].params.Hash()) << arch;
    EXPECT_TRUE(t->segments[0].params == m->segments[0].params);
  }
}

TEST(CastRoundTrip, AllowPrecisionIncreaseRemovesItAndSaysSo) {
  ParsedFusion f = Parse(ReadCorpus("rmsnorm_bwd_thunder.py"), "thunder");
  auto count_casts = [](const Graph& g) {
    int n = 0;
    for (const Node& node : g.nodes) n += node.op == OpKind::kCast;
    return n;
  };
  auto notes = [](const CompileResult& r) {
    std::string all;
    for (const PassRecord& p : r.passes)
      for (const std::string& n : p.notes) all += n + "\n";
    return all;
  };
  CompileOptions keep;
  keep.generate_code = false;
  auto kept = CompileFusion(f.graph, f.input_shapes, keep);
  CompileOptions allow;
  allow.allow_precision_increase = true;
  allow.generate_code = false;
  auto removed = CompileFusion(f.graph, f.input_shapes, allow);
  ASSERT_TRUE(kept.ok() && removed.ok());
  EXPECT_LT(count_casts(removed->optimized), count_casts(kept->optimized));
  EXPECT_NE(notes(*kept).find("kept the narrowing float32->bfloat16->float32"), std::string::npos);
  EXPECT_NE(notes(*removed).find("removed the narrowing"), std::string::npos);
  EXPECT_NE(kept->canonical_hash, removed->canonical_hash);
}

TEST(Dump, DumpAllKeepsTheIrOfEveryChangingPass) {
  ParsedFusion f = Parse(ReadCorpus("bias_gelu_fwd.py"), "gelu");
  CompileOptions options;
  options.generate_code = false;  // passes and schedules only
  options.dump_pass = "pow_constant";
  auto r = CompileFusion(f.graph, f.input_shapes, options);
  ASSERT_TRUE(r.ok());
  int dumps = 0;
  for (const PassRecord& p : r->passes) {
    if (p.dump.empty()) continue;
    ++dumps;
    EXPECT_EQ(p.name, "pow_constant");
    EXPECT_TRUE(p.changed);
    EXPECT_EQ(p.dump.find("pow("), std::string::npos) << p.dump;
  }
  EXPECT_EQ(dumps, 1);
}

}  // namespace
}  // namespace fusiond
