// A cache miss runs the front half of the pipeline (verify, passes,
// segmentation, scheduling) once: the compile's own front half finds the
// key, which is claimed before code generation. In process and in compile
// workers; the kernels are those CompileFusion gives.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cache/cached_compiler.h"
#include "cache/result_proto.h"
#include "compiler/frontend/frontend.h"
#include "compiler/ir/ir_proto.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

// y = x * c + x, x: float[64, 256]; `name` changes the request, not the key.
FusionRequest PointwiseRequest(double c, const std::string& name) {
  Graph g;
  GraphBuilder b(&g);
  auto x = b.DefineTensor(name, DataType::kFloat, {64, 256});
  EXPECT_TRUE(x.ok()) << x.status();
  auto y = b.Binary(OpKind::kMul, *x, b.DefineConstant(c, DataType::kDouble));
  EXPECT_TRUE(y.ok()) << y.status();
  auto z = b.Binary(OpKind::kAdd, *y, *x);
  EXPECT_TRUE(z.ok()) << z.status();
  EXPECT_TRUE(b.AddOutput(*z).ok());
  FusionRequest r;
  r.graph = ToProto(g);
  r.input_shapes = {{64, 256}};
  return r;
}

class FrontHalfTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/front_half_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    KernelCacheOptions o;
    o.dir = dir_;
    auto cache = KernelCache::Open(o);
    ASSERT_TRUE(cache.ok()) << cache.status();
    cache_ = *std::move(cache);
    CachedCompilerOptions options;
    if (GetParam()) options.worker_argv = {FUSIOND_COMPILE_WORKER};
    compiler_ = std::make_unique<CachedCompiler>(cache_.get(), options);
  }
  void TearDown() override {
    compiler_.reset();
    cache_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string dir_;
  std::unique_ptr<KernelCache> cache_;
  std::unique_ptr<CachedCompiler> compiler_;
};

TEST_P(FrontHalfTest, AMissRunsTheFrontHalfOnce) {
  auto miss = compiler_->Compile(PointwiseRequest(2.0, "T0"));
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->hit);
  CachedCompilerStats s = compiler_->Stats();
  EXPECT_EQ(s.front_halves, 1u);
  EXPECT_EQ(s.key_resolutions, 1u);
  EXPECT_EQ(s.compiles, 1u);
  // The miss's stages: the pipeline's, once; no separate key resolution.
  for (const char* stage : {"verify", "passes", "segment", "schedule", "codegen", "nvrtc"}) {
    EXPECT_EQ(miss->stage_micros.count(stage), 1u) << stage;
  }
  EXPECT_EQ(miss->stage_micros.count("key"), 0u);

  // The same request: a hit, no front half.
  auto hit = compiler_->Compile(PointwiseRequest(2.0, "T0"));
  ASSERT_TRUE(hit.ok() && hit->hit) << hit.status();
  EXPECT_EQ(compiler_->Stats().front_halves, 1u);
  // Another request with the same key: its front half finds the stored
  // record, and code generation does not run.
  auto renamed = compiler_->Compile(PointwiseRequest(2.0, "renamed"));
  ASSERT_TRUE(renamed.ok()) << renamed.status();
  EXPECT_TRUE(renamed->hit);
  EXPECT_EQ(renamed->cache_key, miss->cache_key);
  s = compiler_->Stats();
  EXPECT_EQ(s.front_halves, 2u);
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(renamed->stage_micros.count("codegen"), 0u);
  EXPECT_EQ(renamed->stage_micros.count("key"), 1u);
  // A Lookup of a new request: one front half for its key, never a compile.
  auto looked = compiler_->Lookup(PointwiseRequest(2.0, "looked_up"));
  ASSERT_TRUE(looked.ok()) << looked.status();
  EXPECT_EQ(compiler_->Stats().front_halves, 3u);
  EXPECT_EQ(compiler_->Stats().compiles, 1u);
}

// Every corpus fusion's kernels and manifests from a cache miss are those
// CompileFusion gives in one call.
TEST_P(FrontHalfTest, KernelsAreThoseOfTheWholePipeline) {
  for (const char* name : {"rmsnorm_bwd_manual.py", "layernorm_bwd_thunder.py", "softmax_fwd.py",
                           "batchnorm_bwd_thunder.py", "bias_gelu_fwd.py"}) {
    SCOPED_TRACE(name);
    auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/" + name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    CompileOptions options;
    options.arch = "sm_90";
    auto whole = CompileFusion(parsed->graph, parsed->input_shapes, options);
    ASSERT_TRUE(whole.ok()) << whole.status();
    fusiond::v1::CompiledFusion want = CompiledFusionFromResult(*whole);
    FusionRequest request;
    request.graph = ToProto(parsed->graph);
    request.input_shapes = parsed->input_shapes;
    request.options = options;
    auto got = compiler_->Compile(request);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_FALSE(got->hit);
    EXPECT_EQ(got->compiled.manifest_json(), want.manifest_json());
    ASSERT_EQ(got->compiled.segments_size(), want.segments_size());
    for (int i = 0; i < want.segments_size(); ++i) {
      const auto& a = got->compiled.segments(i).kernel();
      const auto& b = want.segments(i).kernel();
      EXPECT_EQ(a.cuda_source(), b.cuda_source()) << "segment " << i;
      EXPECT_EQ(a.binary(), b.binary()) << "segment " << i;
      EXPECT_EQ(a.manifest_json(), b.manifest_json()) << "segment " << i;
    }
  }
  EXPECT_EQ(compiler_->Stats().front_halves, 5u);
}

INSTANTIATE_TEST_SUITE_P(InProcessAndWorkers, FrontHalfTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Workers" : "InProcess";
                         });

}  // namespace
}  // namespace fusiond
