#include "cache/shared_tier.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cache/record.h"

namespace fusiond {

namespace {

// Frees a hiredis reply on every path.
struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

timeval Timeout(int ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

}  // namespace

absl::StatusOr<SharedTierOptions> ParseRedisAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("redis address '", address, "': expected HOST:PORT, e.g. 127.0.0.1:6379"));
  }
  SharedTierOptions o;
  o.host = address.substr(0, colon);
  o.port = port;
  return o;
}

std::unique_ptr<SharedTier> SharedTier::Create(SharedTierOptions options) {
  return std::unique_ptr<SharedTier>(new SharedTier(std::move(options)));
}

absl::StatusOr<std::unique_ptr<SharedTier>> SharedTier::Connect(SharedTierOptions options) {
  std::unique_ptr<SharedTier> t = Create(std::move(options));
  if (absl::Status s = t->Ping(); !s.ok()) return s;
  return t;
}

absl::Status SharedTier::Ping() {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = EnsureConnectedLocked(); !s.ok()) return s;
  Reply pong(static_cast<redisReply*>(redisCommand(ctx_, "PING")));
  if (pong == nullptr || pong->type == REDIS_REPLY_ERROR) {
    return FailedLocked(
        absl::StrCat("redis at ", options_.host, ":", options_.port, " did not answer PING"), pong.get());
  }
  return absl::OkStatus();
}

SharedTier::~SharedTier() {
  std::lock_guard<std::mutex> lock(mu_);
  DropConnectionLocked();
}

absl::Status SharedTier::EnsureConnectedLocked() {
  if (ctx_ != nullptr) return absl::OkStatus();
  ctx_ = redisConnectWithTimeout(options_.host.c_str(), options_.port, Timeout(options_.timeout_ms));
  if (ctx_ == nullptr || ctx_->err != 0) {
    std::string why = ctx_ == nullptr ? "out of memory" : ctx_->errstr;
    DropConnectionLocked();
    return absl::UnavailableError(
        absl::StrCat("connecting to redis at ", options_.host, ":", options_.port, ": ", why));
  }
  redisSetTimeout(ctx_, Timeout(options_.timeout_ms));
  return absl::OkStatus();
}

absl::Status SharedTier::FailedLocked(const std::string& what, const redisReply* reply) {
  absl::Status s =
      absl::UnavailableError(absl::StrCat(what, ": ", reply == nullptr ? ctx_->errstr : reply->str));
  // No reply: the connection is broken (timeout, reset); the next call reconnects.
  if (reply == nullptr) DropConnectionLocked();
  return s;
}

void SharedTier::DropConnectionLocked() {
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
}

absl::StatusOr<std::string> SharedTier::Get(const std::string& cache_key) {
  const std::string key = options_.key_prefix + cache_key;
  std::string value;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status s = EnsureConnectedLocked(); !s.ok()) {
      ++errors_;
      return s;
    }
    Reply r(static_cast<redisReply*>(redisCommand(ctx_, "GET %b", key.data(), key.size())));
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      ++errors_;
      return FailedLocked("redis GET", r.get());
    }
    if (r->type == REDIS_REPLY_NIL) {
      ++misses_;
      return absl::NotFoundError("not in the shared tier");
    }
    if (r->type != REDIS_REPLY_STRING) {
      ++errors_;
      return absl::UnavailableError("redis GET: unexpected reply type");
    }
    value.assign(r->str, r->len);
  }
  absl::StatusOr<std::string_view> payload = DecodeRecord(value);
  if (!payload.ok()) {
    ++corrupt_;
    std::lock_guard<std::mutex> lock(mu_);
    if (EnsureConnectedLocked().ok()) {
      Reply(static_cast<redisReply*>(redisCommand(ctx_, "DEL %b", key.data(), key.size())));
    }
    return absl::NotFoundError(
        absl::StrCat("shared-tier record is corrupt (deleted): ", payload.status().message()));
  }
  ++hits_;
  return std::string(*payload);
}

absl::Status SharedTier::Put(const std::string& cache_key, const std::string& payload) {
  const std::string key = options_.key_prefix + cache_key;
  const std::string record = EncodeRecord(payload);
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = EnsureConnectedLocked(); !s.ok()) {
    ++errors_;
    return s;
  }
  Reply r(static_cast<redisReply*>(
      options_.ttl_seconds > 0
          ? redisCommand(ctx_, "SET %b %b EX %lld", key.data(), key.size(), record.data(),
                         record.size(), static_cast<long long>(options_.ttl_seconds))
          : redisCommand(ctx_, "SET %b %b", key.data(), key.size(), record.data(), record.size())));
  if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
    ++errors_;
    return FailedLocked("redis SET", r.get());
  }
  ++puts_;
  return absl::OkStatus();
}

SharedTierStats SharedTier::Stats() const {
  SharedTierStats s;
  s.hits = hits_;
  s.misses = misses_;
  s.puts = puts_;
  s.corrupt = corrupt_;
  s.errors = errors_;
  return s;
}

}  // namespace fusiond
