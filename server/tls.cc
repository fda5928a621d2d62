#include "server/tls.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cache/secret_file.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace fusiond {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": cannot read a PEM file from ", path));
  }
  return text.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const AuthConfig& config) {
  if (config.tls_cert.empty()) return grpc::InsecureServerCredentials();
  absl::StatusOr<std::string> cert = ReadPem(config.tls_cert, "tls-cert");
  if (!cert.ok()) return cert.status();
  // The private key: the same checks as other secrets (not group writable).
  absl::StatusOr<std::string> key = ReadSecretFile(config.tls_key, "--tls-key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*key + "\n", *cert});
  if (!config.tls_client_ca.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(config.tls_client_ca, "tls-client-ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<ServingSecurity> MakeServingSecurity(const AuthConfig& config) {
  ServingSecurity s;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(config);
  if (!credentials.ok()) return credentials.status();
  s.credentials = *std::move(credentials);
  absl::StatusOr<std::unique_ptr<CallAuthorizer>> authorizer =
      CallAuthorizer::Create(config.token_file, /*require_tls=*/!config.tls_cert.empty());
  if (!authorizer.ok()) return authorizer.status();
  s.authorizer = *std::move(authorizer);
  return s;
}

std::unique_ptr<grpc::Server> StartHealthServer(const std::string& address) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return nullptr;
  server->GetHealthCheckService()->SetServingStatus(true);
  return server;
}

}  // namespace fusiond
