#include "cache/record.h"

#include <string>

#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(RecordTest, RoundTrip) {
  std::string payload = "payload bytes \x01\x02\x00 with a zero";
  payload.push_back('\0');
  std::string record = EncodeRecord(payload);
  ASSERT_EQ(record.size(), kRecordHeaderBytes + payload.size());
  auto decoded = DecodeRecord(record);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, payload);
}

TEST(RecordTest, EveryFlippedByteIsDetected) {
  std::string record = EncodeRecord(std::string(300, 'k'));
  for (size_t i = 0; i < record.size(); ++i) {
    std::string bad = record;
    bad[i] ^= 0x10;
    auto decoded = DecodeRecord(bad);
    EXPECT_FALSE(decoded.ok()) << "flip at byte " << i << " went unnoticed";
    if (!decoded.ok()) {
      EXPECT_EQ(decoded.status().code(), absl::StatusCode::kDataLoss);
    }
  }
}

TEST(RecordTest, TruncatedAndExtendedAreDetected) {
  std::string record = EncodeRecord("abcdefgh");
  EXPECT_FALSE(DecodeRecord(record.substr(0, 10)).ok());
  EXPECT_FALSE(DecodeRecord(record.substr(0, record.size() - 1)).ok());
  EXPECT_FALSE(DecodeRecord(record + "x").ok());
  EXPECT_FALSE(DecodeRecord("").ok());
}

}  // namespace
}  // namespace fusiond
