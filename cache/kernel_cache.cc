#include "cache/kernel_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "cache/crc32c.h"
#include "cache/record.h"
#include "cache/rocks_logger.h"
#include "cache/store_health.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"

namespace fusiond {
namespace {

constexpr char kAccessFamily[] = "access";
constexpr char kRequestsFamily[] = "requests";
constexpr char kQuarantineDir[] = "quarantine";
// Request index values: magic, CRC-32C of the request key and the value.
constexpr char kRequestMagic[] = "q1";
// A memtable-only entry in the access family (LoadIndex skips its empty
// value); KernelCache::LoggedWrite says why.
constexpr char kWalAnchorKey[] = "\x01wal-anchor";

uint32_t RequestCrc(const std::string& request_key, std::string_view cache_key) {
  uint32_t crc = Crc32c(request_key.data(), request_key.size());
  crc = Crc32c("\0", 1, crc);
  return Crc32c(cache_key.data(), cache_key.size(), crc);
}

// The bytes a request index entry costs: its key twice (index and access),
// the value, the access value.
uint64_t RequestEntryBytes(const std::string& request_key, const std::string& value) {
  return 2 * request_key.size() + value.size() + 16;
}

// Wall-clock microseconds, strictly increasing within the process so that
// access order is total even when two accesses share a microsecond.
uint64_t NowMicros() {
  static std::atomic<uint64_t> last{0};
  uint64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  uint64_t prev = last.load();
  while (!last.compare_exchange_weak(prev, std::max(now, prev + 1))) {
  }
  return std::max(now, prev + 1);
}

// The access index value: last access time and record size, 8 bytes each.
// The access index value: last access time and size, 8 bytes each, then
// 'q' for a request index entry (a record's has nothing more).
std::string EncodeAccess(uint64_t micros, uint64_t bytes, bool request = false) {
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((micros >> (8 * i)) & 0xFF);
    out[8 + i] = static_cast<char>((bytes >> (8 * i)) & 0xFF);
  }
  if (request) out.push_back('q');
  return out;
}

bool DecodeAccess(const rocksdb::Slice& v, uint64_t* micros, uint64_t* bytes, bool* request) {
  if (v.size() != 16 && !(v.size() == 17 && v[16] == 'q')) return false;
  *request = v.size() == 17;
  *micros = *bytes = 0;
  for (int i = 0; i < 8; ++i) {
    *micros |= uint64_t{static_cast<unsigned char>(v[i])} << (8 * i);
    *bytes |= uint64_t{static_cast<unsigned char>(v[8 + i])} << (8 * i);
  }
  return true;
}

absl::Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsIOError() || s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) {
    return absl::UnavailableError(msg);
  }
  return absl::InternalError(msg);
}

// A failure of the file system under the cache (no space, read-only,
// permissions, out of file descriptors), not damage of the cache: nothing is
// moved aside or deleted for it. A missing file (a lost blob file, a CURRENT
// naming no MANIFEST) is damage.
bool FileSystemTrouble(const rocksdb::Status& s) {
  return s.IsIOError() && !s.IsPathNotFound() && !s.IsCorruption();
}

}  // namespace

std::string DefaultCacheDir() {
  if (const char* d = std::getenv("FUSIOND_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return absl::StrCat(x, "/fusiond");
  if (const char* h = std::getenv("HOME"); h && *h) return absl::StrCat(h, "/.cache/fusiond");
  return "/tmp/fusiond-cache";
}

absl::StatusOr<std::unique_ptr<KernelCache>> KernelCache::Open(KernelCacheOptions options) {
  if (options.dir.empty()) options.dir = DefaultCacheDir();
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create cache directory ", options.dir, ": ", ec.message()));
  }
  std::unique_ptr<KernelCache> cache(new KernelCache());
  cache->options_ = std::move(options);
  absl::Status st = cache->OpenDb();
  if (st.ok()) return cache;
  if (absl::IsUnavailable(st) || !cache->options_.quarantine_damaged) return st;
  // The database is damaged: move it aside whole (kept for a look, never
  // deleted) and start empty. A cache is a cache; refusing to serve is worse.
  auto stamp = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  const std::string dir = cache->options_.dir;
  const std::string aside = absl::StrCat(dir, "/", kQuarantineDir, "/", stamp, "-", getpid());
  std::filesystem::create_directories(aside, ec);
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename() == kQuarantineDir) continue;
    std::error_code move_ec;
    std::filesystem::rename(entry.path(), aside / entry.path().filename(), move_ec);
    if (move_ec && !ec) ec = move_ec;
  }
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat(st.message(), "; moving it aside to ", aside, " failed: ", ec.message()));
  }
  ++cache->quarantined_;
  cache->quarantined_to_ = aside;
  cache->Problem("cache_quarantined",
                 absl::StrCat("moved to ", aside, " (", st.message(), "); starting empty"));
  if (absl::Status again = cache->OpenDb(); !again.ok()) return again;
  return cache;
}

