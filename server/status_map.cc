#include "server/status_map.h"

#include <string>

namespace fusiond {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode share the canonical numbering
  // (0 OK .. 16 UNAUTHENTICATED); anything else is our bug.
  int code = static_cast<int>(status.code());
  if (code < 0 || code > 16) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        "unknown status code " + std::to_string(code) + ": " +
                            std::string(status.message()));
  }
  return grpc::Status(static_cast<grpc::StatusCode>(code), std::string(status.message()));
}

}  // namespace fusiond
