// CachedCompiler's parked flights: misses whose key another daemon is
// compiling (it holds the key's lease). One thread polls them, so a wait
// holds neither a compile thread nor a compile worker; the pool compiles
// this daemon's other misses meanwhile.
#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cache/cached_compiler.h"

namespace fusiond {

void CachedCompiler::Park(Parked parked) {
  {
    std::lock_guard<std::mutex> lock(park_mu_);
    if (!park_stop_) {
      parked_.push_back(std::move(parked));
      return;
    }
  }
  // The watcher is gone (shutting down): wait here, on this compile thread
  // (Claim no longer parks).
  RunFlight(parked.request_key, parked.request);
}

void CachedCompiler::Resubmit(const Parked& p, std::unique_ptr<CompileLease::Hold> hold) {
  if (stopping_) {
    return DeliverFlight(p.request_key, absl::UnavailableError("fusiond is shutting down"));
  }
  const std::string request_key = p.request_key;
  std::shared_ptr<const FusionRequest> request = p.request;
  // A lease taken over travels with the flight: renewed while a caller waits
  // for a compile thread, released when none does or when the flight ends.
  auto taken = std::make_shared<std::unique_ptr<CompileLease::Hold>>(std::move(hold));
  if (*taken) {
    (*taken)->RenewWhile([this, request_key] { return FlightWanted(request_key); });
  }
  if (!pool_->TrySubmit(
          [this, request_key, request, taken] { RunFlight(request_key, request, taken.get()); })) {
    taken->reset();
    ++rejected_;
    DeliverFlight(request_key, absl::ResourceExhaustedError(absl::StrCat(
                                   "compile queue is full (", options_.max_queue,
                                   " waiting) after another daemon's compile failed; retry")));
  }
}

void CachedCompiler::PollParked(Parked* p, std::vector<Parked>* still) {
  if (stopping_) {
    return DeliverFlight(p->request_key, absl::UnavailableError("fusiond is shutting down"));
  }
  if (!FlightWanted(p->request_key)) {
    return DeliverFlight(p->request_key, absl::CancelledError("every caller left while another "
                                                              "daemon compiled the fusion"));
  }
  std::unique_ptr<CompileLease::Hold> hold = options_.lease->Poll(p->key, p->since);
  if (hold == nullptr) {
    still->push_back(std::move(*p));
    return;
  }
  if (hold->published()) {
    CachedCompileResult r;
    r.cache_key = p->key;
    auto found = TimedLookup(p->key, &r.stage_micros);
    if (found.ok()) {
      r.compiled = *std::move(found);
      return DeliverFlight(p->request_key, std::move(r));  // a miss, compiled elsewhere
    }
    hold.reset();  // published but unreadable here: compile
  }
  Resubmit(*p, std::move(hold));
}

void CachedCompiler::WatchParked() {
  const auto period = std::chrono::milliseconds(std::max(1, options_.lease->poll_ms()));
  std::unique_lock<std::mutex> lock(park_mu_);
  while (!park_stop_) {
    park_cv_.wait_for(lock, period, [this] { return park_stop_; });
    if (park_stop_) break;
    std::vector<Parked> now;
    now.swap(parked_);
    lock.unlock();
    std::vector<Parked> still;
    for (Parked& p : now) PollParked(&p, &still);
    lock.lock();
    for (Parked& p : still) parked_.push_back(std::move(p));
  }
  std::vector<Parked> left;
  left.swap(parked_);
  lock.unlock();
  for (const Parked& p : left) Resubmit(p, nullptr);
}

void CachedCompiler::StopWatcher() {
  {
    std::lock_guard<std::mutex> lock(park_mu_);
    park_stop_ = true;
  }
  park_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace fusiond
