#include "cache/cached_compiler.h"

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/cache_key.h"
#include "cache/request_check.h"
#include "cache/result_proto.h"
#include "compiler/ir/ir_proto.h"

namespace fusiond {
namespace {

class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  double Micros() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// A flight whose callers all left while another request compiled its key.
absl::Status GoneError() {
  return absl::CancelledError(
      "every caller left while another request compiled the same fusion; that compile goes on");
}

CompileOptions CachedOptions(const CompileOptions& in, bool generate_code) {
  CompileOptions o = in;
  if (o.arch.empty()) o.arch = "sm_90";
  o.dump_pass.clear();
  o.generate_code = generate_code;
  return o;
}

}  // namespace

std::string CachedCompileResult::ReportJson() const { return ReportWithCacheStatus(compiled, hit); }

CachedCompiler::CachedCompiler(KernelCache* cache, CachedCompilerOptions options)
    : cache_(cache),
      options_(std::move(options)),
      text_store_(cache),
      nvrtc_cache_(uint64_t{64} << 20, &text_store_) {
  if (!options_.worker_argv.empty()) {
    CompileWorkerPoolOptions w;
    w.argv = options_.worker_argv;
    w.prestart = std::max(1, options_.compile_threads);
    w.timeout_s = options_.compile_timeout_s;
    workers_ = std::make_unique<CompileWorkerPool>(std::move(w), &text_store_);
  }
  pool_ = std::make_unique<CompilePool>(options_.compile_threads, options_.max_queue);
  if (options_.lease != nullptr) watcher_ = std::thread([this] { WatchParked(); });
}

CachedCompiler::~CachedCompiler() {
  StopWatcher();  // parked flights go back to the pool, which finishes them
  pool_.reset();
}

void CachedCompiler::Stop() {
  stopping_ = true;
  if (workers_) workers_->Stop();
}

absl::StatusOr<std::string> CachedCompiler::KnownKey(const std::string& request_key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memo_.find(request_key);
    if (it != memo_.end()) return it->second;
  }
  absl::StatusOr<std::string> key = cache_->LookupRequest(request_key);
  if (key.ok()) Remember(request_key, *key);
  return key;
}

void CachedCompiler::Remember(const std::string& request_key, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  RememberIn(&memo_, &memo_bytes_, request_key, key);
}

void CachedCompiler::RememberIn(std::unordered_map<std::string, std::string>* memo, size_t* bytes,
                                const std::string& request_key, const std::string& key) {
  const size_t size = request_key.size() + key.size();
  if (size > options_.max_memo_bytes) return;
  if (memo->size() >= options_.max_memo_entries || *bytes + size > options_.max_memo_bytes) {
    memo->clear();
    *bytes = 0;
  }
  auto [it, added] = memo->try_emplace(request_key, key);
  if (!added) {
    *bytes -= it->first.size() + it->second.size();
    it->second = key;
  }
  *bytes += size;
}

absl::StatusOr<Graph> CachedCompiler::Parse(const FusionRequest& request,
                                            std::map<std::string, double>* stage_micros) {
  if (request.graph.nodes_size() > options_.graph_limits.max_nodes) {
    return absl::ResourceExhaustedError(absl::StrCat("fusion has ", request.graph.nodes_size(),
                                                     " nodes; the limit is ",
                                                     options_.graph_limits.max_nodes));
  }
  Timer t;
  absl::StatusOr<Graph> graph = FromProto(request.graph, options_.graph_limits);
  (*stage_micros)["parse"] += t.Micros();
  return graph;
}

