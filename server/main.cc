// fusiond: the fusion compilation daemon. Wires the kernel cache, the
// cached compiler, the gRPC service (with health checking and reflection)
// and the Prometheus exposer; shuts down cleanly on SIGTERM / SIGINT.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "cache/cache_key.h"
#include "cache/cached_compiler.h"
#include "cache/compile_worker.h"
#include "cache/kernel_cache.h"
#include "compiler/codegen/compile_segment.h"
#include "fusiond/version.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "prometheus/exposer.h"
#include "server/compile_log.h"
#include "server/compiler_service.h"
#include "server/config.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/rpc_log.h"
#include "server/sd_notify.h"
#include "server/tls.h"

namespace fusiond {
namespace {

// SIGTERM / SIGINT: the handler writes the signal number to a pipe that the
// main thread reads. A handler (not a blocked-signal mask) because libraries
// start threads before main() runs, and any of them may receive the signal.
int g_signal_pipe[2] = {-1, -1};

void OnShutdownSignal(int sig) {
  unsigned char byte = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_signal_pipe[1], &byte, 1);
  (void)ignored;
}

bool SetShutdownHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnShutdownSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  return sigaction(SIGTERM, &action, nullptr) == 0 && sigaction(SIGINT, &action, nullptr) == 0;
}

bool InstallShutdownHandlers() { return pipe(g_signal_pipe) == 0 && SetShutdownHandlers(); }

int WaitForShutdownSignal() {
  unsigned char byte = 0;
  while (read(g_signal_pipe[0], &byte, 1) != 1) {
    if (errno != EINTR) return 0;
  }
  return byte;
}

// Runs EvictToCap every `interval` until Stop().
class Evictor {
 public:
  Evictor(KernelCache* cache, std::chrono::seconds interval)
      : thread_([this, cache, interval] {
          std::unique_lock<std::mutex> lock(mu_);
          while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
            lock.unlock();
            absl::StatusOr<int> n = cache->EvictToCap();
            if (!n.ok()) {
              Log(LogLevel::kWarning, "evict_failed", {{"error", n.status().ToString()}});
            } else if (*n > 0) {
              Log(LogLevel::kInfo, "evicted", {{"records", *n}});
            }
            lock.lock();
          }
        }) {}
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

