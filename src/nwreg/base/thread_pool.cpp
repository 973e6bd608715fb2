#include "nwreg/base/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

#include "nwreg/base/signals.h"

namespace nwreg {
namespace {

// The CPU quota of this process's cgroup and its ancestors, in CPUs (0 = none found).
double cgroup_quota() {
  std::ifstream self("/proc/self/cgroup");
  double best = 0;
  auto take = [&best](double quota, double period) {
    if (quota > 0 && period > 0 && (best == 0 || quota / period < best)) best = quota / period;
  };
  for (std::string line; std::getline(self, line);) {
    // v2: "0::/path"; v1: "N:cpu,cpuacct:/path".
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    const bool v2 = controllers.empty();
    if (!v2 && ("," + controllers + ",").find(",cpu,") == std::string::npos) continue;
    const std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/" + controllers;
    for (;;) {  // the cgroup and each ancestor: the tightest quota holds
      if (v2) {
        std::ifstream f(root + path + "/cpu.max");
        std::string quota;
        double period = 0;
        if (f >> quota >> period && quota != "max") take(std::atof(quota.c_str()), period);
      } else {
        std::ifstream q(root + path + "/cpu.cfs_quota_us"), p(root + path + "/cpu.cfs_period_us");
        double quota = 0, period = 0;
        if (q >> quota && p >> period) take(quota, period);
      }
      if (path.empty() || path == "/") break;
      const auto slash = path.rfind('/');
      path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
  }
  return best;
}

// Under an address-space limit (ulimit -v), the most threads whose stacks take at most a
// quarter of it: the rest is for the data (0 = no limit).
unsigned address_space_cap() {
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return 0;
  std::size_t stack = 8u << 20;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) == 0) {
    pthread_attr_getstacksize(&attr, &stack);
    pthread_attr_destroy(&attr);
  }
  return static_cast<unsigned>(std::max<rlim_t>(1, as.rlim_cur / 4 / std::max<std::size_t>(stack, 1)));
}

}  // namespace

unsigned available_cpus() {
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) cpus = static_cast<unsigned>(CPU_COUNT(&set));
  const double quota = cgroup_quota();
  if (quota > 0) cpus = std::min(cpus, static_cast<unsigned>(std::max(1.0, std::ceil(quota))));
  return cpus;
}

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = available_cpus();
  const unsigned asked = threads, cap = address_space_cap();
  if (cap && threads > cap) {
    shortfall_ = "started " + std::to_string(cap) + " of " + std::to_string(asked) +
                 " threads (their stacks would take over a quarter of the address-space limit)";
    threads = cap;
  }
  // The workers start with SIGINT, SIGTERM and the like blocked (a thread inherits its maker's
  // mask), so those reach only the threads the program made itself; a fault's signals are not
  // blocked, and a profiler's SIGPROF still samples every thread.
  // A program that blocks them around a step that must not be cut (a file made and not yet
  // noted for removal) then holds them off: were a worker free to take one, its handler would
  // run in the middle of that step.
  const SignalsBlocked quiet{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
  for (unsigned i = 1; i < threads; ++i) {
    try {
      workers_.emplace_back([this] { work(); });
    } catch (const std::exception& e) {  // std::system_error (EAGAIN), std::bad_alloc
      const auto* sys = dynamic_cast<const std::system_error*>(&e);
      shortfall_ = "started " + std::to_string(i) + " of " + std::to_string(asked) + " threads (" +
                   (sys ? sys->code().message() : std::string("out of memory")) + ")";
      break;
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    std::size_t begin;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ >= count_ || error_) return;
      begin = next_;
      next_ = std::min(count_, next_ + grain_);
    }
    try {
      (*fn_)(begin, std::min(count_, begin + grain_));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::work() {
  std::size_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++busy_;
    }
    run_chunks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
    }
    done_.notify_all();
  }
}

void ThreadPool::parallel_for(std::size_t count, std::size_t grain,
                              const std::function<void(std::size_t, std::size_t)>& fn) {
  if (count == 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    count_ = count;
    grain_ = std::max<std::size_t>(1, grain);
    next_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_chunks();
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return busy_ == 0 && (next_ >= count_ || error_); });
    fn_ = nullptr;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

void parallel_for(ThreadPool* pool, std::size_t count, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& fn) {
  if (pool && pool->size() > 1 && count > grain) {
    pool->parallel_for(count, grain, fn);
  } else if (count > 0) {
    fn(0, count);
  }
}

}  // namespace nwreg
