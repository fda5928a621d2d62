// service_bench: measures, in one run on this machine,
//   - cache-hit Compile latency (p50, p99) of a real fusiond,
//   - the p50 of a bare gRPC call (Echo, in a child process like fusiond)
//     whose request and reply have the same sizes as Compile's,
//   - cache-hit throughput with 2 client threads (and the echo's, for scale).
// Prints a table and writes bench/results/service-<date>.json. Not a test.
//
//   service_bench [--server HOST:PORT] [--fusion FILE] [--calls N] [--seconds S]
//                 [--results-dir DIR]
// Without --server it starts fusiond (the one built beside it) on a free
// loopback port with a temporary cache directory.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "client/cpp/fusion_client.h"
#include "compiler/frontend/frontend.h"
#include "echo.grpc.pb.h"
#include "google/protobuf/arena.h"
#include "grpcpp/grpcpp.h"
#include "tests/util/child_process.h"
#include "tests/util/free_port.h"

namespace fusiond {
namespace {

using Clock = std::chrono::steady_clock;

// The bare baseline: a reply of the requested size, nothing else.
class EchoService final : public fusiond::bench::Echo::CallbackService {
  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* context,
                                 const fusiond::bench::EchoRequest* request,
                                 fusiond::bench::EchoReply* reply) override {
    reply->mutable_payload()->assign(request->reply_bytes(), 'x');
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

int RunEchoServer(const std::string& address) {
  EchoService service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  if (!server) return 1;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  int sig = 0;
  sigwait(&signals, &sig);
  server->Shutdown();
  return 0;
}

std::shared_ptr<grpc::Channel> Channel(const std::string& target, int id) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt("fusiond.bench.channel", id);  // distinct channels, distinct connections
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

bool WaitReady(const std::shared_ptr<grpc::Channel>& channel) {
  return channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(20));
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

struct Options {
  std::string server;
  std::string fusion = std::string(FUSIOND_CORPUS_DIR) + "/rmsnorm_bwd_thunder.py";
  int calls = 5000;
  double seconds = 3;
  std::string results_dir = FUSIOND_RESULTS_DIR;
};

// One timed call of `fn` per iteration; returns microseconds per call.
template <typename Fn>
std::vector<double> TimeCalls(int n, Fn fn) {
  std::vector<double> us;
  us.reserve(n);
  for (int i = 0; i < n; ++i) {
    auto t = Clock::now();
    if (!fn()) return {};
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  return us;
}

// Calls per second of `threads` threads, each with its own channel.
template <typename MakeFn>
double Throughput(int threads, double seconds, MakeFn make) {
  std::atomic<bool> stop{false};
  std::atomic<long> total{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto call = make(t);
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if (!call()) {
          failed = true;
          break;
        }
        ++n;
      }
      total += n;
    });
  }
  auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return failed ? -1 : total / elapsed;
}

int Run(const Options& o) {
  absl::StatusOr<ParsedFusion> parsed = ParseReproFile(o.fusion);
  if (!parsed.ok()) {
    std::fprintf(stderr, "service_bench: %s\n", parsed.status().ToString().c_str());
    return 1;
  }
  fusiond::v1::CompileRequest request =
      MakeCompileRequest(parsed->graph, parsed->input_shapes, CompileOptions());

  std::string cache_dir;
  ChildProcess daemon, echo;
  std::string target = o.server;
  if (target.empty()) {
    cache_dir = std::filesystem::temp_directory_path() /
                absl::StrFormat("service_bench.%d", static_cast<int>(getpid()));
    target = absl::StrFormat("127.0.0.1:%d", FreePort());
    daemon.Start({FUSIOND_BIN, "--listen", target, "--metrics", "", "--cache-dir", cache_dir,
                  "--log-level", "warning"});
  }
  std::string echo_target = absl::StrFormat("127.0.0.1:%d", FreePort());
  char self[4096] = {0};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) echo.Start({self, "--echo-server", echo_target});
  auto cleanup = [&] {
    echo.Stop();
    daemon.Stop();
    if (!cache_dir.empty()) std::filesystem::remove_all(cache_dir);
  };

