// absl::Status -> grpc::Status: the one place the daemon maps error codes.
#ifndef FUSIOND_SERVER_STATUS_MAP_H_
#define FUSIOND_SERVER_STATUS_MAP_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace fusiond {

// Same code (absl's codes are gRPC's), same message. DataLoss never reaches
// a client from the cache (a corrupt record is a miss), so it maps as is.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_STATUS_MAP_H_
