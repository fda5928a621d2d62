// Reading small secrets (the shared tier's cluster secret, a Redis
// password, bearer tokens) from files that only the service account reads.
#ifndef FUSIOND_CACHE_SECRET_FILE_H_
#define FUSIOND_CACHE_SECRET_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace fusiond {

// The contents of `path` without trailing whitespace (a final newline is
// not part of a secret). InvalidArgument, naming `what` and the path, when
// the file cannot be read, is empty, is larger than 64 KiB, or can be
// written by other users (group or world writable).
absl::StatusOr<std::string> ReadSecretFile(const std::string& path, const std::string& what);

// True for addresses that only this machine reaches: 127.0.0.0/8, ::1,
// "localhost" (with or without a port, "[::1]:80" form included).
bool IsLoopbackHost(const std::string& host_or_address);

}  // namespace fusiond

#endif  // FUSIOND_CACHE_SECRET_FILE_H_