absl::StatusOr<std::string> CachedCompiler::ResolveKey(
    const FusionRequest& request, const std::string& request_key,
    const std::function<bool()>& wanted, std::map<std::string, double>* stage_micros) {
  absl::StatusOr<std::string> known = KnownKey(request_key);
  if (known.ok() || !absl::IsNotFound(known.status())) return known;
  std::string key;
  if (workers_) {
    WorkerJob job;
    job.kind = WorkerJobKind::kKey;
    job.graph = request.graph;
    job.input_shapes = request.input_shapes;
    job.options = CachedOptions(request.options, false);
    job.limits = options_.graph_limits;
    ++front_halves_;
    absl::StatusOr<WorkerResult> r = workers_->Run(job, wanted);
    ++key_resolutions_;
    if (!r.ok()) return r.status();
    for (const auto& [stage, us] : r->stage_micros) (*stage_micros)[stage] += us;
    key = std::move(r->cache_key);
  } else {
    absl::StatusOr<Graph> graph = Parse(request, stage_micros);
    if (!graph.ok()) return graph.status();
    Timer t;
    ++front_halves_;
    absl::StatusOr<CompileResult> scheduled = CompileFusion(
        *graph, request.input_shapes, CachedOptions(request.options, /*generate_code=*/false));
    (*stage_micros)["key"] += t.Micros();
    ++key_resolutions_;
    if (!scheduled.ok()) return scheduled.status();
    key = MakeCacheKey(*scheduled, CachedOptions(request.options, true)).Encode();
  }
  Remember(request_key, key);
  // A failed write (a full disk) is logged and counted by the cache; the
  // key is right all the same, and remembered in memory.
  (void)cache_->InsertRequest(request_key, key);
  return key;
}

absl::StatusOr<fusiond::v1::CompiledFusion> CachedCompiler::TimedLookup(
    const std::string& key, std::map<std::string, double>* stage_micros, bool* refused) {
  Timer t;
  auto found = cache_->Lookup(key);
  (*stage_micros)["cache_io"] += t.Micros();
  if (found.ok() || !absl::IsNotFound(found.status()) || options_.shared == nullptr) return found;
  // The shared tier: a record another daemon compiled. Errors there are a
  // miss (the tier counts them); a good record is kept locally too.
  Timer remote;
  absl::StatusOr<std::string> payload = options_.shared->Get(key, refused);
  (*stage_micros)["shared_io"] += remote.Micros();
  if (!payload.ok()) return found;
  fusiond::v1::CompiledFusion value;
  if (!value.ParseFromString(*payload)) return found;
  Timer local;
  absl::Status inserted = cache_->Insert(key, value);
  if (inserted.ok()) text_store_.Index(key, value, /*arch=*/"");
  (*stage_micros)["cache_io"] += local.Micros();
  if (!inserted.ok()) return inserted;
  ++shared_hits_;
  return value;
}

void CachedCompiler::CompileAsync(FusionRequest request, CompileCallback done,
                                  std::function<bool()> still_wanted) {
  if (stopping_) return done(absl::UnavailableError("fusiond is shutting down"));
  if (absl::Status st = CheckRequest(request, options_); !st.ok()) return done(st);
  std::string request_key =
      RequestKey(request.graph, request.input_shapes, CachedOptions(request.options, true));
  // The hit path: a remembered key and its record; no parsing, no pipeline.
  if (absl::StatusOr<std::string> key = KnownKey(request_key); key.ok()) {
    CachedCompileResult r;
    auto found = TimedLookup(*key, &r.stage_micros);
    if (found.ok()) {
      ++hits_;
      r.compiled = *std::move(found);
      r.hit = true;
      r.cache_key = *key;
      done(std::move(r));
      return;
    }
    if (!absl::IsNotFound(found.status())) return done(found.status());
  } else if (!absl::IsNotFound(key.status())) {
    return done(key.status());
  }
  // A miss: join the flight for this request, or start one.
  std::shared_ptr<Flight> flight;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = flights_.find(request_key);
    if (it != flights_.end()) {
      it->second->waiters.push_back({std::move(done), std::move(still_wanted)});
      ++joins_;
      return;
    }
    flight = std::make_shared<Flight>();
    flight->waiters.push_back({std::move(done), std::move(still_wanted)});
    flights_[request_key] = flight;
  }
  auto shared_request = std::make_shared<FusionRequest>(std::move(request));
  bool queued = pool_->TrySubmit(
      [this, request_key, shared_request] { RunFlight(request_key, shared_request); });
  if (!queued) {
    std::vector<Waiter> waiters;
    {
      std::lock_guard<std::mutex> lock(mu_);
      waiters = std::move(flight->waiters);
      flights_.erase(request_key);
    }
    rejected_ += waiters.size();
    for (Waiter& w : waiters) {
      w.done(absl::ResourceExhaustedError(
          absl::StrCat("compile queue is full (", options_.max_queue, " waiting); retry later")));
    }
  }
}