absl::Status KernelCache::OpenDb() {
  // Out of space or a failed file system stops writes; RocksDB recovers by
  // itself where it can, and health_ follows the state (store_health.h).
  if (!health_) {
    health_ = std::make_shared<StoreHealth>(
        [this](const std::string& event, const std::string& detail) { Problem(event, detail); });
  }
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.keep_log_file_num = 4;
  db_options.max_background_jobs = 2;
  // No LOG file in the cache directory (cache/rocks_logger.h).
  db_options.info_log = std::make_shared<RocksLogger>([this](const std::string& line) {
    // While stores fail, RocksDB's free-space check (every 5 s) is no news.
    if (health_->read_only() && line.find("sst_file_manager") != std::string::npos) return;
    Problem("rocksdb", line);
  });
  db_options.listeners.push_back(health_);

  rocksdb::ColumnFamilyOptions records;
  records.enable_blob_files = true;
  records.min_blob_size = options_.min_blob_size;
  records.enable_blob_garbage_collection = true;
  rocksdb::BlockBasedTableOptions table;
  table.whole_key_filtering = true;
  records.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::ColumnFamilyOptions small;  // access and requests: small values

  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, records},
      {kAccessFamily, small},
      {kRequestsFamily, small}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, options_.dir, families, &handles, &db);
  if (!s.ok()) {
    // Another process holds the lock ("While lock file", EAGAIN), or this
    // one does; not a LOCK file that cannot be opened (a read-only disk).
    const std::string why = s.ToString();
    if (s.IsIOError() && (why.find("While lock file") != std::string::npos ||
                          why.find("lock hold by current process") != std::string::npos)) {
      return absl::UnavailableError(absl::StrCat(
          "kernel cache ", options_.dir,
          " is in use by another process (a running fusiond? use --server): ", s.ToString()));
    }
    if (FileSystemTrouble(s)) {
      return absl::UnavailableError(absl::StrCat("cannot open kernel cache ", options_.dir, ": ",
                                                 s.ToString(),
                                                 " (the file system refused; the cache is left "
                                                 "as it is)"));
    }
    return absl::DataLossError(
        absl::StrCat("cannot open kernel cache ", options_.dir, ": ", s.ToString()));
  }
  db_.reset(db);
  records_ = handles[0];
  access_ = handles[1];
  requests_ = handles[2];
  absl::Status st = absl::OkStatus();
  if (options_.verify_at_open) {
    // Table files only (records of 4 KiB or more live in blob files, each
    // checked by its CRC when read): milliseconds for a full cache.
    rocksdb::Status v = db_->VerifyChecksum();
    if (FileSystemTrouble(v)) {
      st = absl::UnavailableError(absl::StrCat("checksum verification: ", v.ToString()));
    } else if (!v.ok()) {
      st = absl::DataLossError(absl::StrCat("checksum verification: ", v.ToString()));
    }
  }
  if (st.ok()) st = LoadIndex();
  if (!st.ok()) {
    for (auto* h : {access_, requests_, records_}) db_->DestroyColumnFamilyHandle(h);
    db_->Close().PermitUncheckedError();
    db_.reset();
    records_ = access_ = requests_ = nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    index_.clear();
    total_bytes_ = 0;
    request_entries_ = 0;
    return absl::Status(absl::IsUnavailable(st) ? st.code() : absl::StatusCode::kDataLoss,
                        absl::StrCat("kernel cache ", options_.dir, ": ", st.message()));
  }
  return absl::OkStatus();
}

void KernelCache::Problem(const std::string& event, const std::string& detail) const {
  if (options_.on_problem) options_.on_problem(event, detail);
}

