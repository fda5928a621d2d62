// Whole generated kernels run on the host (no GPU): every corpus and
// front-end fusion's kernels, as fusionc generates them, translated for the
// host and emulated thread by thread (emu_runtime.h), against the CPU
// reference with the corpus checks' tolerances (tests/corpus/output_check.h).
// Each fusion runs twice: into outputs of 0xFF bytes (NaN), then of 0x42
// bytes with the kept workspaces of the first run, where an element still
// holding the fill was never written. A mutated kernel must fail the check.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tests/corpus/output_check.h"
#include "tests/host_emulation/emu_cases.h"
#include "tests/host_emulation/emulate.h"
#include "tests/host_emulation/translate.h"

namespace fusiond {
namespace host_emulation {
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int Jobs() { return std::max(1u, std::min(2u, std::thread::hardware_concurrency())); }

// Why the emulated outputs of `f` disagree with the reference, or "".
std::string CheckFusion(const PreparedFusion& f, const HostKernels& kernels, const EmuCase& c,
                        const std::vector<HostTensor>& want) {
  if (std::string e = kernels.Error(f.name); !e.empty()) return e;
  std::vector<std::vector<unsigned char>> kept;
  auto got = RunOnHost(f, kernels, c.inputs, 0xFF, &kept);
  if (!got.ok()) return absl::StrCat("run: ", got.status().message());
  if (got->size() != want.size()) return absl::StrCat(got->size(), " outputs, want ", want.size());
  std::vector<std::string> why;
  for (size_t i = 0; i < got->size(); ++i) {
    const corpus::OutputVerdict v = corpus::CheckOutput((*got)[i], want[i]);
    if (!v.pass) why.push_back(absl::StrCat("output ", i, ": ", v.why));
  }
  auto again = RunOnHost(f, kernels, c.inputs, 0x42, &kept);
  if (!again.ok()) return absl::StrCat("second run: ", again.status().message());
  for (size_t i = 0; i < again->size(); ++i) {
    const double fill = FillValue((*again)[i].dtype, 0x42);
    int64_t unwritten = 0;
    for (size_t k = 0; k < (*again)[i].data.size() && k < want[i].data.size(); ++k) {
      unwritten += (*again)[i].data[k] == fill && want[i].data[k] != fill;
    }
    if (unwritten > 0) why.push_back(absl::StrCat("output ", i, ": ", unwritten, " never written"));
    const corpus::OutputVerdict v = corpus::CheckOutput((*again)[i], want[i]);
    if (!v.pass && unwritten == 0)
      why.push_back(absl::StrCat("second run, output ", i, ": ", v.why));
  }
  return absl::StrJoin(why, "; ");
}

std::string Schedulers(const PreparedFusion& f) {
  std::vector<std::string> s;
  for (const PreparedKernel& k : f.kernels) s.push_back(k.kernel.scheduler);
  return absl::StrJoin(s, ",");
}

TEST(HostEmulation, CorpusAndFrontEndKernelsMatchTheReference) {
  const auto t0 = std::chrono::steady_clock::now();
  auto corpus_cases = CorpusCases(FUSIOND_CORPUS_DIR);
  ASSERT_TRUE(corpus_cases.ok()) << corpus_cases.status();
  auto fe_cases = FrontendCases(FUSIOND_FRONTENDS_FUSIONS_DIR);
  ASSERT_TRUE(fe_cases.ok()) << fe_cases.status();
  std::vector<EmuCase> cases = *std::move(corpus_cases);
  for (EmuCase& c : *fe_cases) cases.push_back(std::move(c));
  // FUSIOND_HOST_EMULATION_FILTER=TEXT keeps the cases whose name contains TEXT.
  if (const char* only = std::getenv("FUSIOND_HOST_EMULATION_FILTER"); only != nullptr) {
    cases.erase(
        std::remove_if(cases.begin(), cases.end(),
                       [&](const EmuCase& c) { return c.name.find(only) == std::string::npos; }),
        cases.end());
  }

  std::vector<PreparedFusion> prepared;
  std::vector<const EmuCase*> prepared_case;
  std::vector<std::string> skipped;
  for (const EmuCase& c : cases) {
    auto f = PrepareFusion(c.graph, c.shapes, c.name);
    if (!f.ok()) {
      // A pending definition may be refused; anything else must compile.
      EXPECT_TRUE(c.pending) << c.origin << ": " << f.status();
      skipped.push_back(
          absl::StrCat(c.name, ": refused at compile (pending): ", f.status().message()));
      continue;
    }
    prepared.push_back(*std::move(f));
    prepared_case.push_back(&c);
  }
  const double prepare_s = Since(t0);
  std::vector<const PreparedFusion*> all;
  for (const PreparedFusion& f : prepared) all.push_back(&f);
  const auto t1 = std::chrono::steady_clock::now();
  auto kernels = HostKernels::Build(all, Jobs());
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  const double build_s = Since(t1);

  const auto t2 = std::chrono::steady_clock::now();
  int fusions_passed = 0, kernels_run = 0;
  std::vector<std::string> failures;
  std::map<std::string, int> per_scheduler;
  for (size_t i = 0; i < prepared.size(); ++i) {
    const PreparedFusion& f = prepared[i];
    const EmuCase& c = *prepared_case[i];
    std::vector<std::string> skips;
    for (const PreparedKernel& k : f.kernels) {
      if (!k.skip.empty()) skips.push_back(absl::StrCat(k.kernel.name, ": ", k.skip));
    }
    if (!skips.empty()) {
      skipped.push_back(absl::StrCat(c.name, " not emulated: ", absl::StrJoin(skips, "; ")));
      continue;
    }
    auto want = Evaluate(c.graph, c.inputs);
    ASSERT_TRUE(want.ok()) << c.name << ": " << want.status();
    const auto tf = std::chrono::steady_clock::now();
    const std::string why = CheckFusion(f, **kernels, c, *want);
    std::printf("%-58s %-48s %6.2f s %s\n", c.name.c_str(), Schedulers(f).c_str(), Since(tf),
                why.empty() ? "ok" : "FAIL");
    if (!why.empty()) {
      failures.push_back(absl::StrCat(c.name, " (", Schedulers(f), "): ", why));
      continue;
    }
    ++fusions_passed;
    kernels_run += static_cast<int>(f.kernels.size());
    for (const PreparedKernel& k : f.kernels) ++per_scheduler[k.kernel.scheduler];
  }
  for (const std::string& s : skipped) std::printf("SKIPPED %s\n", s.c_str());
  for (const std::string& s : failures) std::printf("FAILED %s\n", s.c_str());
  for (const auto& [name, n] : per_scheduler)
    std::printf("scheduler %-24s %d kernels\n", name.c_str(), n);
  std::printf(
      "SUMMARY host emulation: %zu fusions, %d passed (%d kernels), %zu failed, %zu skipped; "
      "prepare %.1f s, host compile %.1f s (%d jobs), emulation %.1f s\n",
      cases.size(), fusions_passed, kernels_run, failures.size(), skipped.size(), prepare_s,
      build_s, Jobs(), Since(t2));
  EXPECT_TRUE(failures.empty()) << absl::StrJoin(failures, "\n");
  EXPECT_GT(fusions_passed, 0);
}

}  // namespace
}  // namespace host_emulation
}  // namespace fusiond
