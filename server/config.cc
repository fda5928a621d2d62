#include "server/config.h"

#include <arpa/inet.h>

#include <fstream>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cache/shared_tier.h"

namespace fusiond {
namespace {

template <typename T>
absl::Status ParseNumber(const std::string& key, const std::string& value, T* out) {
  if (!absl::SimpleAtoi(value, out)) {
    // The value quoted at most 64 bytes long (a config line may be huge).
    const std::string shown = value.size() > 64 ? value.substr(0, 64) + "..." : value;
    return absl::InvalidArgumentError(
        absl::StrCat("--", key, ": expected a whole number from ", std::numeric_limits<T>::min(),
                     " to ", std::numeric_limits<T>::max(), ", got '", shown, "'"));
  }
  return absl::OkStatus();
}

// HOST:PORT with a port of 0..65535 (gRPC binds some other port for a
// larger one and reports no error); "" (the listener is off) and gRPC's
// unix: addresses pass.
absl::Status CheckAddress(const char* flag, const std::string& address) {
  if (address.empty() || absl::StartsWith(address, "unix:") ||
      absl::StartsWith(address, "unix-abstract:")) {
    return absl::OkStatus();
  }
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " '", address.substr(0, 200), "': expected HOST:PORT with a port of 0..65535"));
  }
  // A host of digits and dots must be an IPv4 address: civetweb (--metrics)
  // reads 999.1.1.1 as 231.1.1.1 and listens there.
  const std::string host = address.substr(0, colon);
  in_addr ipv4;
  if (!host.empty() && host.find_first_not_of("0123456789.") == std::string::npos &&
      inet_pton(AF_INET, host.c_str(), &ipv4) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " '", address.substr(0, 200),
                                                   "': ", host, " is not an IPv4 address"));
  }
  return absl::OkStatus();
}

