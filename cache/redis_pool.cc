#include "cache/redis_pool.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace {

timeval Timeout(int ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

RedisReply Send(redisContext* ctx, const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  return RedisReply(static_cast<redisReply*>(
      redisCommandArgv(ctx, static_cast<int>(args.size()), args.data(), lens.data())));
}

}  // namespace

void RedisReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

RedisPool::RedisPool(RedisPoolOptions options)
    : options_(std::move(options)), open_ms_(options_.breaker_open_ms) {}

RedisPool::~RedisPool() {
  std::lock_guard<std::mutex> lock(mu_);
  for (redisContext* c : idle_) redisFree(c);
  idle_.clear();
}

bool RedisPool::Admit(bool* probe) {
  *probe = false;
  std::lock_guard<std::mutex> lock(mu_);
  if (consecutive_failures_ < options_.breaker_failures) return true;
  if (Clock::now() < open_until_ || probe_in_flight_) {
    ++short_circuited_;
    return false;
  }
  probe_in_flight_ = true;  // half open: this call tests Redis for everyone
  *probe = true;
  return true;
}

void RedisPool::Record(bool ok, bool probe) {
  std::lock_guard<std::mutex> lock(mu_);
  if (probe) probe_in_flight_ = false;
  if (ok) {
    consecutive_failures_ = 0;
    open_ms_ = options_.breaker_open_ms;
    return;
  }
  ++failures_;
  ++consecutive_failures_;
  if (consecutive_failures_ < options_.breaker_failures) return;
  if (probe) {
    open_ms_ = std::min(open_ms_ * 2, options_.breaker_max_open_ms);
  } else if (consecutive_failures_ == options_.breaker_failures) {
    ++trips_;
  } else {
    return;  // a call admitted before the breaker opened: keep the open period
  }
  open_until_ = Clock::now() + std::chrono::milliseconds(open_ms_);
}

absl::StatusOr<redisContext*> RedisPool::Connect() {
  redisContext* ctx = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                              Timeout(options_.connect_timeout_ms));
  if (ctx == nullptr || ctx->err != 0) {
    std::string why = ctx == nullptr ? "out of memory" : ctx->errstr;
    if (ctx != nullptr) redisFree(ctx);
    return absl::UnavailableError(
        absl::StrCat("connecting to redis at ", options_.host, ":", options_.port, ": ", why));
  }
  redisSetTimeout(ctx, Timeout(options_.command_timeout_ms));
  if (!options_.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!options_.user.empty()) auth.push_back(options_.user);
    auth.push_back(options_.password);
    RedisReply r = Send(ctx, auth);
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      std::string why = r == nullptr ? ctx->errstr : std::string(r->str, r->len);
      redisFree(ctx);
      return absl::UnavailableError(
          absl::StrCat("redis AUTH at ", options_.host, ":", options_.port, " failed: ", why));
    }
  }
  return ctx;
}

absl::StatusOr<redisContext*> RedisPool::Acquire(bool* busy) {
  *busy = false;
  std::unique_lock<std::mutex> lock(mu_);
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.command_timeout_ms);
  while (idle_.empty() && open_connections_ >= options_.size) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_connections_ >= options_.size) {
      *busy = true;
      return absl::UnavailableError(
          absl::StrCat("all ", options_.size, " redis connections stayed busy"));
    }
  }
  if (!idle_.empty()) {
    redisContext* c = idle_.back();
    idle_.pop_back();
    return c;
  }
  ++open_connections_;
  lock.unlock();
  absl::StatusOr<redisContext*> c = Connect();
  if (!c.ok()) {
    lock.lock();
    --open_connections_;
    cv_.notify_one();
  }
  return c;
}

void RedisPool::Release(redisContext* ctx, bool broken) {
  std::lock_guard<std::mutex> lock(mu_);
  if (broken) {
    redisFree(ctx);
    --open_connections_;
  } else {
    idle_.push_back(ctx);
  }
  cv_.notify_one();
}

absl::StatusOr<RedisReply> RedisPool::Command(const std::vector<std::string>& argv) {
  bool probe = false;
  if (!Admit(&probe)) {
    return absl::UnavailableError(absl::StrCat("redis at ", options_.host, ":", options_.port,
                                               " is failing (circuit breaker open)"));
  }
  bool busy = false;
  absl::StatusOr<redisContext*> ctx = Acquire(&busy);
  if (!ctx.ok()) {
    // Connections busy with slow calls say nothing new; a failed connect does.
    if (!busy) {
      Record(false, probe);
    } else if (probe) {
      std::lock_guard<std::mutex> lock(mu_);
      probe_in_flight_ = false;
    }
    return ctx.status();
  }
  RedisReply reply = Send(*ctx, argv);
  if (reply == nullptr) {
    // No reply in time, or the connection broke: the context is unusable.
    std::string why = (*ctx)->errstr;
    Release(*ctx, /*broken=*/true);
    Record(false, probe);
    return absl::UnavailableError(absl::StrCat("redis ", argv.empty() ? "" : argv[0], " at ",
                                               options_.host, ":", options_.port, ": ", why));
  }
  Release(*ctx, /*broken=*/false);
  Record(true, probe);
  return reply;
}

RedisPoolStats RedisPool::Stats() const {
  RedisPoolStats s;
  s.failures = failures_;
  s.short_circuited = short_circuited_;
  s.breaker_trips = trips_;
  std::lock_guard<std::mutex> lock(mu_);
  s.breaker_open = consecutive_failures_ >= options_.breaker_failures;
  return s;
}

}  // namespace fusiond
