#include "compiler/nvrtc/nvrtc_compiler.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <string>
#include <vector>

namespace fusiond {
namespace {

TEST(PtxasReport, ParsesRegistersSpillsAndSmem) {
  const std::string log =
      "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
      "ptxas info    : Used 12 registers\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "    8 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 64 registers, used 1 barriers, 128 bytes smem, 400 bytes cmem[0]\n";
  NvrtcOutput out;
  ParsePtxasReport(log, "k", &out);
  EXPECT_EQ(out.registers, 64);
  EXPECT_EQ(out.spill_bytes, 12);
  EXPECT_EQ(out.static_smem_bytes, 128);
}

TEST(Nvrtc, CompilesAKernelToACubin) {
  const std::string src =
      "extern \"C\" __global__ void add1(float* x, long long n) {\n"
      "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      "  if (i < n) x[i] += 1.f;\n}\n";
  auto out = CompileWithNvrtc(src, "add1", NvrtcOptions{});
  if (absl::IsUnavailable(out.status())) GTEST_SKIP() << "no NVRTC in this build";
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->is_ptx);
  ASSERT_GE(out->binary.size(), 4u);
  EXPECT_EQ(out->binary.substr(0, 4), std::string("\x7f"
                                                  "ELF",
                                                  4));  // a cubin is an ELF file
  EXPECT_GT(out->registers, 0);
  EXPECT_EQ(out->spill_bytes, 0);
  EXPECT_NE(NvrtcVersion(), "none");
  bool has_arch = false;
  for (const std::string& o : out->options) has_arch |= o == "--gpu-architecture=sm_90";
  EXPECT_TRUE(has_arch);
}

long MinorFaults() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

// A compile's page faults (of its working memory, mapped again by the
// kernel) before and after KeepNvrtcHeap: thousands, then a few.
TEST(Nvrtc, KeptHeapSparesACompileItsPageFaults) {
  const std::string src =
      "extern \"C\" __global__ void sums(const float* x, float* y, int n) {\n"
      "  float a[64];\n"
      "#pragma unroll\n"
      "  for (int k = 0; k < 64; ++k) a[k] = x[threadIdx.x + k * n] * (k + 1);\n"
      "  float s = 0;\n"
      "#pragma unroll\n"
      "  for (int k = 0; k < 64; ++k) s += __expf(a[k]) / (1.f + a[(k * 7) % 64]);\n"
      "  y[threadIdx.x] = s;\n}\n";
  auto first = CompileWithNvrtc(src, "sums", NvrtcOptions{});
  if (absl::IsUnavailable(first.status())) GTEST_SKIP() << "no NVRTC in this build";
  ASSERT_TRUE(first.ok()) << first.status();
  long f0 = MinorFaults();
  ASSERT_TRUE(CompileWithNvrtc(src, "sums", NvrtcOptions{}).ok());
  const long plain = MinorFaults() - f0;
  EXPECT_GT(KeepNvrtcHeap(size_t{64} << 20), 0);
  f0 = MinorFaults();
  auto kept = CompileWithNvrtc(src, "sums", NvrtcOptions{});
  const long after = MinorFaults() - f0;
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->binary, first->binary);
  EXPECT_GT(plain, 500);
  EXPECT_LT(after * 10, plain) << "page faults: " << plain << " before, " << after << " after";
}

TEST(Nvrtc, BadSourceIsInternalWithLogAndKernelName) {
  const std::string src =
      "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_thing; }\n";
  auto out = CompileWithNvrtc(src, "broken", NvrtcOptions{});
  if (absl::IsUnavailable(out.status())) GTEST_SKIP() << "no NVRTC in this build";
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(out.status().message().find("broken"), std::string::npos);
  EXPECT_NE(out.status().message().find("undefined_thing"), std::string::npos);
}

// FUSIOND_NVRTC_FAST_COMPILE adds --Ofast-compile to every compile and to
// NvrtcFlags (the cache key); a value NVRTC does not take fails each compile.
TEST(Nvrtc, FastCompileLevelFromTheEnvironment) {
  const std::string src = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n";
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  ASSERT_EQ(unsetenv("FUSIOND_NVRTC_FAST_COMPILE"), 0);
  auto plain = CompileWithNvrtc(src, "k", NvrtcOptions{});
  if (absl::IsUnavailable(plain.status())) GTEST_SKIP() << "no NVRTC in this build";
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(has(NvrtcFlags(), "--Ofast-compile=mid"));
  ASSERT_EQ(setenv("FUSIOND_NVRTC_FAST_COMPILE", "mid", 1), 0);
  EXPECT_TRUE(has(NvrtcFlags(), "--Ofast-compile=mid"));
  auto fast = CompileWithNvrtc(src, "k", NvrtcOptions{});
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_TRUE(has(fast->options, "--Ofast-compile=mid"));
  ASSERT_EQ(setenv("FUSIOND_NVRTC_FAST_COMPILE", "fastest", 1), 0);
  EXPECT_FALSE(has(NvrtcFlags(), "--Ofast-compile=fastest"));
  auto bad = CompileWithNvrtc(src, "k", NvrtcOptions{});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("FUSIOND_NVRTC_FAST_COMPILE='fastest'"), std::string::npos)
      << bad.status();
  ASSERT_EQ(unsetenv("FUSIOND_NVRTC_FAST_COMPILE"), 0);
  EXPECT_EQ(NvrtcFlags().size(), plain->options.size() - 1);  // all but --gpu-architecture
}

TEST(Nvrtc, BadArchIsInvalidArgument) {
  NvrtcOptions o;
  o.arch = "gfx90a";
  auto out = CompileWithNvrtc("extern \"C\" __global__ void k() {}", "k", o);
  if (absl::IsUnavailable(out.status())) GTEST_SKIP();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fusiond
