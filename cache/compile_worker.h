// Compile worker processes: the pipeline (graph checks, passes, scheduling,
// code generation, NVRTC) runs in a child process, so a crash, a hang or a
// runaway compile costs one request, never the daemon. A worker is started
// once (argv, e.g. `fusiond --compile-worker`) and serves jobs one at a time
// over a Unix socket on its fd 0:
//
//   frame = u32 length (little endian) + type byte + body
//   parent -> worker  'J' job          worker -> parent  'R' result
//   worker -> parent  'F' find a kernel text's NVRTC output (KernelTextStore)
//   parent -> worker  'A' the answer to 'F'
//   worker -> parent  'K' the cache key a kKeyThenCompile job found
//   parent -> worker  'G' the answer to 'K': "1" generate code, "0" stop
//
// The parent bounds each job (time limit), kills the worker when no caller
// wants the result any more or the daemon stops, and starts a new worker in
// its place. No gRPC or RocksDB in the worker.
#ifndef FUSIOND_CACHE_COMPILE_WORKER_H_
#define FUSIOND_CACHE_COMPILE_WORKER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/builder.h"
#include "compiler/nvrtc/nvrtc_cache.h"
#include "compiler/pipeline.h"
#include "proto/cache.pb.h"
#include "proto/fusion.pb.h"

namespace fusiond {

enum class WorkerJobKind : uint8_t {
  kKey = 1,      // the front half only: the cache key
  kCompile = 2,  // the full pipeline: the cache key and the compiled fusion
  // The front half, then the key goes to the parent's KeyGate, which says
  // whether to go on with code generation (a new request's miss runs the
  // front half once) or stop with the key alone (another compile has it).
  kKeyThenCompile = 3,
};

// Given the cache key a kKeyThenCompile job found: true to generate code,
// false to stop there.
using KeyGate = std::function<bool(const std::string& cache_key)>;

struct WorkerJob {
  WorkerJobKind kind = WorkerJobKind::kKey;
  fusiond::v1::FusionGraph graph;
  std::vector<std::vector<int64_t>> input_shapes;
  CompileOptions options;  // arch, precision, general_kernels, limits are sent
  GraphLimits limits;
};

struct WorkerResult {
  std::string cache_key;
  fusiond::v1::CompiledFusion compiled;  // kCompile, and kKeyThenCompile unless stopped
  // "parse", "key" (kKey) or the pipeline's stages (kCompile).
  std::map<std::string, double> stage_micros;
  int nvrtc_reuses = 0;  // kernels whose NVRTC output was found, not compiled
};

// Runs one job in this process (what a worker does with a 'J' frame; also
// the in-process path). `nvrtc_cache` may be null; `gate` answers a
// kKeyThenCompile job's key (none: go on).
absl::StatusOr<WorkerResult> RunWorkerJob(const WorkerJob& job, NvrtcOutputCache* nvrtc_cache,
                                          const KeyGate& gate = nullptr);

// The worker's main loop on `fd` (a connected socket); returns the exit code.
// Ignores SIGTERM / SIGINT (the parent stops it) and dies with the parent.
int RunCompileWorker(int fd);

struct CompileWorkerPoolOptions {
  // The worker command; argv[0] is a path ("/proc/self/exe" for the daemon).
  std::vector<std::string> argv;
  // Workers started at once (more start on demand). Default: 0.
  int prestart = 0;
  // Wall-clock limit per job, seconds; 0 = none. Default: 0.
  double timeout_s = 0;
};

struct CompileWorkerPoolStats {
  uint64_t started = 0;    // worker processes started
  uint64_t crashed = 0;    // workers that died during a job
  uint64_t timeouts = 0;   // jobs stopped at the time limit
  uint64_t cancelled = 0;  // jobs stopped because no caller wanted them
  uint64_t jobs = 0;       // jobs answered by a worker
};

class CompileWorkerPool {
 public:
  // `store` (may be null) answers the workers' 'F' frames; must outlive this.
  CompileWorkerPool(CompileWorkerPoolOptions options, NvrtcOutputStore* store);
  // Kills every worker.
  ~CompileWorkerPool();
  CompileWorkerPool(const CompileWorkerPool&) = delete;
  CompileWorkerPool& operator=(const CompileWorkerPool&) = delete;

  // Runs `job` in a worker. `wanted` (may be empty) is polled while it runs:
  // false kills the worker (Cancelled). ResourceExhausted past the time
  // limit; Internal when the worker dies; Unavailable once stopping.
  // `gate` answers a kKeyThenCompile job's key on this thread; the time it
  // takes (a lease wait) does not count against the time limit.
  absl::StatusOr<WorkerResult> Run(const WorkerJob& job, const std::function<bool()>& wanted,
                                   const KeyGate& gate = nullptr);
  // Kills the running workers and refuses new jobs (shutdown).
  void Stop();

  CompileWorkerPoolStats Stats() const;

 private:
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
  };
  absl::StatusOr<Worker> Spawn();
  void Kill(Worker* w);
  // Waits for the worker's result, answering its 'F' and 'K' frames.
  absl::StatusOr<WorkerResult> Await(Worker* w, const std::function<bool()>& wanted,
                                     const KeyGate& gate);

  const CompileWorkerPoolOptions options_;
  NvrtcOutputStore* const store_;
  mutable std::mutex mu_;
  std::vector<Worker> idle_;  // guarded by mu_
  bool stopping_ = false;     // guarded by mu_
  std::atomic<uint64_t> started_{0}, crashed_{0}, timeouts_{0}, cancelled_{0}, jobs_{0};
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_COMPILE_WORKER_H_
