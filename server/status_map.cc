#include "server/status_map.h"

#include <string>

namespace fusiond {

std::string TruncateMessage(std::string message) {
  if (message.size() <= kMaxStatusMessageBytes) return message;
  const size_t cut = message.size() - (kMaxStatusMessageBytes - 64);
  message.resize(kMaxStatusMessageBytes - 64);
  // Do not end inside a UTF-8 sequence.
  while (!message.empty() && (static_cast<unsigned char>(message.back()) & 0xC0) == 0x80) {
    message.pop_back();
  }
  if (!message.empty() && static_cast<unsigned char>(message.back()) >= 0xC0) message.pop_back();
  return message + "... (" + std::to_string(cut) + " more bytes not shown)";
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode share the canonical numbering
  // (0 OK .. 16 UNAUTHENTICATED); anything else is our bug.
  int code = static_cast<int>(status.code());
  if (code < 0 || code > 16) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        TruncateMessage("unknown status code " + std::to_string(code) + ": " +
                                        std::string(status.message())));
  }
  return grpc::Status(static_cast<grpc::StatusCode>(code),
                      TruncateMessage(std::string(status.message())));
}

}  // namespace fusiond
