#include "server/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fusiond {
namespace {

absl::StatusOr<std::string> ReadFile(const char* path) {
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `btime` of /proc/stat: the boot time, seconds since the epoch.
absl::StatusOr<double> BootTime() {
  absl::StatusOr<std::string> stat = ReadFile("/proc/stat");
  if (!stat.ok()) return stat.status();
  for (absl::string_view line : absl::StrSplit(*stat, '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      double t;
      if (absl::SimpleAtod(line, &t)) return t;
    }
  }
  return absl::UnavailableError("/proc/stat has no btime line");
}

}  // namespace

absl::StatusOr<ProcessStats> ParseProcStat(const std::string& stat, double boot_time_seconds,
                                           double ticks_per_second, double page_bytes) {
  // Fields after the command: state is field 3 (1-based), so field n is
  // rest[n - 3].
  size_t close = stat.rfind(')');
  if (close == std::string::npos) {
    return absl::InvalidArgumentError("/proc/self/stat: no ')' after the command");
  }
  std::vector<absl::string_view> rest =
      absl::StrSplit(absl::string_view(stat).substr(close + 1), ' ', absl::SkipEmpty());
  auto field = [&](int n, double* out) -> absl::Status {
    if (n - 3 >= static_cast<int>(rest.size()) ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(rest[n - 3]), out)) {
      return absl::InvalidArgumentError(
          absl::StrCat("/proc/self/stat: field ", n, " is missing or not a number"));
    }
    return absl::OkStatus();
  };
  double utime, stime, threads, start_ticks, vsize, rss_pages;
  for (auto [n, out] : {std::pair{14, &utime},
                        {15, &stime},
                        {20, &threads},
                        {22, &start_ticks},
                        {23, &vsize},
                        {24, &rss_pages}}) {
    if (absl::Status st = field(n, out); !st.ok()) return st;
  }
  ProcessStats s;
  s.cpu_seconds = (utime + stime) / ticks_per_second;
  s.threads = threads;
  s.start_time_seconds = boot_time_seconds + start_ticks / ticks_per_second;
  s.virtual_bytes = vsize;
  s.resident_bytes = rss_pages * page_bytes;
  return s;
}

absl::StatusOr<ProcessStats> ReadProcessStats() {
  absl::StatusOr<std::string> stat = ReadFile("/proc/self/stat");
  if (!stat.ok()) return stat.status();
  absl::StatusOr<double> boot = BootTime();
  if (!boot.ok()) return boot.status();
  absl::StatusOr<ProcessStats> s = ParseProcStat(
      *stat, *boot, static_cast<double>(sysconf(_SC_CLK_TCK)), static_cast<double>(getpagesize()));
  if (!s.ok()) return s.status();
  std::error_code ec;
  double fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++fds;
  }
  s->open_fds = fds;
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    s->max_fds = limit.rlim_cur == RLIM_INFINITY ? 0 : static_cast<double>(limit.rlim_cur);
  }
  return s;
}

}  // namespace fusiond
