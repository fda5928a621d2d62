#include "server/metrics.h"

#include <vector>

#include "cache/cache_key.h"
#include "fusiond/version.h"
#include "prometheus/collectable.h"
#include "prometheus/gauge.h"
#include "prometheus/metric_family.h"
#include "server/process_metrics.h"

namespace fusiond {
namespace {

using prometheus::Histogram;

const Histogram::BucketBoundaries& LatencyBuckets() {
  static const Histogram::BucketBoundaries b = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                0.005,   0.01,   0.025,   0.05,   0.1,   0.25,
                                                0.5,     1,      2.5,     5,      10,    30};
  return b;
}

const char* ResultName(RpcResult r) {
  switch (r) {
    case RpcResult::kHit:
      return "hit";
    case RpcResult::kMiss:
      return "miss";
    case RpcResult::kError:
      return "error";
    case RpcResult::kOk:
      return "ok";
  }
  return "ok";
}

// The compile lease's counters (one compile per cluster, cache/compile_lease.h);
// zero without a shared tier or with --redis-lease-ms 0.
struct LeaseCounters {
  double acquired = 0, waits = 0, takeovers = 0, wait_seconds = 0;
};
LeaseCounters ReadLeaseCounters(const CachedCompilerStats& c) {
  return {static_cast<double>(c.lease.acquired), static_cast<double>(c.lease.waits),
          static_cast<double>(c.lease.takeovers), c.lease.wait_seconds};
}

prometheus::MetricFamily Family(const char* name, const char* help, prometheus::MetricType type) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

// One sample with labels, counter or gauge as the family says.
void AddSample(prometheus::MetricFamily* f, std::vector<prometheus::ClientMetric::Label> labels,
               double value) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f->type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f->metric.push_back(std::move(m));
}

// process_* from /proc (nothing when it cannot be read).
void AddProcessMetrics(std::vector<prometheus::MetricFamily>* out) {
  absl::StatusOr<ProcessStats> p = ReadProcessStats();
  if (!p.ok()) return;
  using T = prometheus::MetricType;
  const std::tuple<const char*, const char*, T, double> kRows[] = {
      {"process_cpu_seconds_total", "User and system CPU time, seconds", T::Counter,
       p->cpu_seconds},
      {"process_start_time_seconds", "Start time of the process since the Unix epoch, seconds",
       T::Gauge, p->start_time_seconds},
      {"process_resident_memory_bytes", "Resident memory size, bytes", T::Gauge, p->resident_bytes},
      {"process_virtual_memory_bytes", "Virtual memory size, bytes", T::Gauge, p->virtual_bytes},
      {"process_open_fds", "Open file descriptors", T::Gauge, p->open_fds},
      {"process_max_fds", "Limit on open file descriptors (RLIMIT_NOFILE)", T::Gauge, p->max_fds},
      {"process_threads", "Threads of the process", T::Gauge, p->threads}};
  for (const auto& [name, help, type, value] : kRows) {
    prometheus::MetricFamily f = Family(name, help, type);
    AddSample(&f, {}, value);
    out->push_back(std::move(f));
  }
}

