// fusiond's settings: command-line flags, optionally a config file
// (deploy/fusiond.conf.example), flags winning over the file.
#ifndef FUSIOND_SERVER_CONFIG_H_
#define FUSIOND_SERVER_CONFIG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/auth_config.h"

namespace fusiond {

struct ServerConfig {
  // gRPC address. Default: "127.0.0.1:50051".
  std::string listen = "127.0.0.1:50051";
  // Prometheus /metrics address; "" turns metrics off. Default: "127.0.0.1:9464".
  std::string metrics = "127.0.0.1:9464";
  // Kernel cache directory. Default: DefaultCacheDir().
  std::string cache_dir;
  // Cap on cached record bytes (LRU eviction above it); 0 = none. Default: 8 GiB.
  uint64_t cache_max_bytes = uint64_t{8} << 30;
  // Compile threads. Default: the number of cores.
  int compile_threads = 0;
  // Misses waiting for a compile thread before RESOURCE_EXHAUSTED. Default: 64.
  int max_queue = 64;
  // Largest request or response message, bytes. Default: 64 MiB.
  int max_message_bytes = 64 << 20;
  // Bytes of requests being answered at once (not cache hits); 0 = none.
  // Default: 128 MiB.
  int64_t max_pending_request_bytes = int64_t{128} << 20;
  // Most nodes in one fusion. Default: 100,000.
  int max_graph_nodes = 100000;
  // The compile limits (compiler/ir/limits.h) besides the node count; past
  // one a compile is RESOURCE_EXHAUSTED naming it. They only refuse, never
  // change a kernel, so they are not part of the cache key. 0 = no limit.
  // The longest chain of nodes in one fusion. Default: 2,000.
  int max_graph_depth = 2000;
  // Inputs plus outputs of one fusion (CachedCompilerOptions::max_graph_io).
  // Default: 512.
  int max_graph_io = 512;
  // Nodes of one kernel (NVRTC's time grows with them). Default: 500.
  int max_kernel_ops = 500;
  // Compute nodes the segmenter may partition into kernels. Default: 1,000.
  int max_partition_nodes = 1000;
  // Parameters of one kernel: inputs, outputs and symbolic sizes (NVRTC's
  // time grows faster than quadratically with them). Default: 640.
  int max_kernel_params = 640;
  // Seconds between background eviction passes. Default: 30.
  int evict_interval_s = 30;
  // Wall-clock limit of one compile (in its worker process), seconds; 0 = none.
  // Default: 60.
  int compile_timeout_s = 60;
  // SIGTERM: seconds in-flight work gets before it is cancelled. Default: 20
  // (the systemd unit's TimeoutStopSec must be larger).
  int shutdown_grace_s = 20;
  // Run the pipeline in worker processes (a crash or hang costs one request).
  // Default: true.
  bool compile_workers = true;
  // Redis "HOST:PORT" of the cluster-wide shared tier; "" = none. Default: none.
  std::string redis;
  // debug | info | warning | error. Default: info.
  std::string log_level = "info";
  // A compile longer than this logs "slow_compile" with the fusion's
  // canonical hash, milliseconds; 0 = never. Default: 2000.
  int slow_compile_ms = 2000;
  // Config file read before the flags ("" = none). Default: none.
  std::string config_file;
  // TLS, tokens, health listener, shared-tier secret and Redis AUTH.
  AuthConfig auth;
};

// The usage text printed by --help.
std::string ServerUsage();

// Parses argv. Returns NotFound("help") for --help (the caller prints the
// usage and exits 0); InvalidArgument naming the flag for bad input.
absl::StatusOr<ServerConfig> ParseServerFlags(int argc, char** argv);

// Applies one "key = value" setting (flag name without dashes).
absl::Status ApplySetting(const std::string& key, const std::string& value, ServerConfig* config);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_CONFIG_H_
