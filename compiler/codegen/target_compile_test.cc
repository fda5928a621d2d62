// Every known target compiles the corpus's cooperative and persistent
// kernels with its own limits: NVRTC builds a cubin for its architecture
// and the manifest's co-residency bound uses its SM count.
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/frontend/frontend.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"
#include "compiler/scheduler/target.h"

namespace fusiond {
namespace {

class TargetCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(TargetCompile, CorpusKernelsCompileWithTheTargetsLimits) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  auto target = LookupTarget(GetParam());
  ASSERT_TRUE(target.ok()) << target.status();
  for (const char* stem : {"rmsnorm_bwd_manual", "softmax_fwd"}) {
    auto parsed = ParseReproFile(absl::StrCat(FUSIOND_CORPUS_DIR, "/", stem, ".py"));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    CompileOptions o;
    o.arch = GetParam();
    auto r = CompileFusion(parsed->graph, parsed->input_shapes, o);
    ASSERT_TRUE(r.ok()) << stem << " on " << GetParam() << ": " << r.status();
    for (const SegmentResult& s : r->segments) {
      ASSERT_TRUE(s.kernel.has_value());
      const KernelArtifact& k = *s.kernel;
      EXPECT_EQ(k.arch, GetParam());
      ASSERT_GE(k.binary.size(), 4u);
      EXPECT_EQ(k.binary.substr(0, 4), std::string("\x7f"
                                                   "ELF",
                                                   4));
      EXPECT_LE(k.registers, target->max_registers_per_thread);
      EXPECT_LE(k.static_smem_bytes, target->smem_per_block);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(KnownArchs, TargetCompile, ::testing::ValuesIn(KnownArchs()));

}  // namespace
}  // namespace fusiond
