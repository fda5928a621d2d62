#include "client/cpp/fusion_client.h"

#include <chrono>

#include "absl/strings/str_cat.h"
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

}  // namespace

FusionClient::FusionClient(const std::string& target, FusionClientOptions options)
    : target_(target), options_(options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  stub_ = fusiond::v1::FusionCompiler::NewStub(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
}

#define FUSIOND_CLIENT_CALL(method, request, response)                                      \
  do {                                                                                      \
    grpc::ClientContext context;                                                            \
    context.set_deadline(std::chrono::system_clock::now() +                                 \
                         std::chrono::microseconds(int64_t(options_.timeout_s * 1e6)));     \
    grpc::Status s = stub_->method(&context, request, &response);                           \
    if (!s.ok()) return FromGrpc(s, target_);                                               \
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
    const CompileOptions& options) {
  fusiond::v1::CompileRequest request;
  *request.mutable_graph() = ToProto(graph);
  for (const auto& shape : input_shapes) {
    auto* s = request.mutable_signature()->add_inputs();
    for (int64_t d : shape) s->add_sizes(d);
  }
  request.mutable_options()->set_arch(options.arch);
  request.mutable_options()->set_allow_precision_increase(options.allow_precision_increase);
  request.mutable_options()->set_general_kernels(options.general_kernels);
  return request;
}

absl::StatusOr<std::string> RemoteCompileReportJson(
    const std::string& server, const Graph& graph,
    const std::vector<std::vector<int64_t>>& input_shapes, const CompileOptions& options) {
  FusionClient client(server);
  absl::StatusOr<fusiond::v1::CompileResponse> response =
      client.Compile(MakeCompileRequest(graph, input_shapes, options));
  if (!response.ok()) return response.status();
  return ReportWithCacheStatus(response->result(), response->cache() == fusiond::v1::HIT);
}

}  // namespace fusiond
