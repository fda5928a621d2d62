#include "cache/store_health.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fusiond {
namespace {

class StoreHealthTest : public ::testing::Test {
 protected:
  StoreHealth health_{[this](const std::string& event, const std::string& detail) {
    events_.emplace_back(event, detail);
  }};
  std::vector<std::pair<std::string, std::string>> events_;
};

TEST_F(StoreHealthTest, OneMessagePerChangeNotPerStore) {
  EXPECT_FALSE(health_.read_only());
  health_.StoreSucceeded();
  EXPECT_TRUE(events_.empty());
  for (int i = 0; i < 5; ++i) health_.StoreFailed(absl::StrCat("no space ", i));
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].first, "cache_read_only");
  EXPECT_NE(events_[0].second.find("no space 0"), std::string::npos);
  EXPECT_TRUE(health_.read_only());
  EXPECT_EQ(health_.error(), "no space 0");
  health_.StoreSucceeded();
  health_.StoreSucceeded();
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[1].first, "cache_writable");
  EXPECT_FALSE(health_.read_only());
  EXPECT_EQ(health_.error(), "");
  EXPECT_EQ(health_.read_only_periods(), 1u);
  EXPECT_EQ(health_.recoveries(), 1u);
}

TEST_F(StoreHealthTest, FollowsRocksDbErrorsAndRecovery) {
  // A soft error (a compaction out of space) leaves writes working.
  rocksdb::Status soft(rocksdb::Status::NoSpace("compaction"), rocksdb::Status::kSoftError);
  health_.OnBackgroundError(rocksdb::BackgroundErrorReason::kCompaction, &soft);
  EXPECT_FALSE(health_.read_only());
  rocksdb::Status hard(rocksdb::Status::NoSpace("wal append"), rocksdb::Status::kHardError);
  health_.OnBackgroundError(rocksdb::BackgroundErrorReason::kWriteCallback, &hard);
  bool auto_recovery = true;
  health_.OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason::kWriteCallback, hard,
                               &auto_recovery);
  EXPECT_TRUE(health_.read_only());
  EXPECT_TRUE(health_.auto_recovering());
  health_.StoreFailed("the same error, seen by the store");
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_NE(health_.error().find("wal append"), std::string::npos);
  // A failed attempt keeps the cache read-only.
  rocksdb::BackgroundErrorRecoveryInfo failed{hard, rocksdb::Status::NoSpace("still full")};
  health_.OnErrorRecoveryEnd(failed);
  EXPECT_TRUE(health_.read_only());
  EXPECT_EQ(events_.size(), 1u);
  rocksdb::BackgroundErrorRecoveryInfo done{hard, rocksdb::Status::OK()};
  health_.OnErrorRecoveryEnd(done);
  EXPECT_FALSE(health_.read_only());
  EXPECT_FALSE(health_.auto_recovering());
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[1].first, "cache_writable");
  EXPECT_EQ(health_.recoveries(), 1u);
}

}  // namespace
}  // namespace fusiond
