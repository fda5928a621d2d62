#include "cache/compile_worker.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cache/cached_compiler.h"
#include "compiler/ir/builder.h"
#include "compiler/ir/ir_proto.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

using Clock = std::chrono::steady_clock;

// x: float[64, 256]; `ops` unary ops in a chain (sin/cos alternating), then
// times `c`. A chain of a few hundred ops keeps NVRTC busy for many seconds.
FusionRequest ChainRequest(int ops, double c = 2.0) {
  Graph g;
  GraphBuilder b(&g);
  auto x = b.DefineTensor("T0", DataType::kFloat, {64, 256});
  EXPECT_TRUE(x.ok()) << x.status();
  ValueId v = *x;
  for (int i = 0; i < ops; ++i) {
    auto y = b.Unary(i % 2 ? OpKind::kCos : OpKind::kSin, v);
    EXPECT_TRUE(y.ok()) << y.status();
    v = *y;
  }
  auto z = b.Binary(OpKind::kMul, v, b.DefineConstant(c, DataType::kDouble));
  EXPECT_TRUE(z.ok()) << z.status();
  EXPECT_TRUE(b.AddOutput(*z).ok());
  FusionRequest r;
  r.graph = ToProto(g);
  r.input_shapes = {{64, 256}};
  return r;
}

WorkerJob JobOf(const FusionRequest& r, WorkerJobKind kind) {
  WorkerJob job;
  job.kind = kind;
  job.graph = r.graph;
  job.input_shapes = r.input_shapes;
  return job;
}

// The pids of this process' children.
std::vector<pid_t> Children() {
  std::vector<pid_t> out;
  DIR* proc = opendir("/proc");
  while (dirent* e = readdir(proc)) {
    pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state;
    int ppid = 0;
    if (sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == getpid()) {
      out.push_back(pid);
    }
  }
  closedir(proc);
  return out;
}

CompileWorkerPoolOptions PoolOptions(double timeout_s = 0) {
  CompileWorkerPoolOptions o;
  o.argv = {FUSIOND_COMPILE_WORKER};
  o.timeout_s = timeout_s;
  return o;
}

TEST(CompileWorkerTest, WorkerGivesTheInProcessKeyAndKernels) {
  FusionRequest r = ChainRequest(2);
  CompileWorkerPool pool(PoolOptions(), nullptr);
  auto in_worker = pool.Run(JobOf(r, WorkerJobKind::kCompile), nullptr);
  ASSERT_TRUE(in_worker.ok()) << in_worker.status();
  auto in_process = RunWorkerJob(JobOf(r, WorkerJobKind::kCompile), nullptr);
  ASSERT_TRUE(in_process.ok()) << in_process.status();
  EXPECT_EQ(in_worker->cache_key, in_process->cache_key);
  ASSERT_EQ(in_worker->compiled.segments_size(), in_process->compiled.segments_size());
  EXPECT_EQ(in_worker->compiled.segments(0).kernel().cuda_source(),
            in_process->compiled.segments(0).kernel().cuda_source());
  auto key_only = pool.Run(JobOf(r, WorkerJobKind::kKey), nullptr);
  ASSERT_TRUE(key_only.ok()) << key_only.status();
  EXPECT_EQ(key_only->cache_key, in_process->cache_key);
  EXPECT_EQ(pool.Stats().started, 1u);  // one worker served all jobs
}

TEST(CompileWorkerTest, BadGraphIsInvalidArgumentFromTheWorker) {
  FusionRequest r = ChainRequest(1);
  r.graph.mutable_nodes(0)->add_operands(12345);
  CompileWorkerPool pool(PoolOptions(), nullptr);
  auto result = pool.Run(JobOf(r, WorkerJobKind::kKey), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(result.status())) << result.status();
}

