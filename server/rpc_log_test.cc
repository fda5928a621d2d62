#include "server/rpc_log.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(RpcLog, KeepsAUsableClientRequestId) {
  EXPECT_EQ(RequestId("job-7/step-12"), "job-7/step-12");
}

TEST(RpcLog, ReplacesMissingOrUnusableIdsWithUniqueOnes) {
  std::set<std::string> ids;
  for (const std::string& bad : std::vector<std::string>{
           "", "has space", "quote\"d", std::string(129, 'a'), std::string("nul\0x", 5), "tab\t"}) {
    std::string id = RequestId(bad);
    EXPECT_NE(id, bad);
    EXPECT_FALSE(id.empty());
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 6u);
}

TEST(RpcLog, NamesCodes) {
  EXPECT_EQ(GrpcCodeName(0), "OK");
  EXPECT_EQ(GrpcCodeName(8), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(GrpcCodeName(16), "UNAUTHENTICATED");
  EXPECT_EQ(GrpcCodeName(99), "UNKNOWN");
}

}  // namespace
}  // namespace fusiond
