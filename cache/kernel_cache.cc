#include "cache/kernel_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "cache/record.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"

namespace fusiond {
namespace {

constexpr char kAccessFamily[] = "access";
constexpr char kRequestsFamily[] = "requests";

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
std::string EncodeAccess(uint64_t micros, uint64_t bytes) {
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((micros >> (8 * i)) & 0xFF);
    out[8 + i] = static_cast<char>((bytes >> (8 * i)) & 0xFF);
  }
  return out;
}

bool DecodeAccess(const rocksdb::Slice& v, uint64_t* micros, uint64_t* bytes) {
  if (v.size() != 16) return false;
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
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.keep_log_file_num = 4;
  db_options.max_background_jobs = 2;

  rocksdb::ColumnFamilyOptions records;
  records.enable_blob_files = true;
  records.min_blob_size = options.min_blob_size;
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
  rocksdb::Status s = rocksdb::DB::Open(db_options, options.dir, families, &handles, &db);
  if (!s.ok()) {
    if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
      return absl::UnavailableError(absl::StrCat(
          "kernel cache ", options.dir,
          " is in use by another process (a running fusiond? use --server): ", s.ToString()));
    }
    return FromRocks(s, absl::StrCat("cannot open kernel cache ", options.dir));
  }
  std::unique_ptr<KernelCache> cache(new KernelCache());
  cache->options_ = std::move(options);
  cache->db_.reset(db);
  cache->records_ = handles[0];
  cache->access_ = handles[1];
  cache->requests_ = handles[2];
  if (absl::Status st = cache->LoadIndex(); !st.ok()) return st;
  return cache;
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
    if (!DecodeAccess(it->value(), &e.last_access_micros, &e.bytes)) continue;
    e.persisted_micros = e.last_access_micros;
    index_[it->key().ToString()] = e;
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
  if (s.IsCorruption()) {
    DropCorrupt(key);
    return absl::NotFoundError(absl::StrCat("corrupt record dropped: ", s.ToString()));
  }
  if (!s.ok()) return FromRocks(s, "kernel cache read");
  absl::StatusOr<std::string_view> payload =
      DecodeRecord(std::string_view(value.data(), value.size()));
  if (!payload.ok()) {
    DropCorrupt(key);
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
    DropCorrupt(key);
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return;
    it->second.last_access_micros = now;
    if (now - it->second.persisted_micros < options_.access_persist_micros) return;
    it->second.persisted_micros = now;
    bytes = it->second.bytes;
  }
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;  // access times are advisory; losing some is fine
  db_->Put(wo, access_, key, EncodeAccess(now, bytes)).PermitUncheckedError();
}

void KernelCache::DropCorrupt(const std::string& key) {
  ++corrupt_;
  ++lookups_missing_;
  rocksdb::WriteBatch batch;
  batch.Delete(records_, key).PermitUncheckedError();
  batch.Delete(access_, key).PermitUncheckedError();
  db_->Write(rocksdb::WriteOptions(), &batch).PermitUncheckedError();
  std::lock_guard<std::mutex> lock(mu_);
  HotEraseLocked(key);
  auto it = index_.find(key);
  if (it != index_.end()) {
    total_bytes_ -= it->second.bytes;
    index_.erase(it);
  }
}

absl::Status KernelCache::Insert(const std::string& key,
                                 const fusiond::v1::CompiledFusion& value) {
  auto payload = std::make_shared<const std::string>(value.SerializeAsString());
  std::string record = EncodeRecord(*payload);
  uint64_t now = NowMicros(), bytes = record.size();
  rocksdb::WriteBatch batch;
  batch.Put(records_, key, record).PermitUncheckedError();
  batch.Put(access_, key, EncodeAccess(now, bytes)).PermitUncheckedError();
  absl::Status st = FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "kernel cache write");
  if (!st.ok()) return st;
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
  if (!s.ok()) return FromRocks(s, "kernel cache request index read");
  return value;
}

absl::Status KernelCache::InsertRequest(const std::string& request_key,
                                        const std::string& cache_key) {
  return FromRocks(db_->Put(rocksdb::WriteOptions(), requests_, request_key, cache_key),
                   "kernel cache request index write");
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
    batch.Delete(records_, key).PermitUncheckedError();
    batch.Delete(access_, key).PermitUncheckedError();
  }
  absl::Status st = FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "kernel cache evict");
  if (!st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& key : victims) {
    HotEraseLocked(key);
    auto it = index_.find(key);
    if (it == index_.end()) continue;
    total_bytes_ -= it->second.bytes;
    index_.erase(it);
    ++evicted;
  }
  evictions_ += evicted;
  return evicted;
}

std::vector<std::string> KernelCache::Keys() const {
  std::vector<std::pair<uint64_t, std::string>> by_age;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, e] : index_) by_age.emplace_back(e.last_access_micros, key);
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
  s.entries = index_.size();
  s.bytes = total_bytes_;
  return s;
}

}  // namespace fusiond
