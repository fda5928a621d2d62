#include "server/compile_log.h"

#include <string>
#include <vector>

#include "server/log.h"

namespace fusiond {

void LogCompiled(const CachedCompileResult& r, double slow_micros) {
  const auto& fusion = r.compiled;
  double total = 0;
  for (const auto& [stage, us] : r.stage_micros) total += us;
  Log(LogLevel::kInfo, "compiled",
      {{"key", r.cache_key},
       {"canonical_hash", fusion.canonical_hash()},
       {"segments", fusion.segments_size()},
       {"micros", total}});
  std::vector<LogField> stages = {{"canonical_hash", fusion.canonical_hash()}};
  for (const auto& [stage, us] : r.stage_micros) stages.emplace_back(stage + "_micros", us);
  Log(LogLevel::kDebug, "compile_stages", stages);
  for (int i = 0; i < fusion.segments_size(); ++i) {
    const auto& segment = fusion.segments(i);
    const auto& p = segment.params();
    const auto& k = segment.kernel();
    Log(LogLevel::kDebug, "compiled_segment",
        {{"canonical_hash", fusion.canonical_hash()},
         {"segment", i},
         {"scheduler", p.kind()},
         {"reason", segment.scheduler_reason()},
         {"block_x", p.block_x()},
         {"block_y", p.block_y()},
         {"vectorize", p.vectorize()},
         {"persistent_batch", p.persistent_batch()},
         {"registers", k.registers()},
         {"spill_bytes", k.spill_bytes()},
         {"static_smem_bytes", k.static_smem_bytes()}});
    if (segment.has_kernel() && k.spill_bytes() > 0) {
      Log(LogLevel::kWarning, "kernel_spills",
          {{"canonical_hash", fusion.canonical_hash()},
           {"key", r.cache_key},
           {"kernel", k.kernel_name()},
           {"scheduler", p.kind()},
           {"spill_bytes", k.spill_bytes()},
           {"registers", k.registers()},
           {"arch", k.arch()}});
    }
  }
  if (slow_micros > 0 && total > slow_micros) {
    Log(LogLevel::kWarning, "slow_compile",
        {{"canonical_hash", fusion.canonical_hash()},
         {"key", r.cache_key},
         {"micros", total},
         {"threshold_micros", slow_micros},
         {"nvrtc_micros", r.stage_micros.count("nvrtc") ? r.stage_micros.at("nvrtc") : 0.0}});
  }
}

}  // namespace fusiond
