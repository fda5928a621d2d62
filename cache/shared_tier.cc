#include "cache/shared_tier.h"

#include <hiredis/hiredis.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cache/secret_file.h"
#include "cache/shared_tier_record.h"

namespace fusiond {
namespace {

// The key of unsigned records: public, so it authenticates nothing; it only
// keeps them apart from records signed with a real secret.
constexpr char kInsecureKey[] = "fusiond insecure unsigned shared tier";
constexpr size_t kMinSecretBytes = 16;

// Compare-and-extend and compare-and-delete: only the lease's owner may.
constexpr char kRenewScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
constexpr char kReleaseScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end";

absl::Status ErrorReply(const std::string& what, const redisReply* r) {
  return absl::UnavailableError(absl::StrCat("redis ", what, ": ", std::string(r->str, r->len)));
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
  o.redis.host = address.substr(0, colon);
  o.redis.port = port;
  return o;
}

SharedTier::SharedTier(SharedTierOptions options)
    : options_(std::move(options)), pool_(options_.redis) {
  if (options_.secret.empty()) options_.secret = kInsecureKey;
}

absl::StatusOr<std::unique_ptr<SharedTier>> SharedTier::Create(SharedTierOptions options) {
  if (options.secret.empty() && !options.insecure_unsigned) {
    return absl::InvalidArgumentError(
        "the shared tier needs the cluster secret that signs its records (--redis-secret-file "
        "FILE, the same file on every daemon); without one anyone who can write to Redis could "
        "plant kernels");
  }
  if (options.secret.empty() && !IsLoopbackHost(options.redis.host)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unsigned shared-tier records (insecure) are only allowed with a Redis on loopback, not ",
        options.redis.host));
  }
  if (!options.secret.empty() && options.secret.size() < kMinSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the shared tier's secret has ", options.secret.size(),
                     " bytes; use at least ", kMinSecretBytes, " (e.g. openssl rand -hex 32)"));
  }
  if (options.redis.size < 1) options.redis.size = 1;
  return std::unique_ptr<SharedTier>(new SharedTier(std::move(options)));
}

absl::StatusOr<std::unique_ptr<SharedTier>> SharedTier::Connect(SharedTierOptions options) {
  absl::StatusOr<std::unique_ptr<SharedTier>> t = Create(std::move(options));
  if (!t.ok()) return t.status();
  if (absl::Status s = (*t)->Ping(); !s.ok()) return s;
  return t;
}

absl::Status SharedTier::Ping() {
  absl::StatusOr<RedisReply> r = pool_.Command({"PING"});
  if (!r.ok()) return r.status();
  if ((*r)->type == REDIS_REPLY_ERROR) return ErrorReply("PING", r->get());
  return absl::OkStatus();
}

absl::StatusOr<std::string> SharedTier::Get(const std::string& cache_key, bool* refused) {
  const std::string key = options_.key_prefix + cache_key;
  // At most one byte past the limit is read; a missing key reads as "".
  absl::StatusOr<RedisReply> r =
      pool_.Command({"GETRANGE", key, "0", absl::StrCat(options_.max_value_bytes)});
  if (!r.ok() || (*r)->type == REDIS_REPLY_ERROR) {
    ++errors_;
    return r.ok() ? ErrorReply("GETRANGE", r->get()) : r.status();
  }
  if ((*r)->type == REDIS_REPLY_NIL || ((*r)->type == REDIS_REPLY_STRING && (*r)->len == 0)) {
    ++misses_;
    return absl::NotFoundError("not in the shared tier");
  }
  if ((*r)->type != REDIS_REPLY_STRING) {
    ++errors_;
    return absl::UnavailableError("redis GETRANGE: unexpected reply type");
  }
  if ((*r)->len > options_.max_value_bytes) {
    ++corrupt_;
    if (refused != nullptr) *refused = true;
    return absl::NotFoundError(absl::StrCat("shared-tier value refused: longer than ",
                                            options_.max_value_bytes, " bytes"));
  }
  SharedRecordProblem problem;
  absl::StatusOr<std::string_view> payload =
      DecodeSharedRecord(options_.secret, key, std::string_view((*r)->str, (*r)->len), &problem);
  if (!payload.ok()) {
    // Not deleted: a daemon with another secret (a misconfiguration) must
    // not erase good records; the compile that follows overwrites it.
    ++(problem == SharedRecordProblem::kMalformed ? corrupt_ : rejected_);
    if (refused != nullptr) *refused = true;
    return absl::NotFoundError(
        absl::StrCat("shared-tier value refused: ", payload.status().message()));
  }
  ++hits_;
  return std::string(*payload);
}

