// The C++ client against the real fusiond: misses, hits, error codes,
// `fusionc --server` giving the same report as the embedded cache, and lean
// replies (no source, no report) that the runtime plans a launch from.
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
#ifdef FUSIOND_WITH_RUNTIME
#include "client/runtime/launch_plan.h"
#include "client/runtime/manifest.h"
#endif
#include "compiler/frontend/frontend.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/util/child_process.h"
#include "tests/util/free_port.h"

namespace fusiond {
namespace {

FusionClientOptions WithTimeout(double seconds) {
  FusionClientOptions options;
  options.timeout_s = seconds;
  return options;
}

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
      FusionClient client(target_, WithTimeout(1));
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

  FusionClient nobody("127.0.0.1:" + std::to_string(FreePort()), WithTimeout(2));
  EXPECT_EQ(nobody.Stats().status().code(), absl::StatusCode::kUnavailable);
}

size_t SourceBytes(const fusiond::v1::CompiledFusion& c) {
  size_t bytes = 0;
  for (const auto& s : c.segments()) bytes += s.kernel().cuda_source().size();
  return bytes;
}

bool SameResult(const fusiond::v1::CompiledFusion& a, const fusiond::v1::CompiledFusion& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

// The kernels a lean reply carries are enough to launch: the fusion manifest
// parses, a launch plans at the compiled shapes, and every kernel the
// manifest names has its binary in the reply.
void ExpectLaunchable(const fusiond::v1::CompiledFusion& c, const ParsedFusion& f) {
#ifndef FUSIOND_WITH_RUNTIME
  std::printf("no client runtime in this build (no CUDA headers): launch plan not checked\n");
#else
  auto manifest = runtime::ParseManifest(c.manifest_json());
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  auto plan = runtime::PlanLaunch(*manifest, f.input_shapes);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->launches.size(), manifest->kernels.size());
  std::vector<const fusiond::v1::Kernel*> kernels;
  for (const auto& s : c.segments()) {
    if (s.has_kernel()) kernels.push_back(&s.kernel());
  }
  ASSERT_EQ(kernels.size(), manifest->kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(kernels[i]->kernel_name(), manifest->kernels[i].name);
    EXPECT_EQ(kernels[i]->binary().rfind("\x7f"
                                         "ELF",
                                         0),
              0u)
        << "kernel " << i << ": no cubin";
    EXPECT_FALSE(kernels[i]->manifest_json().empty());
  }
#endif
}

TEST_F(ClientTest, LeanRepliesCarryWhatALaunchNeeds) {
  FusionClient client(target_);
  ParsedFusion f;
  ASSERT_NO_FATAL_FAILURE(Corpus("layernorm_bwd_thunder.py", &f));
  const auto full =
      MakeCompileRequest(f.graph, f.input_shapes, CompileOptions(), ReplyContents::Everything());
  const auto lean = MakeCompileRequest(f.graph, f.input_shapes, CompileOptions());
  auto full_miss = client.Compile(full);
  ASSERT_TRUE(full_miss.ok()) << full_miss.status();
  EXPECT_EQ(full_miss->cache(), fusiond::v1::MISS);
  // The first lean request is parsed; the second and later take the raw hit
  // path (trimmed record, kept); both must agree with the trimmed full reply.
  auto lean_hit = client.Compile(lean);
  auto lean_hit_raw = client.Compile(lean);
  auto full_hit = client.Compile(full);
  ASSERT_TRUE(lean_hit.ok() && lean_hit_raw.ok() && full_hit.ok()) << lean_hit.status();
  EXPECT_EQ(lean_hit->cache(), fusiond::v1::HIT);
  EXPECT_EQ(lean_hit_raw->cache(), fusiond::v1::HIT);
  EXPECT_EQ(full_hit->cache(), fusiond::v1::HIT);
  EXPECT_TRUE(SameResult(full_hit->result(), full_miss->result()));
  fusiond::v1::CompiledFusion trimmed = full_hit->result();
  TrimCompiledFusion(ReplyContents{}, &trimmed);
  EXPECT_TRUE(SameResult(lean_hit->result(), trimmed));
  EXPECT_TRUE(SameResult(lean_hit_raw->result(), trimmed));
  EXPECT_EQ(SourceBytes(lean_hit->result()), 0u);
  EXPECT_TRUE(lean_hit->result().report_json().empty());
  EXPECT_GT(SourceBytes(full_hit->result()), 0u);
  EXPECT_FALSE(full_hit->result().report_json().empty());
  std::printf(
      "hit reply of %s: %zu bytes with source and report (source %zu, report_json %zu), "
      "%zu bytes without\n",
      "layernorm_bwd_thunder", full_hit->ByteSizeLong(), SourceBytes(full_hit->result()),
      full_hit->result().report_json().size(), lean_hit_raw->ByteSizeLong());
  EXPECT_LT(lean_hit_raw->ByteSizeLong(),
            full_hit->ByteSizeLong() - SourceBytes(full_hit->result()));
  ASSERT_NO_FATAL_FAILURE(ExpectLaunchable(lean_hit_raw->result(), f));

  // A lean miss is the same as the lean hit that follows it; source alone
  // comes without the report.
  ParsedFusion g;
  ASSERT_NO_FATAL_FAILURE(Corpus("softmax_bwd.py", &g));
  const auto lean_g = MakeCompileRequest(g.graph, g.input_shapes, CompileOptions());
  auto lean_miss = client.Compile(lean_g);
  auto lean_again = client.Compile(lean_g);
  ASSERT_TRUE(lean_miss.ok() && lean_again.ok()) << lean_miss.status();
  EXPECT_EQ(lean_miss->cache(), fusiond::v1::MISS);
  EXPECT_EQ(lean_again->cache(), fusiond::v1::HIT);
  EXPECT_TRUE(SameResult(lean_miss->result(), lean_again->result()));
  EXPECT_EQ(SourceBytes(lean_miss->result()), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectLaunchable(lean_miss->result(), g));
  auto source_only = client.Lookup(
      MakeCompileRequest(g.graph, g.input_shapes, CompileOptions(), ReplyContents{true, false}));
  ASSERT_TRUE(source_only.ok()) << source_only.status();
  EXPECT_GT(SourceBytes(source_only->result()), 0u);
  EXPECT_TRUE(source_only->result().report_json().empty());
  EXPECT_EQ(source_only->result().passes_size(), 0);
}

}  // namespace
}  // namespace fusiond