bool CachedCompiler::FlightWanted(const std::string& request_key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = flights_.find(request_key);
  if (it == flights_.end()) return false;
  for (const Waiter& w : it->second->waiters) {
    if (!w.still_wanted || w.still_wanted()) return true;
  }
  return false;
}

void CachedCompiler::RunFlight(const std::string& request_key,
                               std::shared_ptr<const FusionRequest> request,
                               std::unique_ptr<CompileLease::Hold>* taken) {
  std::string parked;
  absl::StatusOr<CachedCompileResult> result =
      stopping_ ? absl::UnavailableError("fusiond is shutting down")
      : FlightWanted(request_key)
          ? CompileMiss(request_key, *request, taken, &parked)
          : absl::CancelledError("every caller left before the compile started");
  // A taken-over lease the flight did not compile under (no caller left, a
  // record appeared, an error): released now, not left renewing.
  if (taken != nullptr) taken->reset();
  if (!parked.empty()) {
    return Park(Parked{request_key, std::move(request), parked, std::chrono::steady_clock::now()});
  }
  DeliverFlight(request_key, std::move(result));
}

void CachedCompiler::DeliverFlight(const std::string& request_key,
                                   absl::StatusOr<CachedCompileResult> result) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiters = std::move(flights_[request_key]->waiters);
    flights_.erase(request_key);
  }
  if (result.ok() && !result->hit) misses_ += waiters.size();
  if (result.ok() && result->hit) hits_ += waiters.size();
  for (size_t i = 0; i < waiters.size(); ++i) {
    if (!result.ok()) {
      waiters[i].done(result.status());
      continue;
    }
    CachedCompileResult copy = *result;
    copy.compiled_here = result->compiled_here && i == 0;
    waiters[i].done(std::move(copy));
  }
}

CachedCompiler::KeyClaim::~KeyClaim() { Release(); }

void CachedCompiler::KeyClaim::Release() {
  if (!registered) return;
  std::lock_guard<std::mutex> lock(owner->mu_);
  owner->key_flights_.erase(key);
  done.set_value();
  registered = false;
}

CachedCompiler::ClaimResult CachedCompiler::Claim(const std::string& key,
                                                  const std::function<bool()>& wanted,
                                                  std::unique_ptr<CompileLease::Hold>* taken,
                                                  KeyClaim* claim, CachedCompileResult* r) {
  r->cache_key = key;
  // Another request (a different one with the same key) may have stored it.
  bool refused = false;  // a bad value in Redis: no use looking there again
  auto found = TimedLookup(key, &r->stage_micros, &refused);
  if (found.ok()) {
    r->compiled = *std::move(found);
    r->hit = true;
    return ClaimResult::kServed;
  }
  // Single flight by cache key: wait for a compile of the same key, as long
  // as a caller of this request still waits (its own deadline or cancel ends
  // the wait; the compile waited for goes on and is stored).
  for (;;) {
    std::shared_future<void> other;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = key_flights_.find(key);
      if (it == key_flights_.end()) {
        key_flights_[key] = claim->done.get_future().share();
        claim->key = key;
        claim->registered = true;
        break;
      }
      other = it->second;
    }
    while (other.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
      if (!wanted()) return ClaimResult::kGone;
    }
    found = TimedLookup(key, &r->stage_micros);
    if (found.ok()) {
      r->compiled = *std::move(found);
      return ClaimResult::kServed;  // a miss for this request, compiled by the other one
    }
  }
  // One compile per cluster (cache/compile_lease.h): while another daemon
  // holds the key's lease, wait for its record instead of compiling. The
  // hold lives until after the publish.
  if (options_.lease != nullptr) {
    // A lease taken over while parked, unless RenewWhile gave it up (its
    // callers had all left; one has come since): then it is taken anew.
    if (taken != nullptr && *taken != nullptr && (*taken)->key() == key && (*taken)->Keep()) {
      claim->lease = std::move(*taken);
    }
    if (claim->lease == nullptr) {
      bool may_park;
      {
        std::lock_guard<std::mutex> lock(park_mu_);
        may_park = !park_stop_;
      }
      claim->lease = may_park ? options_.lease->TryAcquire(key, !refused)
                              : options_.lease->AcquireOrWait(key, !refused);
      if (claim->lease == nullptr) return ClaimResult::kParked;
    }
    if (claim->lease->published()) {
      found = TimedLookup(key, &r->stage_micros);
      if (found.ok()) {
        r->compiled = *std::move(found);
        return ClaimResult::kServed;  // a miss for this request, compiled by another daemon
      }
    }
  }
  return ClaimResult::kCompile;
}

