// Cold compile time per fusion on this machine, split into our stages
// (parse, verify, passes, segment, schedule, codegen) and NVRTC.
//
//   fusiond_compile_time [--repeat N] [--out FILE.json] [--goal-ms 150]
//                        [--kernel-threads N] FILES...
//
// Every file is compiled in a fresh child process (this binary run with
// --single). The child first pays NVRTC's one-time start-up the way the
// daemon does at start (WarmUpNvrtc: the prelude with a one-line kernel;
// the "start" column), then compiles the fusion once ("cold": nothing
// cached, what a cache miss costs a running daemon), then N more times in
// the same process for the warm median. "fresh" = start + cold, what a
// one-off process pays. End to end = reading and parsing the repro script
// through the last cubin. The goal line (rmsnorm_bwd_manual under --goal-ms,
// cold, end to end) prints PASS/FAIL and the fresh-process figure beside it.
// Exit status 1 when a file fails to compile or the goal fails.
//
// NVRTC's own split (front end / NVVM / ptxas) comes from one more compile
// of each kernel with NVRTC's time trace (--fdevice-time-trace), after the
// warm ones: proportions of a warm compile, not of the cold one (summed, and
// per kernel in the JSON). The 1-minute load average is recorded before the
// first file and after the last: other work on the machine inflates wall time
// (the "cpu" column, this process's CPU time, much less).
//
// Where a CUDA driver is installed, NVRTC 13 keeps NVVM's and ptxas' output
// in the driver's ComputeCache (~/.nv) keyed by the kernel's IR, so every
// compile after the first of the same kernel, in any process, costs little
// more than the front end (H200 host: 18 ms against 258 for
// rmsnorm_bwd_manual). That is not a
// cache miss, so the children run with CUDA_CACHE_DISABLE=1 unless
// --nvrtc-cache (or the variable set already) says otherwise.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/runtime/json.h"
#include "compiler/codegen/compile_segment.h"
#include "compiler/frontend/frontend.h"
#include "compiler/nvrtc/nvrtc_compiler.h"
#include "compiler/pipeline.h"

