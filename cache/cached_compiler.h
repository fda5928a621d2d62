// CachedCompiler: the kernel cache in front of the compile pipeline, used by
// the daemon and by `fusionc compile` without a daemon (embedded mode).
//
//   request -> cache key (remembered per exact request; else the front half
//   of the pipeline: passes, segmentation, scheduling) -> cache lookup ->
//   hit: the stored record. local miss: the shared tier (Redis, when given),
//   whose record is then stored locally. miss: full compile on a bounded
//   pool, insert locally and publish to the shared tier. A kernel whose text
//   was compiled before (another batch size of a symbolic definition), in
//   this process or in any stored record, reuses that NVRTC output
//   (NvrtcOutputCache over KernelTextStore).
//
// Identical requests in flight compile once (single flight, by request and
// again by cache key). The pool's queue is bounded: a miss that finds it
// full gets RESOURCE_EXHAUSTED. No gRPC here; the daemon adapts it.
#ifndef FUSIOND_CACHE_CACHED_COMPILER_H_
#define FUSIOND_CACHE_CACHED_COMPILER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/compile_lease.h"
#include "cache/compile_pool.h"
#include "cache/compile_worker.h"
#include "cache/kernel_cache.h"
#include "cache/kernel_text_store.h"
#include "cache/reply_contents.h"
#include "cache/shared_tier.h"
#include "compiler/ir/builder.h"
#include "compiler/nvrtc/nvrtc_cache.h"
#include "compiler/pipeline.h"
#include "proto/cache.pb.h"
#include "proto/fusion.pb.h"

namespace fusiond {

// One compile request: a definition, its input shapes, the options.
struct FusionRequest {
  fusiond::v1::FusionGraph graph;
  // One per graph input; required when the definition is symbolic.
  std::vector<std::vector<int64_t>> input_shapes;
  // generate_code and dump_pass are ignored: cached compiles always
  // generate code and never dump.
  CompileOptions options;
};

struct CachedCompileResult {
  fusiond::v1::CompiledFusion compiled;
  // Served from the cache without compiling for this request.
  bool hit = false;
  // The encoded CacheKey.
  std::string cache_key;
  // Wall time of the work this request did, microseconds: "parse", "key"
  // (front half of the pipeline to find the key), the pipeline's stages
  // ("verify", "passes", "segment", "schedule", "codegen", "nvrtc") when it
  // compiled, "cache_io", and "shared_io" when the shared tier was asked.
  std::map<std::string, double> stage_micros;
  // This request ran the compile (false for requests that joined it).
  bool compiled_here = false;

  // The `fusionc compile --json` report with "cache": "hit" | "miss".
  std::string ReportJson() const;
};

struct CachedCompilerOptions {
  // Compile threads. Default: 2.
  int compile_threads = 2;
  // Misses waiting for a compile thread before RESOURCE_EXHAUSTED. Default: 64.
  int max_queue = 64;
  // Graph limits; more nodes than max_nodes is RESOURCE_EXHAUSTED.
  // Default: GraphLimits{} (100,000 nodes).
  GraphLimits graph_limits;
  // Graph inputs plus outputs (listed outputs, repeats included) of one
  // fusion; more is RESOURCE_EXHAUSTED naming --max-graph-io. Code
  // generation and NVRTC take time growing about cubically with them (one
  // node listed 1,000 times as an output: 46 s). 0 = no limit.
  // Default: 512.
  int max_graph_io = 512;
  // Requests whose cache key is remembered in memory. Default: 100,000.
  size_t max_memo_entries = 100000;
  // Bytes of request keys remembered in memory (each of the two maps).
  // Default: 64 MiB.
  size_t max_memo_bytes = size_t{64} << 20;
  // Bytes of trimmed hit payloads kept (replies without source or report).
  // Default: 64 MiB.
  size_t max_trimmed_bytes = size_t{64} << 20;
  // The pipeline in worker processes (CompileWorkerPool): the worker command,
  // e.g. {"/proc/self/exe", "--compile-worker"}; empty runs it in this
  // process (no time limit, no cancellation of a running compile).
  // Default: in process.
  std::vector<std::string> worker_argv;
  // Wall-clock limit per compile (and per key resolution) in a worker,
  // seconds; 0 = none. Default: 0.
  double compile_timeout_s = 0;
  // The cluster-wide shared tier; must outlive the compiler. Default: none.
  SharedTier* shared = nullptr;
  // Compile leases over the shared tier (one compile per cluster,
  // cache/compile_lease.h); must outlive the compiler. Default: none.
  CompileLease* lease = nullptr;
  // Called once per full compile (not for joiners), on the compile thread,
  // with the compiled result.
  std::function<void(const CachedCompileResult&)> on_compiled;
};

struct CachedCompilerStats {
  uint64_t hits = 0;             // requests served from the cache (either tier)
  uint64_t shared_hits = 0;      // records the local cache lacked and the shared tier had
  uint64_t misses = 0;           // requests that needed a compile (own or joined)
  uint64_t compiles = 0;         // full compiles run
  uint64_t joins = 0;            // requests that joined a compile in flight
  uint64_t rejected = 0;         // misses refused: compile queue full
  uint64_t key_resolutions = 0;  // cache keys found by a front half (not remembered)
  // Front halves run (verify, passes, segmentation, scheduling): one per
  // Lookup of a new request, one per compile (a new request's included).
  uint64_t front_halves = 0;
  // Kernels of full compiles whose text was compiled before, in this process
  // or in a stored record (a symbolic definition at a new batch size, say):
  // NVRTC not run for them.
  uint64_t nvrtc_reuses = 0;
  uint64_t in_flight = 0;       // compile tasks running now
  uint64_t queue_depth = 0;     // compile tasks waiting now
  uint64_t timeouts = 0;        // compiles stopped at the time limit
  uint64_t worker_crashes = 0;  // compile workers that died during a job
  uint64_t cancelled = 0;       // compiles stopped: no caller waited any more
  CompileLeaseStats lease;      // compile leases (zero without one)
};

// Longest name (input, constant, node output) a request may carry, bytes.
constexpr size_t kMaxRequestNameBytes = 256;

using CompileCallback = std::function<void(absl::StatusOr<CachedCompileResult>)>;

class CachedCompiler {
 public:
  // `cache` must outlive this object.
  explicit CachedCompiler(KernelCache* cache, CachedCompilerOptions options = {});
  // Finishes queued compiles, then returns.
  ~CachedCompiler();

