// SharedTier: the cluster-wide second tier of the kernel cache, in Redis.
//
// Daemons on different machines that point at one Redis server share their
// compiled fusions: a local miss asks Redis before compiling, and every
// compile is published there. Keys are `key_prefix` + the encoded CacheKey,
// which already holds the codegen and NVRTC versions, so daemons of
// different versions never share a record.
//
// Redis is not trusted: every value names its own key and carries an
// HMAC-SHA256 under the cluster secret (shared_tier_record.h). A value that
// fails (forged or altered, moved under another key, garbage) is counted
// and treated as a miss; it is never served or stored locally, and the
// compile that follows overwrites it. Without a secret the tier refuses to
// start unless `insecure_unsigned` is set, which only a loopback Redis
// accepts (tests).
//
// The tier is best effort: a failing Redis is Unavailable for that call
// (the caller compiles as if it missed). Calls go through a small
// connection pool with timeouts and a circuit breaker (redis_pool.h), so a
// dead or hung Redis costs about one timeout per breaker period.
//
// Compile leases (SET NX PX under `lease_prefix` + key) let one daemon of
// the cluster compile a new fusion while the others wait for its record.
#ifndef FUSIOND_CACHE_SHARED_TIER_H_
#define FUSIOND_CACHE_SHARED_TIER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/redis_pool.h"

namespace fusiond {

struct SharedTierOptions {
  // Server, timeouts, AUTH, pool size and breaker. Default: RedisPoolOptions{}.
  RedisPoolOptions redis;
  // The cluster secret that authenticates every record (at least 16 bytes;
  // ReadSecretFile). Default: none, which Create refuses unless
  // insecure_unsigned.
  std::string secret;
  // Accept running without a secret: records are signed with a public key,
  // so anyone who can write to Redis can plant kernels. Only for a Redis on
  // loopback (tests). Default: false.
  bool insecure_unsigned = false;
  // Prefix of every record key. Default: "fusiond:kc:".
  std::string key_prefix = "fusiond:kc:";
  // Prefix of every compile lease key. Default: "fusiond:lease:".
  std::string lease_prefix = "fusiond:lease:";
  // Expiry of published records in seconds; 0 = none (Redis' own maxmemory
  // policy decides). Default: 0.
  int64_t ttl_seconds = 0;
  // Largest value Get reads (GETRANGE, so a larger one is never read
  // whole): anyone who can write to Redis could otherwise make every daemon
  // that looks a key up hold a 512 MB value. A larger value is refused as
  // corrupt. Default: 64 MiB, the largest reply fusiond sends by default.
  size_t max_value_bytes = size_t{64} << 20;
};

struct SharedTierStats {
  uint64_t hits = 0;      // Get() calls that returned a verified record
  uint64_t misses = 0;    // Get() calls that found nothing
  uint64_t puts = 0;      // records published
  uint64_t corrupt = 0;   // values that were not records (garbage, bad CRC): refused
  uint64_t rejected = 0;  // values that failed authentication (bad MAC, wrong key): refused
  uint64_t errors = 0;    // calls that failed to reach or use Redis
  RedisPoolStats pool;    // timeouts, breaker
};

// "HOST:PORT" -> options (port required); InvalidArgument otherwise.
absl::StatusOr<SharedTierOptions> ParseRedisAddress(const std::string& address);

class SharedTier {
 public:
  // A tier for `options`; it connects on first use (and again after
  // errors). InvalidArgument without a usable secret (see the options).
  static absl::StatusOr<std::unique_ptr<SharedTier>> Create(SharedTierOptions options);
  // Create, then Ping: Unavailable when the server does not answer.
  static absl::StatusOr<std::unique_ptr<SharedTier>> Connect(SharedTierOptions options);
  // PING the server now.
  absl::Status Ping();
  SharedTier(const SharedTier&) = delete;
  SharedTier& operator=(const SharedTier&) = delete;

  // The verified payload (a serialized CompiledFusion) under `cache_key`.
  // NotFound when absent or refused (counted; `*refused` set when given),
  // Unavailable on errors.
  absl::StatusOr<std::string> Get(const std::string& cache_key, bool* refused = nullptr);
  // Publishes `payload` under `cache_key` (signed, naming its key).
  absl::Status Put(const std::string& cache_key, const std::string& payload);
  // Whether a value (checked or not) is stored under `cache_key`: cheap
  // polling for a record another daemon is about to publish.
  absl::StatusOr<bool> Exists(const std::string& cache_key);

  // The compile lease of `cache_key`: true when `owner` took it (for
  // `ttl_ms`), false when another owner holds it. Unavailable on errors.
  absl::StatusOr<bool> AcquireLease(const std::string& cache_key, const std::string& owner,
                                    int ttl_ms);
  // Extends the lease when `owner` still holds it (false when it does not).
  absl::StatusOr<bool> RenewLease(const std::string& cache_key, const std::string& owner,
                                  int ttl_ms);
  // Gives the lease up when `owner` holds it.
  absl::Status ReleaseLease(const std::string& cache_key, const std::string& owner);

  SharedTierStats Stats() const;
  const SharedTierOptions& options() const { return options_; }

 private:
  explicit SharedTier(SharedTierOptions options);

  SharedTierOptions options_;
  RedisPool pool_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, puts_{0}, corrupt_{0}, rejected_{0}, errors_{0};
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_SHARED_TIER_H_