KernelCache::~KernelCache() {
  if (!db_) return;
  for (auto* h : {access_, requests_, records_}) {
    if (h) db_->DestroyColumnFamilyHandle(h);
  }
  db_->Close();
}

absl::Status KernelCache::LoadIndex() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), access_));
  std::lock_guard<std::mutex> lock(mu_);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    Entry e;
    if (!DecodeAccess(it->value(), &e.last_access_micros, &e.bytes, &e.request)) continue;
    e.persisted_micros = e.last_access_micros;
    std::string key = it->key().ToString();
    if (e.request) ++request_entries_;
    index_[std::move(key)] = e;
    total_bytes_ += e.bytes;
  }
  return FromRocks(it->status(), "cannot read the cache's access index");
}

absl::StatusOr<std::shared_ptr<const std::string>> KernelCache::LookupPayload(
    const std::string& key) {
  std::shared_ptr<const std::string> hot;
  bool persist_access = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = hot_.find(key);
    if (it != hot_.end()) {
      hot_lru_.splice(hot_lru_.begin(), hot_lru_, it->second.lru);
      hot = it->second.payload;
      auto e = index_.find(key);
      if (e != index_.end()) {
        uint64_t now = NowMicros();
        e->second.last_access_micros = now;
        persist_access = now - e->second.persisted_micros >= options_.access_persist_micros;
      }
    }
  }
  if (hot) {  // verified when it entered memory
    ++lookups_found_;
    ++memory_hits_;
    if (persist_access) Touch(key);
    return hot;
  }
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), records_, key, &value);
  if (s.IsNotFound()) {
    ++lookups_missing_;
    return absl::NotFoundError("not in the kernel cache");
  }
  if (FileSystemTrouble(s)) {
    // The record may be fine: kept, and the caller told why it was not read.
    return absl::UnavailableError(absl::StrCat("kernel cache read failed: ", s.ToString()));
  }
  if (!s.ok()) {
    // Corrupt, or unreadable (a lost blob file): a miss, recompiled.
    DropCorrupt(key, s.ToString());
    return absl::NotFoundError(absl::StrCat("unreadable record dropped: ", s.ToString()));
  }
  absl::StatusOr<std::string_view> payload =
      DecodeRecord(std::string_view(value.data(), value.size()));
  if (!payload.ok()) {
    DropCorrupt(key, payload.status().ToString());
    return absl::NotFoundError(
        absl::StrCat("corrupt record dropped: ", payload.status().ToString()));
  }
  auto out = std::make_shared<const std::string>(payload->data(), payload->size());
  ++lookups_found_;
  ++disk_hits_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (index_.count(key)) HotPutLocked(key, out);
  }
  Touch(key);
  return out;
}

absl::StatusOr<fusiond::v1::CompiledFusion> KernelCache::Lookup(const std::string& key) {
  absl::StatusOr<std::shared_ptr<const std::string>> payload = LookupPayload(key);
  if (!payload.ok()) return payload.status();
  fusiond::v1::CompiledFusion out;
  if (!out.ParseFromArray((*payload)->data(), static_cast<int>((*payload)->size()))) {
    --lookups_found_;
    DropCorrupt(key, "payload does not parse");
    return absl::NotFoundError("corrupt record dropped: payload does not parse");
  }
  return out;
}

void KernelCache::HotPutLocked(const std::string& key, std::shared_ptr<const std::string> payload) {
  if (options_.memory_cache_bytes == 0 || payload->size() > options_.memory_cache_bytes) return;
  HotEraseLocked(key);
  hot_lru_.push_front(key);
  hot_bytes_ += payload->size();
  hot_[key] = HotEntry{std::move(payload), hot_lru_.begin()};
  while (hot_bytes_ > options_.memory_cache_bytes && !hot_lru_.empty()) {
    HotEraseLocked(hot_lru_.back());
  }
}

void KernelCache::HotEraseLocked(const std::string& key) {
  auto it = hot_.find(key);
  if (it == hot_.end()) return;
  hot_bytes_ -= it->second.payload->size();
  hot_lru_.erase(it->second.lru);
  hot_.erase(it);
}

void KernelCache::Touch(const std::string& key) {
  uint64_t now = NowMicros(), bytes = 0;
  bool request = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return;
    it->second.last_access_micros = now;
    if (now - it->second.persisted_micros < options_.access_persist_micros) return;
    it->second.persisted_micros = now;
    bytes = it->second.bytes;
    request = it->second.request;
  }
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;  // access times are advisory; losing some is fine
  db_->Put(wo, access_, key, EncodeAccess(now, bytes, request)).PermitUncheckedError();
}

