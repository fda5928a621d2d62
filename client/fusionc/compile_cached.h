// The cached paths of `fusionc compile`: the embedded RocksDB kernel cache
// (the default when no daemon is named) and a fusiond daemon (--server).
// Both give the stored CompiledFusion and whether it was a cache hit, so the
// two print the same report.
#ifndef FUSIOND_CLIENT_FUSIONC_COMPILE_CACHED_H_
#define FUSIOND_CLIENT_FUSIONC_COMPILE_CACHED_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/cpp/fusion_client.h"
#include "client/fusionc/flags.h"
#include "compiler/compile_result.h"
#include "compiler/frontend/frontend.h"
#include "proto/cache.pb.h"

namespace fusiond {
namespace fusionc {

struct CachedCompile {
  fusiond::v1::CompiledFusion compiled;
  bool hit = false;
};

// The shared tier behind the embedded cache: --redis HOST:PORT and the
// cluster secret (--redis-secret-file, else $FUSIOND_REDIS_SECRET_FILE) or
// --redis-insecure-unsigned; AUTH from --redis-user and
// --redis-password-file (else $FUSIOND_REDIS_PASSWORD).
struct RedisFlags {
  std::string address;  // "" = no shared tier
  std::string secret_file;
  bool insecure_unsigned = false;
  std::string user;
  std::string password_file;
};
RedisFlags RedisFlagsFrom(const ParsedFlags& flags);
// The client's TLS and token options: --tls-ca, --tls-cert, --tls-key,
// --tls-server-name, --tls, --token-file, else the environment
// (ClientOptionsFromEnv).
absl::StatusOr<FusionClientOptions> ClientOptionsFromFlags(const ParsedFlags& flags);
// The flags both read (for ParseFlags).
std::vector<FlagSpec> SecurityFlagSpecs();

// Compiles through the kernel cache in `cache_dir` ("" = DefaultCacheDir()),
// with the Redis shared tier `redis` behind it.
absl::StatusOr<CachedCompile> CompileEmbedded(const ParsedFusion& fusion,
                                              const CompileOptions& options,
                                              const std::string& cache_dir,
                                              const RedisFlags& redis = {});
// Compiles through the daemon at `server` (HOST:PORT); the reply carries
// the CUDA source and the report only when `contents` asks.
absl::StatusOr<CachedCompile> CompileRemote(const ParsedFusion& fusion,
                                            const CompileOptions& options,
                                            const std::string& server,
                                            const FusionClientOptions& client_options = {},
                                            ReplyContents contents = {});

// The --json report: the compile report with "cache": "hit" | "miss".
std::string CachedReportJson(const CachedCompile& c);
// The plain report: cache status, one line per segment, the hash.
std::string CachedSummary(const CachedCompile& c);
// Writes DIR/manifest.json and each kernel's binary, and its source when the
// result holds it.
absl::Status WriteCachedArtifacts(const CachedCompile& c, const std::string& dir);

}  // namespace fusionc
}  // namespace fusiond

#endif  // FUSIOND_CLIENT_FUSIONC_COMPILE_CACHED_H_
