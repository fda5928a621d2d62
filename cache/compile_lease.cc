#include "cache/compile_lease.h"

#include <unistd.h>

#include <chrono>

#include "absl/strings/str_cat.h"

namespace fusiond {
namespace {

using Clock = std::chrono::steady_clock;

std::string DefaultOwner() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return absl::StrCat(host, ":", getpid(), ":", Clock::now().time_since_epoch().count() & 0xFFFFFF);
}

}  // namespace

CompileLease::CompileLease(SharedTier* tier, CompileLeaseOptions options)
    : tier_(tier), options_(std::move(options)) {
  owner_ = options_.owner.empty() ? DefaultOwner() : options_.owner;
}

CompileLease::Hold::Hold(CompileLease* lease, std::string key, std::string value, bool held,
                         bool published)
    : lease_(lease),
      key_(std::move(key)),
      value_(std::move(value)),
      held_(held),
      published_(published) {
  if (held_) renewer_ = std::thread([this] { Renew(); });
}

CompileLease::Hold::~Hold() {
  if (!held_) return;
  bool given_up;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  renewer_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    given_up = given_up_;
  }
  // Best effort: an unreleased lease expires by itself.
  if (!given_up) (void)lease_->tier_->ReleaseLease(key_, value_);
}

void CompileLease::Hold::RenewWhile(std::function<bool()> needed) {
  std::lock_guard<std::mutex> lock(mu_);
  needed_ = std::move(needed);
}

bool CompileLease::Hold::Keep() {
  std::lock_guard<std::mutex> lock(mu_);
  needed_ = nullptr;
  return !given_up_;
}

void CompileLease::Hold::Renew() {
  const auto period = std::chrono::milliseconds(std::max(1, lease_->options_.lease_ms / 3));
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
    std::function<bool()> needed = needed_;
    lock.unlock();
    const bool unneeded = needed && !needed();
    lock.lock();
    if (unneeded && needed_ && !stop_) {
      // Nobody waits for this compile and none runs: let another daemon take
      // the key now, not when the lease expires. Under mu_, so Keep() sees it.
      (void)lease_->tier_->ReleaseLease(key_, value_);
      given_up_ = true;
      return;
    }
    lock.unlock();
    // A failed renewal only lets another daemon take over: both compile.
    (void)lease_->tier_->RenewLease(key_, value_, lease_->options_.lease_ms);
    lock.lock();
  }
}

std::unique_ptr<CompileLease::Hold> CompileLease::MakeHold(const std::string& cache_key,
                                                           std::string value, bool held,
                                                           bool published) {
  return std::unique_ptr<Hold>(new Hold(this, cache_key, std::move(value), held, published));
}

std::unique_ptr<CompileLease::Hold> CompileLease::AcquireOrWait(const std::string& cache_key,
                                                                bool recheck) {
  if (std::unique_ptr<Hold> hold = TryAcquire(cache_key, recheck)) return hold;
  const Clock::time_point since = Clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.poll_ms));
    if (std::unique_ptr<Hold> hold = Poll(cache_key, since)) return hold;
  }
}

std::unique_ptr<CompileLease::Hold> CompileLease::TryAcquire(const std::string& cache_key,
                                                             bool recheck) {
  std::string value = NewValue();
  absl::StatusOr<bool> took = tier_->AcquireLease(cache_key, value, options_.lease_ms);
  if (!took.ok()) return MakeHold(cache_key, value, false, false);  // compile without a lease
  if (*took) {
    // The last holder may have published and released since the caller
    // looked for the record: then there is nothing to compile.
    absl::StatusOr<bool> now = recheck ? tier_->Exists(cache_key) : false;
    if (now.ok() && *now) {
      (void)tier_->ReleaseLease(cache_key, value);
      return MakeHold(cache_key, value, false, true);
    }
    ++acquired_;
    return MakeHold(cache_key, value, true, false);
  }
  ++waits_;
  return nullptr;
}

std::unique_ptr<CompileLease::Hold> CompileLease::Poll(const std::string& cache_key,
                                                       Clock::time_point since) {
  auto waited = [&] {
    wait_micros_ +=
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - since).count();
  };
  absl::StatusOr<bool> exists = tier_->Exists(cache_key);
  if (exists.ok() && *exists) {
    waited();
    return MakeHold(cache_key, "", false, true);
  }
  // The lease gone without a record (its holder failed or died): take it.
  std::string value = NewValue();
  absl::StatusOr<bool> took =
      exists.ok() ? tier_->AcquireLease(cache_key, value, options_.lease_ms) : exists.status();
  const bool give_up = Clock::now() >= since + std::chrono::milliseconds(options_.max_wait_ms);
  if (took.ok() && !*took && !give_up) return nullptr;
  waited();
  ++takeovers_;
  if (took.ok() && *took) {
    // The holder may have published and released between the two calls.
    if (absl::StatusOr<bool> now = tier_->Exists(cache_key); now.ok() && *now) {
      --takeovers_;
      (void)tier_->ReleaseLease(cache_key, value);
      return MakeHold(cache_key, value, false, true);
    }
    ++acquired_;
    return MakeHold(cache_key, value, true, false);
  }
  return MakeHold(cache_key, value, false, false);
}

CompileLeaseStats CompileLease::Stats() const {
  CompileLeaseStats s;
  s.acquired = acquired_;
  s.waits = waits_;
  s.takeovers = takeovers_;
  s.wait_seconds = wait_micros_ * 1e-6;
  return s;
}

}  // namespace fusiond
