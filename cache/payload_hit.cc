// CachedCompiler's raw hit path: a request seen before as the exact bytes
// the client sent, answered with the stored record (trimmed to what the
// caller asked for once per record and kept).
#include <chrono>

#include "cache/cached_compiler.h"

namespace fusiond {

std::optional<CachedCompiler::PayloadHit> CachedCompiler::TryPayloadHit(
    const std::string& raw_request, ReplyContents contents) {
  PayloadHit hit;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = raw_memo_.find(raw_request);
    if (it == raw_memo_.end()) return std::nullopt;
    hit.cache_key = it->second;
  }
  const auto start = std::chrono::steady_clock::now();
  auto payload = cache_->LookupPayload(hit.cache_key);
  if (!payload.ok()) return std::nullopt;
  hit.payload = *std::move(payload);
  if (!contents.everything()) {
    std::shared_ptr<const std::string> trimmed = TrimmedPayload(hit, contents);
    if (trimmed == nullptr) return std::nullopt;
    hit.payload = std::move(trimmed);
  }
  hit.cache_io_micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  ++hits_;
  return hit;
}

std::shared_ptr<const std::string> CachedCompiler::TrimmedPayload(const PayloadHit& hit,
                                                                  ReplyContents contents) {
  const std::string key = std::string(1, static_cast<char>('0' + contents.index())) + hit.cache_key;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = trimmed_.find(key);
    if (it != trimmed_.end() && it->second.full.lock() == hit.payload) return it->second.trimmed;
  }
  absl::StatusOr<std::shared_ptr<const std::string>> trimmed = TrimPayload(hit.payload, contents);
  if (!trimmed.ok()) return nullptr;  // the parsing path reports it
  const size_t size = key.size() + (*trimmed)->size();
  std::lock_guard<std::mutex> lock(mu_);
  if (trimmed_bytes_ + size > options_.max_trimmed_bytes) {
    trimmed_.clear();
    trimmed_bytes_ = 0;
  }
  if (size <= options_.max_trimmed_bytes) {
    auto [it, added] = trimmed_.try_emplace(key);
    if (!added) trimmed_bytes_ -= it->first.size() + it->second.trimmed->size();
    it->second = Trimmed{hit.payload, *trimmed};
    trimmed_bytes_ += size;
  }
  return *trimmed;
}

void CachedCompiler::RememberRawRequest(const std::string& raw_request,
                                        const std::string& cache_key) {
  std::lock_guard<std::mutex> lock(mu_);
  RememberIn(&raw_memo_, &raw_memo_bytes_, raw_request, cache_key);
}

}  // namespace fusiond