absl::Status ReadConfigFile(const std::string& path, ServerConfig* config) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--config: cannot read ", path));
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    line = line.substr(0, line.find('#'));
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty()) continue;
    size_t eq = text.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": expected 'key = value'"));
    }
    std::string key(absl::StripAsciiWhitespace(text.substr(0, eq)));
    std::string value(absl::StripAsciiWhitespace(text.substr(eq + 1)));
    if (absl::Status st = ApplySetting(key, value, config); !st.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", number, ": ", st.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string ServerUsage() {
  return std::string(R"(usage: fusiond [flags]
The fusion compilation daemon: compiles fusions to CUDA kernels, caches them
in RocksDB, serves them over gRPC (fusiond.v1.FusionCompiler).

  --listen HOST:PORT        gRPC address (default 127.0.0.1:50051)
  --metrics HOST:PORT       Prometheus /metrics address, "" for none
                            (default 127.0.0.1:9464)
  --cache-dir DIR           kernel cache directory (default $FUSIOND_CACHE_DIR,
                            else $XDG_CACHE_HOME/fusiond, else ~/.cache/fusiond)
  --cache-max-bytes N       cap on cached bytes, LRU eviction (default 8 GiB, 0 = none)
  --compile-threads N       compile threads (default: the number of cores)
  --max-queue N             misses waiting for a thread before RESOURCE_EXHAUSTED (default 64)
  --max-message-bytes N     largest gRPC message (default 64 MiB)
  --max-pending-request-bytes N
                            bytes of requests being answered at once (not hits);
                            one more is RESOURCE_EXHAUSTED (default 128 MiB, 0 = none)
  --max-graph-nodes N       most nodes in one fusion (default 100000)
  --max-graph-depth N       longest chain of nodes in one fusion (default 2000, 0 = none)
  --max-graph-io N          most inputs plus outputs of one fusion; code generation
                            and NVRTC grow about cubically with them (default 512,
                            0 = none)
  --max-kernel-ops N        most nodes in one kernel; NVRTC's time grows with
                            them (default 500, 0 = none)
  --max-partition-nodes N   most compute nodes the segmenter splits into kernels;
                            its search grows faster than quadratically
                            (default 1000, 0 = none)
  --max-kernel-params N     most parameters of one kernel (inputs, outputs and
                            symbolic sizes); NVRTC's time grows faster than
                            quadratically with them (default 640, 0 = none)
                            Past any of these limits a compile is RESOURCE_EXHAUSTED
                            naming the limit; they are not part of the cache key, so
                            a kernel cached before is still served
  --evict-interval-s N      seconds between eviction passes (default 30)
  --compile-timeout-s N     wall-clock limit of one compile, in its worker process;
                            past it RESOURCE_EXHAUSTED (default 60, 0 = none)
  --compile-workers BOOL    compile in worker processes (default true)
  --shutdown-grace-s N      SIGTERM: seconds in-flight work gets before it is
                            cancelled (default 20)
  --redis HOST:PORT         the cluster-wide shared tier: local misses ask this
                            Redis before compiling, compiles are published to it
                            (default: none)
  --log-level LEVEL         debug | info | warning | error (default info); debug
                            adds a line per RPC and each compile's stages and heuristics
  --slow-compile-ms N       log "slow_compile" (with the fusion's canonical hash) for
                            compiles longer than this (default 2000, 0 = never)
  --config FILE             read "key = value" settings (flag names without
                            dashes) before the flags
  --help                    this text
  --version                 the version (also of the code generator and NVRTC)
SIGTERM or SIGINT shuts down cleanly: health says NOT_SERVING, new work gets
UNAVAILABLE, in-flight work finishes or is cancelled within the grace, exit 0.
)") + AuthUsage();
}

absl::Status ApplySetting(const std::string& key, const std::string& value, ServerConfig* c) {
  if (absl::Status auth; ApplyAuthSetting(key, value, &c->auth, &auth)) return auth;
  if (key == "listen") {
    c->listen = value;
  } else if (key == "metrics") {
    c->metrics = value;
  } else if (key == "cache-dir" || key == "cache_dir") {
    c->cache_dir = value;
  } else if (key == "cache-max-bytes" || key == "cache_max_bytes") {
    return ParseNumber(key, value, &c->cache_max_bytes);
  } else if (key == "compile-threads" || key == "compile_threads") {
    return ParseNumber(key, value, &c->compile_threads);
  } else if (key == "max-queue" || key == "max_queue") {
    return ParseNumber(key, value, &c->max_queue);
  } else if (key == "max-message-bytes" || key == "max_message_bytes") {
    return ParseNumber(key, value, &c->max_message_bytes);
  } else if (key == "max-pending-request-bytes" || key == "max_pending_request_bytes") {
    return ParseNumber(key, value, &c->max_pending_request_bytes);
  } else if (key == "max-graph-nodes" || key == "max_graph_nodes") {
    return ParseNumber(key, value, &c->max_graph_nodes);
  } else if (key == "max-graph-depth" || key == "max_graph_depth") {
    return ParseNumber(key, value, &c->max_graph_depth);
  } else if (key == "max-graph-io" || key == "max_graph_io") {
    return ParseNumber(key, value, &c->max_graph_io);
  } else if (key == "max-kernel-ops" || key == "max_kernel_ops") {
    return ParseNumber(key, value, &c->max_kernel_ops);
  } else if (key == "max-partition-nodes" || key == "max_partition_nodes") {
    return ParseNumber(key, value, &c->max_partition_nodes);
  } else if (key == "max-kernel-params" || key == "max_kernel_params") {
    return ParseNumber(key, value, &c->max_kernel_params);
  } else if (key == "evict-interval-s" || key == "evict_interval_s") {
    return ParseNumber(key, value, &c->evict_interval_s);
  } else if (key == "compile-timeout-s" || key == "compile_timeout_s") {
    return ParseNumber(key, value, &c->compile_timeout_s);
  } else if (key == "shutdown-grace-s" || key == "shutdown_grace_s") {
    return ParseNumber(key, value, &c->shutdown_grace_s);
  } else if (key == "compile-workers" || key == "compile_workers") {
    if (value != "true" && value != "false") {
      return absl::InvalidArgumentError(
          absl::StrCat("--", key, ": expected true or false, got '", value, "'"));
    }
    c->compile_workers = value == "true";
  } else if (key == "log-level" || key == "log_level") {
    c->log_level = value;
  } else if (key == "slow-compile-ms" || key == "slow_compile_ms") {
    return ParseNumber(key, value, &c->slow_compile_ms);
  } else if (key == "redis") {
    if (!value.empty()) {
      if (absl::Status s = ParseRedisAddress(value).status(); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--redis: ", s.message()));
      }
    }
    c->redis = value;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown setting '", key, "' (see --help)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ServerConfig> ParseServerFlags(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> flags;
  std::string config_file;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return absl::NotFoundError("help");
    if (arg.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "' (see --help)"));
    }
    std::string key = arg.substr(2), value;
    size_t eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("--", key, " needs a value"));
    }
    if (key == "config") {
      config_file = value;
    } else {
      flags.emplace_back(key, value);
    }
  }
  ServerConfig config;
  config.config_file = config_file;
  if (!config_file.empty()) {
    if (absl::Status st = ReadConfigFile(config_file, &config); !st.ok()) return st;
  }
  for (const auto& [key, value] : flags) {
    if (absl::Status st = ApplySetting(key, value, &config); !st.ok()) return st;
  }
  if (config.max_queue < 0 || config.compile_threads < 0 || config.max_message_bytes <= 0 ||
      config.max_graph_nodes <= 0 || config.evict_interval_s <= 0 || config.slow_compile_ms < 0 ||
      config.compile_timeout_s < 0 || config.shutdown_grace_s < 0 || config.max_graph_depth < 0 ||
      config.max_kernel_ops < 0 || config.max_partition_nodes < 0 || config.max_graph_io < 0 ||
      config.max_pending_request_bytes < 0 || config.max_kernel_params < 0) {
    return absl::InvalidArgumentError("numeric settings must be positive (see --help)");
  }
  // Each compile thread starts a compile worker process ahead of its first
  // job (~80 MB resident each).
  constexpr int kMaxCompileThreads = 1024;
  if (config.compile_threads > kMaxCompileThreads) {
    return absl::InvalidArgumentError(absl::StrCat("--compile-threads ", config.compile_threads,
                                                   " is over ", kMaxCompileThreads,
                                                   ": each starts a compile worker process"));
  }
  for (auto [flag, address] : {std::pair<const char*, const std::string&>{"listen", config.listen},
                               {"metrics", config.metrics},
                               {"health-listen", config.auth.health_listen}}) {
    if (absl::Status st = CheckAddress(flag, address); !st.ok()) return st;
  }
  if (absl::Status st = ValidateAuthConfig(config.auth, config.listen); !st.ok()) return st;
  return config;
}

}  // namespace fusiond