void KernelCache::DropCorrupt(const std::string& key, const std::string& why) {
  ++corrupt_;
  Problem("corrupt_record", absl::StrCat(key, ": ", why));
  ++lookups_missing_;
  rocksdb::WriteBatch batch;
  batch.Delete(records_, key).PermitUncheckedError();
  batch.Delete(access_, key).PermitUncheckedError();
  LoggedWrite(&batch).PermitUncheckedError();
  std::lock_guard<std::mutex> lock(mu_);
  HotEraseLocked(key);
  auto it = index_.find(key);
  if (it != index_.end()) {
    total_bytes_ -= it->second.bytes;
    index_.erase(it);
  }
}

absl::Status KernelCache::Insert(const std::string& key, const fusiond::v1::CompiledFusion& value) {
  auto payload = std::make_shared<const std::string>(value.SerializeAsString());
  std::string record = EncodeRecord(*payload);
  uint64_t now = NowMicros(), bytes = record.size();
  rocksdb::WriteBatch batch;
  batch.Put(records_, key, record).PermitUncheckedError();
  batch.Put(access_, key, EncodeAccess(now, bytes)).PermitUncheckedError();
  absl::Status st = FromRocks(LoggedWrite(&batch), "kernel cache write");
  if (!st.ok()) {
    WriteFailed(st);
    return st;
  }
  health_->StoreSucceeded();
  ++inserts_;
  bool over = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, added] = index_.try_emplace(key);
    if (!added) total_bytes_ -= it->second.bytes;
    it->second = Entry{now, now, bytes};
    total_bytes_ += bytes;
    HotPutLocked(key, std::move(payload));
    over = options_.max_bytes > 0 && total_bytes_ > options_.max_bytes;
  }
  if (over && options_.evict_on_insert) return EvictToCap().status();
  return absl::OkStatus();
}

absl::StatusOr<std::string> KernelCache::LookupRequest(const std::string& request_key) {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), requests_, request_key, &value);
  if (s.IsNotFound()) return absl::NotFoundError("request not seen before");
  if (!s.ok()) {
    DropCorruptRequest(request_key, s.ToString());
    return absl::NotFoundError("unreadable request index entry dropped");
  }
  const size_t head = sizeof(kRequestMagic) - 1 + 4;
  std::string_view cache_key(value);
  if (value.size() < head || value.compare(0, head - 4, kRequestMagic) != 0) {
    DropCorruptRequest(request_key, "bad magic");
    return absl::NotFoundError("corrupt request index entry dropped");
  }
  uint32_t crc = 0;
  for (int i = 0; i < 4; ++i)
    crc |= uint32_t{static_cast<unsigned char>(value[head - 4 + i])} << (8 * i);
  cache_key.remove_prefix(head);
  if (crc != RequestCrc(request_key, cache_key)) {
    DropCorruptRequest(request_key, "checksum mismatch");
    return absl::NotFoundError("corrupt request index entry dropped");
  }
  Touch(request_key);
  return std::string(cache_key);
}

void KernelCache::DropCorruptRequest(const std::string& request_key, const std::string& why) {
  ++corrupt_requests_;
  Problem("corrupt_request_entry", absl::StrCat(request_key.substr(0, 200), ": ", why));
  rocksdb::WriteBatch batch;
  batch.Delete(requests_, request_key).PermitUncheckedError();
  batch.Delete(access_, request_key).PermitUncheckedError();
  LoggedWrite(&batch).PermitUncheckedError();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(request_key);
  if (it != index_.end()) {
    total_bytes_ -= it->second.bytes;
    --request_entries_;
    index_.erase(it);
  }
}