int Run(const ServerConfig& config) {
  // abseil's mutex deadlock detection (on in Debian's build) costs every
  // lock gRPC takes; the daemon does not need it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  LogLevel level;
  if (!ParseLogLevel(config.log_level, &level)) {
    std::fprintf(stderr, "fusiond: --log-level: unknown level '%s'\n", config.log_level.c_str());
    return 2;
  }
  SetLogLevel(level);

  KernelCacheOptions cache_options;
  cache_options.dir = config.cache_dir;
  cache_options.max_bytes = config.cache_max_bytes;
  cache_options.on_problem = [](const std::string& event, const std::string& detail) {
    Log(event == "cache_writable" ? LogLevel::kInfo : LogLevel::kWarning, event,
        {{"detail", detail}});
  };
  absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Open(cache_options);
  if (!cache.ok()) {
    Log(LogLevel::kError, "cache_open_failed", {{"error", cache.status().ToString()}});
    return 1;
  }
  if (absl::StatusOr<int> n = (*cache)->EvictToCap(); n.ok() && *n > 0) {
    Log(LogLevel::kInfo, "evicted", {{"records", *n}});
  }

  // The shared tier is best effort: an unreachable Redis is logged, and
  // every lookup retries the connection. Without its secret it refuses.
  std::unique_ptr<SharedTier> shared;
  if (!config.redis.empty()) {
    absl::StatusOr<SharedTierOptions> redis = MakeSharedTierOptions(config.redis, config.auth);
    absl::StatusOr<std::unique_ptr<SharedTier>> tier =
        redis.ok() ? SharedTier::Create(*redis) : redis.status();
    if (!tier.ok()) {
      Log(LogLevel::kError, "bad_shared_tier", {{"error", tier.status().ToString()}});
      return 2;
    }
    shared = *std::move(tier);
    if (absl::Status s = shared->Ping(); !s.ok()) {
      Log(LogLevel::kWarning, "shared_tier_unavailable",
          {{"redis", config.redis}, {"error", s.ToString()}});
    }
  }

  std::unique_ptr<ServiceMetrics> metrics;
  CachedCompilerOptions compiler_options;
  compiler_options.shared = shared.get();
  // One compile per cluster: a lease in Redis per new fusion (--redis-lease-ms).
  std::unique_ptr<CompileLease> lease;
  if (shared && config.auth.redis_lease_ms > 0) {
    CompileLeaseOptions lease_options;
    lease_options.lease_ms = config.auth.redis_lease_ms;
    lease = std::make_unique<CompileLease>(shared.get(), lease_options);
    compiler_options.lease = lease.get();
  }
  compiler_options.compile_threads = config.compile_threads > 0
                                         ? config.compile_threads
                                         : std::max(1u, std::thread::hardware_concurrency());
  compiler_options.max_queue = config.max_queue;
  compiler_options.graph_limits.max_nodes = config.max_graph_nodes;
  compiler_options.max_graph_io = config.max_graph_io;
  CompileLimits compile_limits;
  compile_limits.max_nodes = config.max_graph_nodes;
  compile_limits.max_depth = config.max_graph_depth;
  compile_limits.max_kernel_ops = config.max_kernel_ops;
  compile_limits.max_partition_nodes = config.max_partition_nodes;
  compile_limits.max_kernel_params = config.max_kernel_params;
  if (config.compile_workers) {
    // The pipeline in worker processes: a crash or a hang costs one request.
    compiler_options.worker_argv = {"/proc/self/exe", "--compile-worker"};
    compiler_options.compile_timeout_s = config.compile_timeout_s;
  }
  const double slow_micros = config.slow_compile_ms * 1e3;
  compiler_options.on_compiled = [&metrics, slow_micros](const CachedCompileResult& r) {
    if (metrics) metrics->ObserveCompile(r);
    LogCompiled(r, slow_micros);
  };
  auto compiler = std::make_unique<CachedCompiler>(cache->get(), compiler_options);
  metrics = std::make_unique<ServiceMetrics>(compiler.get());

  std::unique_ptr<prometheus::Exposer> exposer;
  if (!config.metrics.empty()) {
    try {
      // civetweb serves one connection per thread: more threads than the
      // default 2, and a short read timeout, so a few clients that connect
      // and send nothing (or send slowly) hold scrapes back for seconds, not
      // until civetweb's default 30 s timeout.
      exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
          "listening_ports", config.metrics, "num_threads", "16", "request_timeout_ms", "2000"});
    } catch (const std::exception& e) {
      Log(LogLevel::kError, "metrics_listen_failed",
          {{"address", config.metrics}, {"error", e.what()}});
      return 1;
    }
    // civetweb starts without a port it could not bind to some addresses
    // (999.1.1.1:1): no scrape would ever reach it.
    if (exposer->GetListeningPorts().empty()) {
      Log(LogLevel::kError, "metrics_listen_failed",
          {{"address", config.metrics}, {"error", "listening on no port"}});
      return 1;
    }
    for (const auto& c : metrics->collectables()) exposer->RegisterCollectable(c);
  }

  // NVRTC's first call in a process, before serving: it costs 0.3-0.7 s
  // more than later ones on the GPU host (WarmUpNvrtc), and for its first
  // ~25 ms NVRTC has its own SIGTERM handler in place (a SIGTERM then exits
  // with status 4 instead of shutting down; NVRTC restores ours after).
  // Neither should land on a served request.
  if (absl::StatusOr<double> us = WarmUpNvrtc("sm_90"); us.ok()) {
    Log(LogLevel::kInfo, "nvrtc_warm", {{"micros", *us}});
  } else if (!absl::IsUnavailable(us.status())) {
    Log(LogLevel::kWarning, "nvrtc_warm_failed", {{"error", us.status().ToString()}});
  }
  if (!SetShutdownHandlers()) {
    Log(LogLevel::kError, "signal_handlers_failed", {});
    return 1;
  }

  // TLS and tokens (server/tls.h): a bad certificate or token file is fatal.
  absl::StatusOr<ServingSecurity> security = MakeServingSecurity(config.auth);
  if (!security.ok()) {
    Log(LogLevel::kError, "bad_security_config", {{"error", security.status().ToString()}});
    return 2;
  }
  CompilerService::Options service_options;
  service_options.authorizer = security->authorizer.get();
  service_options.limits = compile_limits;
  service_options.max_pending_bytes = static_cast<size_t>(config.max_pending_request_bytes);
  CompilerService service(compiler.get(), metrics.get(), service_options);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, security->credentials, &port);
  builder.SetMaxReceiveMessageSize(config.max_message_bytes);
  builder.SetMaxSendMessageSize(config.max_message_bytes);
  builder.RegisterService(&service);
  builder.experimental().SetInterceptorCreators(RpcLogInterceptors());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    Log(LogLevel::kError, "listen_failed", {{"address", config.listen}});
    return 1;
  }
  // Health answers for "" (the server) and for the service by name; the
  // health listener first, so that it is up once the main one says SERVING.
  constexpr char kServiceName[] = "fusiond.v1.FusionCompiler";
  std::unique_ptr<grpc::Server> health_server;
  if (!config.auth.health_listen.empty()) {
    health_server = StartHealthServer(config.auth.health_listen);
    if (!health_server) {
      Log(LogLevel::kError, "listen_failed", {{"address", config.auth.health_listen}});
      return 1;
    }
    health_server->GetHealthCheckService()->SetServingStatus(kServiceName, true);
  }
  server->GetHealthCheckService()->SetServingStatus(kServiceName, true);
  server->GetHealthCheckService()->SetServingStatus(true);
  KernelCacheStats stats = (*cache)->Stats();
  Log(LogLevel::kInfo, "serving",
      {{"listen", config.listen},
       {"port", port},
       {"metrics", config.metrics},
       {"cache_dir", (*cache)->options().dir},
       {"cache_entries", stats.entries},
       {"cache_bytes", stats.bytes},
       {"cache_max_bytes", config.cache_max_bytes},
       {"compile_threads", compiler_options.compile_threads},
       {"shared_tier", config.redis.empty() ? "none" : config.redis},
       {"tls", !config.auth.tls_cert.empty()},
       {"client_certificates", !config.auth.tls_client_ca.empty()},
       {"tokens", security->authorizer->token_count()},
       {"nvrtc", NvrtcVersionString()},
       {"codegen", CodegenVersionString()},
       {"version", kFusiondVersion}});
  // systemd (Type=notify): ready now; nothing is sent outside systemd.
  if (absl::Status st = SdNotify("READY=1"); !st.ok()) {
    Log(LogLevel::kWarning, "sd_notify_failed", {{"error", st.ToString()}});
  }

  Evictor evictor(cache->get(), std::chrono::seconds(config.evict_interval_s));
  int signal_number = WaitForShutdownSignal();
  Log(LogLevel::kInfo, "shutting_down", {{"signal", signal_number}});
  (void)SdNotify("STOPPING=1");
  // Drain: health says NOT_SERVING and new work gets UNAVAILABLE; calls in
  // flight get the grace, then their compiles are stopped (workers killed)
  // and the server closes at once, whatever idle clients stay connected.
  server->GetHealthCheckService()->SetServingStatus(false);
  if (health_server) health_server->GetHealthCheckService()->SetServingStatus(false);
  service.StartDraining();
  auto grace_end = std::chrono::steady_clock::now() + std::chrono::seconds(config.shutdown_grace_s);
  while (service.active_calls() > 0 && std::chrono::steady_clock::now() < grace_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Log(LogLevel::kInfo, "drained", {{"calls_cancelled", service.active_calls()}});
  compiler->Stop();  // running compiles end now (UNAVAILABLE), queued ones are skipped
  auto stop_end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (service.active_calls() > 0 && std::chrono::steady_clock::now() < stop_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Nothing of ours is left in flight: close now (a deadline would be waited
  // out in full while any client holds a connection, idle or not).
  server->Shutdown(std::chrono::system_clock::now());
  if (health_server) health_server->Shutdown(std::chrono::system_clock::now());
  evictor.Stop();
  // Order matters: no more scrapes (they read the compiler), then drain the
  // compiler (its callbacks record metrics), then the metrics, the cache.
  // The exposer's web server takes ~2 s to stop: its collectables go now (no
  // scrape reads the compiler after this line) and it stops on its own
  // thread, which the process' exit does not wait for.
  if (exposer) {
    for (const auto& c : metrics->collectables()) exposer->RemoveCollectable(c);
    std::thread([e = std::move(exposer)]() mutable { e.reset(); }).detach();
  }
  compiler.reset();
  metrics.reset();
  cache->reset();
  Log(LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace
}  // namespace fusiond

int main(int argc, char** argv) {
  // A compile worker (cache/compile_worker.h), started by the daemon itself.
  if (argc == 2 && std::string(argv[1]) == "--compile-worker") return fusiond::RunCompileWorker(0);
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("fusiond %s (%s, NVRTC %s)\n", fusiond::kFusiondVersion,
                fusiond::CodegenVersionString().c_str(), fusiond::NvrtcVersionString().c_str());
    return 0;
  }
  if (!fusiond::InstallShutdownHandlers()) {
    std::perror("fusiond: cannot install signal handlers");
    return 1;
  }
  absl::StatusOr<fusiond::ServerConfig> config = fusiond::ParseServerFlags(argc, argv);
  if (!config.ok()) {
    if (absl::IsNotFound(config.status())) {
      std::fputs(fusiond::ServerUsage().c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "fusiond: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  return fusiond::Run(*config);
}
