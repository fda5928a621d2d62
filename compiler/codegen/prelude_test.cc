// The device prelude in pieces and its trimming to the pieces a kernel uses
// (prelude.h): which pieces a kernel gets, and that every corpus and bench
// kernel, as the pipeline generates it, compiles to the same cubin as with
// the whole prelude (NVRTC).
#include "compiler/codegen/prelude.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "compiler/frontend/frontend.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"

namespace fusiond {
namespace {

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const char kKernelHead[] = "\nextern \"C\" __global__ void k(float* p) {\n";

TEST(Prelude, IsItsPiecesInOrder) {
  std::string joined;
  for (const PreludePiece& p : DevicePreludePieces()) joined += p.text;
  EXPECT_EQ(joined, DevicePrelude());
  EXPECT_EQ(DevicePreludePieces()[0].names, std::string());  // the typedefs, always
}

TEST(TrimDevicePrelude, AKernelNamingNoHelperKeepsTheTypedefsOnly) {
  const std::string rest = std::string(kKernelHead) + "  p[0] = 1.f;\n}\n";
  const std::string trimmed = TrimDevicePrelude(DevicePrelude() + rest);
  EXPECT_EQ(trimmed, DevicePreludePieces()[0].text + rest);
}

TEST(TrimDevicePrelude, PiecesComeWithThePiecesTheyName) {
  const std::string rest = std::string(kKernelHead) +
                           "  p[0] = fz_warp_reduce<1, float>(Ty<5>::load(p));\n"
                           "  Chunk<16>::st(p, (const u32*)p);\n}\n";
  const std::string t = TrimDevicePrelude(DevicePrelude() + rest);
  EXPECT_TRUE(Has(t, "T fz_warp_reduce(T v)"));
  EXPECT_TRUE(Has(t, "T fz_comb(T a, T b)"));             // named by fz_warp_reduce
  EXPECT_TRUE(Has(t, "float fz_max(float a, float b)"));  // by fz_comb, every overload
  EXPECT_TRUE(Has(t, "double fz_min(double a, double b)"));
  EXPECT_TRUE(Has(t, "template <int DT> struct Ty;"));  // Ty<5>'s primary template
  EXPECT_TRUE(Has(t, "template <> struct Ty<5> {"));
  EXPECT_TRUE(Has(t, "u32 fz_f32_to_bf16(float f)"));  // by Ty<5>
  EXPECT_TRUE(Has(t, "template <> struct Chunk<16> {"));
  EXPECT_FALSE(Has(t, "struct Ty<4>"));
  EXPECT_FALSE(Has(t, "struct Chunk<8>"));
  EXPECT_FALSE(Has(t, "fz_f16_to_f32"));
  EXPECT_FALSE(Has(t, "fz_chan"));
  EXPECT_FALSE(Has(t, "fz_bar_sync"));
  EXPECT_TRUE(Has(t, rest));
  // The pieces keep the prelude's order.
  EXPECT_LT(t.find("fz_f32_to_bf16(float f)"), t.find("struct Ty<5>"));
  EXPECT_LT(t.find("struct Ty<5>"), t.find("T fz_warp_reduce(T v)"));
}

TEST(TrimDevicePrelude, ANonLiteralArgumentTakesEverySpecialization) {
  const std::string rest =
      "\ntemplate <int DT, int B> __device__ void f(u32* w, const void* q) "
      "{ Chunk<B>::ld(w, q); w[0] = Ty<DT>::get(w, 0); }\n";
  const std::string t = TrimDevicePrelude(DevicePrelude() + rest);
  for (int dt : {1, 2, 3, 4, 5, 6, 7}) {
    EXPECT_TRUE(Has(t, "template <> struct Ty<" + std::to_string(dt) + "> {")) << dt;
  }
  for (int b : {1, 2, 4, 8, 16}) {
    EXPECT_TRUE(Has(t, "template <> struct Chunk<" + std::to_string(b) + "> {")) << b;
  }
}

TEST(TrimDevicePrelude, NamesMatchWholeIdentifiersOnly) {
  const std::string rest = std::string(kKernelHead) +
                           "  float my_fz_max = 0, fz_max2 = 0, x = fz_maxima;\n"
                           "  MyTy<5> a; Ty<50>* b = 0;\n}\n";
  const std::string t = TrimDevicePrelude(DevicePrelude() + rest);
  EXPECT_FALSE(Has(t, "fz_max(float a"));
  EXPECT_FALSE(Has(t, "struct Ty<5> {"));
  EXPECT_TRUE(Has(t, "template <int DT> struct Ty;"));  // Ty<50> names the template
}

TEST(TrimDevicePrelude, OtherSourcesAndUntrimRoundTrip) {
  const std::string other = "// not a generated kernel\n__global__ void k() {}\n";
  EXPECT_EQ(TrimDevicePrelude(other), other);
  EXPECT_EQ(UntrimDevicePrelude(other), other);
  const std::string rest = std::string(kKernelHead) + "  p[0] = fz_tanh_approx(p[1]);\n}\n";
  const std::string whole = DevicePrelude() + rest;
  EXPECT_EQ(UntrimDevicePrelude(TrimDevicePrelude(whole)), whole);
  EXPECT_EQ(UntrimDevicePrelude(whole), whole);
  EXPECT_EQ(TrimDevicePrelude(TrimDevicePrelude(whole)), TrimDevicePrelude(whole));
}

// The pipeline's options for a compiled kernel: its arch and what it added
// after ours (a spill retry's register cap).
NvrtcOptions OptionsOf(const KernelArtifact& k) {
  NvrtcOptions o;
  o.arch = k.arch.rfind("compute_", 0) == 0 ? "sm_" + k.arch.substr(8) : k.arch;
  const size_t ours = 1 + NvrtcFlags().size();
  if (k.compile_options.size() > ours) {
    o.extra.assign(k.compile_options.begin() + ours, k.compile_options.end());
  }
  return o;
}

// Compiles every kernel of `path` (specialized, or general) and again with
// the whole prelude; the binaries must be byte-identical. Returns the
// kernels compared; a fusion the pipeline refuses compares none.
int CompareWithWholePrelude(const std::string& path, bool general, bool must_compile) {
  auto parsed = ParseReproFile(path);
  CompileOptions o;
  o.general_kernels = general;
  absl::StatusOr<CompileResult> r = parsed.ok()
                                        ? CompileFusion(parsed->graph, parsed->input_shapes, o)
                                        : absl::StatusOr<CompileResult>(parsed.status());
  if (!r.ok()) {
    EXPECT_FALSE(must_compile) << path << ": " << r.status();
    return 0;
  }
  int compared = 0;
  for (const SegmentResult& s : r->segments) {
    if (!s.kernel.has_value()) continue;
    const KernelArtifact& k = *s.kernel;
    EXPECT_NE(UntrimDevicePrelude(k.cuda_source), k.cuda_source) << path << ": not trimmed";
    auto whole = CompileWithNvrtc(UntrimDevicePrelude(k.cuda_source), k.kernel_name, OptionsOf(k));
    if (!whole.ok()) {
      ADD_FAILURE() << path << " " << k.kernel_name
                    << " with the whole prelude: " << whole.status();
      continue;
    }
    EXPECT_EQ(whole->options, k.compile_options) << path;
    EXPECT_TRUE(whole->binary == k.binary)
        << path << (general ? " (general) " : " ") << k.kernel_name
        << ": the trimmed prelude changed the cubin";
    ++compared;
  }
  return compared;
}

std::vector<std::string> FusionFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".py") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TrimmedPreludeCubins, CorpusKernelsAreByteIdenticalToTheWholePrelude) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  int compared = 0;
  for (const std::string& f : FusionFiles(FUSIOND_CORPUS_DIR)) {
    compared += CompareWithWholePrelude(f, false, true);
    compared += CompareWithWholePrelude(f, true, true);
  }
  EXPECT_GE(compared, 18);  // nine fusions, both forms
}

// bench/gpu and bench/compile_time fusions (lanes, symbolic sizes, split
// fusions) and tests/ops (fp8, random ops, shifts); the few the pipeline
// refuses are other tests' business. FUSIOND_PRELUDE_CHECK_DIRS (':'-separated)
// checks other folders instead (tests/frontends/fusions takes minutes).
TEST(TrimmedPreludeCubins, BenchAndOpKernelsAreByteIdenticalToTheWholePrelude) {
  if (NvrtcVersion() == "none") GTEST_SKIP() << "no NVRTC in this build";
  const char* dirs = std::getenv("FUSIOND_PRELUDE_CHECK_DIRS");
  int compared = 0;
  for (absl::string_view dir : absl::StrSplit(dirs ? dirs : FUSIOND_FUSION_DIRS, ':')) {
    for (const std::string& f : FusionFiles(std::string(dir))) {
      compared += CompareWithWholePrelude(f, false, false);
    }
  }
  EXPECT_GE(compared, 50);
}

}  // namespace
}  // namespace fusiond
