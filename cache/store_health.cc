#include "cache/store_health.h"

#include "absl/strings/str_cat.h"

namespace fusiond {

void StoreHealth::OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* error) {
  // A soft error (a compaction out of space) leaves writes working.
  if (error == nullptr || error->ok() || error->severity() < rocksdb::Status::kHardError) return;
  ReadOnly(error->ToString());
}

void StoreHealth::OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status error,
                                       bool* auto_recovery) {
  error.PermitUncheckedError();
  if (auto_recovery != nullptr) auto_recovering_ = *auto_recovery;
}

void StoreHealth::OnErrorRecoveryEnd(const rocksdb::BackgroundErrorRecoveryInfo& info) {
  auto_recovering_ = false;
  if (info.new_bg_error.ok()) {
    Writable(absl::StrCat("RocksDB recovered from: ", info.old_bg_error.ToString()));
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = info.new_bg_error.ToString();
  }
}

void StoreHealth::StoreFailed(const std::string& error) {
  if (!read_only_.load()) ReadOnly(error);
}

std::string StoreHealth::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void StoreHealth::ReadOnly(const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = error;
    if (read_only_.exchange(true)) return;
    ++read_only_periods_;
  }
  if (sink_) {
    sink_("cache_read_only",
          absl::StrCat(error,
                       "; compiles are served but not stored, hits are served; storing resumes "
                       "by itself once writes work again (a full disk: RocksDB checks every 5 s "
                       "for 64 MiB free, its write buffer)"));
  }
}

void StoreHealth::Writable(const std::string& how) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!read_only_.exchange(false)) return;
    error_.clear();
    ++recoveries_;
  }
  if (sink_) sink_("cache_writable", absl::StrCat(how, "; storing resumes"));
}

}  // namespace fusiond
