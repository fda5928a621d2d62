// The C++ client of fusiond (fusiond.v1.FusionCompiler over gRPC), and the
// one-call form `fusionc --server HOST:PORT compile` uses.
#ifndef FUSIOND_CLIENT_CPP_FUSION_CLIENT_H_
#define FUSIOND_CLIENT_CPP_FUSION_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/graph.h"
#include "compiler/pipeline.h"
#include "proto/service.grpc.pb.h"

namespace fusiond {

struct FusionClientOptions {
  // Per-call deadline, seconds. Default: 120 (a cold compile may take a while).
  double timeout_s = 120;
  // Largest message sent or received, bytes. Default: 64 MiB.
  int max_message_bytes = 64 << 20;
};

class FusionClient {
 public:
  // `target` is "HOST:PORT". Connects lazily; the first call reports
  // UNAVAILABLE when no daemon answers.
  explicit FusionClient(const std::string& target, FusionClientOptions options = {});

  // Compile / Lookup / Stats RPCs; a gRPC error comes back as the absl
  // status with the same code and message.
  absl::StatusOr<fusiond::v1::CompileResponse> Compile(const fusiond::v1::CompileRequest& request);
  absl::StatusOr<fusiond::v1::CompileResponse> Lookup(const fusiond::v1::CompileRequest& request);
  absl::StatusOr<fusiond::v1::StatsResponse> Stats();

  const std::string& target() const { return target_; }

 private:
  std::string target_;
  FusionClientOptions options_;
  std::unique_ptr<fusiond::v1::FusionCompiler::Stub> stub_;
};

// The request for a graph, its input shapes and options.
fusiond::v1::CompileRequest MakeCompileRequest(
    const Graph& graph, const std::vector<std::vector<int64_t>>& input_shapes,
    const CompileOptions& options);

// `fusionc --server HOST:PORT compile FILE --json`: compiles through the
// daemon and returns the same report as the embedded cache
// (CachedCompileResult::ReportJson): CompileResultToJson of the compiled
// fusion with "cache": "hit" | "miss" first.
absl::StatusOr<std::string> RemoteCompileReportJson(
    const std::string& server, const Graph& graph,
    const std::vector<std::vector<int64_t>>& input_shapes, const CompileOptions& options);

}  // namespace fusiond

#endif  // FUSIOND_CLIENT_CPP_FUSION_CLIENT_H_
