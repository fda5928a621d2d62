#include "server/rpc_log.h"

#include <atomic>
#include <chrono>
#include <random>

#include "absl/strings/str_format.h"
#include "grpcpp/server_context.h"
#include "server/log.h"

namespace fusiond {
namespace {

using grpc::experimental::InterceptionHookPoints;
using Clock = std::chrono::steady_clock;

constexpr char kRequestIdHeader[] = "x-request-id";

class RpcLogInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit RpcLogInterceptor(grpc::experimental::ServerRpcInfo* info)
      : info_(info), start_(Clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      OnStatus(methods);
    }
    methods->Proceed();
  }

 private:
  void OnStatus(grpc::experimental::InterceptorBatchMethods* methods) {
    grpc::ServerContextBase* context = info_->server_context();
    std::string client_id;
    if (context != nullptr) {
      const auto& metadata = context->client_metadata();
      if (auto it = metadata.find(kRequestIdHeader); it != metadata.end()) {
        client_id.assign(it->second.data(), it->second.size());
      }
    }
    const std::string id = RequestId(client_id);
    if (auto* trailers = methods->GetSendTrailingMetadata()) {
      trailers->emplace(kRequestIdHeader, id);
    }
    const grpc::Status status = methods->GetSendStatus();
    const int code = static_cast<int>(status.error_code());
    // The hit path pays for the request id only, unless debug lines are on.
    if (status.ok() && !LogEnabled(LogLevel::kDebug)) return;
    LogLevel level = status.ok()                                          ? LogLevel::kDebug
                     : status.error_code() == grpc::StatusCode::NOT_FOUND ? LogLevel::kInfo
                                                                          : LogLevel::kWarning;
    std::vector<LogField> fields = {
        {"rpc", info_->method()},
        {"code", GrpcCodeName(code)},
        {"request_id", id},
        {"peer", context != nullptr ? context->peer() : std::string()},
        {"micros", std::chrono::duration<double, std::micro>(Clock::now() - start_).count()}};
    if (!status.ok()) fields.emplace_back("message", status.error_message());
    Log(level, status.ok() ? "rpc" : "rpc_failed", fields);
  }

  grpc::experimental::ServerRpcInfo* info_;
  Clock::time_point start_;
};

class RpcLogFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new RpcLogInterceptor(info);
  }
};

bool UsableClientId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (c <= ' ' || c > '~' || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
RpcLogInterceptors() {
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> out;
  out.push_back(std::make_unique<RpcLogFactory>());
  return out;
}

std::string GrpcCodeName(int code) {
  static const char* kNames[] = {"OK",
                                 "CANCELLED",
                                 "UNKNOWN",
                                 "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED",
                                 "NOT_FOUND",
                                 "ALREADY_EXISTS",
                                 "PERMISSION_DENIED",
                                 "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION",
                                 "ABORTED",
                                 "OUT_OF_RANGE",
                                 "UNIMPLEMENTED",
                                 "INTERNAL",
                                 "UNAVAILABLE",
                                 "DATA_LOSS",
                                 "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN";
}

std::string RequestId(const std::string& client_id) {
  if (UsableClientId(client_id)) return client_id;
  // A random process prefix and a counter: unique here, unlikely to repeat
  // across the daemons of a cluster.
  static const uint32_t prefix = std::random_device()();
  static std::atomic<uint64_t> next{1};
  return absl::StrFormat("%08x-%d", prefix, next.fetch_add(1));
}

}  // namespace fusiond
