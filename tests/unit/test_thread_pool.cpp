#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nwreg/base/thread_pool.h"

TEST_CASE("available_cpus: within the machine, at least one") {
  const unsigned cpus = nwreg::available_cpus();
  CHECK(cpus >= 1);
  CHECK(cpus <= std::max(1u, std::thread::hardware_concurrency()));
  nwreg::ThreadPool pool;
  CHECK(pool.size() == cpus);
  CHECK(pool.shortfall().empty());
}

TEST_CASE("a pool runs every chunk once, on as many threads as asked") {
  nwreg::ThreadPool pool(3);
  CHECK(pool.size() == 3);
  std::atomic<std::size_t> sum{0};
  pool.parallel_for(1000, 7, [&](std::size_t a, std::size_t z) {
    for (std::size_t i = a; i < z; ++i) sum += i;
  });
  CHECK(sum == 999 * 1000 / 2);
}

TEST_CASE("a pool's workers block SIGINT, SIGTERM and SIGHUP, not a fault's signals or SIGPROF, and the caller's mask is kept") {
  // A signal for the process then reaches the caller's thread, which can hold it off while it
  // makes a temporary file and notes it for removal.
  sigset_t before;
  pthread_sigmask(SIG_BLOCK, nullptr, &before);
  const bool term_before = sigismember(&before, SIGTERM);
  nwreg::ThreadPool pool(4);
  if (!pool.shortfall().empty()) return;  // (a pids limit: fewer workers than the test needs)
  sigset_t after;
  pthread_sigmask(SIG_BLOCK, nullptr, &after);
  CHECK(sigismember(&after, SIGTERM) == term_before);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> workers{0}, blocked{0}, fault_open{0};
  std::atomic<int> waiting{0};
  pool.parallel_for(4, 1, [&](std::size_t, std::size_t) {
    // Hold each chunk until all four run at once, so every worker takes one.
    ++waiting;
    for (int i = 0; i < 20000 && waiting.load() < 4; ++i) std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (std::this_thread::get_id() == caller) return;
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    ++workers;
    if (sigismember(&mask, SIGINT) && sigismember(&mask, SIGTERM) && sigismember(&mask, SIGHUP)) ++blocked;
    if (!sigismember(&mask, SIGSEGV) && !sigismember(&mask, SIGFPE) && !sigismember(&mask, SIGBUS) &&
        !sigismember(&mask, SIGPROF))
      ++fault_open;
  });
  CHECK(workers.load() == 3);
  CHECK(blocked.load() == 3);
  CHECK(fault_open.load() == 3);
}

// The child's exit status when its checks hold: not 0, which a run of the binary that matched
// no case returns too.
[[maybe_unused]] constexpr int pool_limit_passed = 42;

TEST_CASE("a pool under an address-space limit leaves three quarters of it to the data") {
  // RLIMIT_AS is per process, and the sanitizers reserve terabytes of it. The limit is tried in
  // a fresh process, this binary run again for this case alone: a child forked from here would
  // hold what the cases before it reserved (thread stacks, malloc's arenas), over the limit when
  // the whole binary runs.
#if defined(NWREG_ASAN)
  return;
#else
  if (std::getenv("NWREG_POOL_LIMIT_CHILD")) {  // the child, under the limit its parent set
    nwreg::ThreadPool pool(500);
    const bool capped = pool.size() <= 32 &&
                        pool.shortfall().find("of 500 threads (their stacks would take over a quarter of the "
                                              "address-space limit)") != std::string::npos;
    std::vector<char> data(512u << 20, 1);  // and half a GiB still fits
    _exit(capped && data[12345] == 1 ? pool_limit_passed : 1);
  }
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    rlimit as{1ull << 30, 1ull << 30};  // 1 GiB: 8 MiB stacks fit 32 in a quarter
    if (setrlimit(RLIMIT_AS, &as) != 0) _exit(3);
    char* const argv[] = {const_cast<char*>("nwreg_tests"),
                          const_cast<char*>("-tc=a pool under an address-space limit leaves three quarters of it to the data"),
                          nullptr};
    char* const envp[] = {const_cast<char*>("NWREG_POOL_LIMIT_CHILD=1"), nullptr};
    execve("/proc/self/exe", argv, envp);
    _exit(4);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == pool_limit_passed);  // (0: the run matched no case, this one renamed)
#endif
}
