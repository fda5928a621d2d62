// Token files and the authorizer's refusals at start (the per-call checks
// run against the real daemon in tests/security).
#include "server/auth.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace fusiond {
namespace {

std::string WriteFile(const std::string& text, mode_t mode) {
  char path[] = "/tmp/auth_test.XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  chmod(path, mode);
  return path;
}

TEST(TokenFile, OneTokenPerLineCommentsAndBlanksSkipped) {
  EXPECT_EQ(ParseTokenFile("# clients\n  abc  \n\ndef # ci\n#x\n"),
            (std::vector<std::string>{"abc", "def"}));
  EXPECT_TRUE(ParseTokenFile("# only a comment\n\n").empty());
}

TEST(CallAuthorizer, RefusesUnusableTokenFiles) {
  EXPECT_TRUE(CallAuthorizer::Create("", false).ok());
  const std::string good = WriteFile("token-1\ntoken-2\n", 0600);
  auto a = CallAuthorizer::Create(good, true);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->token_count(), 2u);
  const std::string empty = WriteFile("# none yet\n", 0600);
  EXPECT_EQ(CallAuthorizer::Create(empty, false).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string shared = WriteFile("token\n", 0666);
  EXPECT_EQ(CallAuthorizer::Create(shared, false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CallAuthorizer::Create("/nonexistent/tokens", false).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (const std::string& p : {good, empty, shared}) std::remove(p.c_str());
}

}  // namespace
}  // namespace fusiond
