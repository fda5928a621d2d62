// A fixed set of compile threads with a bounded queue: TrySubmit refuses
// work when the queue is full, so the daemon answers RESOURCE_EXHAUSTED
// instead of queueing without end.
#ifndef FUSIOND_CACHE_COMPILE_POOL_H_
#define FUSIOND_CACHE_COMPILE_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fusiond {

class CompilePool {
 public:
  // `threads` workers; at most `max_queue` tasks waiting beyond the running.
  CompilePool(int threads, int max_queue);
  // Runs the queued tasks, then joins the workers.
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // False (and `task` dropped) when the queue is full or the pool stopping.
  bool TrySubmit(std::function<void()> task);
  int queue_depth() const;  // tasks waiting
  int running() const;      // tasks running

 private:
  void Work();

  const int max_queue_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  int running_ = 0;                          // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace fusiond

#endif  // FUSIOND_CACHE_COMPILE_POOL_H_
