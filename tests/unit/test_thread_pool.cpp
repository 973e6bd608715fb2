#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "nwreg/thread_pool.h"

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
