// fusiond's security settings: TLS and bearer tokens for the gRPC service,
// a plain health listener, and the shared tier's cluster secret and Redis
// AUTH. Parsed with the other settings (server/config.h), checked together
// with the listen address by ValidateAuthConfig.
#ifndef FUSIOND_SERVER_AUTH_CONFIG_H_
#define FUSIOND_SERVER_AUTH_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "cache/shared_tier.h"

namespace fusiond {

struct AuthConfig {
  // PEM server certificate chain and private key; both or neither. Default: none (plaintext).
  std::string tls_cert;
  std::string tls_key;
  // PEM CA bundle: when set, clients must present a certificate it signed. Default: none.
  std::string tls_client_ca;
  // Bearer tokens, one per line ('#' comments): Compile, CompileStream,
  // Lookup and Stats need "authorization: Bearer TOKEN". Default: none (no tokens).
  std::string token_file;
  // Allow a non-loopback listen address without TLS and client
  // authentication (tokens or client certificates). Default: false.
  bool allow_insecure_listen = false;
  // Plaintext gRPC listener with only grpc.health.v1.Health (for probes
  // that cannot do TLS); "" = none. Default: none.
  std::string health_listen;

  // The shared tier's cluster secret (the same file on every daemon). Default: none.
  std::string redis_secret_file;
  // Run the shared tier without a secret (loopback Redis only; tests). Default: false.
  bool redis_insecure_unsigned = false;
  // Redis ACL user ("" = default user). Default: none.
  std::string redis_user;
  // Redis password file; else $FUSIOND_REDIS_PASSWORD; else no AUTH. Default: none.
  std::string redis_password_file;
  // Redis connect and command timeout, milliseconds. Default: 200.
  int redis_timeout_ms = 200;
  // Redis connections at most. Default: 4.
  int redis_pool_size = 4;
  // Compile leases in Redis (one compile per cluster), milliseconds a
  // lease lasts without renewal; 0 = no leases. Default: 10000.
  int redis_lease_ms = 10000;
};

// Applies one setting if it is one of these ("tls-cert", "tls_cert", ...):
// returns true when `key` was handled, with `*status` its outcome.
bool ApplyAuthSetting(const std::string& key, const std::string& value, AuthConfig* config,
                      absl::Status* status);

// The usage lines of these flags.
std::string AuthUsage();

// InvalidArgument when the settings do not fit together: a certificate
// without its key, or a listen address other machines reach without TLS
// and client authentication (unless allow_insecure_listen).
absl::Status ValidateAuthConfig(const AuthConfig& config, const std::string& listen);

// The shared tier's options for `redis_address` (HOST:PORT): address,
// secret (read from its file), AUTH, timeouts, pool size.
absl::StatusOr<SharedTierOptions> MakeSharedTierOptions(const std::string& redis_address,
                                                        const AuthConfig& config);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_AUTH_CONFIG_H_