// Counters and gauges read from the cache and the compiler at scrape time.
class StatsCollectable : public prometheus::Collectable {
 public:
  explicit StatsCollectable(CachedCompiler* compiler) : compiler_(compiler) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    CachedCompilerStats c = compiler_->Stats();
    KernelCacheStats k = compiler_->cache()->Stats();
    std::vector<prometheus::MetricFamily> out;
    AddLabelled(c, k, &out);
    AddProcessMetrics(&out);
    auto add = [&](const char* name, const char* help, prometheus::MetricType type, double value) {
      prometheus::MetricFamily f;
      f.name = name;
      f.help = help;
      f.type = type;
      prometheus::ClientMetric m;
      if (type == prometheus::MetricType::Counter) {
        m.counter.value = value;
      } else {
        m.gauge.value = value;
      }
      f.metric.push_back(m);
      out.push_back(std::move(f));
    };
    using T = prometheus::MetricType;
    add("fusiond_cache_hits_total", "Compile requests served from the kernel cache", T::Counter,
        c.hits);
    add("fusiond_cache_misses_total", "Compile requests that needed a compile", T::Counter,
        c.misses);
    add("fusiond_compiles_total", "Full compilations run (codegen and NVRTC)", T::Counter,
        c.compiles);
    add("fusiond_single_flight_joins_total",
        "Requests that joined an identical compile already in flight", T::Counter, c.joins);
    add("fusiond_rejected_total", "Requests refused because the compile queue was full", T::Counter,
        c.rejected);
    add("fusiond_key_resolutions_total",
        "Front-half pipeline runs to find the cache key of a new request", T::Counter,
        c.key_resolutions);
    add("fusiond_nvrtc_reuses_total",
        "Kernels of full compiles whose text was compiled before (NVRTC skipped)", T::Counter,
        c.nvrtc_reuses);
    add("fusiond_cache_corrupt_records_total",
        "Stored records that failed their checksum (deleted, recompiled)", T::Counter,
        k.corrupt_records);
    add("fusiond_cache_evictions_total", "Records evicted to stay under the size cap", T::Counter,
        k.evictions);
    add("fusiond_cache_inserts_total", "Records written to the kernel cache", T::Counter,
        k.inserts);
    add("fusiond_cache_bytes", "Bytes of records and request index entries in the kernel cache",
        T::Gauge, k.bytes);
    add("fusiond_cache_entries", "Records in the kernel cache", T::Gauge, k.entries);
    add("fusiond_cache_max_bytes", "The kernel cache's size cap (--cache-max-bytes; 0 = none)",
        T::Gauge, compiler_->cache()->options().max_bytes);
    add("fusiond_compiles_in_flight", "Compile tasks running now", T::Gauge, c.in_flight);
    add("fusiond_compile_queue_depth", "Compile tasks waiting for a thread", T::Gauge,
        c.queue_depth);
    add("fusiond_compile_timeouts_total",
        "Compiles stopped at --compile-timeout-s (RESOURCE_EXHAUSTED)", T::Counter, c.timeouts);
    add("fusiond_compile_worker_crashes_total",
        "Compile worker processes that died during a job (that request failed)", T::Counter,
        c.worker_crashes);
    add("fusiond_compiles_cancelled_total",
        "Running compiles stopped because no caller waited any more", T::Counter, c.cancelled);
    add("fusiond_cache_quarantined_total",
        "Cache databases moved aside at start-up because they would not open or verify", T::Counter,
        k.quarantined);
    add("fusiond_cache_corrupt_requests_total",
        "Request index entries that failed their checksum or could not be read (dropped)",
        T::Counter, k.corrupt_requests);
    add("fusiond_cache_write_errors_total",
        "Kernel cache writes that failed (the compile was served anyway)", T::Counter,
        k.write_errors);
    add("fusiond_cache_read_only",
        "1 while kernel cache stores fail (a full disk): compiles are served, not stored", T::Gauge,
        k.read_only ? 1 : 0);
    add("fusiond_cache_recoveries_total",
        "Times kernel cache stores worked again after failing (no restart needed)", T::Counter,
        k.recoveries);
    add("fusiond_cache_request_entries", "Request index entries counted against the size cap",
        T::Gauge, k.request_entries);
    if (const SharedTier* shared = compiler_->shared(); shared != nullptr) {
      SharedTierStats s = shared->Stats();
      add("fusiond_shared_tier_hits_total",
          "Records the local cache lacked and the shared tier (Redis) had", T::Counter, s.hits);
      add("fusiond_shared_tier_misses_total", "Shared-tier lookups that found nothing", T::Counter,
          s.misses);
      add("fusiond_shared_tier_puts_total", "Compiled records published to the shared tier",
          T::Counter, s.puts);
      add("fusiond_shared_tier_corrupt_total",
          "Shared-tier values that were not records (garbage, bad CRC): never served", T::Counter,
          s.corrupt);
      add("fusiond_shared_tier_errors_total",
          "Shared-tier calls that could not reach or use Redis (treated as misses)", T::Counter,
          s.errors);
      add("fusiond_shared_tier_rejected_total",
          "Shared-tier values that failed authentication (HMAC or key): never served", T::Counter,
          s.rejected);
      add("fusiond_shared_tier_short_circuited_total",
          "Shared-tier calls refused at once while the circuit breaker was open", T::Counter,
          s.pool.short_circuited);
      add("fusiond_shared_tier_breaker_trips_total",
          "Times the shared tier's circuit breaker opened (Redis failing)", T::Counter,
          s.pool.breaker_trips);
      add("fusiond_shared_tier_breaker_open", "1 while the shared tier's circuit breaker is open",
          T::Gauge, s.pool.breaker_open ? 1 : 0);
    }
    return out;
  }

 private:
  // The series with labels: hits by tier, compiles by outcome; and the lease.
  void AddLabelled(const CachedCompilerStats& c, const KernelCacheStats& k,
                   std::vector<prometheus::MetricFamily>* out) const {
    using T = prometheus::MetricType;
    prometheus::MetricFamily tiers = Family(
        "fusiond_cache_tier_hits_total",
        "Records served by each tier: memory, rocksdb (read and verified), redis (shared tier)",
        T::Counter);
    AddSample(&tiers, {{"tier", "memory"}}, k.memory_hits);
    AddSample(&tiers, {{"tier", "rocksdb"}}, k.disk_hits);
    AddSample(&tiers, {{"tier", "redis"}}, c.shared_hits);
    out->push_back(std::move(tiers));
    prometheus::MetricFamily outcomes =
        Family("fusiond_compile_outcomes_total",
               "Compiles by how they ended: ok, timeout, crashed (worker died), cancelled "
               "(no caller waited), rejected (queue full, never started)",
               T::Counter);
    AddSample(&outcomes, {{"outcome", "ok"}}, c.compiles);
    AddSample(&outcomes, {{"outcome", "timeout"}}, c.timeouts);
    AddSample(&outcomes, {{"outcome", "crashed"}}, c.worker_crashes);
    AddSample(&outcomes, {{"outcome", "cancelled"}}, c.cancelled);
    AddSample(&outcomes, {{"outcome", "rejected"}}, c.rejected);
    out->push_back(std::move(outcomes));
    const LeaseCounters lease = ReadLeaseCounters(c);
    const std::tuple<const char*, const char*, double> kLease[] = {
        {"fusiond_lease_acquired_total",
         "Compile leases this daemon took: it compiled a new fusion for the cluster",
         lease.acquired},
        {"fusiond_lease_waits_total",
         "Misses that found another daemon's compile lease and waited for its record", lease.waits},
        {"fusiond_lease_takeovers_total",
         "Lease waits that ended with this daemon compiling (lease expired or Redis failed)",
         lease.takeovers},
        {"fusiond_lease_wait_seconds_total", "Seconds spent waiting for other daemons' leases",
         lease.wait_seconds}};
    for (const auto& [name, help, value] : kLease) {
      prometheus::MetricFamily f = Family(name, help, T::Counter);
      AddSample(&f, {}, value);
      out->push_back(std::move(f));
    }
  }

  CachedCompiler* compiler_;
};

}  // namespace

