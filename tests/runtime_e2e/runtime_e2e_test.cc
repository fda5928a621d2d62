// End to end on the GPU: every corpus fusion -> artifacts (fusionc compile
// --out, made here by scripts/device_bundle.sh) -> C++ runtime -> outputs,
// each checked (corpus::CheckOutput: dtype, per-element error, bf16 1e-2,
// fp32 1e-4) against two references: the CPU reference interpreter on the
// parsed graph (float64 with each dtype's rounding) and the closed form
// written from the math (tests/corpus/closed_forms.h), which shares no
// parser, type inference or graph with the kernels. Outputs are filled
// with NaN before each launch. Kernels compiled from known-wrong
// definitions (FUSIOND_E2E_MUTANTS, bench/gpu/selftest/mutants.sh) must fail. A symbolic
// definition's one artifact runs at three shapes of the class it was compiled for (other row
// counts) and refuses others (its manifest's requires); its --general artifact runs those too; a
// misaligned input runs through both. Environment: FUSIOND_E2E_ARTIFACTS=DIR
// (DIR/<stem>/manifest.json), FUSIOND_E2E_GENERAL_ARTIFACTS (the same,
// compiled with --general), FUSIOND_E2E_MUTANTS (the same for the
// known-wrong definitions), FUSIOND_CORPUS_DIR (default: the build's
// corpus). Skipped, saying why, without a GPU or artifacts (device_run.sh
// fails a skipped test).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "client/runtime/driver_api.h"
#include "client/runtime/loaded_fusion.h"
#include "compiler/frontend/frontend.h"
#include "compiler/reference/reference.h"
#include "tests/corpus/closed_forms.h"
#include "tests/corpus/corpus_inputs.h"
#include "tests/corpus/output_check.h"
#include "tests/runtime_e2e/gpu_run.h"

namespace fusiond {
namespace {

using runtime::Cu;
using runtime::ElementType;

std::string CorpusDir() {
  const char* env = std::getenv("FUSIOND_CORPUS_DIR");
  return env ? env : FUSIOND_CORPUS_DIR;
}

// Shapes for a symbolic definition: the file's, with extents substituted.
std::vector<std::vector<int64_t>> MapShapes(const std::vector<std::vector<int64_t>>& shapes,
                                            const std::map<int64_t, int64_t>& m) {
  std::vector<std::vector<int64_t>> out = shapes;
  for (auto& s : out)
    for (int64_t& d : s)
      if (auto it = m.find(d); it != m.end()) d = it->second;
  return out;
}

// The shapes with every extent a kernel requires to equal a size
// (`equals`: a specialized kernel's literal row extents) set to that size:
// maps of the row counts alone, whatever else the map says.
std::vector<std::vector<int64_t>> InClass(const runtime::Manifest& m,
                                          std::vector<std::vector<int64_t>> shapes) {
  std::map<std::string, int64_t> fixed;
  for (const runtime::ManifestKernel& k : m.kernels) {
    for (const runtime::KernelRequirement& r : k.requirements) {
      if (r.kind == runtime::KernelRequirement::Kind::kEquals) fixed[r.expr.text()] = r.bound;
    }
  }
  for (size_t i = 0; i < shapes.size() && i < m.inputs.size(); ++i) {
    for (size_t a = 0; a < shapes[i].size() && a < m.inputs[i].shape.size(); ++a) {
      if (auto it = fixed.find(m.inputs[i].shape[a].text()); it != fixed.end())
        shapes[i][a] = it->second;
    }
  }
  return shapes;
}

void RunArtifact(const std::string& stem, runtime::LoadedFusion& fusion, const ParsedFusion& parsed,
                 const std::vector<std::vector<int64_t>>& shapes, uint64_t seed, bool offset,
                 std::vector<corpus::OutputVerdict>* verdicts);

class RuntimeE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::Status gpu = runtime::CheckGpuAvailable();
    if (!gpu.ok()) GTEST_SKIP() << "no usable GPU: " << gpu.message();
    const char* art = std::getenv("FUSIOND_E2E_ARTIFACTS");
    if (art == nullptr) GTEST_SKIP() << "FUSIOND_E2E_ARTIFACTS not set (scripts/device_bundle.sh)";
    dir_ = std::string(art) + "/" + GetParam();
    if (!std::filesystem::exists(dir_ + "/manifest.json"))
      GTEST_SKIP() << "no artifacts at " << dir_;
    ASSERT_EQ(Cu().cuDeviceGet(&dev_, 0), CUDA_SUCCESS);
    ASSERT_EQ(Cu().cuDevicePrimaryCtxRetain(&ctx_, dev_), CUDA_SUCCESS);
    ASSERT_EQ(Cu().cuCtxSetCurrent(ctx_), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (ctx_ != nullptr) Cu().cuDevicePrimaryCtxRelease(dev_);
  }

