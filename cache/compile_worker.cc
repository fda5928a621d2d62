#include "cache/compile_worker.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/cache_key.h"
#include "cache/result_proto.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/ir/ir_proto.h"

extern char** environ;

namespace fusiond {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kMaxFrameBytes = uint32_t{1} << 30;

double MicrosSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// Varints, length-prefixed strings and doubles; the frame bodies.
class Writer {
 public:
  void U64(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s.data(), s.size());
  }
  void F64(double d) {
    char b[8];
    memcpy(b, &d, 8);
    out_.append(b, 8);
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U64(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) return false;
      uint8_t b = static_cast<uint8_t>(in_[0]);
      in_.remove_prefix(1);
      *v |= uint64_t{b & 0x7Fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool I64(int64_t* v) {
    uint64_t u;
    if (!U64(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool Int(int* v) {
    int64_t i;
    if (!I64(&i)) return false;
    *v = static_cast<int>(i);
    return true;
  }
  bool Str(std::string* s) {
    uint64_t n;
    if (!U64(&n) || n > in_.size()) return false;
    s->assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool F64(double* d) {
    if (in_.size() < 8) return false;
    memcpy(d, in_.data(), 8);
    in_.remove_prefix(8);
    return true;
  }

 private:
  std::string_view in_;
};

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool WriteFrame(int fd, char type, const std::string& body) {
  uint32_t len = static_cast<uint32_t>(body.size() + 1);
  char head[5];
  for (int i = 0; i < 4; ++i) head[i] = static_cast<char>((len >> (8 * i)) & 0xFF);
  head[4] = type;
  return WriteAll(fd, head, 5) && WriteAll(fd, body.data(), body.size());
}

bool ReadFrame(int fd, char* type, std::string* body) {
  unsigned char head[4];
  if (!ReadAll(fd, reinterpret_cast<char*>(head), 4)) return false;
  uint32_t len = head[0] | (head[1] << 8) | (head[2] << 16) | (uint32_t{head[3]} << 24);
  if (len == 0 || len > kMaxFrameBytes) return false;
  if (!ReadAll(fd, type, 1)) return false;
  body->resize(len - 1);
  return len == 1 || ReadAll(fd, body->data(), len - 1);
}

std::string EncodeJob(const WorkerJob& job) {
  Writer w;
  w.U64(static_cast<uint64_t>(job.kind));
  w.Str(job.graph.SerializeAsString());
  w.U64(job.input_shapes.size());
  for (const auto& shape : job.input_shapes) {
    w.U64(shape.size());
    for (int64_t s : shape) w.I64(s);
  }
  w.Str(job.options.arch);
  w.U64(job.options.allow_precision_increase);
  w.U64(job.options.general_kernels);
  w.I64(job.limits.max_rank);
  w.I64(job.limits.max_elements);
  w.I64(job.limits.max_nodes);
  const CompileLimits& l = job.options.limits;
  for (int v :
       {l.max_nodes, l.max_depth, l.max_kernel_ops, l.max_partition_nodes, l.max_kernel_params}) {
    w.I64(v);
  }
  return std::move(w.out());
}

bool DecodeJob(std::string_view body, WorkerJob* job) {
  Reader r(body);
  uint64_t kind, n, flag1, flag2;
  std::string graph;
  if (!r.U64(&kind) || !r.Str(&graph) || !job->graph.ParseFromString(graph) || !r.U64(&n)) {
    return false;
  }
  job->kind = static_cast<WorkerJobKind>(kind);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t rank;
    if (!r.U64(&rank) || rank > body.size()) return false;
    std::vector<int64_t> shape(rank);
    for (int64_t& s : shape) {
      if (!r.I64(&s)) return false;
    }
    job->input_shapes.push_back(std::move(shape));
  }
  int64_t max_rank, max_elements, max_nodes;
  if (!r.Str(&job->options.arch) || !r.U64(&flag1) || !r.U64(&flag2) || !r.I64(&max_rank) ||
      !r.I64(&max_elements) || !r.I64(&max_nodes)) {
    return false;
  }
  job->options.allow_precision_increase = flag1 != 0;
  job->options.general_kernels = flag2 != 0;
  job->limits.max_rank = static_cast<int>(max_rank);
  job->limits.max_elements = max_elements;
  job->limits.max_nodes = static_cast<int>(max_nodes);
  CompileLimits& l = job->options.limits;
  return r.Int(&l.max_nodes) && r.Int(&l.max_depth) && r.Int(&l.max_kernel_ops) &&
         r.Int(&l.max_partition_nodes) && r.Int(&l.max_kernel_params);
}

std::string EncodeResult(const absl::StatusOr<WorkerResult>& r) {
  Writer w;
  w.U64(static_cast<uint64_t>(r.status().code()));
  w.Str(std::string(r.status().message()));
  if (!r.ok()) return std::move(w.out());
  w.Str(r->cache_key);
  w.Str(r->compiled.SerializeAsString());
  w.U64(r->stage_micros.size());
  for (const auto& [stage, us] : r->stage_micros) {
    w.Str(stage);
    w.F64(us);
  }
  w.U64(static_cast<uint64_t>(r->nvrtc_reuses));
  return std::move(w.out());
}

absl::StatusOr<WorkerResult> DecodeResult(std::string_view body) {
  Reader r(body);
  uint64_t code, n, reuses;
  std::string message, compiled;
  auto bad = [] { return absl::InternalError("compile worker sent a malformed result"); };
  if (!r.U64(&code) || !r.Str(&message)) return bad();
  if (code != 0) return absl::Status(static_cast<absl::StatusCode>(code), message);
  WorkerResult out;
  if (!r.Str(&out.cache_key) || !r.Str(&compiled) || !out.compiled.ParseFromString(compiled) ||
      !r.U64(&n)) {
    return bad();
  }
  for (uint64_t i = 0; i < n; ++i) {
    std::string stage;
    double us;
    if (!r.Str(&stage) || !r.F64(&us)) return bad();
    out.stage_micros[stage] = us;
  }
  if (!r.U64(&reuses)) return bad();
  out.nvrtc_reuses = static_cast<int>(reuses);
  return out;
}

std::string EncodeOutput(const std::optional<NvrtcOutput>& o) {
  Writer w;
  w.U64(o.has_value());
  if (!o) return std::move(w.out());
  w.Str(o->binary);
  w.U64(o->is_ptx);
  w.Str(o->arch);
  w.U64(o->options.size());
  for (const std::string& s : o->options) w.Str(s);
  w.Str(o->log);
  w.I64(o->registers);
  w.I64(o->spill_bytes);
  w.I64(o->static_smem_bytes);
  return std::move(w.out());
}

std::optional<NvrtcOutput> DecodeOutput(std::string_view body) {
  Reader r(body);
  uint64_t found, is_ptx, n;
  if (!r.U64(&found) || !found) return std::nullopt;
  NvrtcOutput o;
  if (!r.Str(&o.binary) || !r.U64(&is_ptx) || !r.Str(&o.arch) || !r.U64(&n) || n > body.size()) {
    return std::nullopt;
  }
  o.is_ptx = is_ptx != 0;
  o.options.resize(n);
  for (std::string& s : o.options) {
    if (!r.Str(&s)) return std::nullopt;
  }
  if (!r.Str(&o.log) || !r.Int(&o.registers) || !r.Int(&o.spill_bytes) ||
      !r.Int(&o.static_smem_bytes)) {
    return std::nullopt;
  }
  return o;
}

// The worker's side of its socket, one exchange at a time: a job's kernel
// threads ask at once, and interleaved frames put the parent out of step.
class ParentLink {
 public:
  explicit ParentLink(int fd) : fd_(fd) {}
  std::string Ask(char type, const std::string& body, char answer_type) {
    std::lock_guard<std::mutex> lock(mu_);
    char type_in;
    std::string answer;
    if (!WriteFrame(fd_, type, body) || !ReadFrame(fd_, &type_in, &answer) ||
        type_in != answer_type) {
      _exit(3);  // the parent is gone or out of step: nothing left to serve
    }
    return answer;
  }

 private:
  int fd_;
  std::mutex mu_;
};

// The worker's NvrtcOutputStore: asks the parent, which reads its records.
class ParentStore : public NvrtcOutputStore {
 public:
  explicit ParentStore(ParentLink* link) : link_(link) {}
  std::optional<NvrtcOutput> Find(const std::string& source, const std::string& kernel_name,
                                  const NvrtcOptions& options) override {
    Writer w;
    w.Str(source);
    w.Str(kernel_name);
    w.Str(options.arch);
    w.U64(options.extra.size());
    for (const std::string& e : options.extra) w.Str(e);
    return DecodeOutput(link_->Ask('F', w.out(), 'A'));
  }

 private:
  ParentLink* link_;
};

std::string SignalName(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? absl::StrCat("SIG", name) : absl::StrCat("signal ", sig);
}

// Jobs run on a thread with a large stack: deep graphs recurse in places.
constexpr size_t kJobStackBytes = size_t{256} << 20;

struct JobCall {
  const WorkerJob* job;
  NvrtcOutputCache* cache;
  const KeyGate* gate;
  absl::StatusOr<WorkerResult> result = absl::InternalError("job did not run");
};

void* RunJobThread(void* arg) {
  auto* call = static_cast<JobCall*>(arg);
  call->result = RunWorkerJob(*call->job, call->cache, *call->gate);
  return nullptr;
}

}  // namespace

absl::StatusOr<WorkerResult> RunWorkerJob(const WorkerJob& job, NvrtcOutputCache* nvrtc_cache,
                                          const KeyGate& gate) {
  WorkerResult out;
  Clock::time_point t = Clock::now();
  absl::StatusOr<Graph> graph = FromProto(job.graph, job.limits);
  out.stage_micros["parse"] = MicrosSince(t);
  if (!graph.ok()) return graph.status();
  CompileOptions options = job.options;
  if (options.arch.empty()) options.arch = "sm_90";
  options.dump_pass.clear();
  options.generate_code = false;  // the front half first: it gives the key
  options.nvrtc_cache = nvrtc_cache;
  t = Clock::now();
  absl::StatusOr<CompileResult> result = CompileFusion(*graph, job.input_shapes, options);
  if (!result.ok()) return result.status();
  options.generate_code = true;  // the key is the full compile's
  out.cache_key = MakeCacheKey(*result, options).Encode();
  const bool stop = job.kind == WorkerJobKind::kKey ||
                    (job.kind == WorkerJobKind::kKeyThenCompile && gate && !gate(out.cache_key));
  if (stop) {
    out.stage_micros["key"] = MicrosSince(t);
    return out;
  }
  if (absl::Status s = GenerateKernels(options, &*result); !s.ok()) return s;
  for (const auto& [stage, us] : result->stage_micros) out.stage_micros[stage] += us;
  for (const SegmentResult& s : result->segments) {
    if (s.kernel && s.kernel->nvrtc_reused) ++out.nvrtc_reuses;
  }
  out.compiled = CompiledFusionFromResult(*result);
  return out;
}

int RunCompileWorker(int fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;
  signal(SIGTERM, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  (void)WarmUpNvrtc("sm_90");  // before the first job, not during it
  ParentLink link(fd);
  ParentStore store(&link);
  NvrtcOutputCache cache(uint64_t{64} << 20, &store);
  const KeyGate gate = [&link](const std::string& key) { return link.Ask('K', key, 'G') == "1"; };
  for (;;) {
    char type;
    std::string body;
    if (!ReadFrame(fd, &type, &body)) return 0;  // the parent closed: done
    WorkerJob job;
    if (type != 'J' || !DecodeJob(body, &job)) return 2;
    JobCall call{&job, &cache, &gate};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kJobStackBytes);
    pthread_t thread;
    if (pthread_create(&thread, &attr, RunJobThread, &call) != 0) {
      RunJobThread(&call);
    } else {
      pthread_join(thread, nullptr);
    }
    pthread_attr_destroy(&attr);
    if (!WriteFrame(fd, 'R', EncodeResult(call.result))) return 0;
  }
}

CompileWorkerPool::CompileWorkerPool(CompileWorkerPoolOptions options, NvrtcOutputStore* store)
    : options_(std::move(options)), store_(store) {
  for (int i = 0; i < options_.prestart; ++i) {
    absl::StatusOr<Worker> w = Spawn();
    if (!w.ok()) break;  // Run() tries again and reports the error
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(*w);
  }
}

CompileWorkerPool::~CompileWorkerPool() {
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  for (Worker& w : idle_) Kill(&w);
  idle_.clear();
}

absl::StatusOr<CompileWorkerPool::Worker> CompileWorkerPool::Spawn() {
  if (options_.argv.empty()) return absl::InternalError("no compile worker command");
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::UnavailableError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 0);  // dup2 clears CLOEXEC
  std::vector<char*> argv;
  for (const std::string& a : options_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (options_.timeout_s > 0) {
    // A worker stalled mid-frame must not hold the parent's read past the limit.
    struct timeval tv = {static_cast<time_t>(std::ceil(options_.timeout_s)), 0};
    (void)setsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  if (rc != 0) {
    close(fds[0]);
    return absl::UnavailableError(
        absl::StrCat("cannot start compile worker ", options_.argv[0], ": ", strerror(rc)));
  }
  ++started_;
  return Worker{pid, fds[0]};
}

void CompileWorkerPool::Kill(Worker* w) {
  if (w->pid > 0) {
    kill(w->pid, SIGKILL);
    while (waitpid(w->pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (w->fd >= 0) close(w->fd);
  w->pid = -1;
  w->fd = -1;
}

absl::StatusOr<WorkerResult> CompileWorkerPool::Run(const WorkerJob& job,
                                                    const std::function<bool()>& wanted,
                                                    const KeyGate& gate) {
  const std::string frame = EncodeJob(job);
  for (int attempt = 0;; ++attempt) {
    Worker w;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return absl::UnavailableError("fusiond is shutting down");
      if (!idle_.empty()) {
        w = idle_.back();
        idle_.pop_back();
      }
    }
    if (w.pid < 0) {
      absl::StatusOr<Worker> spawned = Spawn();
      if (!spawned.ok()) return spawned.status();
      w = *spawned;
    }
    // An idle worker may have died since its last job: one retry.
    bool sent = WriteFrame(w.fd, 'J', frame);
    absl::StatusOr<WorkerResult> result =
        sent ? Await(&w, wanted, gate) : absl::InternalError("compile worker gone");
    bool keep = sent && w.pid > 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (keep && !stopping_) {
        idle_.push_back(w);
        w = Worker{};
      }
    }
    Kill(&w);  // a dead or unwanted worker (no-op when kept)
    if (!sent && attempt == 0) continue;
    return result;
  }
}

absl::StatusOr<WorkerResult> CompileWorkerPool::Await(Worker* w,
                                                      const std::function<bool()>& wanted,
                                                      const KeyGate& gate) {
  Clock::time_point start = Clock::now();
  for (;;) {
    struct pollfd p = {w->fd, POLLIN, 0};
    int ready = poll(&p, 1, 20);
    if (ready < 0 && errno != EINTR) return absl::InternalError("poll on a compile worker failed");
    if (ready > 0) {
      char type;
      std::string body;
      if (!ReadFrame(w->fd, &type, &body)) {
        // EOF: the worker died. Its exit status says how.
        int status = 0;
        pid_t pid = w->pid;
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        close(w->fd);
        w->pid = -1;
        w->fd = -1;
        ++crashed_;
        std::string how = WIFSIGNALED(status) ? SignalName(WTERMSIG(status))
                                              : absl::StrCat("exit status ", WEXITSTATUS(status));
        return absl::InternalError(
            absl::StrCat("the compile worker died (", how,
                         ") compiling this fusion; it was not compiled (the daemon serves on)"));
      }
      if (type == 'F') {
        Reader r(body);
        std::string source, name;
        NvrtcOptions options;
        uint64_t n = 0;
        bool ok = r.Str(&source) && r.Str(&name) && r.Str(&options.arch) && r.U64(&n);
        for (uint64_t i = 0; ok && i < n; ++i) {
          std::string e;
          ok = r.Str(&e);
          options.extra.push_back(std::move(e));
        }
        std::optional<NvrtcOutput> found;
        if (ok && store_ != nullptr) found = store_->Find(source, name, options);
        if (!WriteFrame(w->fd, 'A', EncodeOutput(found))) continue;  // EOF next round
        continue;
      }
      if (type == 'K') {
        const Clock::time_point asked = Clock::now();
        const bool go = !gate || gate(body);
        start += Clock::now() - asked;                 // a lease wait is not the compile's time
        (void)WriteFrame(w->fd, 'G', go ? "1" : "0");  // on failure: EOF next round
        continue;
      }
      if (type != 'R') {
        Kill(w);
        return absl::InternalError("compile worker sent an unknown frame");
      }
      ++jobs_;
      return DecodeResult(body);
    }
    bool stopping;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping = stopping_;
    }
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (stopping) {
      Kill(w);
      return absl::UnavailableError("fusiond is shutting down; the compile was stopped");
    }
    if (options_.timeout_s > 0 && elapsed > options_.timeout_s) {
      Kill(w);
      ++timeouts_;
      return absl::ResourceExhaustedError(absl::StrCat(
          "the compile took longer than the limit of ", options_.timeout_s,
          " s (--compile-timeout-s) and was stopped; split the fusion or raise the limit"));
    }
    if (wanted && !wanted()) {
      Kill(w);
      ++cancelled_;
      return absl::CancelledError("every caller left; the compile was stopped");
    }
  }
}

void CompileWorkerPool::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  // Running jobs notice within one poll interval and kill their workers.
}

CompileWorkerPoolStats CompileWorkerPool::Stats() const {
  CompileWorkerPoolStats s;
  s.started = started_;
  s.crashed = crashed_;
  s.timeouts = timeouts_;
  s.cancelled = cancelled_;
  s.jobs = jobs_;
  return s;
}

}  // namespace fusiond
