// CompileLease: one compile per cluster for a new fusion.
//
// Before a daemon compiles a key that neither its cache nor the shared tier
// has, it takes the key's compile lease in Redis (SET NX PX through
// SharedTier). The winner compiles, renews the lease while it does, and
// releases it after publishing the record. The others poll (every
// `poll_ms`) until the record appears, then serve it as a shared-tier hit;
// they compile themselves when the lease expires without a record (the
// winner died or gave up: a takeover), when Redis fails, or after
// `max_wait_ms`. The local single flight (CachedCompiler) stays in front:
// one request per daemon takes part.
#ifndef FUSIOND_CACHE_COMPILE_LEASE_H_
#define FUSIOND_CACHE_COMPILE_LEASE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cache/shared_tier.h"

namespace fusiond {

struct CompileLeaseOptions {
  // Lease lifetime without renewal, milliseconds; renewed every third of it. Default: 10000.
  int lease_ms = 10000;
  // How often a waiting daemon checks for the record and the lease. Default: 25.
  int poll_ms = 25;
  // Longest wait for another daemon's record before compiling here. Default: 300000.
  int max_wait_ms = 300000;
  // This daemon's name in the lease value ("" = host name and process id). Default: "".
  std::string owner;
};

struct CompileLeaseStats {
  uint64_t acquired = 0;    // leases taken: this daemon compiled for the cluster
  uint64_t waits = 0;       // misses that found another daemon's lease and waited
  uint64_t takeovers = 0;   // waits that ended with this daemon compiling
  double wait_seconds = 0;  // time spent waiting
};

class CompileLease {
 public:
  // What AcquireOrWait decided; destroying it renews no more and releases
  // a lease held.
  class Hold {
   public:
    ~Hold();
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    // Another daemon published the record: read it from the shared tier.
    bool published() const { return published_; }
    const std::string& key() const { return key_; }
    // Each renewal first asks `needed`; false stops the renewals and
    // releases the lease at once, so another daemon can take the key.
    void RenewWhile(std::function<bool()> needed);
    // Renewed unconditionally from now on (a compile under it starts); false
    // when RenewWhile's check gave the lease up already (then take it anew).
    bool Keep();

   private:
    friend class CompileLease;
    Hold(CompileLease* lease, std::string key, std::string value, bool held, bool published);
    void Renew();

    CompileLease* lease_;
    std::string key_;
    std::string value_;  // this acquisition's lease value
    bool held_, published_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;             // mu_
    bool given_up_ = false;         // mu_: released, no longer needed
    std::function<bool()> needed_;  // mu_; null: always needed
    std::thread renewer_;
  };

  // `tier` must outlive this object.
  CompileLease(SharedTier* tier, CompileLeaseOptions options);

  // Takes the lease of `cache_key` (compile here, renewed while the Hold
  // lives), or waits while another daemon holds it: published() when its
  // record appeared, else compile here (lease expired: taken over; Redis
  // failing or the wait too long: compile without it).
  // `recheck`: after taking the lease, look once more for the record (its
  // last holder may have published and released since the caller looked).
  std::unique_ptr<Hold> AcquireOrWait(const std::string& cache_key, bool recheck = true);
  // AcquireOrWait in steps, for callers that wait without a thread of their
  // own: the Hold when this daemon may compile now (lease taken, or Redis
  // failing), null while another daemon holds the lease (a wait begins).
  std::unique_ptr<Hold> TryAcquire(const std::string& cache_key, bool recheck = true);
  // One look at a key TryAcquire found held, waited for since `since`: null
  // while still held; else the Hold (published(), or compile here).
  std::unique_ptr<Hold> Poll(const std::string& cache_key,
                             std::chrono::steady_clock::time_point since);
  // How often a waiter should Poll, milliseconds.
  int poll_ms() const { return options_.poll_ms; }

  CompileLeaseStats Stats() const;
  const std::string& owner() const { return owner_; }

 private:
  std::unique_ptr<Hold> MakeHold(const std::string& cache_key, std::string value, bool held,
                                 bool published);
  std::string NewValue() { return owner_ + "#" + std::to_string(next_id_++); }

  SharedTier* tier_;
  CompileLeaseOptions options_;
  std::string owner_;
  std::atomic<uint64_t> acquired_{0}, waits_{0}, takeovers_{0}, wait_micros_{0};
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_COMPILE_LEASE_H_