absl::StatusOr<CachedCompileResult> CachedCompiler::CompileMiss(
    const std::string& request_key, const FusionRequest& request,
    std::unique_ptr<CompileLease::Hold>* taken, std::string* parked_key) {
  CachedCompileResult r;
  const std::function<bool()> wanted = [this, &request_key] { return FlightWanted(request_key); };
  KeyClaim claim{this};
  absl::StatusOr<std::string> known = KnownKey(request_key);
  if (!known.ok() && !absl::IsNotFound(known.status())) return known.status();
  absl::StatusOr<WorkerResult> compiled = absl::UnknownError("not compiled");
  if (known.ok()) {
    switch (Claim(*known, wanted, taken, &claim, &r)) {
      case ClaimResult::kServed:
        return r;
      case ClaimResult::kParked:
        *parked_key = *known;
        return r;
      case ClaimResult::kGone:
        return GoneError();
      case ClaimResult::kCompile:
        break;
    }
    compiled = FullCompile(request, wanted, nullptr);
  } else {
    // A request not seen before: the compile's own front half finds the key,
    // which is claimed before code generation (the front half runs once).
    ClaimResult claimed = ClaimResult::kCompile;
    std::string found_key;
    const KeyGate gate = [&](const std::string& key) {
      ++key_resolutions_;
      Remember(request_key, key);
      // A failed index write (a full disk) is logged and counted by the
      // cache and costs a later request a front half; the compile goes on.
      (void)cache_->InsertRequest(request_key, key);
      found_key = key;
      claimed = Claim(key, wanted, taken, &claim, &r);
      return claimed == ClaimResult::kCompile;
    };
    compiled = FullCompile(request, wanted, gate);
    if (claimed == ClaimResult::kGone) return GoneError();
    if (claimed == ClaimResult::kParked) {
      *parked_key = found_key;
      return r;
    }
    if (claimed == ClaimResult::kServed) {
      if (compiled.ok()) {
        for (const auto& [stage, micros] : compiled->stage_micros) r.stage_micros[stage] += micros;
      }
      return r;
    }
  }
  if (!compiled.ok()) return compiled.status();
  // The key claimed (a known request's may differ from the one a compile
  // computes only across a version change; the claim decides).
  const std::string key = claim.registered ? claim.key : compiled->cache_key;
  ++compiles_;
  for (const auto& [stage, micros] : compiled->stage_micros) r.stage_micros[stage] += micros;
  r.cache_key = key;
  r.compiled = std::move(compiled->compiled);
  r.compiled_here = true;
  Timer t;
  absl::Status inserted = cache_->Insert(key, r.compiled);
  if (inserted.ok()) text_store_.Index(key, r.compiled, CachedOptions(request.options, true).arch);
  r.stage_micros["cache_io"] += t.Micros();
  if (inserted.ok() && options_.shared != nullptr) {
    // Best effort: a failed publish only costs other daemons a compile.
    Timer remote;
    (void)options_.shared->Put(key, r.compiled.SerializeAsString());
    r.stage_micros["shared_io"] += remote.Micros();
  }
  claim.Release();
  // A cache that cannot store it still serves the compile (storage_errors).
  (void)inserted;
  if (options_.on_compiled) options_.on_compiled(r);
  return r;
}

absl::StatusOr<WorkerResult> CachedCompiler::FullCompile(const FusionRequest& request,
                                                         const std::function<bool()>& wanted,
                                                         const KeyGate& gate) {
  WorkerJob job;
  job.kind = gate ? WorkerJobKind::kKeyThenCompile : WorkerJobKind::kCompile;
  job.graph = request.graph;
  job.input_shapes = request.input_shapes;
  job.options = CachedOptions(request.options, true);
  job.limits = options_.graph_limits;
  ++front_halves_;
  if (workers_) {
    absl::StatusOr<WorkerResult> r = workers_->Run(job, wanted, gate);
    if (r.ok()) worker_reuses_ += r->nvrtc_reuses;
    return r;
  }
  // In process, with this process' NVRTC cache (its reuses count there).
  return RunWorkerJob(job, &nvrtc_cache_, gate);
}

