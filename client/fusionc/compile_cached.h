// The cached paths of `fusionc compile`: the embedded RocksDB kernel cache
// (the default when no daemon is named) and a fusiond daemon (--server).
// Both give the stored CompiledFusion and whether it was a cache hit, so the
// two print the same report.
#ifndef FUSIOND_CLIENT_FUSIONC_COMPILE_CACHED_H_
#define FUSIOND_CLIENT_FUSIONC_COMPILE_CACHED_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/frontend/frontend.h"
#include "compiler/pipeline.h"
#include "proto/cache.pb.h"

namespace fusiond {
namespace fusionc {

struct CachedCompile {
  fusiond::v1::CompiledFusion compiled;
  bool hit = false;
};

// Compiles through the kernel cache in `cache_dir` ("" = DefaultCacheDir()),
// with the Redis shared tier at `redis` (HOST:PORT; "" = none) behind it.
absl::StatusOr<CachedCompile> CompileEmbedded(const ParsedFusion& fusion,
                                              const CompileOptions& options,
                                              const std::string& cache_dir,
                                              const std::string& redis = "");
// Compiles through the daemon at `server` (HOST:PORT).
absl::StatusOr<CachedCompile> CompileRemote(const ParsedFusion& fusion,
                                            const CompileOptions& options,
                                            const std::string& server);

// The --json report: the compile report with "cache": "hit" | "miss".
std::string CachedReportJson(const CachedCompile& c);
// The plain report: cache status, one line per segment, the hash.
std::string CachedSummary(const CachedCompile& c);
// Writes DIR/manifest.json and each kernel's binary and source.
absl::Status WriteCachedArtifacts(const CachedCompile& c, const std::string& dir);

}  // namespace fusionc
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_FUSIONC_COMPILE_CACHED_H_