  // Calls `done` exactly once: inline for a hit or an immediate error, else
  // on a compile thread. `still_wanted` (may be empty) is asked before the
  // compile starts; when no waiter wants the result the compile is skipped
  // and they get CANCELLED.
  void CompileAsync(FusionRequest request, CompileCallback done,
                    std::function<bool()> still_wanted = nullptr);
  // Blocking form of CompileAsync.
  absl::StatusOr<CachedCompileResult> Compile(FusionRequest request);
  // The cache only, never a compile (may run the front half to find the
  // key, on the compile pool: RESOURCE_EXHAUSTED when its queue is full).
  // NotFound on a miss. Calls `done` once, inline or on a compile thread.
  void LookupAsync(FusionRequest request, CompileCallback done,
                   std::function<bool()> still_wanted = nullptr);
  absl::StatusOr<CachedCompileResult> Lookup(const FusionRequest& request);
  // Shutdown: refuses new work (Unavailable), stops queued compiles and
  // kills running workers. Safe to call more than once.
  void Stop();

  // The daemon's hit path, for a request seen before as the exact bytes the
  // client sent (no parsing, no copying of the record): the cache key and
  // the verified serialized CompiledFusion with what `contents` asks for
  // (trimmed once per record and kept while the record stays in memory).
  // nullopt when the bytes are new or the record is gone; then parse the
  // request and use CompileAsync.
  struct PayloadHit {
    std::string cache_key;
    std::shared_ptr<const std::string> payload;
    double cache_io_micros = 0;
  };
  std::optional<PayloadHit> TryPayloadHit(const std::string& raw_request,
                                          ReplyContents contents = ReplyContents::Everything());
  // Remembers (in memory) that `raw_request` resolved to `cache_key`.
  void RememberRawRequest(const std::string& raw_request, const std::string& cache_key);

  CachedCompilerStats Stats() const;
  KernelCache* cache() { return cache_; }
  const SharedTier* shared() const { return options_.shared; }

 private:
  struct Waiter {
    CompileCallback done;
    std::function<bool()> still_wanted;
  };
  struct Flight {
    std::vector<Waiter> waiters;
  };

