// Whole generated kernels run on the host (no GPU): every corpus and
// front-end fusion's kernels, as fusionc generates them, translated for the
// host and emulated thread by thread (emu_runtime.h), against the CPU
// reference with the corpus checks' tolerances (tests/corpus/output_check.h).
// (emu_check.h says how each fusion is run and checked). A mutated kernel
// must fail the check.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <regex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/ir/binding.h"
#include "compiler/scheduler/analysis.h"
#include "compiler/scheduler/kernel_heuristics.h"
#include "compiler/scheduler/target.h"
#include "tests/corpus/output_check.h"
#include "tests/host_emulation/emu_cases.h"
#include "tests/host_emulation/emu_check.h"
#include "tests/host_emulation/emulate.h"
#include "tests/host_emulation/translate.h"

namespace fusiond {
namespace host_emulation {
namespace {

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
  std::map<std::string, int> per_scheduler, per_feature;
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
    for (const PreparedKernel& k : f.kernels) {
      ++per_scheduler[k.kernel.scheduler];
      for (const std::string& feature : Features(k.kernel)) ++per_feature[feature];
    }
  }
  for (const std::string& s : skipped) std::printf("SKIPPED %s\n", s.c_str());
  PrintRelaxed();
  for (const std::string& s : failures) std::printf("FAILED %s\n", s.c_str());
  for (const auto& [name, n] : per_feature)
    std::printf("feature %-26s %d kernels\n", name.c_str(), n);
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

// The case named `name` (corpus or front end), or null.
const EmuCase* FindCase(const std::vector<EmuCase>& cases, const std::string& name) {
  for (const EmuCase& c : cases) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// `text` with every match of `pattern` replaced by `replacement`; the count in *n.
std::string ReplaceAll(const std::string& text, const std::string& pattern,
                       const std::string& replacement, int* n) {
  const std::regex re(pattern);
  *n = static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
  return std::regex_replace(text, re, replacement);
}

// A fusion's kernels as generated, and again with `mutate` applied to kernel
// `k`'s source: the first must match the reference, the second must not.
void ExpectMutationCaught(const EmuCase& c, int k, const std::string& pattern,
                          const std::string& replacement, const std::string& what) {
  SCOPED_TRACE(absl::StrCat(c.name, ": ", what));
  auto good = PrepareFusion(c.graph, c.shapes, c.name + "_good");
  ASSERT_TRUE(good.ok()) << good.status();
  auto bad = PrepareFusion(c.graph, c.shapes, c.name + "_bad");
  ASSERT_TRUE(bad.ok()) << bad.status();
  ASSERT_LT(k, static_cast<int>(bad->kernels.size()));
  std::string& src = bad->kernels[k].kernel.source;
  int n = 0;
  src = ReplaceAll(src, pattern, replacement, &n);
  ASSERT_GT(n, 0) << "the mutation's pattern " << pattern << " is not in the kernel";
  auto kernels = HostKernels::Build({&*good, &*bad}, Jobs());
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  auto want = Evaluate(c.graph, c.inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(CheckFusion(*good, **kernels, c, *want), "");
  const std::string why = CheckFusion(*bad, **kernels, c, *want);
  EXPECT_NE(why, "") << "the mutated kernel passed";
  std::printf("%s, %s (%d places): caught: %s\n", c.name.c_str(), what.c_str(), n, why.c_str());
}

class Mutations : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto keep = [](const std::string& name) {
      for (const char* n : {"fe_causal_mask_triu_softmax", "corpus_softmax_fwd_0",
                            "corpus_layernorm_bwd_thunder_0", "corpus_rmsnorm_bwd_thunder_0"}) {
        if (name == n) return true;
      }
      return false;
    };
    auto corpus_cases = CorpusCases(FUSIOND_CORPUS_DIR, keep);
    ASSERT_TRUE(corpus_cases.ok()) << corpus_cases.status();
    auto fe = FrontendCases(FUSIOND_FRONTENDS_FUSIONS_DIR, keep);
    ASSERT_TRUE(fe.ok()) << fe.status();
    cases_ = new std::vector<EmuCase>(*std::move(corpus_cases));
    for (EmuCase& c : *fe) cases_->push_back(std::move(c));
  }
  static const EmuCase& Case(const std::string& name) {
    const EmuCase* c = FindCase(*cases_, name);
    if (c == nullptr) ADD_FAILURE() << "no case " << name;
    return c != nullptr ? *c : cases_->front();
  }
  static std::vector<EmuCase>* cases_;
};
std::vector<EmuCase>* Mutations::cases_ = nullptr;

// The causal mask's column iota minus itself (instead of minus the row's):
// no element is masked, as a codegen bug that compares an iota with itself
// would do. Every CPU check of the graph passes such a kernel.
TEST_F(Mutations, CausalMaskIotaComparedWithItself) {
  ExpectMutationCaught(Case("fe_causal_mask_triu_softmax"), 0,
                       R"(const i64 (e\d+) = \((e\d+) - (rv\d+)\);)", "const i64 $1 = ($2 - $2);",
                       "mask iota minus itself");
}

// Softmax's output pass reads its chunk's elements in reverse order.
TEST_F(Mutations, SoftmaxOutputElementsSwapped) {
  ExpectMutationCaught(
      Case("corpus_softmax_fwd_0"), 0,
      R"(const float (e\d+) = Ty<5>::get\(w_in0, l\);\n(.*\n.*\n.*\n.*\n.*fo0\[l\]))",
      "const float $1 = Ty<5>::get(w_in0, VV - 1 - l);\n$2", "output index reversed");
}

// Layer norm backward with the first sum's second term dropped.
TEST_F(Mutations, LayerNormBackwardTermDropped) {
  ExpectMutationCaught(Case("corpus_layernorm_bwd_thunder_0"), 0,
                       R"(const float (e\d+) = \((e\d+) \+ (e\d+)\);)", "const float $1 = ($2);",
                       "sum terms dropped");
}

// A block reduction without the barrier before its shared-memory read: the
// emulation reaches the read before the other warps' writes, as a GPU may.
TEST_F(Mutations, BlockReductionBarrierRemoved) {
  ExpectMutationCaught(Case("corpus_rmsnorm_bwd_thunder_0"), 0, R"(  __syncthreads\(\);)", "",
                       "every __syncthreads removed");
}

// Kernel forms the heuristics choose only at large shapes, forced at small
// ones as bench/gpu/variants do (field=value, then DecideKernelForm): rows
// split over a thread-block cluster (distributed shared memory), staged rows
// (cp.async into dynamic shared memory), rows re-read with cache hints, a
// row split over a block group (group barrier), cluster column partials,
// rows re-read from memory and handed out through an atomic counter.
struct Variant {
  const char* name;
  const char* fusion;
  std::map<std::string, int64_t> set;
  const char* feature;  // what the kernel must then contain
};

void SetFields(const std::map<std::string, int64_t>& set, HeuristicParams* hp) {
  for (const auto& [k, v] : set) {
    if (k == "block_x") hp->block_x = static_cast<int>(v);
    if (k == "block_y") hp->block_y = static_cast<int>(v);
    if (k == "persistent_batch") hp->persistent_batch = static_cast<int>(v);
    if (k == "cluster_x") hp->cluster_x = static_cast<int>(v);
    if (k == "grid_x") hp->grid_x = v;
    if (k == "grid_y") hp->grid_y = v;
    if (k == "smem_bytes") hp->smem_bytes = v;
    if (k == "smem_buffer") hp->smem_buffer = v != 0;
    if (k == "reread_rows") hp->reread_rows = v != 0;
    if (k == "multi_pass") hp->multi_pass = v != 0;
    if (k == "cluster_rows") hp->cluster_rows = v != 0;
  }
}

TEST(HostEmulation, ForcedKernelFormsMatchTheReference) {
  const std::vector<Variant> variants = {
      {"cluster_rows2",
       "corpus_rmsnorm_bwd_thunder_0",
       {{"block_x", 256}, {"block_y", 1}, {"grid_y", 2}, {"grid_x", 8}, {"cluster_rows", 1}},
       "fz_dsmem_ld4("},
      {"cluster_rows4",
       "corpus_rmsnorm_bwd_manual_1",
       {{"block_x", 128}, {"block_y", 1}, {"grid_y", 4}, {"grid_x", 4}, {"cluster_rows", 1}},
       "fz_dsmem_ld4("},
      {"split2",
       "corpus_layernorm_bwd_thunder_0",
       {{"block_x", 256}, {"block_y", 1}, {"grid_y", 2}, {"grid_x", 8}},
       "fz_group_sync("},
      {"staged",
       "corpus_rmsnorm_bwd_thunder_0",
       {{"smem_buffer", 1}, {"smem_bytes", 98304}},
       "fz_cp_async<"},
      {"staged_cols",
       "corpus_layernorm_fwd_0",
       {{"block_x", 512},
        {"persistent_batch", 2},
        {"smem_buffer", 1},
        {"smem_bytes", 131072},
        {"grid_x", 16}},
       "fz_cp_async<"},
      {"reread", "corpus_softmax_bwd_0", {{"reread_rows", 1}}, "fz_ld_keep<"},
      {"multi_pass",
       "corpus_rmsnorm_bwd_thunder_0",
       {{"multi_pass", 1}, {"block_x", 64}, {"block_y", 1}, {"grid_x", 8}},
       "atomicAdd("},
      {"cluster_cols",
       "corpus_layernorm_bwd_thunder_0",
       {{"block_x", 64}, {"block_y", 1}, {"grid_x", 8}, {"cluster_x", 2}},
       "fz_cluster_sync("},
  };
  auto corpus_cases = CorpusCases(FUSIOND_CORPUS_DIR);
  ASSERT_TRUE(corpus_cases.ok()) << corpus_cases.status();
  std::vector<PreparedFusion> prepared;
  std::vector<const Variant*> which;
  for (const Variant& v : variants) {
    const EmuCase* c = FindCase(*corpus_cases, v.fusion);
    ASSERT_NE(c, nullptr) << v.fusion;
    auto f =
        PrepareFusion(c->graph, c->shapes, absl::StrCat("var_", v.name),
                      [&](const SegmentResult& seg, HeuristicParams* hp) {
                        SetFields(v.set, hp);
                        SizeBinding binding{seg.symbol_sizes};
                        DecideKernelForm(AnalyzeFusion(seg.graph, binding), DefaultTarget(), hp);
                      });
    EXPECT_TRUE(f.ok()) << v.name << ": " << f.status();
    if (!f.ok()) continue;
    bool has = false;
    for (const PreparedKernel& k : f->kernels)
      has |= k.kernel.source.find(v.feature) != std::string::npos;
    EXPECT_TRUE(has) << v.name << ": no " << v.feature << " in its kernels";
    prepared.push_back(*std::move(f));
    which.push_back(&v);
  }
  std::vector<const PreparedFusion*> all;
  for (const PreparedFusion& f : prepared) all.push_back(&f);
  auto kernels = HostKernels::Build(all, Jobs());
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  for (size_t i = 0; i < prepared.size(); ++i) {
    const EmuCase& c = *FindCase(*corpus_cases, which[i]->fusion);
    auto want = Evaluate(c.graph, c.inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    const std::string why = CheckFusion(prepared[i], **kernels, c, *want);
    std::printf("variant %-14s %-32s %s: %s\n", which[i]->name, which[i]->fusion,
                absl::StrJoin(Features(prepared[i].kernels[0].kernel), ", ").c_str(),
                why.empty() ? "ok" : why.c_str());
    EXPECT_EQ(why, "") << which[i]->name;
  }
}

}  // namespace
}  // namespace host_emulation
}  // namespace fusiond
