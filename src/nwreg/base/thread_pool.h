#pragma once
/// A small persistent thread pool for data-parallel loops. Work is split into chunks that
/// threads take in any order; callers write each result to its own slot and reduce in a fixed
/// order, so results never depend on the number of threads.

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nwreg {

/// The CPUs this process may use: the cores in its affinity mask, capped by the CPU quota of
/// its cgroup (v2 cpu.max or v1 cfs_quota_us / cfs_period_us, rounded up), at least 1.
unsigned available_cpus();

class ThreadPool {
 public:
  /// `threads` workers in all, the calling thread included; 0 = available_cpus(). Threads that
  /// cannot be created (a pids or memory limit) are done without, and under an address-space
  /// limit (ulimit -v) no more are started than fit their stacks in a quarter of it: the pool
  /// runs on fewer, and shortfall() says so. The workers start with SIGINT, SIGTERM, SIGHUP,
  /// SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM blocked, so those are handled by a thread of the
  /// caller's, which may hold them off.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }
  /// Empty when every thread asked for runs; else one sentence, e.g. "started 40 of 500
  /// threads (Resource temporarily unavailable)".
  const std::string& shortfall() const { return shortfall_; }

  /// Runs fn(begin, end) over [0, count) in chunks of `grain`; returns when all are done.
  /// The first exception thrown by fn is rethrown here.
  void parallel_for(std::size_t count, std::size_t grain,
                    const std::function<void(std::size_t, std::size_t)>& fn);

 private:
  void work();
  void run_chunks();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t, std::size_t)>* fn_ = nullptr;
  std::size_t count_ = 0, grain_ = 1, next_ = 0;
  unsigned busy_ = 0;
  std::size_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::string shortfall_;
};

/// Runs fn over [0, count) on `pool`, or inline when there is none.
void parallel_for(ThreadPool* pool, std::size_t count, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& fn);

}  // namespace nwreg