  // Runs the artifact at `shapes`, checks every output against the reference.
  void RunAndCheck(runtime::LoadedFusion& fusion, const ParsedFusion& parsed,
                   const std::vector<std::vector<int64_t>>& shapes, uint64_t seed,
                   bool offset = false) {
    SCOPED_TRACE(::testing::Message()
                 << GetParam() << " at first input shape " << runtime::ShapeToString(shapes[0])
                 << (offset ? " (first input misaligned)" : ""));
    std::vector<corpus::OutputVerdict> verdicts;
    RunArtifact(GetParam(), fusion, parsed, shapes, seed, offset, &verdicts);
    for (const corpus::OutputVerdict& v : verdicts) EXPECT_TRUE(v.pass) << v.why;
  }

  std::string dir_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
};

// Runs the artifact at `shapes` on seeded inputs; one verdict per output and
// reference (the interpreter's, then the closed form's) in *verdicts.
// `offset` passes the first tensor input one element past its allocation
// (element-aligned, not vector-aligned): the runtime copies it to an aligned
// buffer for kernels whose manifest asks for alignment.
void RunArtifact(const std::string& stem, runtime::LoadedFusion& fusion, const ParsedFusion& parsed,
                 const std::vector<std::vector<int64_t>>& shapes, uint64_t seed, bool offset,
                 std::vector<corpus::OutputVerdict>* verdicts) {
  const corpus::ClosedFormCase* closed = corpus::FindClosedForm(stem);
  ASSERT_NE(closed, nullptr) << stem << " has no closed form (tests/corpus/closed_forms.cc)";
  std::vector<HostTensor> inputs =
      corpus::MakeCorpusInputs(parsed.graph, parsed.inputs, shapes, seed, closed->softmax_inputs);
  absl::StatusOr<std::vector<HostTensor>> want = Evaluate(parsed.graph, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  const corpus::Tensors math = closed->closed_form(inputs);
  ASSERT_EQ(math.size(), want->size());
  absl::StatusOr<std::vector<HostTensor>> outs = RunOnGpu(fusion, inputs, 0xFF, offset);
  ASSERT_TRUE(outs.ok()) << outs.status();
  ASSERT_EQ(want->size(), outs->size());
  for (size_t i = 0; i < outs->size(); ++i) {
    const HostTensor& got = (*outs)[i];
    for (const auto& [name, ref] :
         {std::pair<const char*, const HostTensor*>{"reference", &(*want)[i]},
          {"closed form", &math[i]}}) {
      corpus::OutputVerdict v = corpus::CheckOutput(got, *ref);
      if (!v.why.empty()) {
        v.why = absl::StrCat(stem, " output ", i, " ", runtime::ShapeToString(got.shape),
                             " vs the ", name, ": ", v.why);
      }
      std::printf("  %s %s output %zu %s: max rel err %.2e vs the %s\n", stem.c_str(),
                  runtime::ShapeToString(shapes[0]).c_str(), i, DataTypeName(got.dtype), v.error,
                  name);
      verdicts->push_back(std::move(v));
    }
  }
}

// Extents of the corpus files -> other extents, for symbolic definitions.
// In the class the kernels were compiled for (rows within the widths
// compiled for, widths multiples of 8) once InClass has put back the
// extents a kernel has as literals: every artifact runs them.
const std::map<int64_t, int64_t> kInClass[] = {
    {{2048, 512}, {8192, 1024}, {4096, 256}, {16384, 2048}},
    {{2048, 1000}, {8192, 2000}, {4096, 1000}, {16384, 3000}},
    {{2048, 64}, {8192, 4096}, {4096, 32}, {16384, 8192}},
};
// Outside it (odd widths, wider rows): a specialized kernel's manifest
// refuses them; general kernels (fusionc compile --general) run them.
const std::map<int64_t, int64_t> kOutOfClass[] = {
    {{2048, 1000}, {8192, 333}, {4096, 1000}, {16384, 333}},
    {{2048, 64}, {8192, 16384}, {4096, 32}, {16384, 32768}},
};

TEST_P(RuntimeE2eTest, MatchesReference) {
  absl::StatusOr<ParsedFusion> parsed = ParseReproFile(CorpusDir() + "/" + GetParam() + ".py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<std::unique_ptr<runtime::LoadedFusion>> fusion = runtime::LoadedFusion::Load(dir_);
  ASSERT_TRUE(fusion.ok()) << fusion.status();
  ASSERT_EQ((*fusion)->manifest().inputs.size(), parsed->graph.inputs.size());
  bool symbolic = !(*fusion)->manifest().symbols.empty();
  if (!symbolic) {
    RunAndCheck(**fusion, *parsed, parsed->input_shapes, 1);
    RunAndCheck(**fusion, *parsed, parsed->input_shapes, 2, /*offset=*/true);
    return;
  }
  // One artifact, three shapes (kept small: the reference runs on the CPU).
  uint64_t seed = 1;
  const runtime::Manifest& manifest = (*fusion)->manifest();
  for (const auto& m : kInClass) {
    RunAndCheck(**fusion, *parsed, InClass(manifest, MapShapes(parsed->input_shapes, m)), seed++);
  }
  RunAndCheck(**fusion, *parsed, InClass(manifest, MapShapes(parsed->input_shapes, kInClass[0])),
              seed++,
              /*offset=*/true);
  // Outside the class: refused before anything is launched, saying what to
  // do, or (kernels without requirements) run and correct.
  for (const auto& m : kOutOfClass) {
    const auto shapes = MapShapes(parsed->input_shapes, m);
    absl::StatusOr<runtime::LaunchPlan> plan = runtime::PlanLaunch(
        (*fusion)->manifest(), std::vector<runtime::Shape>(shapes.begin(), shapes.end()));
    if (plan.ok()) {
      RunAndCheck(**fusion, *parsed, shapes, seed++);
    } else {
      EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition) << plan.status();
      EXPECT_NE(plan.status().message().find("compile the fusion for these shapes"),
                std::string::npos)
          << plan.status();
    }
  }
}

// The same definition compiled with --general (scripts/device_bundle.sh puts
// it in $FUSIOND_E2E_GENERAL_ARTIFACTS): one cubin at every shape, in the
// class or not, and misaligned.
TEST_P(RuntimeE2eTest, GeneralKernelsRunEveryShape) {
  const char* general = std::getenv("FUSIOND_E2E_GENERAL_ARTIFACTS");
  if (general == nullptr) GTEST_SKIP() << "FUSIOND_E2E_GENERAL_ARTIFACTS not set";
  const std::string dir = std::string(general) + "/" + GetParam();
  if (!std::filesystem::exists(dir + "/manifest.json")) GTEST_SKIP() << "no artifacts at " << dir;
  absl::StatusOr<ParsedFusion> parsed = ParseReproFile(CorpusDir() + "/" + GetParam() + ".py");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<std::unique_ptr<runtime::LoadedFusion>> fusion = runtime::LoadedFusion::Load(dir);
  ASSERT_TRUE(fusion.ok()) << fusion.status();
  for (const auto& k : (*fusion)->manifest().kernels) EXPECT_TRUE(k.requirements.empty()) << k.name;
  if ((*fusion)->manifest().symbols.empty()) {
    RunAndCheck(**fusion, *parsed, parsed->input_shapes, 1, /*offset=*/true);
    return;
  }
  uint64_t seed = 11;
  for (const auto& m : kOutOfClass)
    RunAndCheck(**fusion, *parsed, MapShapes(parsed->input_shapes, m), seed++);
  RunAndCheck(**fusion, *parsed, MapShapes(parsed->input_shapes, kInClass[1]), seed++,
              /*offset=*/true);
}

std::vector<std::string> CorpusStems() {
  std::vector<std::string> stems;
  for (const corpus::ClosedFormCase& c : corpus::ClosedFormCases()) {
    stems.push_back(c.file.substr(0, c.file.size() - 3));
  }
  return stems;
}

// Every corpus fusion (the closed-form table, which corpus_test.cc holds
// equal to the corpus folder).
INSTANTIATE_TEST_SUITE_P(Corpus, RuntimeE2eTest, ::testing::ValuesIn(CorpusStems()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Kernels compiled from known-wrong definitions (a dropped term, a skipped
// rounding: bench/gpu/selftest/mutants.sh), run on the real definition's
// inputs: some output must fail the check.
TEST(RuntimeE2eMutants, KnownWrongKernelsFailTheCheck) {
  absl::Status gpu = runtime::CheckGpuAvailable();
  if (!gpu.ok()) GTEST_SKIP() << "no usable GPU: " << gpu.message();
  const char* dir = std::getenv("FUSIOND_E2E_MUTANTS");
  if (dir == nullptr) GTEST_SKIP() << "FUSIOND_E2E_MUTANTS not set (scripts/device_bundle.sh)";
  std::ifstream list(std::string(dir) + "/MUTANTS");
  ASSERT_TRUE(list.good()) << "no " << dir << "/MUTANTS";
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  ASSERT_EQ(Cu().cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  ASSERT_EQ(Cu().cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  ASSERT_EQ(Cu().cuCtxSetCurrent(ctx), CUDA_SUCCESS);
  int mutants = 0;
  for (std::string file; std::getline(list, file);) {
    if (file.empty()) continue;
    const std::string stem = file.substr(0, file.find('.'));
    absl::StatusOr<ParsedFusion> parsed = ParseReproFile(CorpusDir() + "/" + file);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    absl::StatusOr<std::unique_ptr<runtime::LoadedFusion>> fusion =
        runtime::LoadedFusion::Load(std::string(dir) + "/" + stem);
    ASSERT_TRUE(fusion.ok()) << fusion.status();
    std::vector<corpus::OutputVerdict> verdicts;
    RunArtifact(stem, **fusion, *parsed, parsed->input_shapes, 1, false, &verdicts);
    int failed = 0;
    for (const corpus::OutputVerdict& v : verdicts) failed += !v.pass;
    EXPECT_GT(failed, 0) << "the kernel of the known-wrong " << stem << " passed";
    std::printf("  known-wrong %s: %d of %zu checks failed\n", stem.c_str(), failed,
                verdicts.size());
    ++mutants;
  }
  EXPECT_GT(mutants, 0);
  Cu().cuDevicePrimaryCtxRelease(dev);
}

}  // namespace
}  // namespace fusiond
