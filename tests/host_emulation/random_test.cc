// Random graphs (tests/random: GpuRandomOptions's five universes, the
// element count capped for the emulation) through the pipeline, emulated
// and checked as the corpus is (emu_check.h). A compile refusal other than
// Internal is counted, not failed (the random GPU check does the same).
// FUSIOND_HOST_EMULATION_RANDOM_SEEDS sets how many seeds (default 24).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/printer.h"
#include "compiler/reference/reference.h"
#include "tests/corpus/output_check.h"
#include "tests/host_emulation/emu_check.h"
#include "tests/random/gpu_cases.h"

namespace fusiond {
namespace host_emulation {
namespace {

// Seeds whose mismatch is understood, each with why: run and printed as
// KNOWN, not counted as failures (a known seed that passes is printed too).
const std::map<int, std::string>& KnownSeeds() {
  static const auto* known = new std::map<int, std::string>{
      {3,
       "accumulation order, not a bug: the kernel's float32 row sum of 32 terms (butterfly "
       "order) is one ulp (7.6e-6) off the reference's rounded exact sum (-91.179894 against "
       "-91.179886); that moves the float32 products rowsum x colsum (~8200) and rowsum x 84.8 "
       "(~-7732) by an ulp each (9.8e-4, 4.9e-4), and they cancel into a float64 output of -2.78 "
       "whose error is judged against 1e-3 of its largest element (7.9): 9.8e-4 / 7.9 = 1.24e-4 "
       "against the 1e-4 limit, a limit below one float32 ulp of those intermediates"},
  };
  return *known;
}

int Seeds() {
  int n = 24;
  const char* env = std::getenv("FUSIOND_HOST_EMULATION_RANDOM_SEEDS");
  if (env != nullptr && !absl::SimpleAtoi(env, &n)) n = 24;
  return n;
}

// The compiled fusion's segments evaluated one after another on the CPU
// reference, against `want`: "" when they agree (the kernels differ from
// their own segments), else why (the passes or the segmentation changed
// the result before any kernel was generated).
std::string SegmentsOnTheReference(const CompileResult& r, const EmuCase& c,
                                   const std::vector<HostTensor>& want) {
  std::map<ValueId, HostTensor> env;
  for (size_t i = 0; i < c.inputs.size() && i < r.optimized.inputs.size(); ++i)
    env[r.optimized.inputs[i]] = c.inputs[i];
  for (const SegmentResult& s : r.segments) {
    std::vector<HostTensor> ins;
    for (ValueId v : s.source_inputs) {
      if (!env.count(v)) return "a segment reads a value no segment made";
      ins.push_back(env.at(v));
    }
    auto outs = Evaluate(s.graph, ins);
    if (!outs.ok()) return std::string(outs.status().message());
    for (size_t j = 0; j < outs->size(); ++j) env[s.source_outputs[j]] = (*outs)[j];
  }
  std::vector<std::string> why;
  for (size_t i = 0; i < r.optimized.outputs.size() && i < want.size(); ++i) {
    const corpus::OutputVerdict v = corpus::CheckOutput(env.at(r.optimized.outputs[i]), want[i]);
    if (!v.pass) why.push_back(absl::StrCat("output ", i, ": ", v.why));
  }
  return absl::StrJoin(why, "; ");
}

TEST(HostEmulationRandom, RandomGraphsMatchTheReference) {
  std::vector<EmuCase> cases;
  std::vector<PreparedFusion> prepared;
  std::map<std::string, int> refused;
  std::vector<std::string> failures;
  cases.reserve(Seeds());
  // FUSIOND_HOST_EMULATION_SEED=N runs seed N alone.
  int first = 1, last = Seeds();
  if (const char* one = std::getenv("FUSIOND_HOST_EMULATION_SEED"); one != nullptr) {
    if (absl::SimpleAtoi(one, &first)) last = first;
  }
  for (int seed = first; seed <= last; ++seed) {
    RandomGraphOptions o = GpuRandomOptions(seed);
    o.max_elements = std::min<int64_t>(o.max_elements, int64_t{1} << 14);
    RandomGraphCase rc = RandomGraphWithShapes(seed, o);
    if (!rc.status.ok()) {
      ++refused[absl::StrCat("generator: ", rc.status.code())];
      continue;
    }
    EmuCase c;
    c.name = absl::StrCat("random_", seed);
    c.origin = absl::StrCat("random seed ", seed);
    c.graph = rc.graph;
    c.shapes = rc.input_shapes;
    c.inputs = RandomInputs(c.graph, c.shapes, seed);
    auto f = PrepareFusion(c.graph, c.shapes, c.name);
    if (!f.ok()) {
      if (f.status().code() == absl::StatusCode::kInternal) {
        failures.push_back(absl::StrCat(c.name, ": compile: ", f.status().message()));
      }
      ++refused[absl::StatusCodeToString(f.status().code())];
      continue;
    }
    cases.push_back(std::move(c));
    prepared.push_back(*std::move(f));
  }
  std::vector<const PreparedFusion*> all;
  for (const PreparedFusion& f : prepared) all.push_back(&f);
  auto kernels = HostKernels::Build(all, Jobs());
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  int passed = 0;
  for (size_t i = 0; i < prepared.size(); ++i) {
    auto want = Evaluate(cases[i].graph, cases[i].inputs);
    ASSERT_TRUE(want.ok()) << cases[i].name << ": " << want.status();
    const std::string why = CheckFusion(prepared[i], **kernels, cases[i], *want);
    std::printf("%-12s %-48s %s\n", cases[i].name.c_str(), Schedulers(prepared[i]).c_str(),
                why.empty() ? "ok" : why.c_str());
    auto known = KnownSeeds().find(std::stoi(cases[i].name.substr(7)));
    if (known != KnownSeeds().end()) {
      std::printf("KNOWN %s (%s): %s\n", cases[i].name.c_str(),
                  why.empty() ? "passes now" : why.c_str(), known->second.c_str());
    } else if (why.empty()) {
      ++passed;
    } else {
      const std::string seg = SegmentsOnTheReference(prepared[i].compiled, cases[i], *want);
      failures.push_back(
          absl::StrCat(cases[i].name, " (", Schedulers(prepared[i]), "): ", why,
                       seg.empty() ? " [its segments on the reference agree]"
                                   : " [its segments on the reference differ too: " + seg + "]"));
      std::printf("%s at shapes %s:\n%s\n", cases[i].name.c_str(),
                  absl::StrJoin(cases[i].shapes, "; ",
                                [](std::string* out, const std::vector<int64_t>& s) {
                                  absl::StrAppend(out, "[", absl::StrJoin(s, ", "), "]");
                                })
                      .c_str(),
                  PrintGraph(cases[i].graph).c_str());
    }
  }
  for (const auto& [code, n] : refused)
    std::printf("refused at compile (%s): %d\n", code.c_str(), n);
  std::printf(
      "SUMMARY host emulation, random graphs: %d seeds, %zu compiled, %d passed, %zu failed\n",
      Seeds(), prepared.size(), passed, failures.size());
  EXPECT_TRUE(failures.empty()) << absl::StrJoin(failures, "\n");
  EXPECT_GT(passed, 0);
}

}  // namespace
}  // namespace host_emulation
}  // namespace fusiond