  auto fusion_channel = Channel(target, 0);
  auto echo_channel = Channel(echo_target, 0);
  if (!WaitReady(fusion_channel) || !WaitReady(echo_channel)) {
    std::fprintf(stderr, "service_bench: fusiond or the echo server did not come up\n");
    cleanup();
    return 1;
  }
  auto stub = fusiond::v1::FusionCompiler::NewStub(fusion_channel);
  auto compile = [&](fusiond::v1::FusionCompiler::Stub* s, fusiond::v1::CompileResponse* r) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
    return s->Compile(&context, request, r).ok();
  };
  fusiond::v1::CompileResponse first;
  auto cold_start = Clock::now();
  if (!compile(stub.get(), &first)) {
    std::fprintf(stderr, "service_bench: the first Compile failed\n");
    cleanup();
    return 1;
  }
  double cold_ms = std::chrono::duration<double, std::milli>(Clock::now() - cold_start).count();
  const size_t request_bytes = request.ByteSizeLong();
  const size_t reply_bytes = first.ByteSizeLong();

  fusiond::bench::EchoRequest echo_request;
  // Same request size: the serialized Compile request as the payload.
  echo_request.set_payload(request.SerializeAsString());
  echo_request.set_reply_bytes(static_cast<int>(reply_bytes));
  auto echo_stub = fusiond::bench::Echo::NewStub(echo_channel);
  auto echo_call = [&](fusiond::bench::Echo::Stub* s) {
    grpc::ClientContext context;  // the same deadline as Compile's
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
    fusiond::bench::EchoReply reply;
    return s->Echo(&context, echo_request, &reply).ok();
  };

  // Warm up both paths, then alternate blocks so drift hits both equally.
  TimeCalls(500, [&] {
    google::protobuf::Arena arena;  // what a latency-minded client does
    auto* r = google::protobuf::Arena::CreateMessage<fusiond::v1::CompileResponse>(&arena);
    return compile(stub.get(), r) && r->cache() == fusiond::v1::HIT;
  });
  TimeCalls(500, [&] { return echo_call(echo_stub.get()); });
  std::vector<double> hit_us, echo_us;
  for (int block = 0; block < 10; ++block) {
    auto h = TimeCalls(o.calls / 10, [&] {
      google::protobuf::Arena arena;
      auto* r = google::protobuf::Arena::CreateMessage<fusiond::v1::CompileResponse>(&arena);
      return compile(stub.get(), r) && r->cache() == fusiond::v1::HIT;
    });
    auto e = TimeCalls(o.calls / 10, [&] { return echo_call(echo_stub.get()); });
    if (h.empty() || e.empty()) {
      std::fprintf(stderr, "service_bench: a call failed (or a Compile was not a hit)\n");
      cleanup();
      return 1;
    }
    hit_us.insert(hit_us.end(), h.begin(), h.end());
    echo_us.insert(echo_us.end(), e.begin(), e.end());
  }
  double hit_rps = Throughput(2, o.seconds, [&](int t) {
    auto s = std::shared_ptr<fusiond::v1::FusionCompiler::Stub>(
        fusiond::v1::FusionCompiler::NewStub(Channel(target, t + 1)));
    return [s, &compile] {
      google::protobuf::Arena arena;
      auto* r = google::protobuf::Arena::CreateMessage<fusiond::v1::CompileResponse>(&arena);
      return compile(s.get(), r) && r->cache() == fusiond::v1::HIT;
    };
  });
  double echo_rps = Throughput(2, o.seconds, [&](int t) {
    auto s = std::shared_ptr<fusiond::bench::Echo::Stub>(
        fusiond::bench::Echo::NewStub(Channel(echo_target, t + 1)));
    return [s, &echo_call] { return echo_call(s.get()); };
  });
  cleanup();

  double hit_p50 = Percentile(hit_us, 0.5), hit_p99 = Percentile(hit_us, 0.99);
  double echo_p50 = Percentile(echo_us, 0.5), echo_p99 = Percentile(echo_us, 0.99);
  double ratio = hit_p50 / echo_p50;
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  std::string date =
      absl::StrFormat("%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);

  std::printf("service_bench  %s  fusion=%s  request=%zu B  reply=%zu B  cold compile=%.1f ms\n",
              date.c_str(), std::filesystem::path(o.fusion).filename().c_str(), request_bytes,
              reply_bytes, cold_ms);
  std::printf("%-34s %10s %10s %12s\n", "measure", "p50 us", "p99 us", "req/s (2 thr)");
  std::printf("%-34s %10.1f %10.1f %12.0f\n", "Compile, cache hit", hit_p50, hit_p99, hit_rps);
  std::printf("%-34s %10.1f %10.1f %12.0f\n", "bare gRPC echo, same sizes", echo_p50, echo_p99,
              echo_rps);
  std::printf("hit p50 / echo p50 = %.2fx (goal <= 1.3x): %s\n", ratio,
              ratio <= 1.3 ? "met" : "NOT met");
  std::printf("hit throughput %.0f req/s (goal >= 5000): %s\n", hit_rps,
              hit_rps >= 5000 ? "met" : "NOT met");

  std::string json = absl::StrFormat(
      "{\n  \"date\": \"%s\",\n  \"fusion\": \"%s\",\n  \"request_bytes\": %d,\n"
      "  \"reply_bytes\": %d,\n  \"cold_compile_ms\": %.2f,\n  \"calls\": %d,\n"
      "  \"hit_p50_us\": %.2f,\n  \"hit_p99_us\": %.2f,\n  \"echo_p50_us\": %.2f,\n"
      "  \"echo_p99_us\": %.2f,\n  \"hit_over_echo_p50\": %.3f,\n"
      "  \"hit_rps_2_threads\": %.0f,\n  \"echo_rps_2_threads\": %.0f,\n"
      "  \"cores\": %d\n}\n",
      date, std::filesystem::path(o.fusion).filename().string(), request_bytes, reply_bytes,
      cold_ms, static_cast<int>(hit_us.size()), hit_p50, hit_p99, echo_p50, echo_p99, ratio,
      hit_rps, echo_rps, static_cast<int>(std::thread::hardware_concurrency()));
  std::string path = o.results_dir + "/service-" + date + ".json";
  std::error_code ec;
  std::filesystem::create_directories(o.results_dir, ec);
  std::ofstream(path) << json;
  std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace
}  // namespace fusiond

int main(int argc, char** argv) {
  fusiond::Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--echo-server") return fusiond::RunEchoServer(next());
    if (a == "--server") {
      o.server = next();
    } else if (a == "--fusion") {
      o.fusion = next();
    } else if (a == "--calls") {
      o.calls = std::max(100, std::atoi(next().c_str()));
    } else if (a == "--seconds") {
      o.seconds = std::atof(next().c_str());
    } else if (a == "--results-dir") {
      o.results_dir = next();
    } else {
      std::fprintf(stderr,
                   "usage: service_bench [--server HOST:PORT] [--fusion FILE] [--calls N] "
                   "[--seconds S] [--results-dir DIR]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  return fusiond::Run(o);
}
