// The gRPC service fusiond.v1.FusionCompiler (callback API). It only
// translates proto <-> CachedCompiler calls and records metrics; errors are
// mapped in status_map.cc.
#ifndef FUSIOND_SERVER_COMPILER_SERVICE_H_
#define FUSIOND_SERVER_COMPILER_SERVICE_H_

#include "cache/cached_compiler.h"
#include "proto/service.grpc.pb.h"
#include "server/metrics.h"

namespace fusiond {

// The library request of a proto request.
FusionRequest FromProtoRequest(const fusiond::v1::CompileRequest& request);

// Compile is a raw method (bytes in, bytes out): a request seen before is
// answered from its exact bytes with the stored record spliced into the
// reply unparsed; anything else is parsed and compiled as usual.
class CompilerService final
    : public fusiond::v1::FusionCompiler::WithRawCallbackMethod_Compile<
          fusiond::v1::FusionCompiler::CallbackService> {
 public:
  struct Options {
    // CompileStream: requests compiling at once per stream. Default: 8.
    int stream_window = 8;
  };
  // `compiler` and `metrics` (may be null) must outlive the service.
  CompilerService(CachedCompiler* compiler, ServiceMetrics* metrics, Options options);

  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<fusiond::v1::CompileStreamResponse>* CompileStream(
      grpc::CallbackServerContext* context,
      const fusiond::v1::CompileStreamRequest* request) override;
  grpc::ServerUnaryReactor* Lookup(grpc::CallbackServerContext* context,
                                   const fusiond::v1::CompileRequest* request,
                                   fusiond::v1::CompileResponse* response) override;
  grpc::ServerUnaryReactor* Stats(grpc::CallbackServerContext* context,
                                  const fusiond::v1::StatsRequest* request,
                                  fusiond::v1::StatsResponse* response) override;

 private:
  CachedCompiler* compiler_;
  ServiceMetrics* metrics_;
  Options options_;
};

}  // namespace fusiond

#endif  // FUSIOND_SERVER_COMPILER_SERVICE_H_
