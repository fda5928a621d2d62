// fusiond_cache_tool: inspects and repairs a kernel cache directory while
// no daemon holds it. Tests use `corrupt` to damage records on disk and
// `corrupt-requests` to damage request index entries. A damaged database is
// reported, never moved aside (the daemon does that).
//
//   fusiond_cache_tool --cache-dir DIR list
//   fusiond_cache_tool --cache-dir DIR stats
//   fusiond_cache_tool --cache-dir DIR corrupt [KEY_SUBSTRING]
//   fusiond_cache_tool --cache-dir DIR corrupt-requests
//   fusiond_cache_tool --cache-dir DIR evict MAX_BYTES
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cache/kernel_cache.h"
#include "rocksdb/db.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: fusiond_cache_tool --cache-dir DIR (list | stats | corrupt [KEY_SUBSTRING]"
               " | corrupt-requests | evict MAX_BYTES)\n");
  return 2;
}

// Flips one payload byte of every record whose key contains `needle`,
// writing the damaged value back through RocksDB (so it lands on disk the
// way a bad write would). Returns how many were damaged.
int Corrupt(fusiond::KernelCache& cache, const std::string& needle) {
  int damaged = 0;
  for (const std::string& key : cache.Keys()) {
    if (key.find(needle) == std::string::npos) continue;
    std::string value;
    if (!cache.db()->Get({}, cache.records_family(), key, &value).ok() || value.empty()) continue;
    value[value.size() / 2 + 12] ^= 0x5A;
    if (cache.db()->Put({}, cache.records_family(), key, value).ok()) ++damaged;
  }
  return damaged;
}

// Flips one byte in the value of every request index entry. Returns how
// many were damaged.
int CorruptRequests(fusiond::KernelCache& cache) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::unique_ptr<rocksdb::Iterator> it(cache.db()->NewIterator({}, cache.requests_family()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    entries.emplace_back(it->key().ToString(), it->value().ToString());
  }
  int damaged = 0;
  for (auto& [key, value] : entries) {
    if (value.empty()) continue;
    value[value.size() - 1] ^= 0x01;
    if (cache.db()->Put({}, cache.requests_family(), key, value).ok()) ++damaged;
  }
  return damaged;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  fusiond::KernelCacheOptions options;
  options.max_bytes = 0;
  options.quarantine_damaged = false;
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--cache-dir" && i + 1 < args.size()) {
      options.dir = args[++i];
    } else {
      rest.push_back(args[i]);
    }
  }
  if (rest.empty()) return Usage();
  auto cache = fusiond::KernelCache::Open(options);
  if (!cache.ok()) {
    std::fprintf(stderr, "fusiond_cache_tool: %s\n", cache.status().ToString().c_str());
    return 1;
  }
  const std::string& cmd = rest[0];
  if (cmd == "list") {
    for (const std::string& key : (*cache)->Keys()) std::printf("%s\n", key.c_str());
  } else if (cmd == "stats") {
    auto s = (*cache)->Stats();
    std::printf("{\"entries\":%llu,\"bytes\":%llu}\n", static_cast<unsigned long long>(s.entries),
                static_cast<unsigned long long>(s.bytes));
  } else if (cmd == "corrupt") {
    int n = Corrupt(**cache, rest.size() > 1 ? rest[1] : "");
    std::printf("corrupted %d record(s)\n", n);
    return n > 0 ? 0 : 1;
  } else if (cmd == "corrupt-requests") {
    int n = CorruptRequests(**cache);
    std::printf("corrupted %d request index entr%s\n", n, n == 1 ? "y" : "ies");
    return n > 0 ? 0 : 1;
  } else if (cmd == "evict" && rest.size() > 1) {
    fusiond::KernelCacheOptions capped = (*cache)->options();
    cache->reset();
    capped.max_bytes = std::strtoull(rest[1].c_str(), nullptr, 10);
    auto reopened = fusiond::KernelCache::Open(capped);
    if (!reopened.ok()) return 1;
    auto n = (*reopened)->EvictToCap();
    if (!n.ok()) return 1;
    std::printf("evicted %d record(s)\n", *n);
  } else {
    return Usage();
  }
  return 0;
}