absl::Status KernelCache::InsertRequest(const std::string& request_key,
                                        const std::string& cache_key) {
  std::string value = kRequestMagic;
  uint32_t crc = RequestCrc(request_key, cache_key);
  for (int i = 0; i < 4; ++i) value.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  value += cache_key;
  uint64_t now = NowMicros(), bytes = RequestEntryBytes(request_key, value);
  rocksdb::WriteBatch batch;
  batch.Put(requests_, request_key, value).PermitUncheckedError();
  batch.Put(access_, request_key, EncodeAccess(now, bytes, true)).PermitUncheckedError();
  absl::Status st = FromRocks(LoggedWrite(&batch), "kernel cache request index write");
  if (!st.ok()) {
    WriteFailed(st);
    return st;
  }
  health_->StoreSucceeded();
  bool over = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, added] = index_.try_emplace(request_key);
    if (added) {
      ++request_entries_;
    } else {
      total_bytes_ -= it->second.bytes;
    }
    it->second = Entry{now, now, bytes, true};
    total_bytes_ += bytes;
    over = options_.max_bytes > 0 && total_bytes_ > options_.max_bytes;
  }
  if (over && options_.evict_on_insert) return EvictToCap().status();
  return absl::OkStatus();
}

rocksdb::Status KernelCache::LoggedWrite(rocksdb::WriteBatch* batch) {
  rocksdb::WriteOptions memtable_only;
  memtable_only.disableWAL = true;
  db_->Put(memtable_only, access_, kWalAnchorKey, "").PermitUncheckedError();
  return db_->Write(rocksdb::WriteOptions(), batch);
}

void KernelCache::WriteFailed(const absl::Status& st) {
  ++write_errors_;
  health_->StoreFailed(std::string(st.message()));
  // An error RocksDB does not recover from by itself (a read-only remount, a
  // damaged file met by a compaction): each failed store tries DB::Resume.
  // While RocksDB recovers by itself (no space) that would only be Busy.
  if (!health_->auto_recovering()) db_->Resume().PermitUncheckedError();
}

absl::StatusOr<int> KernelCache::EvictToCap() {
  if (options_.max_bytes == 0) return 0;
  std::lock_guard<std::mutex> evict_lock(evict_mu_);
  std::vector<std::pair<uint64_t, std::string>> by_age;
  uint64_t total = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    total = total_bytes_;
    if (total <= options_.max_bytes) return 0;
    by_age.reserve(index_.size());
    for (const auto& [key, e] : index_) by_age.emplace_back(e.last_access_micros, key);
  }
  std::sort(by_age.begin(), by_age.end());
  int evicted = 0;
  rocksdb::WriteBatch batch;
  std::vector<std::string> victims;
  for (const auto& [micros, key] : by_age) {
    if (total <= options_.max_bytes) break;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) continue;
    total -= it->second.bytes;
    victims.push_back(key);
    batch.Delete(it->second.request ? requests_ : records_, key).PermitUncheckedError();
    batch.Delete(access_, key).PermitUncheckedError();
  }
  absl::Status st = FromRocks(LoggedWrite(&batch), "kernel cache evict");
  if (!st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& key : victims) {
    HotEraseLocked(key);
    auto it = index_.find(key);
    if (it == index_.end()) continue;
    total_bytes_ -= it->second.bytes;
    if (it->second.request) {
      --request_entries_;
    } else {
      ++evicted;  // records; request index entries go with them, uncounted
    }
    index_.erase(it);
  }
  evictions_ += evicted;
  return evicted;
}

std::vector<std::string> KernelCache::Keys() const {
  std::vector<std::pair<uint64_t, std::string>> by_age;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, e] : index_) {
      if (!e.request) by_age.emplace_back(e.last_access_micros, key);
    }
  }
  std::sort(by_age.begin(), by_age.end());
  std::vector<std::string> keys;
  for (auto& [micros, key] : by_age) keys.push_back(std::move(key));
  return keys;
}

KernelCacheStats KernelCache::Stats() const {
  KernelCacheStats s;
  s.lookups_found = lookups_found_;
  s.lookups_missing = lookups_missing_;
  s.memory_hits = memory_hits_;
  s.disk_hits = disk_hits_;
  s.corrupt_records = corrupt_;
  s.inserts = inserts_;
  s.evictions = evictions_;
  std::lock_guard<std::mutex> lock(mu_);
  s.entries = index_.size() - request_entries_;
  s.bytes = total_bytes_;
  s.request_entries = request_entries_;
  s.quarantined = quarantined_;
  s.corrupt_requests = corrupt_requests_;
  s.write_errors = write_errors_;
  s.read_only = health_->read_only();
  if (s.read_only) s.read_only_error = health_->error();
  s.recoveries = health_->recoveries();
  return s;
}

}  // namespace fusiond
