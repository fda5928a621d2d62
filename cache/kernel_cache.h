// KernelCache: compiled fusions in an embedded RocksDB, keyed by
// cache_key.h, each value one framed record (record.h).
//
// Column families:
//   default   key -> framed CompiledFusion. Values of min_blob_size bytes or
//             more (cubins) live in RocksDB blob files.
//   access    key -> last access time and record size: the LRU index. Hits
//             update it without the WAL (a crash may lose recent access
//             times, never records).
//   requests  RequestKey ("r1|...") -> encoded CacheKey: which record an
//             exact request resolves to, so a repeated request needs no
//             pipeline work. Also "t1|<kernel text digest>" -> the record
//             and segment holding that kernel (KernelTextStore).
//
// A record that fails its checksum (or that RocksDB reports corrupt, or
// cannot read: a lost blob file) is counted, logged, deleted and reported as
// NotFound: it is recompiled, never served. Request index values carry a
// CRC-32C of their key and value; one that fails is dropped the same way.
// A database that will not open or fails its checksums at open (flipped or
// truncated files, a garbage CURRENT) is moved aside whole ("quarantined":
// kept, never deleted) and a fresh one opened in its place.
// Request index entries count toward the size cap and are evicted with the
// records, least recently used first.
// Recently used payloads, once verified, are also kept in memory (bounded
// by memory_cache_bytes) so a hot hit reads no disk and checks no CRC.
// The size cap counts the bytes of the records the cache holds (RocksDB 7.8's
// own limits ignore blob files); EvictToCap() deletes the least recently used
// records until the total is under the cap. Records are written with the WAL,
// so a kill -9 loses at most the records being written.
// A full disk (or another write error) makes the cache read-only: stores
// fail (counted), lookups still work, and RocksDB's own recovery resumes
// stores once space is back (store_health.h; Stats().read_only).
#ifndef FUSIOND_CACHE_KERNEL_CACHE_H_
#define FUSIOND_CACHE_KERNEL_CACHE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/cache.pb.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class Status;
class WriteBatch;
}  // namespace rocksdb

namespace fusiond {

class StoreHealth;

// $FUSIOND_CACHE_DIR, else $XDG_CACHE_HOME/fusiond, else ~/.cache/fusiond,
// else /tmp/fusiond-cache.
std::string DefaultCacheDir();

struct KernelCacheOptions {
  // Directory of the RocksDB database; created when missing.
  // Default: DefaultCacheDir().
  std::string dir;
  // Cap on the bytes of stored records; 0 means no cap. Default: 8 GiB.
  uint64_t max_bytes = uint64_t{8} << 30;
  // Values at least this large go to blob files. Default: 4 KiB.
  uint64_t min_blob_size = 4096;
  // Run EvictToCap() after an insert that crosses the cap. Default: true.
  bool evict_on_insert = true;
  // Verified payloads kept in memory (LRU); 0 turns it off. Default: 256 MiB.
  uint64_t memory_cache_bytes = uint64_t{256} << 20;
  // Access times reach disk at most this often per record (they are exact
  // in memory). Default: 1 s.
  uint64_t access_persist_micros = 1000000;
  // Read every table file's checksums at open (a damaged one quarantines
  // the database). Default: true.
  bool verify_at_open = true;
  // Move a damaged database aside and open a fresh one; false: Open fails
  // with DataLoss instead (the maintenance tool). Default: true.
  bool quarantine_damaged = true;
  // Told of storage trouble (event, detail): "cache_quarantined",
  // "corrupt_record", "corrupt_request_entry", "cache_read_only" (stores
  // fail from now on; once per change, not per store), "cache_writable"
  // (stores work again), "rocksdb" (its error log). May be called from any
  // thread. Default: none.
  std::function<void(const std::string& event, const std::string& detail)> on_problem;
};

struct KernelCacheStats {
  uint64_t lookups_found = 0;     // Lookup() calls that returned a record
  uint64_t lookups_missing = 0;   // Lookup() calls that returned NotFound
  uint64_t memory_hits = 0;       // lookups_found served by the memory tier
  uint64_t disk_hits = 0;         // lookups_found read from RocksDB (and verified)
  uint64_t corrupt_records = 0;   // records that failed a check (deleted)
  uint64_t inserts = 0;           // records written
  uint64_t evictions = 0;         // records evicted for the cap
  uint64_t entries = 0;           // records stored now
  uint64_t bytes = 0;             // bytes of records and request index entries stored now
  uint64_t quarantined = 0;       // databases moved aside at open (this process)
  uint64_t corrupt_requests = 0;  // request index entries that failed a check (dropped)
  uint64_t write_errors = 0;      // writes that failed (the compile is still served)
  uint64_t request_entries = 0;   // request index entries counted against the cap
  bool read_only = false;         // stores fail now (store_health.h); hits still work
  std::string read_only_error;    // why, while read_only
  uint64_t recoveries = 0;        // times stores worked again after failing
};

class KernelCache {
 public:
  // Opens (or creates) the cache. Unavailable when another process holds
  // the directory (a running fusiond: use it through --server instead).
  static absl::StatusOr<std::unique_ptr<KernelCache>> Open(KernelCacheOptions options);
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The record under `key`. NotFound on a miss or a corrupt record.
  absl::StatusOr<fusiond::v1::CompiledFusion> Lookup(const std::string& key);
  // The same, as the verified serialized CompiledFusion (no parsing): what
  // the daemon's hit path sends as is.
  absl::StatusOr<std::shared_ptr<const std::string>> LookupPayload(const std::string& key);
  // Stores (or replaces) the record under `key`.
  absl::Status Insert(const std::string& key, const fusiond::v1::CompiledFusion& value);
  // The cache key a request resolved to before. NotFound when unknown.
  absl::StatusOr<std::string> LookupRequest(const std::string& request_key);
  absl::Status InsertRequest(const std::string& request_key, const std::string& cache_key);
  // Evicts least recently used records until the total is at most the cap.
  // Returns how many were evicted.
  absl::StatusOr<int> EvictToCap();
  // Every stored record key, oldest access first (for tools and tests).
  std::vector<std::string> Keys() const;
  // Where the database was moved at open ("" when it opened as it was).
  const std::string& quarantined_to() const { return quarantined_to_; }

