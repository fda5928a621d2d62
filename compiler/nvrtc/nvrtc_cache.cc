#include "compiler/nvrtc/nvrtc_cache.h"

#include <chrono>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fusiond {
namespace {

// The whole compile input, unambiguously: lengths before the free-form parts
// (NvrtcFlags() too: FUSIOND_NVRTC_FAST_COMPILE may change them).
std::string InputKey(const std::string& source, const std::string& kernel_name,
                     const NvrtcOptions& options) {
  std::vector<std::string> all = NvrtcFlags();
  all.insert(all.end(), options.extra.begin(), options.extra.end());
  const std::string extra = absl::StrJoin(all, "\x1f");
  return absl::StrCat(options.arch, "\n", kernel_name.size(), ":", kernel_name, "\n", extra.size(),
                      ":", extra, "\n", source);
}

uint64_t OutputBytes(const NvrtcOutput& o) {
  uint64_t n = o.binary.size() + o.log.size() + o.arch.size();
  for (const std::string& s : o.options) n += s.size();
  return n;
}

}  // namespace

NvrtcOutputCache::NvrtcOutputCache(uint64_t max_bytes, NvrtcOutputStore* store)
    : max_bytes_(max_bytes), store_(store) {}

absl::StatusOr<NvrtcOutput> NvrtcOutputCache::Compile(const std::string& source,
                                                      const std::string& kernel_name,
                                                      const NvrtcOptions& options, bool* reused) {
  const auto t0 = std::chrono::steady_clock::now();
  auto since_t0 = [&] {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  };
  std::string key = InputKey(source, kernel_name, options);
  if (reused != nullptr) *reused = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      ++hits_;
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      NvrtcOutput out = it->second.output;
      out.micros = since_t0();
      if (reused != nullptr) *reused = true;
      return out;
    }
  }
  if (store_ != nullptr) {
    if (std::optional<NvrtcOutput> kept = store_->Find(source, kernel_name, options)) {
      kept->micros = since_t0();
      std::lock_guard<std::mutex> lock(mu_);
      ++hits_;
      ++store_hits_;
      InsertLocked(std::move(key), *kept);
      if (reused != nullptr) *reused = true;
      return *std::move(kept);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++misses_;
  }
  absl::StatusOr<NvrtcOutput> out = CompileWithNvrtc(source, kernel_name, options);
  if (out.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    InsertLocked(std::move(key), *out);
  }
  return out;
}

void NvrtcOutputCache::InsertLocked(std::string key, const NvrtcOutput& output) {
  const uint64_t bytes = key.size() + OutputBytes(output);
  if (bytes > max_bytes_ || entries_.count(key) != 0)
    return;  // too big, or a racing thread stored it
  while (bytes_ + bytes > max_bytes_ && !lru_.empty()) {
    auto old = entries_.find(lru_.back());
    bytes_ -= old->second.bytes;
    entries_.erase(old);
    lru_.pop_back();
  }
  lru_.push_front(key);
  Entry& e = entries_[std::move(key)];
  e.output = output;
  e.lru = lru_.begin();
  e.bytes = bytes;
  bytes_ += bytes;
}

NvrtcCacheStats NvrtcOutputCache::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  NvrtcCacheStats s;
  s.hits = hits_;
  s.store_hits = store_hits_;
  s.misses = misses_;
  s.entries = entries_.size();
  s.bytes = bytes_;
  return s;
}

}  // namespace fusiond
