// The process's own figures for Prometheus (process_* metrics, the names
// other client libraries use): prometheus-cpp has no process collector, so
// they are read from /proc at scrape time.
#ifndef FUSIOND_SERVER_PROCESS_METRICS_H_
#define FUSIOND_SERVER_PROCESS_METRICS_H_

#include <string>

#include "absl/status/statusor.h"

namespace fusiond {

struct ProcessStats {
  double cpu_seconds = 0;         // user + system CPU time
  double start_time_seconds = 0;  // since the Unix epoch
  double resident_bytes = 0;      // RSS
  double virtual_bytes = 0;       // address space
  double open_fds = 0;            // entries of /proc/self/fd
  double max_fds = 0;             // RLIMIT_NOFILE's soft limit
  double threads = 0;
};

// This process's figures. Unavailable when /proc cannot be read.
absl::StatusOr<ProcessStats> ReadProcessStats();

// Parses the text of /proc/<pid>/stat (whose second field, the command in
// parentheses, may hold spaces and parentheses) with the machine's boot
// time (`btime` of /proc/stat), clock ticks per second and page size.
// InvalidArgument naming the field when the text does not parse.
absl::StatusOr<ProcessStats> ParseProcStat(const std::string& stat, double boot_time_seconds,
                                           double ticks_per_second, double page_bytes);

}  // namespace fusiond

#endif  // FUSIOND_SERVER_PROCESS_METRICS_H_
