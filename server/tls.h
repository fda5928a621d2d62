// The gRPC server's credentials from the security settings: TLS with the
// server certificate (and client-certificate verification with a client
// CA), or plaintext.
#ifndef FUSIOND_SERVER_TLS_H_
#define FUSIOND_SERVER_TLS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "server/auth.h"
#include "server/auth_config.h"

namespace fusiond {

// TLS credentials when `config` names a certificate, else insecure ones.
// InvalidArgument naming the file when a PEM file cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const AuthConfig& config);

// What the daemon's main needs: the listening port's credentials and the
// per-call authorizer of the compile RPCs.
struct ServingSecurity {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::unique_ptr<CallAuthorizer> authorizer;
};
absl::StatusOr<ServingSecurity> MakeServingSecurity(const AuthConfig& config);

// A plaintext gRPC server at `address` with only the health service (for
// probes that cannot do TLS or send tokens); null when it cannot listen.
std::unique_ptr<grpc::Server> StartHealthServer(const std::string& address);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_TLS_H_