absl::Status SharedTier::Put(const std::string& cache_key, const std::string& payload) {
  const std::string key = options_.key_prefix + cache_key;
  std::vector<std::string> argv = {"SET", key, EncodeSharedRecord(options_.secret, key, payload)};
  if (options_.ttl_seconds > 0) {
    argv.push_back("EX");
    argv.push_back(absl::StrCat(options_.ttl_seconds));
  }
  absl::StatusOr<RedisReply> r = pool_.Command(argv);
  if (!r.ok() || (*r)->type == REDIS_REPLY_ERROR) {
    ++errors_;
    return r.ok() ? ErrorReply("SET", r->get()) : r.status();
  }
  ++puts_;
  return absl::OkStatus();
}

absl::StatusOr<bool> SharedTier::Exists(const std::string& cache_key) {
  absl::StatusOr<RedisReply> r = pool_.Command({"EXISTS", options_.key_prefix + cache_key});
  if (!r.ok() || (*r)->type == REDIS_REPLY_ERROR) {
    ++errors_;
    return r.ok() ? ErrorReply("EXISTS", r->get()) : r.status();
  }
  return (*r)->type == REDIS_REPLY_INTEGER && (*r)->integer > 0;
}

absl::StatusOr<bool> SharedTier::AcquireLease(const std::string& cache_key,
                                              const std::string& owner, int ttl_ms) {
  absl::StatusOr<RedisReply> r = pool_.Command(
      {"SET", options_.lease_prefix + cache_key, owner, "NX", "PX", absl::StrCat(ttl_ms)});
  if (!r.ok() || (*r)->type == REDIS_REPLY_ERROR) {
    ++errors_;
    return r.ok() ? ErrorReply("SET NX", r->get()) : r.status();
  }
  return (*r)->type == REDIS_REPLY_STATUS;  // "OK"; nil when another owner holds it
}

absl::StatusOr<bool> SharedTier::RenewLease(const std::string& cache_key, const std::string& owner,
                                            int ttl_ms) {
  absl::StatusOr<RedisReply> r = pool_.Command(
      {"EVAL", kRenewScript, "1", options_.lease_prefix + cache_key, owner, absl::StrCat(ttl_ms)});
  if (!r.ok() || (*r)->type == REDIS_REPLY_ERROR) {
    ++errors_;
    return r.ok() ? ErrorReply("EVAL (renew lease)", r->get()) : r.status();
  }
  return (*r)->type == REDIS_REPLY_INTEGER && (*r)->integer == 1;
}

absl::Status SharedTier::ReleaseLease(const std::string& cache_key, const std::string& owner) {
  absl::StatusOr<RedisReply> r =
      pool_.Command({"EVAL", kReleaseScript, "1", options_.lease_prefix + cache_key, owner});
  if (!r.ok() || (*r)->type == REDIS_REPLY_ERROR) {
    ++errors_;
    return r.ok() ? ErrorReply("EVAL (release lease)", r->get()) : r.status();
  }
  return absl::OkStatus();
}

SharedTierStats SharedTier::Stats() const {
  SharedTierStats s;
  s.hits = hits_;
  s.misses = misses_;
  s.puts = puts_;
  s.corrupt = corrupt_;
  s.rejected = rejected_;
  s.errors = errors_;
  s.pool = pool_.Stats();
  return s;
}

}  // namespace fusiond
