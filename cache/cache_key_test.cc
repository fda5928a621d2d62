// The cache key's bucket: specialized kernels (manifest `requires`) run the
// sizes they were compiled for, so a persistent segment's entry holds its
// symbol sizes; pointwise and multi-pass kernels, and --general ones, run
// every shape and share an entry across shapes with the same parameters.
// Every key holds the compiler version, and an upgrade misses.
#include "cache/cache_key.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_join.h"
#include "cache/cached_compiler.h"
#include "cache/kernel_text_store.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/ir_proto.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/version/compiler_version.h"

namespace fusiond {
namespace {

CompileResult Scheduled(SchedulerKind kind, bool multi_pass, std::vector<int64_t> sizes) {
  CompileResult r;
  r.canonical_hash = "0123456789abcdef";
  SegmentResult s;
  s.kind = kind;
  s.params.kind = kind;
  s.params.outer_size = 2;   // a reduction over [2, 5] or [10, 1] of its axes:
  s.params.inner_size = 10;  // the same parameters
  s.params.multi_pass = multi_pass;
  s.symbol_sizes = std::move(sizes);
  r.segments.push_back(std::move(s));
  return r;
}

TEST(CacheKey, PersistentEntriesHoldTheSizesCompiledFor) {
  CompileOptions specialized, general;
  general.general_kernels = true;
  const auto a = Scheduled(SchedulerKind::kInnerPersistent, false, {2, 5, 1});
  const auto b = Scheduled(SchedulerKind::kInnerPersistent, false, {2, 1, 5});
  EXPECT_NE(MakeCacheKey(a, specialized).bucket, MakeCacheKey(b, specialized).bucket);
  EXPECT_NE(MakeCacheKey(a, specialized).bucket.find(":2x5x1"), std::string::npos);
  EXPECT_EQ(MakeCacheKey(a, general).bucket, MakeCacheKey(b, general).bucket);
  EXPECT_NE(MakeCacheKey(a, specialized).options, MakeCacheKey(a, general).options);
  for (auto [kind, multi_pass] : {std::pair{SchedulerKind::kPointwise, false},
                                  std::pair{SchedulerKind::kInnerReduction, true}}) {
    EXPECT_EQ(MakeCacheKey(Scheduled(kind, multi_pass, {2, 5, 1}), specialized).bucket,
              MakeCacheKey(Scheduled(kind, multi_pass, {2, 1, 5}), specialized).bucket);
  }
}

// The compiler version: the build's hash of the compiler's sources and
// NVRTC's flags, in the record key, the request key and the kernel-text
// index.
TEST(CompilerVersion, IsInEveryKey) {
  const std::string v = CompilerVersionString();
  EXPECT_EQ(CompilerSourceHash().size(), 16u);
  EXPECT_GT(CompilerSourceFiles(), 50);
  EXPECT_EQ(v.rfind("src-" + CompilerSourceHash() + ";nvrtc=", 0), 0u) << v;
  for (const std::string& flag : NvrtcFlags()) EXPECT_NE(v.find(flag), std::string::npos) << v;
  const CompileResult r = Scheduled(SchedulerKind::kPointwise, false, {});
  const std::string key = MakeCacheKey(r, CompileOptions()).Encode();
  const fusiond::v1::FusionGraph graph;
  const std::string request = RequestKey(graph, {{4}}, CompileOptions());
  const std::string text = KernelTextStore::IndexKey("source", "kernel", "sm_90");
  EXPECT_NE(key.find(v), std::string::npos) << key;
  EXPECT_NE(request.find(v), std::string::npos);
  {
    ScopedCompilerVersionForTesting other("src-0123456789abcdef;nvrtc=-O3");
    EXPECT_EQ(CompilerVersionString(), "src-0123456789abcdef;nvrtc=-O3");
    EXPECT_NE(MakeCacheKey(r, CompileOptions()).Encode(), key);
    EXPECT_NE(RequestKey(graph, {{4}}, CompileOptions()), request);
    EXPECT_NE(KernelTextStore::IndexKey("source", "kernel", "sm_90"), text);
  }
  EXPECT_EQ(CompilerVersionString(), v);
}

// y = x * 2 + x over float[64, 256].
FusionRequest SmallRequest() {
  Graph g;
  GraphBuilder b(&g);
  auto x = b.DefineTensor("T0", DataType::kFloat, {64, 256});
  EXPECT_TRUE(x.ok()) << x.status();
  auto y = b.Binary(OpKind::kMul, *x, b.DefineConstant(2.0, DataType::kDouble));
  EXPECT_TRUE(y.ok()) << y.status();
  auto z = b.Binary(OpKind::kAdd, *y, *x);
  EXPECT_TRUE(z.ok()) << z.status();
  EXPECT_TRUE(b.AddOutput(*z).ok());
  FusionRequest req;
  req.graph = ToProto(g);
  req.input_shapes = {{64, 256}};
  return req;
}

// The upgrade: a fusion compiled and cached by one build, served after a
// restart from the persisted request index; then the daemon restarts as a
// build with a changed heuristic (another compiler version): the same
// request is a miss and compiles again, and the old record is not served.
TEST(CompilerVersion, AnUpgradeRecompilesACachedRequest) {
  char tmpl[] = "/tmp/cache_key_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::unique_ptr<KernelCache> cache;
  std::unique_ptr<CachedCompiler> compiler;
  auto reopen = [&] {
    compiler.reset();
    cache.reset();
    KernelCacheOptions o;
    o.dir = dir;
    auto c = KernelCache::Open(o);
    ASSERT_TRUE(c.ok()) << c.status();
    cache = *std::move(c);
    compiler = std::make_unique<CachedCompiler>(cache.get(), CachedCompilerOptions{});
  };
  std::string old_key;
  {
    ScopedCompilerVersionForTesting before("src-00000000000000aa;nvrtc=" +
                                           absl::StrJoin(NvrtcFlags(), ","));
    ASSERT_NO_FATAL_FAILURE(reopen());
    auto first = compiler->Compile(SmallRequest());
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_FALSE(first->hit);
    old_key = first->cache_key;
    ASSERT_NO_FATAL_FAILURE(reopen());
    auto again = compiler->Compile(SmallRequest());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(again->hit);
    EXPECT_EQ(compiler->Stats().key_resolutions, 0u);  // found in the persisted request index
  }
  ASSERT_NO_FATAL_FAILURE(reopen());  // the upgraded build
  auto after = compiler->Compile(SmallRequest());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_FALSE(after->hit);
  EXPECT_TRUE(after->compiled_here);
  EXPECT_EQ(compiler->Stats().compiles, 1u);
  EXPECT_NE(after->cache_key, old_key);
  EXPECT_NE(after->cache_key.find(CompilerVersionString()), std::string::npos) << after->cache_key;
  auto next = compiler->Compile(SmallRequest());
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->hit);
  compiler.reset();
  cache.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fusiond
