#include "server/auth_config.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cache/secret_file.h"

namespace fusiond {
namespace {

absl::Status ParseBool(const std::string& key, const std::string& value, bool* out) {
  if (value == "true" || value == "1" || value == "yes") {
    *out = true;
  } else if (value == "false" || value == "0" || value == "no") {
    *out = false;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--", key, ": expected true or false, got '", value, "'"));
  }
  return absl::OkStatus();
}

absl::Status ParseInt(const std::string& key, const std::string& value, int min, int* out) {
  if (!absl::SimpleAtoi(value, out) || *out < min) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", key, ": expected a whole number >= ", min, ", got '", value, "'"));
  }
  return absl::OkStatus();
}

// "tls_cert" and "tls-cert" name the same setting.
std::string Dashed(std::string key) {
  for (char& c : key) c = c == '_' ? '-' : c;
  return key;
}

}  // namespace

bool ApplyAuthSetting(const std::string& raw_key, const std::string& value, AuthConfig* c,
                      absl::Status* status) {
  const std::string key = Dashed(raw_key);
  *status = absl::OkStatus();
  if (key == "tls-cert") {
    c->tls_cert = value;
  } else if (key == "tls-key") {
    c->tls_key = value;
  } else if (key == "tls-client-ca") {
    c->tls_client_ca = value;
  } else if (key == "token-file") {
    c->token_file = value;
  } else if (key == "allow-insecure-listen") {
    *status = ParseBool(key, value, &c->allow_insecure_listen);
  } else if (key == "health-listen") {
    c->health_listen = value;
  } else if (key == "redis-secret-file") {
    c->redis_secret_file = value;
  } else if (key == "redis-insecure-unsigned") {
    *status = ParseBool(key, value, &c->redis_insecure_unsigned);
  } else if (key == "redis-user") {
    c->redis_user = value;
  } else if (key == "redis-password-file") {
    c->redis_password_file = value;
  } else if (key == "redis-timeout-ms") {
    *status = ParseInt(key, value, 1, &c->redis_timeout_ms);
  } else if (key == "redis-pool-size") {
    *status = ParseInt(key, value, 1, &c->redis_pool_size);
  } else if (key == "redis-lease-ms") {
    *status = ParseInt(key, value, 0, &c->redis_lease_ms);
  } else {
    return false;
  }
  return true;
}

std::string AuthUsage() {
  return R"(security (docs/service.md, "Security"):
  --tls-cert FILE           PEM server certificate chain: serve gRPC over TLS
  --tls-key FILE            PEM private key of --tls-cert
  --tls-client-ca FILE      PEM CA bundle: require client certificates it signed
  --token-file FILE         bearer tokens, one per line: Compile, CompileStream,
                            Lookup and Stats need "authorization: Bearer TOKEN"
  --allow-insecure-listen true   allow a non-loopback --listen without TLS and
                            client authentication (refused otherwise)
  --health-listen HOST:PORT plaintext listener with only the gRPC health service
  --redis-secret-file FILE  the cluster secret that signs shared-tier records
                            (required with --redis; the same file on every daemon)
  --redis-insecure-unsigned true  no secret (a loopback Redis only; tests)
  --redis-user NAME         Redis ACL user
  --redis-password-file FILE  Redis AUTH password (else $FUSIOND_REDIS_PASSWORD)
  --redis-timeout-ms N      Redis connect and command timeout (default 200)
  --redis-pool-size N       Redis connections (default 4)
  --redis-lease-ms N        compile lease: one daemon of the cluster compiles a new
                            fusion, the others wait for its record (default 10000,
                            0 = off)
)";
}

absl::Status ValidateAuthConfig(const AuthConfig& c, const std::string& listen) {
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!c.tls_client_ca.empty() && c.tls_cert.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  const bool tls = !c.tls_cert.empty();
  const bool client_auth = !c.token_file.empty() || !c.tls_client_ca.empty();
  if (!IsLoopbackHost(listen) && !(tls && client_auth) && !c.allow_insecure_listen) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen ", listen,
                     " is reachable from other machines: it needs TLS (--tls-cert, "
                     "--tls-key) and client authentication (--token-file or --tls-client-ca), or "
                     "--allow-insecure-listen true on a network you trust"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SharedTierOptions> MakeSharedTierOptions(const std::string& redis_address,
                                                        const AuthConfig& c) {
  absl::StatusOr<SharedTierOptions> o = ParseRedisAddress(redis_address);
  if (!o.ok()) return o.status();
  if (!c.redis_secret_file.empty()) {
    absl::StatusOr<std::string> secret = ReadSecretFile(c.redis_secret_file, "--redis-secret-file");
    if (!secret.ok()) return secret.status();
    o->secret = *std::move(secret);
  }
  o->insecure_unsigned = c.redis_insecure_unsigned;
  o->redis.user = c.redis_user;
  if (!c.redis_password_file.empty()) {
    absl::StatusOr<std::string> password =
        ReadSecretFile(c.redis_password_file, "--redis-password-file");
    if (!password.ok()) return password.status();
    o->redis.password = *std::move(password);
  } else if (const char* env = std::getenv("FUSIOND_REDIS_PASSWORD"); env != nullptr) {
    o->redis.password = env;
  }
  o->redis.connect_timeout_ms = c.redis_timeout_ms;
  o->redis.command_timeout_ms = c.redis_timeout_ms;
  o->redis.size = c.redis_pool_size;
  return o;
}

}  // namespace fusiond
