// Per-RPC logs and request ids, for every service of the daemon (a gRPC
// server interceptor, so the services need no logging code):
//  - each RPC gets a request id: the client's `x-request-id` metadata when
//    it is a short printable string, else a generated one; the reply's
//    trailing metadata carries it back as `x-request-id`;
//  - an RPC that fails is logged ("rpc_failed": method, code, message,
//    request id, peer, microseconds; NOT_FOUND, a Lookup miss, at info,
//    every other code at warning); at --log-level debug every RPC is ("rpc").
#ifndef FUSIOND_SERVER_RPC_LOG_H_
#define FUSIOND_SERVER_RPC_LOG_H_

#include <memory>
#include <string>
#include <vector>

#include "grpcpp/support/server_interceptor.h"

namespace fusiond {

// What ServerBuilder::experimental().SetInterceptorCreators takes.
std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
RpcLogInterceptors();

// The gRPC code's name ("RESOURCE_EXHAUSTED"); "UNKNOWN" for others.
std::string GrpcCodeName(int code);

// The id to use for a request whose client sent `client_id` ("" = none):
// it when it is 1-128 printable ASCII characters without spaces or quotes,
// else a new one (unique in this process, random across processes).
std::string RequestId(const std::string& client_id);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_RPC_LOG_H_
