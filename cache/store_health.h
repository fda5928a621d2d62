// StoreHealth: whether the kernel cache can store records now, followed
// through RocksDB's own error handling. A hard background error (no space
// for a WAL append or a flush, a read-only file system) stops every write;
// reads go on. For no space RocksDB recovers by itself: its SstFileManager
// checks the free space about every 5 s and resumes (DB::Resume's work: a
// flush, then writes) once the largest write buffer (64 MiB) fits again.
// Retryable I/O errors resume on max_bgerror_resume_count /
// bgerror_resume_retry_interval. Errors RocksDB does not recover by itself
// are resumed by the next failed store (KernelCache::WriteFailed).
//
// The state changes once per transition, each told to the sink once:
// "cache_read_only" (stores fail; compiles are served, not stored) and
// "cache_writable" (stores work again). Failed stores in between are only
// counted.
#ifndef FUSIOND_CACHE_STORE_HEALTH_H_
#define FUSIOND_CACHE_STORE_HEALTH_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "rocksdb/listener.h"

namespace fusiond {

class StoreHealth : public rocksdb::EventListener {
 public:
  using Sink = std::function<void(const std::string& event, const std::string& detail)>;
  explicit StoreHealth(Sink sink) : sink_(std::move(sink)) {}

  // RocksDB's callbacks (its threads, or a writer's; never under its mutex).
  void OnBackgroundError(rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) override;
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason reason, rocksdb::Status error,
                            bool* auto_recovery) override;
  void OnErrorRecoveryEnd(const rocksdb::BackgroundErrorRecoveryInfo& info) override;

  // A store's result: a failure makes the cache read-only, a success
  // writable again (errors that did not pass through RocksDB's handler).
  void StoreFailed(const std::string& error);
  void StoreSucceeded() {
    if (read_only_.load(std::memory_order_relaxed)) Writable("a store succeeded");
  }

  bool read_only() const { return read_only_.load(); }
  // True while RocksDB is recovering by itself (a manual Resume would be Busy).
  bool auto_recovering() const { return auto_recovering_.load(); }
  // The error that made the cache read-only ("" while writable).
  std::string error() const;
  // Times the cache became read-only / writable again (this process).
  uint64_t read_only_periods() const { return read_only_periods_.load(); }
  uint64_t recoveries() const { return recoveries_.load(); }

 private:
  void ReadOnly(const std::string& error);
  void Writable(const std::string& how);

  Sink sink_;
  mutable std::mutex mu_;  // orders transitions and their messages
  std::string error_;      // guarded by mu_
  std::atomic<bool> read_only_{false}, auto_recovering_{false};
  std::atomic<uint64_t> read_only_periods_{0}, recoveries_{0};
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_STORE_HEALTH_H_
