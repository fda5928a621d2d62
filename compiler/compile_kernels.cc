#include "compiler/compile_kernels.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

#include "absl/status/status.h"

namespace fusiond {

int KernelThreads(int threads, size_t jobs) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(threads, jobs)));
}

std::vector<absl::StatusOr<KernelArtifact>> CompileKernels(const std::vector<KernelJob>& jobs,
                                                           int threads) {
  std::vector<absl::StatusOr<KernelArtifact>> out(
      jobs.size(), absl::CancelledError("not compiled: an earlier kernel of the fusion failed"));
  std::atomic<size_t> next{0};
  std::atomic<size_t> first_failure{jobs.size()};
  // A job after a failed one is skipped (a serial loop never reaches it);
  // every job before the first failure runs, so that failure is found.
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      if (first_failure.load() < i) continue;
      out[i] = CompileSegment(*jobs[i].graph, *jobs[i].params, jobs[i].options);
      if (out[i].ok()) continue;
      size_t f = first_failure.load();
      while (i < f && !first_failure.compare_exchange_weak(f, i)) {
      }
    }
  };
  const int n = KernelThreads(threads, jobs.size());
  std::vector<std::thread> pool;
  pool.reserve(n - 1);
  for (int t = 1; t < n; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running take every job
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

}  // namespace fusiond