// The worker applies the caller's kernel parameter limit (ChainRequest's
// kernel has an input and an output).
TEST(CompileWorkerTest, WorkerAppliesTheKernelParameterLimit) {
  WorkerJob job = JobOf(ChainRequest(1), WorkerJobKind::kCompile);
  job.options.limits.max_kernel_params = 1;
  CompileWorkerPool pool(PoolOptions(), nullptr);
  auto result = pool.Run(job, nullptr);
  EXPECT_TRUE(absl::IsResourceExhausted(result.status())) << result.status();
  EXPECT_NE(result.status().message().find("max_kernel_params"), std::string::npos);
}

// Eight inputs of eight lengths, each through `ops` unary ops and out: eight
// iteration domains, so eight kernels.
FusionRequest SplitRequest(int ops) {
  Graph g;
  GraphBuilder b(&g);
  FusionRequest r;
  for (int k = 0; k < 8; ++k) {
    auto x = b.DefineTensor("T" + std::to_string(k), DataType::kFloat, {1000 + k});
    EXPECT_TRUE(x.ok()) << x.status();
    ValueId v = *x;
    for (int i = 0; i < ops; ++i) v = *b.Unary(k % 2 ? OpKind::kCos : OpKind::kSin, v);
    EXPECT_TRUE(b.AddOutput(v).ok());
    r.input_shapes.push_back({1000 + k});
  }
  r.graph = ToProto(g);
  return r;
}

// A worker compiles a split fusion's kernels on several threads, each asking
// the parent for its NVRTC output: the asks must not interleave on the socket
// (they did: the parent read a garbage frame length and blocked in read()).
TEST(CompileWorkerTest, KernelThreadsShareTheSocketInStep) {
  CompileWorkerPool pool(PoolOptions(/*timeout_s=*/30), nullptr);
  for (int ops = 1; ops <= 6; ++ops) {  // new kernel sources each time
    FusionRequest r = SplitRequest(ops);
    auto in_process = RunWorkerJob(JobOf(r, WorkerJobKind::kCompile), nullptr);
    ASSERT_TRUE(in_process.ok()) << in_process.status();
    ASSERT_GE(in_process->compiled.segments_size(), 2);
    Clock::time_point start = Clock::now();
    auto in_worker = pool.Run(JobOf(r, WorkerJobKind::kCompile), nullptr);
    ASSERT_TRUE(in_worker.ok()) << ops << " ops: " << in_worker.status();
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20.0);
    EXPECT_EQ(in_worker->cache_key, in_process->cache_key);
    ASSERT_EQ(in_worker->compiled.segments_size(), in_process->compiled.segments_size());
  }
  EXPECT_EQ(pool.Stats().crashed, 0u);
  EXPECT_EQ(pool.Stats().started, 1u);
}

// The limits below leave a normal compile (ChainRequest(2): under 0.5 s) ten
// times its time on a loaded 2-core machine, and stop ChainRequest(450), which
// takes minutes.
TEST(CompileWorkerTest, TimeLimitStopsTheCompileAndTheNextJobRuns) {
  CompileWorkerPool pool(PoolOptions(/*timeout_s=*/5.0), nullptr);
  Clock::time_point start = Clock::now();
  auto slow = pool.Run(JobOf(ChainRequest(450), WorkerJobKind::kCompile), nullptr);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(absl::IsResourceExhausted(slow.status())) << slow.status();
  EXPECT_NE(slow.status().message().find("--compile-timeout-s"), std::string::npos);
  EXPECT_LT(seconds, 8.0);
  EXPECT_EQ(pool.Stats().timeouts, 1u);
  auto next = pool.Run(JobOf(ChainRequest(2), WorkerJobKind::kCompile), nullptr);
  EXPECT_TRUE(next.ok()) << next.status();
}

TEST(CompileWorkerTest, NoCallerLeftKillsTheCompile) {
  CompileWorkerPool pool(PoolOptions(), nullptr);
  Clock::time_point start = Clock::now();
  auto wanted = [&] { return Clock::now() - start < std::chrono::milliseconds(300); };
  auto r = pool.Run(JobOf(ChainRequest(450), WorkerJobKind::kCompile), wanted);
  EXPECT_TRUE(absl::IsCancelled(r.status())) << r.status();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 2.0);
  EXPECT_EQ(pool.Stats().cancelled, 1u);
  EXPECT_TRUE(Children().empty());  // killed and reaped
}