absl::StatusOr<CachedCompileResult> CachedCompiler::Compile(FusionRequest request) {
  std::promise<absl::StatusOr<CachedCompileResult>> promise;
  auto future = promise.get_future();
  CompileAsync(std::move(request), [&promise](absl::StatusOr<CachedCompileResult> r) {
    promise.set_value(std::move(r));
  });
  return future.get();
}

void CachedCompiler::LookupAsync(FusionRequest request, CompileCallback done,
                                 std::function<bool()> still_wanted) {
  if (stopping_) return done(absl::UnavailableError("fusiond is shutting down"));
  if (absl::Status st = CheckRequest(request, options_); !st.ok()) return done(st);
  auto request_key = std::make_shared<std::string>(
      RequestKey(request.graph, request.input_shapes, CachedOptions(request.options, true)));
  auto finish = [this, request_key](absl::StatusOr<std::string> key, CachedCompileResult r,
                                    const CompileCallback& done) {
    if (!key.ok()) return done(key.status());
    auto found = TimedLookup(*key, &r.stage_micros);
    if (!found.ok()) return done(found.status());
    r.compiled = *std::move(found);
    r.hit = true;
    r.cache_key = *key;
    done(std::move(r));
  };
  absl::StatusOr<std::string> key = KnownKey(*request_key);
  if (key.ok() || !absl::IsNotFound(key.status())) {
    return finish(std::move(key), CachedCompileResult(), done);
  }
  // The front half to find the key: on the bounded pool, as compiles are.
  auto shared_request = std::make_shared<FusionRequest>(std::move(request));
  auto shared_done = std::make_shared<CompileCallback>(std::move(done));
  auto wanted = std::make_shared<std::function<bool()>>(std::move(still_wanted));
  bool queued = pool_->TrySubmit([this, request_key, shared_request, shared_done, wanted, finish] {
    if (stopping_) return (*shared_done)(absl::UnavailableError("fusiond is shutting down"));
    if (*wanted && !(*wanted)()) {
      return (*shared_done)(absl::CancelledError("the caller left before the lookup started"));
    }
    CachedCompileResult r;
    absl::StatusOr<std::string> key =
        ResolveKey(*shared_request, *request_key, *wanted, &r.stage_micros);
    finish(std::move(key), std::move(r), *shared_done);
  });
  if (!queued) {
    ++rejected_;
    (*shared_done)(absl::ResourceExhaustedError(
        absl::StrCat("compile queue is full (", options_.max_queue, " waiting); retry later")));
  }
}

absl::StatusOr<CachedCompileResult> CachedCompiler::Lookup(const FusionRequest& request) {
  std::promise<absl::StatusOr<CachedCompileResult>> promise;
  auto future = promise.get_future();
  LookupAsync(request, [&promise](absl::StatusOr<CachedCompileResult> r) {
    promise.set_value(std::move(r));
  });
  return future.get();
}

CachedCompilerStats CachedCompiler::Stats() const {
  CachedCompilerStats s;
  s.hits = hits_;
  s.shared_hits = shared_hits_;
  s.misses = misses_;
  s.compiles = compiles_;
  s.joins = joins_;
  s.rejected = rejected_;
  s.key_resolutions = key_resolutions_;
  s.front_halves = front_halves_;
  s.nvrtc_reuses = nvrtc_cache_.Stats().hits + worker_reuses_;
  if (workers_) {
    CompileWorkerPoolStats w = workers_->Stats();
    s.timeouts = w.timeouts;
    s.worker_crashes = w.crashed;
    s.cancelled = w.cancelled;
  }
  s.in_flight = pool_->running();
  s.queue_depth = pool_->queue_depth();
  if (options_.lease != nullptr) s.lease = options_.lease->Stats();
  return s;
}

absl::StatusOr<CachedCompileResult> CompileWithCache(
    const Graph& graph, const std::vector<std::vector<int64_t>>& input_shapes,
    const CompileOptions& options, KernelCache* cache, SharedTier* shared) {
  CachedCompilerOptions copts;
  copts.compile_threads = 1;
  copts.shared = shared;
  CachedCompiler compiler(cache, copts);
  FusionRequest request;
  request.graph = ToProto(graph);
  request.input_shapes = input_shapes;
  request.options = options;
  return compiler.Compile(std::move(request));
}

}  // namespace fusiond
