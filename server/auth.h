// Who may call the compile RPCs: bearer tokens from a token file, checked
// per call ("authorization: Bearer TOKEN" metadata), and, when the daemon
// serves TLS, that the call came over TLS. Health and reflection are not
// checked (probes have no tokens; the schema is public).
#ifndef FUSIOND_SERVER_AUTH_H_
#define FUSIOND_SERVER_AUTH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace fusiond {

class CallAuthorizer {
 public:
  // Tokens from `token_file` ("" = none: every caller passes the token
  // check); `require_tls`: calls that did not come over TLS are refused.
  // InvalidArgument for an unreadable or empty token file.
  static absl::StatusOr<std::unique_ptr<CallAuthorizer>> Create(const std::string& token_file,
                                                                bool require_tls);

  // OK, or UNAUTHENTICATED saying what is missing (never echoing the token).
  grpc::Status Check(const grpc::ServerContextBase& context) const;

  size_t token_count() const { return token_digests_.size(); }

 private:
  CallAuthorizer(std::vector<std::string> token_digests, bool require_tls)
      : token_digests_(std::move(token_digests)), require_tls_(require_tls) {}
  // SHA-256 of each token: compared in constant time, equal lengths.
  std::vector<std::string> token_digests_;
  bool require_tls_;
};

// Tokens of a token file's text: one per line, blank lines and '#'
// comments skipped, surrounding whitespace trimmed.
std::vector<std::string> ParseTokenFile(const std::string& text);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_AUTH_H_
