#include "client/fusionc/compile_cached.h"

#include "absl/strings/str_cat.h"
#include "cache/cached_compiler.h"
#include "cache/kernel_cache.h"
#include "cache/shared_tier.h"
#include "cache/report.h"
#include "client/cpp/fusion_client.h"
#include "compiler/codegen/manifest.h"

namespace fusiond {
namespace fusionc {

absl::StatusOr<CachedCompile> CompileEmbedded(const ParsedFusion& fusion,
                                              const CompileOptions& options,
                                              const std::string& cache_dir,
                                              const std::string& redis) {
  std::unique_ptr<SharedTier> shared;
  if (!redis.empty()) {
    auto address = ParseRedisAddress(redis);
    if (!address.ok()) return absl::InvalidArgumentError(absl::StrCat("--redis: ", address.status().message()));
    shared = SharedTier::Create(*address);  // unreachable: a miss, the compile still runs
  }
  KernelCacheOptions cache_options;
  cache_options.dir = cache_dir;
  auto cache = KernelCache::Open(cache_options);
  if (!cache.ok()) return cache.status();
  auto r = CompileWithCache(fusion.graph, fusion.input_shapes, options, cache->get(), shared.get());
  if (!r.ok()) return r.status();
  return CachedCompile{std::move(r->compiled), r->hit};
}

absl::StatusOr<CachedCompile> CompileRemote(const ParsedFusion& fusion,
                                            const CompileOptions& options,
                                            const std::string& server) {
  FusionClient client(server);
  auto response = client.Compile(MakeCompileRequest(fusion.graph, fusion.input_shapes, options));
  if (!response.ok()) return response.status();
  return CachedCompile{std::move(*response->mutable_result()),
                       response->cache() == fusiond::v1::HIT};
}

std::string CachedReportJson(const CachedCompile& c) {
  return ReportWithCacheStatus(c.compiled, c.hit);
}

std::string CachedSummary(const CachedCompile& c) {
  std::string out = absl::StrCat("cache: ", c.hit ? "hit" : "miss", "\n");
  for (int i = 0; i < c.compiled.segments_size(); ++i) {
    const auto& s = c.compiled.segments(i);
    absl::StrAppend(&out, "segment ", i, ": ", s.params().kind());
    if (s.has_kernel()) {
      absl::StrAppend(&out, "  kernel ", s.kernel().kernel_name(), " (", s.kernel().arch(),
                      ", ", s.kernel().registers(), " registers, ", s.kernel().spill_bytes(),
                      " spill bytes)");
    }
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "canonical_hash ", c.compiled.canonical_hash(), "\n");
  return out;
}

absl::Status WriteCachedArtifacts(const CachedCompile& c, const std::string& dir) {
  if (c.compiled.manifest_json().empty()) {
    return absl::UnavailableError("the compiled fusion has no kernels (no NVRTC in this build)");
  }
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& s : c.compiled.segments()) {
    if (!s.has_kernel()) continue;
    const auto& k = s.kernel();
    files.emplace_back(k.kernel_name() + ".cu", k.cuda_source());
    files.emplace_back(k.kernel_name() + (k.is_ptx() ? ".ptx" : ".cubin"), k.binary());
  }
  files.emplace_back("manifest.json", c.compiled.manifest_json());
  return WriteFilesInto(dir, files);
}

}  // namespace fusionc
}  // namespace fusiond
