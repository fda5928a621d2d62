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
#include "cache/reply_contents.h"
#include "compiler/compile_result.h"
#include "compiler/ir/graph.h"
#include "proto/service.grpc.pb.h"

namespace fusiond {

struct FusionClientOptions {
  // Per-call deadline, seconds. Default: 120 (a cold compile may take a while).
  double timeout_s = 120;
  // Largest message sent or received, bytes. Default: 64 MiB.
  int max_message_bytes = 64 << 20;
  // TLS: PEM CA bundle that signed the daemon's certificate; "" = plaintext
  // (unless tls). Default: none.
  std::string tls_ca_file;
  // Use TLS with the system's CA bundle when tls_ca_file is empty. Default: false.
  bool tls = false;
  // PEM client certificate and key, for a daemon that requires them. Default: none.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Name the daemon's certificate must carry, when it differs from the
  // target's host (e.g. connecting by IP). Default: the target's host.
  std::string tls_server_name;
  // Bearer token sent with every call ("authorization: Bearer TOKEN"). Default: none.
  std::string token;
};

// Options from the environment, as fusionc reads them: $FUSIOND_TLS_CA,
// $FUSIOND_TLS_CERT, $FUSIOND_TLS_KEY, $FUSIOND_TLS_SERVER_NAME and the
// token from $FUSIOND_TOKEN_FILE (first line). InvalidArgument when a named
// file cannot be read.
absl::StatusOr<FusionClientOptions> ClientOptionsFromEnv(FusionClientOptions base = {});
// The token of a token file: its first token line ('#' comments skipped).
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

class FusionClient {
 public:
  // `target` is "HOST:PORT". Connects lazily; the first call reports
  // UNAVAILABLE when no daemon answers (or the TLS handshake fails). A TLS
  // file that cannot be read makes every call INVALID_ARGUMENT.
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
  absl::Status setup_;  // a TLS file that could not be read
  std::unique_ptr<fusiond::v1::FusionCompiler::Stub> stub_;
};

// The request for a graph, its input shapes and options. The reply carries
// what a launch needs (kernels' binaries and manifests, the fusion manifest),
// plus the CUDA source and the compile report when `contents` asks.
fusiond::v1::CompileRequest MakeCompileRequest(
    const Graph& graph, const std::vector<std::vector<int64_t>>& input_shapes,
    const CompileOptions& options, ReplyContents contents = {});

// `fusionc --server HOST:PORT compile FILE --json`: compiles through the
// daemon and returns the same report as the embedded cache
// (CachedCompileResult::ReportJson): CompileResultToJson of the compiled
// fusion with "cache": "hit" | "miss" first (asks the daemon for the report).
absl::StatusOr<std::string> RemoteCompileReportJson(
    const std::string& server, const Graph& graph,
    const std::vector<std::vector<int64_t>>& input_shapes, const CompileOptions& options,
    const FusionClientOptions& client_options = {});

}  // namespace fusiond

#endif  // FUSIOND_CLIENT_CPP_FUSION_CLIENT_H_
