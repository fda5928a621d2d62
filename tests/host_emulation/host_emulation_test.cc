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
  auto corpus_cases = CorpusCases(FUSIOND_CORPUS_DIR);
  ASSERT_TRUE(corpus_cases.ok()) << corpus_cases.status();
  auto fe_cases = FrontendCases(FUSIOND_FRONTENDS_FUSIONS_DIR);
  ASSERT_TRUE(fe_cases.ok()) << fe_cases.status();
  std::vector<EmuCase> cases = *std::move(corpus_cases);
  for (EmuCase& c : *fe_cases) cases.push_back(std::move(c));
  PrintRelaxed();
  const CaseSetResult r = EmulateCases(std::move(cases), "host emulation");
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.failures.empty()) << absl::StrJoin(r.failures, "\n");
  EXPECT_GT(r.passed, 0);
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
