#include "client/cpp/fusion_client.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cache/report.h"
#include "compiler/ir/ir_proto.h"
#include "grpcpp/grpcpp.h"

namespace fusiond {
namespace {

absl::Status FromGrpc(const grpc::Status& s, const std::string& target) {
  if (s.ok()) return absl::OkStatus();
  std::string message = s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    message = absl::StrCat("fusiond at ", target, ": ", message);
  }
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), message);
}

absl::StatusOr<std::string> ReadFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in) return absl::InvalidArgumentError(absl::StrCat(what, ": cannot read ", path));
  return text.str();
}

// TLS credentials from the options' PEM files, or plaintext.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(
    const FusionClientOptions& o) {
  if (o.tls_ca_file.empty() && !o.tls && o.tls_cert_file.empty()) {
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  if (!o.tls_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadFile(o.tls_ca_file, "--tls-ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
  }
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!o.tls_cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadFile(o.tls_cert_file, "--tls-cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(o.tls_key_file, "--tls-key");
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *cert;
    ssl.pem_private_key = *key;
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path, "token file");
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    line = absl::StripAsciiWhitespace(line.substr(0, line.find('#')));
    if (!line.empty()) return std::string(line);
  }
  return absl::InvalidArgumentError(absl::StrCat("token file ", path, " holds no token"));
}

absl::StatusOr<FusionClientOptions> ClientOptionsFromEnv(FusionClientOptions o) {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v == nullptr ? "" : v);
  };
  if (o.tls_ca_file.empty()) o.tls_ca_file = env("FUSIOND_TLS_CA");
  if (o.tls_cert_file.empty()) o.tls_cert_file = env("FUSIOND_TLS_CERT");
  if (o.tls_key_file.empty()) o.tls_key_file = env("FUSIOND_TLS_KEY");
  if (o.tls_server_name.empty()) o.tls_server_name = env("FUSIOND_TLS_SERVER_NAME");
  if (std::string path = env("FUSIOND_TOKEN_FILE"); o.token.empty() && !path.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(path);
    if (!token.ok()) return token.status();
    o.token = *token;
  }
  return o;
}

FusionClient::FusionClient(const std::string& target, FusionClientOptions options)
    : target_(target), options_(options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  if (!options_.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options_.tls_server_name);
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentials(options_);
  if (!credentials.ok()) {
    setup_ = credentials.status();
    credentials = grpc::InsecureChannelCredentials();  // never used: calls fail with setup_
  }
  stub_ =
      fusiond::v1::FusionCompiler::NewStub(grpc::CreateCustomChannel(target, *credentials, args));
}

// The token travels as call metadata, so it also works over plaintext on
// loopback (gRPC's call credentials would insist on TLS).
#define FUSIOND_CLIENT_CALL(method, request, response)                                             \
  do {                                                                                             \
    if (!setup_.ok()) return setup_;                                                               \
    grpc::ClientContext context;                                                                   \
    context.set_deadline(std::chrono::system_clock::now() +                                        \
                         std::chrono::microseconds(int64_t(options_.timeout_s * 1e6)));            \
    if (!options_.token.empty()) context.AddMetadata("authorization", "Bearer " + options_.token); \
    grpc::Status s = stub_->method(&context, request, &response);                                  \
    if (!s.ok()) return FromGrpc(s, target_);                                                      \
  } while (0)

absl::StatusOr<fusiond::v1::CompileResponse> FusionClient::Compile(
    const fusiond::v1::CompileRequest& request) {
  fusiond::v1::CompileResponse response;
  FUSIOND_CLIENT_CALL(Compile, request, response);
  return response;
}

absl::StatusOr<fusiond::v1::CompileResponse> FusionClient::Lookup(
    const fusiond::v1::CompileRequest& request) {
  fusiond::v1::CompileResponse response;
  FUSIOND_CLIENT_CALL(Lookup, request, response);
  return response;
}

absl::StatusOr<fusiond::v1::StatsResponse> FusionClient::Stats() {
  fusiond::v1::StatsResponse response;
  FUSIOND_CLIENT_CALL(Stats, fusiond::v1::StatsRequest(), response);
  return response;
}

#undef FUSIOND_CLIENT_CALL

fusiond::v1::CompileRequest MakeCompileRequest(
    const Graph& graph, const std::vector<std::vector<int64_t>>& input_shapes,
    const CompileOptions& options, ReplyContents contents) {
  fusiond::v1::CompileRequest request;
  *request.mutable_graph() = ToProto(graph);
  for (const auto& shape : input_shapes) {
    auto* s = request.mutable_signature()->add_inputs();
    for (int64_t d : shape) s->add_sizes(d);
  }
  request.mutable_options()->set_arch(options.arch);
  request.mutable_options()->set_allow_precision_increase(options.allow_precision_increase);
  request.mutable_options()->set_general_kernels(options.general_kernels);
  request.set_include_source(contents.source);
  request.set_include_report(contents.report);
  return request;
}

absl::StatusOr<std::string> RemoteCompileReportJson(
    const std::string& server, const Graph& graph,
    const std::vector<std::vector<int64_t>>& input_shapes, const CompileOptions& options,
    const FusionClientOptions& client_options) {
  FusionClient client(server, client_options);
  absl::StatusOr<fusiond::v1::CompileResponse> response =
      client.Compile(MakeCompileRequest(graph, input_shapes, options, ReplyContents{false, true}));
  if (!response.ok()) return response.status();
  return ReportWithCacheStatus(response->result(), response->cache() == fusiond::v1::HIT);
}

}  // namespace fusiond
