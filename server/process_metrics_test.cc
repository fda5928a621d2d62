#include "server/process_metrics.h"

#include <unistd.h>

#include <ctime>

#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(ProcessMetrics, ParsesStatWithSpacesAndParenthesesInTheCommand) {
  // Fields 3..24 of a real /proc/<pid>/stat line; the command holds ") (".
  const std::string stat =
      "4242 (a b) (c) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 7 0 "
      "12345 104857600 2560 18446744073709551615\n";
  absl::StatusOr<ProcessStats> s = ParseProcStat(stat, 1700000000, 100, 4096);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->cpu_seconds, 3.0);  // (250 + 50) ticks / 100
  EXPECT_DOUBLE_EQ(s->threads, 7);
  EXPECT_DOUBLE_EQ(s->start_time_seconds, 1700000000 + 123.45);
  EXPECT_DOUBLE_EQ(s->virtual_bytes, 104857600);
  EXPECT_DOUBLE_EQ(s->resident_bytes, 2560.0 * 4096);
}

TEST(ProcessMetrics, RejectsTruncatedStat) {
  absl::StatusOr<ProcessStats> s = ParseProcStat("4242 (x) S 1 2 3", 0, 100, 4096);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("field 14"), std::string::npos) << s.status();
  EXPECT_TRUE(absl::IsInvalidArgument(ParseProcStat("no parenthesis", 0, 100, 4096).status()));
}

TEST(ProcessMetrics, ReadsThisProcess) {
  absl::StatusOr<ProcessStats> s = ReadProcessStats();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GT(s->resident_bytes, 1 << 20);
  EXPECT_GE(s->open_fds, 3);  // stdin, stdout, stderr
  EXPECT_GT(s->max_fds, s->open_fds);
  EXPECT_GE(s->threads, 1);
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(s->start_time_seconds, now + 1);
  EXPECT_GT(s->start_time_seconds, now - 3600);  // started within the hour
}

}  // namespace
}  // namespace fusiond
