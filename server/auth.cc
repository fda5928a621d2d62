#include "server/auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "cache/secret_file.h"

namespace fusiond {
namespace {

std::string Sha256(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

constexpr char kBearer[] = "Bearer ";

}  // namespace

std::vector<std::string> ParseTokenFile(const std::string& text) {
  std::vector<std::string> tokens;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line.substr(0, line.find('#')));
    if (!line.empty()) tokens.emplace_back(line);
  }
  return tokens;
}

absl::StatusOr<std::unique_ptr<CallAuthorizer>> CallAuthorizer::Create(
    const std::string& token_file, bool require_tls) {
  std::vector<std::string> digests;
  if (!token_file.empty()) {
    absl::StatusOr<std::string> text = ReadSecretFile(token_file, "--token-file");
    if (!text.ok()) return text.status();
    for (const std::string& token : ParseTokenFile(*text)) digests.push_back(Sha256(token));
    if (digests.empty()) {
      return absl::InvalidArgumentError("--token-file: " + token_file + " holds no token");
    }
  }
  return std::unique_ptr<CallAuthorizer>(new CallAuthorizer(std::move(digests), require_tls));
}

grpc::Status CallAuthorizer::Check(const grpc::ServerContextBase& context) const {
  if (require_tls_) {
    std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
    bool tls = false;
    if (auth != nullptr) {
      for (const grpc::string_ref& v : auth->FindPropertyValues("transport_security_type")) {
        tls = tls || v == "ssl";
      }
    }
    if (!tls) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "this daemon requires TLS");
  }
  if (token_digests_.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing bearer token (authorization: Bearer TOKEN; fusionc --token-file)");
  }
  const std::string value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, kBearer)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the authorization metadata is not 'Bearer TOKEN'");
  }
  const std::string digest = Sha256(std::string_view(value).substr(sizeof(kBearer) - 1));
  bool match = false;
  for (const std::string& d : token_digests_) {
    match |= CRYPTO_memcmp(d.data(), digest.data(), d.size()) == 0;
  }
  if (!match) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "invalid bearer token");
  return grpc::Status::OK;
}

}  // namespace fusiond
