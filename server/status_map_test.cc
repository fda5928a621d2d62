#include "server/status_map.h"

#include "gtest/gtest.h"

namespace fusiond {
namespace {

TEST(StatusMapTest, CodesAndMessagesCarryOver) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  struct Case {
    absl::Status in;
    grpc::StatusCode out;
  } cases[] = {
      {absl::InvalidArgumentError("node 3: bad"), grpc::StatusCode::INVALID_ARGUMENT},
      {absl::NotFoundError("miss"), grpc::StatusCode::NOT_FOUND},
      {absl::ResourceExhaustedError("full"), grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::UnavailableError("nvrtc"), grpc::StatusCode::UNAVAILABLE},
      {absl::InternalError("bug"), grpc::StatusCode::INTERNAL},
      {absl::DeadlineExceededError("late"), grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::CancelledError("gone"), grpc::StatusCode::CANCELLED},
  };
  for (const Case& c : cases) {
    grpc::Status s = ToGrpcStatus(c.in);
    EXPECT_EQ(s.error_code(), c.out) << c.in;
    EXPECT_EQ(s.error_message(), std::string(c.in.message()));
  }
}

TEST(StatusMapTest, LongMessagesAreCut) {
  std::string arch(1 << 20, 'x');
  grpc::Status s = ToGrpcStatus(absl::InvalidArgumentError("unknown arch '" + arch + "'"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LE(s.error_message().size(), kMaxStatusMessageBytes);
  EXPECT_NE(s.error_message().find("more bytes not shown"), std::string::npos);
  EXPECT_EQ(s.error_message().rfind("unknown arch 'xxx", 0), 0u);
}

}  // namespace
}  // namespace fusiond