  // The cache key a request resolved to before (memory, then disk).
  absl::StatusOr<std::string> KnownKey(const std::string& request_key);
  void Remember(const std::string& request_key, const std::string& key);
  absl::StatusOr<Graph> Parse(const FusionRequest& request,
                              std::map<std::string, double>* stage_micros);
  // Finds the cache key: remembered, or from the front half of the pipeline
  // (in a worker when there are workers).
  absl::StatusOr<std::string> ResolveKey(const FusionRequest& request,
                                         const std::string& request_key,
                                         const std::function<bool()>& wanted,
                                         std::map<std::string, double>* stage_micros);
  // The full pipeline, in a worker or in process; with `gate`, the key its
  // front half finds is put to the gate before code generation.
  absl::StatusOr<WorkerResult> FullCompile(const FusionRequest& request,
                                           const std::function<bool()>& wanted,
                                           const KeyGate& gate);
  // A miss's hold on a cache key: its flight in key_flights_ (released once,
  // waking requests of the same key) and its compile lease.
  struct KeyClaim {
    explicit KeyClaim(CachedCompiler* o) : owner(o) {}
    CachedCompiler* owner;
    std::string key;
    bool registered = false;
    std::promise<void> done;
    std::unique_ptr<CompileLease::Hold> lease;
    ~KeyClaim();
    void Release();
  };
  enum class ClaimResult {
    kServed,   // `r` filled: from the cache, or after a compile of it here
    kCompile,  // this request compiles it, holding `claim`
    kParked,   // another daemon holds its lease: wait off the compile pool
    kGone,     // every caller left while another request compiled the key
  };
  // `wanted`: false ends a wait for another request's compile of the key
  // (kGone; that compile goes on). `taken`: a lease the flight took over
  // while parked, used (moved out) when it is still held for `key`.
  ClaimResult Claim(const std::string& key, const std::function<bool()>& wanted,
                    std::unique_ptr<CompileLease::Hold>* taken, KeyClaim* claim,
                    CachedCompileResult* r);
  // `hit`'s payload trimmed to `contents`, from trimmed_ or made now; null
  // when the record does not parse.
  std::shared_ptr<const std::string> TrimmedPayload(const PayloadHit& hit, ReplyContents contents);
  // True while some waiter of the flight still wants its result.
  bool FlightWanted(const std::string& request_key);
  void RememberIn(std::unordered_map<std::string, std::string>* memo, size_t* bytes,
                  const std::string& request_key, const std::string& key);
  // Cache lookup timed into stage_micros["cache_io"]; on a local miss, the
  // shared tier (timed into "shared_io"; `*refused` set when it held a value
  // that failed its checks).
  absl::StatusOr<fusiond::v1::CompiledFusion> TimedLookup(
      const std::string& key, std::map<std::string, double>* stage_micros, bool* refused = nullptr);
  // `taken` (may be null): the lease a parked flight took over; whatever the
  // flight does, it no longer holds it when RunFlight returns.
  void RunFlight(const std::string& request_key, std::shared_ptr<const FusionRequest> request,
                 std::unique_ptr<CompileLease::Hold>* taken = nullptr);
  // The flight's result to every waiter; ends the flight.
  void DeliverFlight(const std::string& request_key, absl::StatusOr<CachedCompileResult> result);
  // `*parked_key` set: the flight waits for another daemon's compile of it
  // (the result is then meaningless).
  absl::StatusOr<CachedCompileResult> CompileMiss(const std::string& request_key,
                                                  const FusionRequest& request,
                                                  std::unique_ptr<CompileLease::Hold>* taken,
                                                  std::string* parked_key);

  // Flights waiting for another daemon's compile of their key
  // (cache/lease_wait.cc): polled by one thread, so a wait holds no compile
  // thread; served when the record appears, sent back to the pool to
  // compile when the lease ends without one (with the lease, if taken over:
  // renewed while a caller waits, released when the flight ends).
  struct Parked {
    std::string request_key;
    std::shared_ptr<const FusionRequest> request;
    std::string key;
    std::chrono::steady_clock::time_point since;
  };
  void Park(Parked parked);
  void WatchParked();
  void PollParked(Parked* p, std::vector<Parked>* still);
  void Resubmit(const Parked& p, std::unique_ptr<CompileLease::Hold> hold);
  void StopWatcher();

  KernelCache* cache_;
  CachedCompilerOptions options_;
  // NVRTC's outputs by kernel text: records differ by the sizes in their
  // heuristics, their kernels often do not. In memory, then in the stored
  // records (text_store_ indexes each compiled record's kernels).
  KernelTextStore text_store_;
  NvrtcOutputCache nvrtc_cache_;

  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Flight>> flights_;       // by request key
  std::unordered_map<std::string, std::shared_future<void>> key_flights_;  // by cache key
  std::unordered_map<std::string, std::string> memo_;      // request key -> cache key
  std::unordered_map<std::string, std::string> raw_memo_;  // raw request -> cache key
  size_t memo_bytes_ = 0, raw_memo_bytes_ = 0;             // keys and values held
  // Trimmed payloads for TryPayloadHit by contents and cache key, each with
  // the full payload it came from (valid while that one is still served).
  struct Trimmed {
    std::weak_ptr<const std::string> full;
    std::shared_ptr<const std::string> trimmed;
  };
  std::unordered_map<std::string, Trimmed> trimmed_;
  size_t trimmed_bytes_ = 0;

  std::atomic<uint64_t> hits_{0}, misses_{0}, compiles_{0}, joins_{0}, rejected_{0},
      key_resolutions_{0}, shared_hits_{0}, worker_reuses_{0}, front_halves_{0};
  std::atomic<bool> stopping_{false};
  std::mutex park_mu_;
  std::condition_variable park_cv_;
  std::vector<Parked> parked_;  // park_mu_
  bool park_stop_ = false;      // park_mu_
  std::thread watcher_;         // with a lease only
  // The pipeline's processes; null when it runs in this process.
  std::unique_ptr<CompileWorkerPool> workers_;
  // Last member: destroyed first, so queued compiles finish while the
  // members above still exist.
  std::unique_ptr<CompilePool> pool_;
};

// Embedded mode in one call: compiles `graph` through `cache` (hit or miss;
// with `shared`, a local miss asks the shared tier first and a compile is
// published there) on the calling thread's behalf. For `fusionc compile`
// without --server.
absl::StatusOr<CachedCompileResult> CompileWithCache(
    const Graph& graph, const std::vector<std::vector<int64_t>>& input_shapes,
    const CompileOptions& options, KernelCache* cache, SharedTier* shared = nullptr);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_CACHED_COMPILER_H_
