// The daemon's Prometheus metrics (docs/metrics.md lists every one).
// Latency histograms and error counters are observed by the service; cache
// and compiler counters and gauges are read from their Stats() at scrape
// time, so they always match what Stats RPC reports.
#ifndef FUSIOND_SERVER_METRICS_H_
#define FUSIOND_SERVER_METRICS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cache/cached_compiler.h"
#include "cache/kernel_cache.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace fusiond {

// What an RPC ended as: "hit", "miss", "error" ("ok" for Stats).
enum class RpcResult { kHit, kMiss, kError, kOk };

class ServiceMetrics {
 public:
  // `compiler` (and its cache) must outlive this object.
  explicit ServiceMetrics(CachedCompiler* compiler);

  // What the exposer serves on /metrics: the registry of histograms and
  // event counters, and the scrape-time view of the cache and compiler.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables() {
    return {registry_, stats_};
  }

  // One finished RPC: latency by rpc and result; errors counted by code.
  void ObserveRpc(const std::string& rpc, RpcResult result, double seconds,
                  const std::string& error_code = "");
  // The stages a request ran ("parse", "key", "passes", ..., "cache_io").
  void ObserveStages(const std::map<std::string, double>& stage_micros);
  void ObserveStage(const std::string& stage, double micros);
  // One full compile: heuristics of every segment, the kernels' resources.
  void ObserveCompile(const CachedCompileResult& result);

 private:
  prometheus::Histogram& RpcHistogram(const std::string& rpc, RpcResult result);

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<prometheus::Collectable> stats_;
  prometheus::Family<prometheus::Histogram>* rpc_latency_;
  prometheus::Family<prometheus::Histogram>* stage_latency_;
  prometheus::Family<prometheus::Counter>* errors_;
  prometheus::Family<prometheus::Counter>* segments_by_scheduler_;
  prometheus::Histogram* segments_per_fusion_;
  prometheus::Histogram* vectorize_;
  prometheus::Histogram* threads_per_block_;
  prometheus::Histogram* persistent_batch_;
  prometheus::Histogram* registers_;
  prometheus::Histogram* spill_bytes_;
  prometheus::Histogram* smem_bytes_;
  // Pre-made children for the hot path, by "rpc/result".
  std::map<std::string, prometheus::Histogram*> rpc_children_;
  std::map<std::string, prometheus::Histogram*> stage_children_;
};

}  // namespace fusiond

#endif  // FUSIOND_SERVER_METRICS_H_
