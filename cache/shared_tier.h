// SharedTier: the cluster-wide second tier of the kernel cache, in Redis.
//
// Daemons on different machines that point at one Redis server share their
// compiled fusions: a local miss asks Redis before compiling, and every
// compile is published there. Values are the same framed records (record.h)
// the local RocksDB cache stores, so a remote value is checked (magic,
// version, CRC-32C) before it is used; a value that fails is deleted from
// Redis and counted, never served. Keys are `key_prefix` + the encoded
// CacheKey, which already holds the codegen and NVRTC versions, so daemons of
// different versions never share a record.
//
// The tier is best effort: an unreachable or failing Redis is Unavailable
// for that call (the caller compiles as if it missed) and the connection is
// re-established on the next call. One connection, used under a mutex.
#ifndef FUSIOND_CACHE_SHARED_TIER_H_
#define FUSIOND_CACHE_SHARED_TIER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct redisContext;
struct redisReply;

namespace fusiond {

struct SharedTierOptions {
  // Redis server. Default: 127.0.0.1:6379.
  std::string host = "127.0.0.1";
  int port = 6379;
  // Connect and command timeout, milliseconds. Default: 200.
  int timeout_ms = 200;
  // Prefix of every key. Default: "fusiond:kc:".
  std::string key_prefix = "fusiond:kc:";
  // Expiry of published records in seconds; 0 = none (Redis' own maxmemory
  // policy decides). Default: 0.
  int64_t ttl_seconds = 0;
};

struct SharedTierStats {
  uint64_t hits = 0;      // Get() calls that returned a record
  uint64_t misses = 0;    // Get() calls that found nothing
  uint64_t puts = 0;      // records published
  uint64_t corrupt = 0;   // remote values that failed the record checks
  uint64_t errors = 0;    // calls that failed to reach or use Redis
};

// "HOST:PORT" -> options (port required); InvalidArgument otherwise.
absl::StatusOr<SharedTierOptions> ParseRedisAddress(const std::string& address);

class SharedTier {
 public:
  // A tier for `options`; it connects on first use (and again after errors).
  static std::unique_ptr<SharedTier> Create(SharedTierOptions options);
  // Create, then Ping: Unavailable when the server does not answer.
  static absl::StatusOr<std::unique_ptr<SharedTier>> Connect(SharedTierOptions options);
  // PING the server now.
  absl::Status Ping();
  ~SharedTier();
  SharedTier(const SharedTier&) = delete;
  SharedTier& operator=(const SharedTier&) = delete;

  // The verified payload (a serialized CompiledFusion) under `cache_key`.
  // NotFound when absent or corrupt (then deleted), Unavailable on errors.
  absl::StatusOr<std::string> Get(const std::string& cache_key);
  // Publishes `payload` under `cache_key` (framed as a record).
  absl::Status Put(const std::string& cache_key, const std::string& payload);

  SharedTierStats Stats() const;
  const SharedTierOptions& options() const { return options_; }

 private:
  explicit SharedTier(SharedTierOptions options) : options_(std::move(options)) {}
  // A live connection; callers hold mu_.
  absl::Status EnsureConnectedLocked();
  void DropConnectionLocked();
  // Unavailable for a failed command (`reply` null or an error reply);
  // drops the connection when there was no reply at all.
  absl::Status FailedLocked(const std::string& what, const redisReply* reply);

  SharedTierOptions options_;
  std::mutex mu_;
  redisContext* ctx_ = nullptr;  // guarded by mu_
  std::atomic<uint64_t> hits_{0}, misses_{0}, puts_{0}, corrupt_{0}, errors_{0};
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_SHARED_TIER_H_