namespace fusiond {
namespace {

using Clock = std::chrono::steady_clock;

// This process's CPU time (all threads), microseconds: less sensitive than
// wall time to other work sharing the machine's cores.
double CpuMicros() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

double MicrosSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

std::string Stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  size_t dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

std::string MapJson(const std::map<std::string, double>& m) {
  std::string out = "{";
  for (const auto& [k, v] : m) {
    absl::StrAppend(&out, out.size() > 1 ? ", " : "", "\"", k, "\": ", absl::StrFormat("%.1f", v));
  }
  return out + "}";
}

// NVRTC's phases for the kernels of `result`, microseconds summed over
// kernels (and per kernel into `per_kernel`): the top-level events of its
// time trace. Empty without NVRTC or when the trace cannot be read.
std::map<std::string, double> NvrtcSplit(const CompileResult& result, const std::string& arch,
                                         std::vector<std::map<std::string, double>>* per_kernel) {
  static const std::map<std::string, std::string> kPhases = {
      {"CUDA C++ Front-End", "front_end"}, {"LibNVVM", "nvvm"}, {"Total PTXAS Time", "ptxas"}};
  std::map<std::string, double> split;
  char base[] = "/tmp/fusiond_trace_XXXXXX";
  const int fd = mkstemp(base);
  if (fd < 0) return split;
  close(fd);
  for (const SegmentResult& seg : result.segments) {
    if (!seg.kernel.has_value() || seg.kernel->binary.empty()) continue;
    NvrtcOptions options;
    options.arch = arch;
    options.extra = {absl::StrCat("--fdevice-time-trace=", base)};
    // NVRTC writes the trace to <base>.json.
    const std::string trace_path = absl::StrCat(base, ".json");
    if (!CompileWithNvrtc(seg.kernel->cuda_source, seg.kernel->kernel_name, options).ok()) break;
    std::ifstream in(trace_path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(trace_path.c_str());
    absl::StatusOr<runtime::JsonValue> trace = runtime::ParseJson(text.str());
    const runtime::JsonValue* events = trace.ok() ? trace->Find("traceEvents") : nullptr;
    if (events == nullptr || !events->is_array()) break;
    std::map<std::string, double>& kernel = per_kernel->emplace_back();
    for (const runtime::JsonValue& e : events->items()) {
      const runtime::JsonValue* name = e.Find("name");
      const runtime::JsonValue* dur = e.Find("dur");
      if (name == nullptr || dur == nullptr || !name->is_string() || !dur->is_number()) continue;
      auto phase = kPhases.find(name->string_value());
      if (phase == kPhases.end()) continue;
      split[phase->second] += dur->number_value();
      kernel[phase->second] += dur->number_value();
    }
  }
  std::remove(base);
  return split;
}

// Child mode: one JSON object on stdout.
int Single(const std::string& path, int repeat, const std::string& arch, bool general,
           int kernel_threads) {
  CompileOptions options;
  options.arch = arch;
  options.general_kernels = general;
  options.kernel_threads = kernel_threads;
  // NVRTC's one-time start-up (0 in a build without NVRTC).
  absl::StatusOr<double> start = WarmUpNvrtc(arch);
  const double start_us = start.ok() ? *start : 0;
  double cpu0 = CpuMicros();
  Clock::time_point t0 = Clock::now();
  absl::StatusOr<ParsedFusion> parsed = ParseReproFile(path);
  double parse_us = MicrosSince(t0);
  if (!parsed.ok()) {
    std::printf("{\"fusion\": \"%s\", \"error\": \"parse: %s\"}\n", Stem(path).c_str(),
                std::string(parsed.status().message()).c_str());
    return 1;
  }
  Clock::time_point t1 = Clock::now();
  absl::StatusOr<CompileResult> result =
      CompileFusion(parsed->graph, parsed->input_shapes, options);
  double compile_us = MicrosSince(t1);
  double total_us = MicrosSince(t0);
  double cpu_us = CpuMicros() - cpu0;
  if (!result.ok()) {
    std::string msg(result.status().message());
    std::replace(msg.begin(), msg.end(), '"', '\'');
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    std::printf("{\"fusion\": \"%s\", \"error\": \"compile: %s\"}\n", Stem(path).c_str(),
                msg.c_str());
    return 1;
  }
  int kernels = 0;
  bool binaries = true;
  for (const SegmentResult& s : result->segments) {
    if (s.kernel.has_value()) {
      ++kernels;
      binaries = binaries && !s.kernel->binary.empty();
    } else {
      binaries = false;
    }
  }
  std::map<std::string, double> cold = result->stage_micros;
  cold["parse"] = parse_us;
  // Time in CompileFusion outside the named stages (glue, hashing, copies).
  double staged = 0;
  for (const auto& [k, v] : result->stage_micros) staged += v;
  cold["other"] = std::max(0.0, compile_us - staged);
  std::vector<double> warm;
  for (int i = 0; i < repeat; ++i) {
    Clock::time_point w0 = Clock::now();
    absl::StatusOr<ParsedFusion> p = ParseReproFile(path);
    if (!p.ok()) break;
    absl::StatusOr<CompileResult> r = CompileFusion(p->graph, p->input_shapes, options);
    if (!r.ok()) break;
    warm.push_back(MicrosSince(w0));
  }
  std::sort(warm.begin(), warm.end());
  double warm_median = warm.empty() ? -1 : warm[warm.size() / 2];
  std::vector<std::map<std::string, double>> split_per_kernel;
  const std::map<std::string, double> split = NvrtcSplit(*result, arch, &split_per_kernel);
  std::string per_kernel_json = "[";
  for (size_t i = 0; i < split_per_kernel.size(); ++i) {
    absl::StrAppend(&per_kernel_json, i ? ", " : "", MapJson(split_per_kernel[i]));
  }
  per_kernel_json += "]";
  std::printf(
      "{\"fusion\": \"%s\", \"segments\": %zu, \"kernels\": %d, \"binaries\": %s, "
      "\"nvrtc_start_us\": %.1f, \"cold_total_us\": %.1f, \"cold_cpu_us\": %.1f, "
      "\"cold_stage_us\": %s, "
      "\"warm_median_us\": %.1f, \"warm_runs\": %zu, \"nvrtc_split_us\": %s, "
      "\"nvrtc_split_per_kernel_us\": %s}\n",
      Stem(path).c_str(), result->segments.size(), kernels, binaries ? "true" : "false", start_us,
      total_us, cpu_us, MapJson(cold).c_str(), warm_median, warm.size(), MapJson(split).c_str(),
      per_kernel_json.c_str());
  return 0;
}

// Runs `self --single FILE` and returns its last stdout line.
std::string RunChild(const std::string& self, const std::string& path, int repeat,
                     const std::string& arch, bool general, int kernel_threads) {
  std::string cmd = absl::StrCat("'", self, "' --single '", path, "' --repeat ", repeat, " --arch ",
                                 arch, general ? " --general" : "", " --kernel-threads ",
                                 kernel_threads, " 2>/dev/null");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out, line;
  char buf[4096];
  while (std::fgets(buf, sizeof(buf), pipe) != nullptr) {
    line += buf;
    if (!line.empty() && line.back() == '\n') {
      out = line;
      line.clear();
    }
  }
  if (!line.empty()) out = line;
  pclose(pipe);
  return out;
}

double Stage(const runtime::JsonValue& row, const char* key, const char* group = "cold_stage_us") {
  const runtime::JsonValue* stages = row.Find(group);
  const runtime::JsonValue* v = stages ? stages->Find(key) : nullptr;
  return v != nullptr && v->is_number() ? v->number_value() : 0;
}

int Main(int argc, char** argv) {
  int repeat = 5, kernel_threads = 0;
  double goal_ms = 150;
  bool nvrtc_cache = false, general = false;
  std::string out_path, single, arch = "sm_90";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--repeat")
      repeat = std::max(0, std::atoi(next().c_str()));
    else if (a == "--out")
      out_path = next();
    else if (a == "--goal-ms")
      goal_ms = std::atof(next().c_str());
    else if (a == "--single")
      single = next();
    else if (a == "--arch")
      arch = next();
    else if (a == "--nvrtc-cache")
      nvrtc_cache = true;
    else if (a == "--general")
      general = true;
    else if (a == "--kernel-threads")
      kernel_threads = std::max(0, std::atoi(next().c_str()));
    else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: %s [--repeat N] [--out FILE.json] [--goal-ms 150] [--arch sm_90] [--nvrtc-cache] "
          "[--general] [--kernel-threads N] FILES...\n  --nvrtc-cache: leave the driver's "
          "ComputeCache on (NVRTC then reuses NVVM and\n"
          "  ptxas output of kernels it saw before; off by default: CUDA_CACHE_DISABLE=1)\n"
          "  --general: compile kernels for every shape and alignment (fusionc compile "
          "--general)\n"
          "  --kernel-threads N: a split fusion's kernels compiled N at once (0, the default: "
          "one per\n  hardware thread; 1: one after another; CompileOptions::kernel_threads)\n",
          argv[0]);
      return 0;
    } else
      files.push_back(a);
  }
  if (!single.empty()) return Single(single, repeat, arch, general, kernel_threads);
  if (!nvrtc_cache) setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0);  // the children inherit it
  const char* cache_env = getenv("CUDA_CACHE_DISABLE");
  const std::string cache_note =
      absl::StrCat("CUDA_CACHE_DISABLE=", cache_env ? cache_env : "(unset)");
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string self_path = n > 0 ? std::string(self, n) : std::string(argv[0]);
  if (files.empty()) {
    std::fprintf(stderr, "no fusion files given (try tests/corpus/fusions/*.py)\n");
    return 2;
  }
  std::printf("%-24s %4s %9s %8s %8s %8s %8s %8s %9s %9s %9s %10s %8s %10s %9s  %s\n", "fusion",
              "kern", "parse", "verify", "passes", "segment", "schedule", "codegen", "nvrtc",
              "other", "start ms", "cold ms", "cpu ms", "warm ms", "fresh ms", "front/nvvm/ptxas");
  std::string load_start;
  std::ifstream("/proc/loadavg") >> load_start;
  std::vector<std::string> rows;
  bool any_error = false;
  bool goal_seen = false, goal_pass = false;
  double goal_value_ms = -1, goal_fresh_ms = -1, goal_cpu_ms = -1;
  for (const std::string& f : files) {
    std::string line = RunChild(self_path, f, repeat, arch, general, kernel_threads);
    absl::StatusOr<runtime::JsonValue> row = runtime::ParseJson(line);
    if (!row.ok() || !row->is_object()) {
      any_error = true;
      std::printf("%-24s ERROR: child printed no result\n", Stem(f).c_str());
      rows.push_back(absl::StrCat("{\"fusion\": \"", Stem(f), "\", \"error\": \"no result\"}"));
      continue;
    }
    rows.push_back(line.substr(0, line.find_last_not_of("\n") + 1));
    if (const runtime::JsonValue* err = row->Find("error")) {
      any_error = true;
      std::printf("%-24s ERROR: %s\n", Stem(f).c_str(), err->string_value().c_str());
      continue;
    }
    double cold_ms = row->Find("cold_total_us")->number_value() / 1000;
    double start_ms = row->Find("nvrtc_start_us")->number_value() / 1000;
    std::printf(
        "%-24s %4lld %9.2f %8.2f %8.2f %8.2f %8.2f %8.2f %9.2f %9.2f %9.1f %10.1f %8.1f %10.1f "
        "%9.1f  "
        "%5.0f/%4.0f/%4.0f%s\n",
        Stem(f).c_str(), static_cast<long long>(row->Find("kernels")->int_value()),
        Stage(*row, "parse") / 1000, Stage(*row, "verify") / 1000, Stage(*row, "passes") / 1000,
        Stage(*row, "segment") / 1000, Stage(*row, "schedule") / 1000,
        Stage(*row, "codegen") / 1000, Stage(*row, "nvrtc") / 1000, Stage(*row, "other") / 1000,
        start_ms, cold_ms, row->Find("cold_cpu_us")->number_value() / 1000,
        row->Find("warm_median_us")->number_value() / 1000, start_ms + cold_ms,
        Stage(*row, "front_end", "nvrtc_split_us") / 1000,
        Stage(*row, "nvvm", "nvrtc_split_us") / 1000, Stage(*row, "ptxas", "nvrtc_split_us") / 1000,
        row->Find("binaries")->bool_value() ? "" : "  (no binaries: NVRTC missing?)");
    if (Stem(f) == "rmsnorm_bwd_manual") {
      goal_seen = true;
      goal_value_ms = cold_ms;
      goal_fresh_ms = start_ms + cold_ms;
      goal_cpu_ms = row->Find("cold_cpu_us")->number_value() / 1000;
      goal_pass = cold_ms < goal_ms && row->Find("binaries")->bool_value();
    }
  }
  std::string goal_line =
      goal_seen
          ? absl::StrFormat(
                "goal: rmsnorm_bwd_manual cold end to end %.1f ms < %.0f ms: %s "
                "(in a fresh process, with NVRTC's start-up: %.1f ms; the cold compile's "
                "CPU time: %.1f ms)",
                goal_value_ms, goal_ms, goal_pass ? "PASS" : "FAIL", goal_fresh_ms, goal_cpu_ms)
          : "goal: rmsnorm_bwd_manual not among the files";
  std::string loadavg;
  std::ifstream("/proc/loadavg") >> loadavg;
  // What every compile passed (FUSIOND_NVRTC_FAST_COMPILE, which the children
  // inherit, adds to it).
  const std::string flags = absl::StrJoin(NvrtcFlags(), " ");
  std::printf(
      "(ms; stages from CompileResult::stage_micros, parse = ParseReproFile; each file in a "
      "fresh process: start = NVRTC's one-time start-up there (a daemon pays it at start), "
      "cold = the first compile after it, fresh = start + cold; cpu = process CPU time of the "
      "cold compile; front/nvvm/ptxas = NVRTC's phases in one more, traced compile; %s; 1-min load "
      "average %s at the start, %s at the end, on %ld cores; %s kernels; NVRTC flags %s)\n%s\n",
      cache_note.c_str(), load_start.c_str(), loadavg.c_str(), sysconf(_SC_NPROCESSORS_ONLN),
      general ? "general (--general)" : "specialized", flags.c_str(), goal_line.c_str());
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << "{\n \"benchmark\": \"cold compile time per fusion (fresh process each, NVRTC start-up "
           "apart)\",\n"
        << " \"loadavg_1min_at_start\": \"" << load_start << "\",\n"
        << " \"loadavg_1min_at_end\": \"" << loadavg << "\",\n"
        << " \"kernel_threads\": " << kernel_threads << ",\n"
        << " \"nvrtc_cache\": \"" << cache_note << "\",\n"
        << " \"nvrtc_flags\": \"" << flags << "\",\n"
        << " \"cores\": " << sysconf(_SC_NPROCESSORS_ONLN) << ",\n"
        << " \"arch\": \"" << arch << "\",\n \"warm_repeats\": " << repeat << ",\n"
        << " \"kernels\": \"" << (general ? "general" : "specialized") << "\",\n"
        << " \"goal\": {\"fusion\": \"rmsnorm_bwd_manual\", \"limit_ms\": " << goal_ms
        << ", \"cold_ms\": " << goal_value_ms << ", \"fresh_process_ms\": " << goal_fresh_ms
        << ", \"cpu_ms\": " << goal_cpu_ms << ", \"pass\": " << (goal_pass ? "true" : "false")
        << "},\n \"fusions\": [\n  ";
    for (size_t i = 0; i < rows.size(); ++i) out << (i ? ",\n  " : "") << rows[i];
    out << "\n ]\n}\n";
    std::printf("wrote %s\n", out_path.c_str());
  }
  return any_error || (goal_seen && !goal_pass) ? 1 : 0;
}

}  // namespace
}  // namespace fusiond

int main(int argc, char** argv) { return fusiond::Main(argc, argv); }
