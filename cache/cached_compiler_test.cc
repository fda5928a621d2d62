#include "cache/cached_compiler.h"

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compiler/ir/builder.h"
#include "compiler/ir/ir_proto.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace fusiond {
namespace {

// y = x * c (+ x), x: float[rows, cols] (symbolic axes when rows < 0).
FusionRequest MakeRequest(double c, int64_t rows = 64, int64_t cols = 256,
                          const std::string& name = "T0") {
  Graph g;
  GraphBuilder b(&g);
  auto x = b.DefineTensor(name, DataType::kFloat, {rows < 0 ? -1 : rows, rows < 0 ? -1 : cols});
  EXPECT_TRUE(x.ok()) << x.status();
  ValueId k = b.DefineConstant(c, DataType::kDouble);
  auto y = b.Binary(OpKind::kMul, *x, k);
  EXPECT_TRUE(y.ok()) << y.status();
  auto z = b.Binary(OpKind::kAdd, *y, *x);
  EXPECT_TRUE(z.ok()) << z.status();
  EXPECT_TRUE(b.AddOutput(*z).ok());
  FusionRequest r;
  r.graph = ToProto(g);
  r.input_shapes = {{std::abs(rows), cols}};
  return r;
}

class CachedCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cached_compiler_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Reopen();
  }
  void TearDown() override {
    compiler_.reset();
    cache_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Reopen(CachedCompilerOptions options = {}) {
    compiler_.reset();
    cache_.reset();
    KernelCacheOptions o;
    o.dir = dir_;
    auto cache = KernelCache::Open(o);
    ASSERT_TRUE(cache.ok()) << cache.status();
    cache_ = *std::move(cache);
    compiler_ = std::make_unique<CachedCompiler>(cache_.get(), std::move(options));
  }

  std::string dir_;
  std::unique_ptr<KernelCache> cache_;
  std::unique_ptr<CachedCompiler> compiler_;
};

TEST_F(CachedCompilerTest, MissThenHitThenHitAfterRestart) {
  auto first = compiler_->Compile(MakeRequest(2.0));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->hit);
  EXPECT_TRUE(first->compiled_here);
  EXPECT_NE(first->ReportJson().find("\"cache\":\"miss\""), std::string::npos);
  ASSERT_GE(first->compiled.segments_size(), 1);

  auto second = compiler_->Compile(MakeRequest(2.0));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->hit);
  EXPECT_EQ(second->cache_key, first->cache_key);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(second->compiled, first->compiled));
  EXPECT_NE(second->ReportJson().find("\"cache\":\"hit\""), std::string::npos);
  EXPECT_EQ(compiler_->Stats().compiles, 1u);

  Reopen();
  auto third = compiler_->Compile(MakeRequest(2.0));
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->hit);
  EXPECT_EQ(compiler_->Stats().compiles, 0u);
  EXPECT_EQ(compiler_->Stats().key_resolutions, 0u);  // the request index survived
}

TEST_F(CachedCompilerTest, DifferentConstantsAreDifferentEntries) {
  auto a = compiler_->Compile(MakeRequest(2.0));
  auto b = compiler_->Compile(MakeRequest(3.0));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->cache_key, b->cache_key);
  EXPECT_FALSE(b->hit);
  EXPECT_EQ(compiler_->Stats().compiles, 2u);
}

// A symbolic definition at another batch size is another record (the
// heuristics' parameters hold the sizes), but the same kernel text: the
// second compile reuses NVRTC's output.
TEST_F(CachedCompilerTest, NewBatchSizeIsANewRecordButNotANewNvrtcCompile) {
  auto a = compiler_->Compile(MakeRequest(2.5, -64, 256));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = compiler_->Compile(MakeRequest(2.5, -4096, 256));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(a->hit);
  EXPECT_FALSE(b->hit);
  EXPECT_NE(a->cache_key, b->cache_key);
  EXPECT_EQ(compiler_->Stats().compiles, 2u);
  if (a->compiled.segments(0).kernel().binary().empty()) GTEST_SKIP() << "no NVRTC in this build";
  EXPECT_EQ(compiler_->Stats().nvrtc_reuses, 1u);
  EXPECT_EQ(a->compiled.segments(0).kernel().binary(), b->compiled.segments(0).kernel().binary());
  EXPECT_LT(b->stage_micros.at("nvrtc"), a->stage_micros.at("nvrtc"));
}

// After a restart the kernel text is found in the stored record: a new
// batch size still runs no NVRTC.
TEST_F(CachedCompilerTest, NewBatchSizeAfterARestartFindsTheKernelInTheStoredRecord) {
  auto a = compiler_->Compile(MakeRequest(3.5, -64, 256));
  ASSERT_TRUE(a.ok()) << a.status();
  if (a->compiled.segments(0).kernel().binary().empty()) GTEST_SKIP() << "no NVRTC in this build";
  Reopen();
  auto b = compiler_->Compile(MakeRequest(3.5, -4096, 256));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->hit);
  EXPECT_EQ(compiler_->Stats().compiles, 1u);
  EXPECT_EQ(compiler_->Stats().nvrtc_reuses, 1u);
  EXPECT_EQ(a->compiled.segments(0).kernel().binary(), b->compiled.segments(0).kernel().binary());
  EXPECT_EQ(a->compiled.segments(0).kernel().registers(),
            b->compiled.segments(0).kernel().registers());
  // Another definition's kernel is not found there: compiled.
  auto c = compiler_->Compile(MakeRequest(4.5, -4096, 256));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(compiler_->Stats().nvrtc_reuses, 1u);
}

