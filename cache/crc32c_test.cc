#include "cache/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 B.4
}

TEST(Crc32cTest, IncrementalEqualsWhole) {
  std::string s = "the quick brown fox jumps over the lazy dog, twice over";
  uint32_t whole = Crc32c(s.data(), s.size());
  uint32_t part = Crc32c(s.data(), 13);
  part = Crc32c(s.data() + 13, s.size() - 13, part);
  EXPECT_EQ(whole, part);
}

TEST(Crc32cTest, HardwareAndPortableAgree) {
  std::string s;
  for (int i = 0; i < 1000; ++i) s.push_back(static_cast<char>(i * 131 + 7));
  for (size_t n : {0, 1, 7, 8, 9, 63, 64, 999, 1000}) {
    EXPECT_EQ(Crc32c(s.data(), n), Crc32cPortable(s.data(), n)) << n;
    EXPECT_EQ(Crc32c(s.data() + 3, n / 2, 0x1234), Crc32cPortable(s.data() + 3, n / 2, 0x1234));
  }
  EXPECT_EQ(Crc32cPortable("123456789", 9), 0xE3069283u);
}

}  // namespace
}  // namespace fusiond
