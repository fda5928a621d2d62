#include "client/fusionc/compile_cached.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "cache/cached_compiler.h"
#include "cache/kernel_cache.h"
#include "cache/report.h"
#include "cache/secret_file.h"
#include "cache/shared_tier.h"
#include "client/cpp/fusion_client.h"
#include "compiler/codegen/manifest.h"

namespace fusiond {
namespace fusionc {

namespace {

std::string FlagOrEnv(const ParsedFlags& flags, const char* flag, const char* env) {
  if (auto v = flags.Get(flag)) return *v;
  const char* e = std::getenv(env);
  return e == nullptr ? "" : e;
}

absl::StatusOr<std::unique_ptr<SharedTier>> OpenSharedTier(const RedisFlags& redis) {
  absl::StatusOr<SharedTierOptions> o = ParseRedisAddress(redis.address);
  if (!o.ok()) return absl::InvalidArgumentError(absl::StrCat("--redis: ", o.status().message()));
  if (!redis.secret_file.empty()) {
    absl::StatusOr<std::string> secret = ReadSecretFile(redis.secret_file, "--redis-secret-file");
    if (!secret.ok()) return secret.status();
    o->secret = *secret;
  }
  o->insecure_unsigned = redis.insecure_unsigned;
  o->redis.user = redis.user;
  if (!redis.password_file.empty()) {
    absl::StatusOr<std::string> password =
        ReadSecretFile(redis.password_file, "--redis-password-file");
    if (!password.ok()) return password.status();
    o->redis.password = *password;
  } else if (const char* env = std::getenv("FUSIOND_REDIS_PASSWORD"); env != nullptr) {
    o->redis.password = env;
  }
  // Unreachable at run time: a miss, the compile still runs.
  return SharedTier::Create(*std::move(o));
}

}  // namespace

std::vector<FlagSpec> SecurityFlagSpecs() {
  return {{"tls-ca", true},
          {"tls-cert", true},
          {"tls-key", true},
          {"tls-server-name", true},
          {"tls", false},
          {"token-file", true},
          {"redis-secret-file", true},
          {"redis-insecure-unsigned", false},
          {"redis-user", true},
          {"redis-password-file", true}};
}

RedisFlags RedisFlagsFrom(const ParsedFlags& flags) {
  RedisFlags r;
  r.address = flags.Get("redis").value_or("");
  r.secret_file = FlagOrEnv(flags, "redis-secret-file", "FUSIOND_REDIS_SECRET_FILE");
  r.insecure_unsigned = flags.Has("redis-insecure-unsigned");
  r.user = flags.Get("redis-user").value_or("");
  r.password_file = flags.Get("redis-password-file").value_or("");
  return r;
}

absl::StatusOr<FusionClientOptions> ClientOptionsFromFlags(const ParsedFlags& flags) {
  FusionClientOptions o;
  o.tls_ca_file = flags.Get("tls-ca").value_or("");
  o.tls_cert_file = flags.Get("tls-cert").value_or("");
  o.tls_key_file = flags.Get("tls-key").value_or("");
  o.tls_server_name = flags.Get("tls-server-name").value_or("");
  o.tls = flags.Has("tls");
  if (auto path = flags.Get("token-file")) {
    absl::StatusOr<std::string> token = ReadTokenFile(*path);
    if (!token.ok()) return absl::InvalidArgumentError(token.status().message());
    o.token = *token;
  }
  return ClientOptionsFromEnv(o);
}

absl::StatusOr<CachedCompile> CompileEmbedded(const ParsedFusion& fusion,
                                              const CompileOptions& options,
                                              const std::string& cache_dir,
                                              const RedisFlags& redis) {
  std::unique_ptr<SharedTier> shared;
  if (!redis.address.empty()) {
    absl::StatusOr<std::unique_ptr<SharedTier>> tier = OpenSharedTier(redis);
    if (!tier.ok()) return tier.status();
    shared = *std::move(tier);
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
                                            const std::string& server,
                                            const FusionClientOptions& client_options,
                                            ReplyContents contents) {
  FusionClient client(server, client_options);
  auto response =
      client.Compile(MakeCompileRequest(fusion.graph, fusion.input_shapes, options, contents));
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
      absl::StrAppend(&out, "  kernel ", s.kernel().kernel_name(), " (", s.kernel().arch(), ", ",
                      s.kernel().registers(), " registers, ", s.kernel().spill_bytes(),
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
    if (!k.cuda_source().empty()) files.emplace_back(k.kernel_name() + ".cu", k.cuda_source());
    files.emplace_back(k.kernel_name() + (k.is_ptx() ? ".ptx" : ".cubin"), k.binary());
  }
  files.emplace_back("manifest.json", c.compiled.manifest_json());
  return WriteFilesInto(dir, files);
}

}  // namespace fusionc
}  // namespace fusiond
