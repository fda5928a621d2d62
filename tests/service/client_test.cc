// The C++ client against the real fusiond: misses, hits, error codes, and
// `fusionc --server` giving the same report as the embedded cache.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cache/cached_compiler.h"
#include "client/cpp/fusion_client.h"
#include "compiler/frontend/frontend.h"
#include "gtest/gtest.h"
#include "tests/util/child_process.h"
#include "tests/util/free_port.h"

namespace fusiond {
namespace {

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fusiond_client_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    target_ = "127.0.0.1:" + std::to_string(FreePort());
    StartDaemon();
  }
  void TearDown() override {
    StopDaemon();
    std::filesystem::remove_all(dir_);
  }
  void StartDaemon() {
    ASSERT_TRUE(daemon_.Start(
        {FUSIOND_BIN, "--listen", target_, "--metrics", "", "--cache-dir", dir_ + "/cache"},
        dir_ + "/fusiond.log"));
    for (int i = 0; i < 200; ++i) {  // up to 20 s
      // A fresh channel each time: one that found nothing listening backs off.
      FusionClient client(target_, {.timeout_s = 1});
      if (client.Stats().ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    FAIL() << "fusiond did not come up at " << target_;
  }
  void StopDaemon() {
    if (!daemon_.running()) return;
    const int status = daemon_.Stop(SIGTERM);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  // The corpus file `name`, or a fatal failure saying why it could not be read.
  static void Corpus(const std::string& name, ParsedFusion* out) {
    auto parsed = ParseReproFile(std::string(FUSIOND_CORPUS_DIR) + "/" + name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    *out = *std::move(parsed);
  }

  std::string dir_, target_;
  ChildProcess daemon_;
};

TEST_F(ClientTest, MissThenHitAndTheSameReportAsTheEmbeddedCache) {
  ParsedFusion f;
  ASSERT_NO_FATAL_FAILURE(Corpus("softmax_fwd.py", &f));
  CompileOptions options;
  auto miss = RemoteCompileReportJson(target_, f.graph, f.input_shapes, options);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_EQ(miss->rfind("{\"cache\":\"miss\"", 0), 0u) << *miss;
  EXPECT_NE(miss->find("\"segments\""), std::string::npos);
  auto hit = RemoteCompileReportJson(target_, f.graph, f.input_shapes, options);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->rfind("{\"cache\":\"hit\"", 0), 0u);

  // The daemon holds the cache; the embedded mode is refused, not corrupted.
  KernelCacheOptions cache_options;
  cache_options.dir = dir_ + "/cache";
  auto busy = KernelCache::Open(cache_options);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), absl::StatusCode::kUnavailable);

  // Stop the daemon; fusionc without --server opens the same cache.
  StopDaemon();
  auto cache = KernelCache::Open(cache_options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  auto local = CompileWithCache(f.graph, f.input_shapes, options, cache->get());
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_TRUE(local->hit);
  EXPECT_EQ(local->ReportJson(), *hit);
}

TEST_F(ClientTest, ErrorsKeepTheirCodes) {
  FusionClient client(target_);
  ParsedFusion f;
  ASSERT_NO_FATAL_FAILURE(Corpus("rmsnorm_fwd.py", &f));
  auto request = MakeCompileRequest(f.graph, f.input_shapes, CompileOptions());
  auto lookup = client.Lookup(request);
  EXPECT_EQ(lookup.status().code(), absl::StatusCode::kNotFound) << lookup.status();

  auto bad = request;
  bad.mutable_graph()->mutable_nodes(0)->add_operands(12345);
  auto invalid = client.Compile(bad);
  EXPECT_EQ(invalid.status().code(), absl::StatusCode::kInvalidArgument) << invalid.status();

  auto compiled = client.Compile(request);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->cache(), fusiond::v1::MISS);
  ASSERT_GE(compiled->result().segments_size(), 1);
  EXPECT_FALSE(compiled->result().segments(0).params().kind().empty());
  auto found = client.Lookup(request);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->cache(), fusiond::v1::HIT);
  auto stats = client.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->compiles(), 1u);

  FusionClient nobody("127.0.0.1:" + std::to_string(FreePort()), {.timeout_s = 2});
  EXPECT_EQ(nobody.Stats().status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace fusiond