  KernelCacheStats Stats() const;
  const KernelCacheOptions& options() const { return options_; }
  // The RocksDB handle, for the maintenance tool only.
  rocksdb::DB* db() { return db_.get(); }
  rocksdb::ColumnFamilyHandle* records_family() { return records_; }
  rocksdb::ColumnFamilyHandle* requests_family() { return requests_; }

 private:
  struct Entry {
    uint64_t last_access_micros = 0;
    uint64_t persisted_micros = 0;  // access time last written to disk
    uint64_t bytes = 0;
    bool request = false;  // a request index entry, not a record
  };
  struct HotEntry {
    std::shared_ptr<const std::string> payload;
    std::list<std::string>::iterator lru;
  };
  KernelCache() = default;
  // Opens the database in options_.dir, checks it and loads the index.
  absl::Status OpenDb();
  absl::Status LoadIndex();
  void Problem(const std::string& event, const std::string& detail) const;
  void DropCorruptRequest(const std::string& request_key, const std::string& why);
  void Touch(const std::string& key);
  void DropCorrupt(const std::string& key, const std::string& why);
  void WriteFailed(const absl::Status& st);
  // Writes `batch` with the WAL, a memtable-only entry first. RocksDB 7.8
  // resumes after a failed WAL append without a new WAL when every memtable
  // is empty, and the next append then aborts the process (an assertion in
  // WritableFileWriter); a non-empty memtable makes recovery's flush switch
  // to a new WAL.
  rocksdb::Status LoggedWrite(rocksdb::WriteBatch* batch);
  // The memory tier; callers hold mu_.
  void HotPutLocked(const std::string& key, std::shared_ptr<const std::string> payload);
  void HotEraseLocked(const std::string& key);

  KernelCacheOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ColumnFamilyHandle* records_ = nullptr;
  rocksdb::ColumnFamilyHandle* access_ = nullptr;
  rocksdb::ColumnFamilyHandle* requests_ = nullptr;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> index_;   // guarded by mu_
  uint64_t total_bytes_ = 0;                       // guarded by mu_
  std::unordered_map<std::string, HotEntry> hot_;  // guarded by mu_
  std::list<std::string> hot_lru_;                 // guarded by mu_; front = newest
  uint64_t hot_bytes_ = 0;                         // guarded by mu_
  std::mutex evict_mu_;                            // one eviction at a time
  uint64_t request_entries_ = 0;                   // guarded by mu_
  std::string quarantined_to_;
  std::shared_ptr<StoreHealth> health_;  // RocksDB's error listener

  std::atomic<uint64_t> lookups_found_{0}, lookups_missing_{0}, memory_hits_{0}, disk_hits_{0},
      corrupt_{0}, inserts_{0}, evictions_{0}, quarantined_{0}, corrupt_requests_{0},
      write_errors_{0};
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_KERNEL_CACHE_H_
