// The gRPC service fusiond.v1.FusionCompiler (callback API). It only
// translates proto <-> CachedCompiler calls and records metrics; errors are
// mapped in status_map.cc.
#ifndef FUSIOND_SERVER_COMPILER_SERVICE_H_
#define FUSIOND_SERVER_COMPILER_SERVICE_H_

#include <atomic>

#include "cache/cached_compiler.h"
#include "compiler/ir/limits.h"
#include "proto/service.grpc.pb.h"
#include "server/auth.h"
#include "server/metrics.h"

namespace fusiond {

// The library request of a proto request.
FusionRequest FromProtoRequest(const fusiond::v1::CompileRequest& request,
                               const CompileLimits& limits = CompileLimits());

// Every method is raw (bytes in, bytes out), so a request that does not
// parse gets INVALID_ARGUMENT with a message (gRPC's own answer has none).
// Compile: a request seen before is answered from its exact bytes with the
// stored record spliced into the reply unparsed; anything else is parsed and
// compiled as usual. Lookup's key resolution runs on the compile pool.
// StartDraining() (SIGTERM) turns new work away with UNAVAILABLE.
class CompilerService final : public fusiond::v1::FusionCompiler::WithRawCallbackMethod_Compile<
                                  fusiond::v1::FusionCompiler::WithRawCallbackMethod_CompileStream<
                                      fusiond::v1::FusionCompiler::WithRawCallbackMethod_Lookup<
                                          fusiond::v1::FusionCompiler::WithRawCallbackMethod_Stats<
                                              fusiond::v1::FusionCompiler::CallbackService>>>> {
 public:
  struct Options {
    // CompileStream: requests compiling at once per stream. Default: 8.
    int stream_window = 8;
    // Who may call the four RPCs (tokens, TLS; server/auth.h); must outlive
    // the service. Default: null, everyone.
    const CallAuthorizer* authorizer = nullptr;
    // The limits every request compiles under (fusiond --max-graph-depth,
    // ...). Default: CompileLimits{}.
    CompileLimits limits;
    // Bytes of requests (Compile, Lookup, CompileStream; not cache hits)
    // being answered at once; one more is RESOURCE_EXHAUSTED. Each costs
    // the daemon and its compile worker several times its size in copies
    // (sixteen 60 MB requests: 7.6 GB). 0 = none. Default: 128 MiB.
    size_t max_pending_bytes = size_t{128} << 20;
  };
  // `compiler` and `metrics` (may be null) must outlive the service.
  CompilerService(CachedCompiler* compiler, ServiceMetrics* metrics, Options options);

  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* CompileStream(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* Lookup(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* request,
                                  grpc::ByteBuffer* response) override;

  // From now on Compile, CompileStream and Lookup answer UNAVAILABLE.
  void StartDraining();
  // Calls still being answered (compiles, lookups, streams; not hits).
  int active_calls() const { return active_.load(); }
  // For the reactors: one of them is done; it held `bytes` of request.
  void CallEnded(size_t bytes) {
    pending_bytes_ -= bytes;
    --active_;
  }
  // For the reactors: the limits requests compile under.
  const CompileLimits& limits() const { return options_.limits; }

 private:
  // UNAUTHENTICATED for a caller the authorizer refuses, else OK.
  grpc::Status Authorize(const grpc::CallbackServerContext* context) const {
    return options_.authorizer == nullptr ? grpc::Status::OK : options_.authorizer->Check(*context);
  }

  CachedCompiler* compiler_;
  ServiceMetrics* metrics_;
  Options options_;
  // OK and `bytes` counted in pending_bytes_, or RESOURCE_EXHAUSTED naming
  // --max-pending-request-bytes.
  grpc::Status AdmitBytes(size_t bytes);

  std::atomic<bool> draining_{false};
  std::atomic<int> active_{0};
  std::atomic<size_t> pending_bytes_{0};
};

}  // namespace fusiond

#endif  // FUSIOND_SERVER_COMPILER_SERVICE_H_
