// absl::Status -> grpc::Status: the one place the daemon maps error codes.
#ifndef FUSIOND_SERVER_STATUS_MAP_H_
#define FUSIOND_SERVER_STATUS_MAP_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace fusiond {

// Longest message sent to a client; longer ones (a message that quotes a
// huge input) are cut, saying how much was cut. gRPC refuses metadata of
// more than a few KiB, which would turn the error into another one.
constexpr size_t kMaxStatusMessageBytes = 1024;

// Same code (absl's codes are gRPC's), same message (cut to
// kMaxStatusMessageBytes). DataLoss never reaches a client from the cache
// (a corrupt record is a miss), so it maps as is.
grpc::Status ToGrpcStatus(const absl::Status& status);

// `message` cut to kMaxStatusMessageBytes.
std::string TruncateMessage(std::string message);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_STATUS_MAP_H_