ServiceMetrics::ServiceMetrics(CachedCompiler* compiler)
    : registry_(std::make_shared<prometheus::Registry>()) {
  rpc_latency_ = &prometheus::BuildHistogram()
                      .Name("fusiond_rpc_duration_seconds")
                      .Help("Latency of each RPC by result (hit, miss, error; ok for Stats)")
                      .Register(*registry_);
  stage_latency_ = &prometheus::BuildHistogram()
                        .Name("fusiond_compile_stage_duration_seconds")
                        .Help("Wall time of each compile stage a request ran")
                        .Register(*registry_);
  errors_ = &prometheus::BuildCounter()
                 .Name("fusiond_errors_total")
                 .Help("RPCs that ended in an error, by gRPC status code")
                 .Register(*registry_);
  segments_by_scheduler_ = &prometheus::BuildCounter()
                                .Name("fusiond_segments_total")
                                .Help("Compiled segments (kernels) by scheduler kind")
                                .Register(*registry_);
  auto histogram = [&](const char* name, const char* help,
                       Histogram::BucketBoundaries buckets) -> Histogram* {
    return &prometheus::BuildHistogram()
                .Name(name)
                .Help(help)
                .Register(*registry_)
                .Add({}, std::move(buckets));
  };
  segments_per_fusion_ = histogram(
      "fusiond_fusion_segments", "Segments (kernels) per compiled fusion", {1, 2, 3, 4, 6, 8, 16});
  vectorize_ =
      histogram("fusiond_kernel_vectorize_width",
                "Elements per vectorized access of each compiled kernel", {1, 2, 4, 8, 16});
  threads_per_block_ = histogram("fusiond_kernel_threads_per_block",
                                 "Threads per block (block_x * block_y) of each compiled kernel",
                                 {32, 64, 128, 256, 512, 1024});
  persistent_batch_ = histogram("fusiond_kernel_persistent_batch",
                                "Persistent batch of each compiled kernel", {1, 2, 4, 8, 16, 32});
  registers_ = histogram("fusiond_kernel_registers", "Registers per thread (ptxas) of each kernel",
                         {16, 32, 48, 64, 96, 128, 168, 255});
  spill_bytes_ = histogram("fusiond_kernel_spill_bytes", "Spill bytes (ptxas) of each kernel",
                           {0, 16, 64, 256, 1024, 4096});
  smem_bytes_ = histogram("fusiond_kernel_smem_bytes",
                          "Shared memory per block (static + dynamic) of each kernel, bytes",
                          {0, 1024, 4096, 16384, 49152, 101376, 232448});
  // The (rpc, result) pairs that occur; others are made on first use.
  const std::pair<const char*, RpcResult> kPairs[] = {
      {"Compile", RpcResult::kHit},      {"Compile", RpcResult::kMiss},
      {"Compile", RpcResult::kError},    {"Lookup", RpcResult::kHit},
      {"Lookup", RpcResult::kMiss},      {"Lookup", RpcResult::kError},
      {"CompileStream", RpcResult::kOk}, {"CompileStream", RpcResult::kError},
      {"Stats", RpcResult::kOk}};
  for (const auto& [rpc, r] : kPairs) {
    rpc_children_[std::string(rpc) + "/" + ResultName(r)] =
        &rpc_latency_->Add({{"rpc", rpc}, {"result", ResultName(r)}}, LatencyBuckets());
  }
  for (const char* stage : {"parse", "key", "verify", "passes", "segment", "schedule", "codegen",
                            "nvrtc", "cache_io"}) {
    stage_children_[stage] = &stage_latency_->Add({{"stage", stage}}, LatencyBuckets());
  }
  prometheus::BuildGauge()
      .Name("fusiond_build_info")
      .Help("Always 1; the labels say the daemon's version, code generator and NVRTC")
      .Register(*registry_)
      .Add({{"version", kFusiondVersion},
            {"codegen", CodegenVersionString()},
            {"nvrtc", NvrtcVersionString()}})
      .Set(1);
  stats_ = std::make_shared<StatsCollectable>(compiler);
}

