// Malformed FusionGraph messages (tests/malformed/wire/*.textpb, text
// format): each must be refused by FromProto with InvalidArgument holding
// the message its first line names ("# expect: <substring>"), never a
// crash, an Internal error or a graph.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/ir/ir_proto.h"

namespace fusiond {
namespace {

std::vector<std::filesystem::path> Cases() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(FUSIOND_WIRE_CASES_DIR)) {
    if (e.path().extension() == ".textpb") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MalformedWire, EveryCaseIsRefusedWithItsMessage) {
  const auto cases = Cases();
  ASSERT_GE(cases.size(), 9u);
  for (const auto& path : cases) {
    SCOPED_TRACE(path.filename().string());
    std::ifstream f(path);
    std::stringstream text;
    text << f.rdbuf();
    const std::string body = text.str();
    const std::string prefix = "# expect: ";
    ASSERT_EQ(body.rfind(prefix, 0), 0u) << "the first line must be '# expect: ...'";
    const std::string expect = body.substr(prefix.size(), body.find('\n') - prefix.size());
    fusiond::v1::FusionGraph p;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(body, &p)) << "not a FusionGraph";
    auto g = FromProto(p);
    ASSERT_FALSE(g.ok()) << "accepted";
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_NE(g.status().message().find(expect), std::string::npos) << g.status();
  }
}

}  // namespace
}  // namespace fusiond
