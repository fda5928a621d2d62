#include "cache/report.h"

#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(ReportTest, CacheFieldComesFirst) {
  fusiond::v1::CompiledFusion c;
  c.set_report_json("{\"segments\":[],\"canonical_hash\":\"ab\"}");
  EXPECT_EQ(ReportWithCacheStatus(c, true),
            "{\"cache\":\"hit\",\"segments\":[],\"canonical_hash\":\"ab\"}");
  EXPECT_EQ(ReportWithCacheStatus(c, false),
            "{\"cache\":\"miss\",\"segments\":[],\"canonical_hash\":\"ab\"}");
  c.set_report_json("{ }");
  EXPECT_EQ(ReportWithCacheStatus(c, true), "{\"cache\":\"hit\" }");
}

}  // namespace
}  // namespace fusiond
