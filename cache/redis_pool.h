// RedisPool: a few hiredis connections to one Redis server, with connect
// and command timeouts, AUTH on every new connection, and a circuit breaker
// so that a dead or hung Redis costs callers almost nothing.
//
// Breaker: after `breaker_failures` consecutive failed calls (no reply in
// time, connect or AUTH failure) it opens: calls fail at once with
// Unavailable, without I/O, for `breaker_open_ms`. Then one call goes
// through as a probe; success closes the breaker, failure opens it again
// for twice as long (at most `breaker_max_open_ms`). So a hung Redis costs
// one timeout per open period, not one per call.
#ifndef FUSIOND_CACHE_REDIS_POOL_H_
#define FUSIOND_CACHE_REDIS_POOL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

struct redisContext;
struct redisReply;

namespace fusiond {

struct RedisPoolOptions {
  // Redis server. Default: 127.0.0.1:6379.
  std::string host = "127.0.0.1";
  int port = 6379;
  // Connect timeout, milliseconds. Default: 200.
  int connect_timeout_ms = 200;
  // Command timeout (no reply by then: the call fails), milliseconds. Default: 200.
  int command_timeout_ms = 200;
  // AUTH: ACL user ("" = the default user) and password ("" = no AUTH). Default: none.
  std::string user;
  std::string password;
  // Connections at most. Default: 4.
  int size = 4;
  // Consecutive failures that open the breaker. Default: 3.
  int breaker_failures = 3;
  // First open period, milliseconds; doubles while probes fail. Default: 1000.
  int breaker_open_ms = 1000;
  // Longest open period, milliseconds. Default: 30000.
  int breaker_max_open_ms = 30000;
};

struct RedisPoolStats {
  uint64_t failures = 0;         // calls that failed to reach Redis or got no reply in time
  uint64_t short_circuited = 0;  // calls refused at once while the breaker was open
  uint64_t breaker_trips = 0;    // times the breaker opened
  bool breaker_open = false;     // open now
};

struct RedisReplyDeleter {
  void operator()(redisReply* r) const;
};
using RedisReply = std::unique_ptr<redisReply, RedisReplyDeleter>;

class RedisPool {
 public:
  explicit RedisPool(RedisPoolOptions options);
  ~RedisPool();
  RedisPool(const RedisPool&) = delete;
  RedisPool& operator=(const RedisPool&) = delete;

  // Runs one command (arguments are binary safe). The reply, which may be
  // a Redis error reply; Unavailable when Redis cannot be reached, did not
  // answer in time, every connection stayed busy, or the breaker is open.
  absl::StatusOr<RedisReply> Command(const std::vector<std::string>& argv);

  RedisPoolStats Stats() const;
  const RedisPoolOptions& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;
  // Breaker: may this call go to Redis? Sets *probe for the half-open probe.
  bool Admit(bool* probe);
  void Record(bool ok, bool probe);
  // An idle or new connection; Unavailable when none frees up in time
  // (*busy) or a new one cannot connect or AUTH.
  absl::StatusOr<redisContext*> Acquire(bool* busy);
  void Release(redisContext* ctx, bool broken);
  absl::StatusOr<redisContext*> Connect();

  const RedisPoolOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<redisContext*> idle_;  // guarded by mu_
  int open_connections_ = 0;         // guarded by mu_ (idle and in use)
  // Breaker state, guarded by mu_.
  int consecutive_failures_ = 0;
  Clock::time_point open_until_{};
  bool probe_in_flight_ = false;
  int open_ms_ = 0;
  std::atomic<uint64_t> failures_{0}, short_circuited_{0}, trips_{0};
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_REDIS_POOL_H_