TEST(CompileWorkerTest, CrashedWorkerCostsOneJob) {
  CompileWorkerPool pool(PoolOptions(), nullptr);
  auto running = std::async(std::launch::async, [&] {
    return pool.Run(JobOf(ChainRequest(450), WorkerJobKind::kCompile), nullptr);
  });
  std::vector<pid_t> children;
  for (int i = 0; i < 200 && children.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    children = Children();
  }
  ASSERT_EQ(children.size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(children[0], SIGSEGV);
  auto crashed = running.get();
  EXPECT_TRUE(absl::IsInternal(crashed.status())) << crashed.status();
  EXPECT_NE(crashed.status().message().find("SIGSEGV"), std::string::npos) << crashed.status();
  EXPECT_EQ(pool.Stats().crashed, 1u);
  auto next = pool.Run(JobOf(ChainRequest(2), WorkerJobKind::kCompile), nullptr);
  EXPECT_TRUE(next.ok()) << next.status();
}

TEST(CompileWorkerTest, StopEndsRunningJobsAndRefusesNewOnes) {
  CompileWorkerPool pool(PoolOptions(), nullptr);
  auto running = std::async(std::launch::async, [&] {
    return pool.Run(JobOf(ChainRequest(450), WorkerJobKind::kCompile), nullptr);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Clock::time_point start = Clock::now();
  pool.Stop();
  EXPECT_TRUE(absl::IsUnavailable(running.get().status()));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.0);
  auto after = pool.Run(JobOf(ChainRequest(2), WorkerJobKind::kKey), nullptr);
  EXPECT_TRUE(absl::IsUnavailable(after.status()));
}

// The cached compiler with workers: miss, hit, a pathological compile cut at
// its limit while a hit is still served, Lookup through the pool.
TEST(CompileWorkerTest, CachedCompilerWithWorkers) {
  char tmpl[] = "/tmp/compile_worker_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  {
    KernelCacheOptions o;
    o.dir = tmpl;
    auto cache = KernelCache::Open(o);
    ASSERT_TRUE(cache.ok()) << cache.status();
    CachedCompilerOptions options;
    options.worker_argv = {FUSIOND_COMPILE_WORKER};
    options.compile_timeout_s = 5.0;
    CachedCompiler compiler(cache->get(), options);
    auto miss = compiler.Compile(ChainRequest(2));
    ASSERT_TRUE(miss.ok()) << miss.status();
    EXPECT_FALSE(miss->hit);
    auto lookup = compiler.Lookup(ChainRequest(2));
    ASSERT_TRUE(lookup.ok()) << lookup.status();
    EXPECT_EQ(lookup->cache_key, miss->cache_key);
    EXPECT_TRUE(absl::IsNotFound(compiler.Lookup(ChainRequest(3)).status()));

    auto slow = std::async(std::launch::async, [&] { return compiler.Compile(ChainRequest(450)); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Clock::time_point t = Clock::now();
    auto hit = compiler.Compile(ChainRequest(2));
    ASSERT_TRUE(hit.ok()) << hit.status();
    EXPECT_TRUE(hit->hit);
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t).count(),
              1.0);  // not behind the slow one
    EXPECT_TRUE(absl::IsResourceExhausted(slow.get().status()));
    EXPECT_EQ(compiler.Stats().timeouts, 1u);

    FusionRequest long_name = ChainRequest(2);
    long_name.graph.mutable_inputs(0)->set_name(std::string(1 << 20, 'n'));
    auto refused = compiler.Compile(long_name);
    EXPECT_TRUE(absl::IsInvalidArgument(refused.status()));
    EXPECT_LT(refused.status().message().size(), 200u);
  }
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace fusiond