Histogram& ServiceMetrics::RpcHistogram(const std::string& rpc, RpcResult result) {
  auto it = rpc_children_.find(rpc + "/" + ResultName(result));
  if (it != rpc_children_.end()) return *it->second;
  return rpc_latency_->Add({{"rpc", rpc}, {"result", ResultName(result)}}, LatencyBuckets());
}

void ServiceMetrics::ObserveRpc(const std::string& rpc, RpcResult result, double seconds,
                                const std::string& error_code) {
  RpcHistogram(rpc, result).Observe(seconds);
  if (result == RpcResult::kError) {
    errors_->Add({{"rpc", rpc}, {"code", error_code}}).Increment();
  }
}

void ServiceMetrics::ObserveStages(const std::map<std::string, double>& stage_micros) {
  for (const auto& [stage, micros] : stage_micros) {
    auto it = stage_children_.find(stage);
    Histogram& h = it != stage_children_.end()
                       ? *it->second
                       : stage_latency_->Add({{"stage", stage}}, LatencyBuckets());
    h.Observe(micros * 1e-6);
  }
}

void ServiceMetrics::ObserveStage(const std::string& stage, double micros) {
  auto it = stage_children_.find(stage);
  Histogram& h = it != stage_children_.end()
                     ? *it->second
                     : stage_latency_->Add({{"stage", stage}}, LatencyBuckets());
  h.Observe(micros * 1e-6);
}

void ServiceMetrics::ObserveCompile(const CachedCompileResult& result) {
  const auto& fusion = result.compiled;
  segments_per_fusion_->Observe(fusion.segments_size());
  for (const auto& segment : fusion.segments()) {
    const auto& p = segment.params();
    segments_by_scheduler_->Add({{"scheduler", p.kind()}}).Increment();
    vectorize_->Observe(p.vectorize());
    threads_per_block_->Observe(double(p.block_x()) * p.block_y());
    persistent_batch_->Observe(p.persistent_batch());
    if (segment.has_kernel()) {
      const auto& k = segment.kernel();
      if (k.registers() >= 0) registers_->Observe(k.registers());
      spill_bytes_->Observe(k.spill_bytes());
      smem_bytes_->Observe(double(k.static_smem_bytes()) + double(p.smem_bytes()));
    }
  }
}

}  // namespace fusiond