// The index points at records; once the record is evicted the kernel is
// compiled again, and nothing else changes.
TEST_F(CachedCompilerTest, KernelIndexOfAnEvictedRecordIsAMiss) {
  auto a = compiler_->Compile(MakeRequest(5.5, -64, 256));
  ASSERT_TRUE(a.ok()) << a.status();
  if (a->compiled.segments(0).kernel().binary().empty()) GTEST_SKIP() << "no NVRTC in this build";
  Reopen();
  {
    rocksdb::DB* db = cache_->db();
    ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), cache_->records_family(), a->cache_key).ok());
  }
  Reopen();
  auto b = compiler_->Compile(MakeRequest(5.5, -4096, 256));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(compiler_->Stats().nvrtc_reuses, 0u);
  EXPECT_EQ(a->compiled.segments(0).kernel().binary(), b->compiled.segments(0).kernel().binary());
}

TEST_F(CachedCompilerTest, ConcurrentIdenticalRequestsCompileOnce) {
  constexpr int kRequests = 32;
  std::vector<std::promise<absl::StatusOr<CachedCompileResult>>> results(kRequests);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i) {
    threads.emplace_back([&, i] {
      compiler_->CompileAsync(MakeRequest(5.0), [&, i](absl::StatusOr<CachedCompileResult> r) {
        results[i].set_value(std::move(r));
      });
    });
  }
  for (auto& t : threads) t.join();
  int compiled_here = 0;
  for (auto& p : results) {
    auto r = p.get_future().get();
    ASSERT_TRUE(r.ok()) << r.status();
    compiled_here += r->compiled_here;
  }
  EXPECT_EQ(compiler_->Stats().compiles, 1u);
  EXPECT_EQ(compiled_here, 1);
}

TEST_F(CachedCompilerTest, CorruptRecordIsRecompiledOnceAndCounted) {
  auto first = compiler_->Compile(MakeRequest(7.0));
  ASSERT_TRUE(first.ok()) << first.status();
  // Damage the stored value: a flipped byte in the middle of the record.
  std::string value;
  ASSERT_TRUE(cache_->db()->Get({}, cache_->records_family(), first->cache_key, &value).ok());
  value[value.size() / 2] ^= 0x01;
  ASSERT_TRUE(cache_->db()->Put({}, cache_->records_family(), first->cache_key, value).ok());
  // The open cache still holds the verified copy in memory; a restarted
  // one reads the damaged bytes from disk.
  Reopen();

  auto second = compiler_->Compile(MakeRequest(7.0));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->hit);
  EXPECT_EQ(second->compiled.canonical_hash(), first->compiled.canonical_hash());
  EXPECT_EQ(cache_->Stats().corrupt_records, 1u);
  EXPECT_EQ(compiler_->Stats().compiles, 1u);
  auto third = compiler_->Compile(MakeRequest(7.0));
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->hit);
  EXPECT_EQ(cache_->Stats().corrupt_records, 1u);
}

TEST_F(CachedCompilerTest, BadInputIsInvalidArgumentAndNotCached) {
  FusionRequest r = MakeRequest(1.0);
  r.graph.mutable_nodes(0)->add_operands(999);
  auto got = compiler_->Compile(r);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
  EXPECT_EQ(cache_->Stats().entries, 0u);
}

TEST_F(CachedCompilerTest, LookupNeverCompiles) {
  auto miss = compiler_->Lookup(MakeRequest(9.0));
  EXPECT_TRUE(absl::IsNotFound(miss.status())) << miss.status();
  EXPECT_EQ(compiler_->Stats().compiles, 0u);
  ASSERT_TRUE(compiler_->Compile(MakeRequest(9.0)).ok());
  auto hit = compiler_->Lookup(MakeRequest(9.0));
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_TRUE(hit->hit);
}

TEST_F(CachedCompilerTest, FullQueueIsResourceExhausted) {
  // One compile thread, one queue slot; the first compile is held inside
  // on_compiled so the second waits in the queue and the third is refused.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false, entered = false;
  CachedCompilerOptions options;
  options.compile_threads = 1;
  options.max_queue = 1;
  options.on_compiled = [&](const CachedCompileResult&) {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  };
  Reopen(options);
  std::promise<absl::StatusOr<CachedCompileResult>> p1, p2, p3;
  compiler_->CompileAsync(MakeRequest(11.0), [&](auto r) { p1.set_value(std::move(r)); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered; });
  }
  compiler_->CompileAsync(MakeRequest(12.0), [&](auto r) { p2.set_value(std::move(r)); });
  compiler_->CompileAsync(MakeRequest(13.0), [&](auto r) { p3.set_value(std::move(r)); });
  auto third = p3.get_future().get();
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted) << third.status();
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  EXPECT_TRUE(p1.get_future().get().ok());
  EXPECT_TRUE(p2.get_future().get().ok());
  EXPECT_EQ(compiler_->Stats().rejected, 1u);
}

TEST_F(CachedCompilerTest, EmbeddedCompileWithCache) {
  Graph g;
  ASSERT_TRUE(FromProto(MakeRequest(4.0).graph).ok());
  g = *FromProto(MakeRequest(4.0).graph);
  auto first = CompileWithCache(g, {{64, 256}}, CompileOptions(), cache_.get());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->hit);
  auto second = CompileWithCache(g, {{64, 256}}, CompileOptions(), cache_.get());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->hit);
}

}  // namespace
}  // namespace fusiond
