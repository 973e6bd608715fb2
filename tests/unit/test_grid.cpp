#include <doctest/doctest.h>

#include "nwreg/base/errors.h"
#include "nwreg/base/timestamp.h"
#include "nwreg/data/grid.h"

using nwreg::parse_grid;
using nwreg::UsageError;

TEST_CASE("grids are numpy.arange: stop excluded") {
  CHECK(parse_grid("0:5:1") == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(parse_grid("0:1:0.3") == std::vector<double>{0, 0.3, 0.6, 0.9});
  CHECK(parse_grid("1:0:-0.25") == std::vector<double>{1, 0.75, 0.5, 0.25});
  CHECK(parse_grid("-1:1:0.5") == std::vector<double>{-1, -0.5, 0, 0.5});
  CHECK(parse_grid("0:0.5:1") == std::vector<double>{0});
}

TEST_CASE("decimal grids give the double nearest each decimal point") {
  const auto g = parse_grid("0:1:0.1");
  REQUIRE(g.size() == 10);  // 1/0.1 in floating point would risk an 11th point
  CHECK(g[3] == 0.3);       // not 0.30000000000000004
  CHECK(g[7] == 0.7);
  const auto h = parse_grid("0.05:0.35:0.05");
  CHECK(h == std::vector<double>{0.05, 0.1, 0.15, 0.2, 0.25, 0.3});
}

TEST_CASE("exponent notation falls back to start + i*step") {
  const auto g = parse_grid("0:1e-3:1e-4");
  REQUIRE(g.size() == 10);
  CHECK(g[5] == 5 * 1e-4);
}

TEST_CASE("bad grids are usage errors naming `grid`") {
  CHECK_THROWS_WITH_AS(parse_grid("0:1"), "`grid`: expected START:STOP:STEP, got \"0:1\"", UsageError);
  CHECK_THROWS_WITH_AS(parse_grid("0:1:2:3"), "`grid`: expected START:STOP:STEP, got \"0:1:2:3\"", UsageError);
  CHECK_THROWS_WITH_AS(parse_grid("0:1:0"), "STEP must not be 0", UsageError);
  CHECK_THROWS_WITH_AS(parse_grid("1:0:1"), "STEP 1 does not lead from 1 towards 0: no points",
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_grid("0:0:1"), "STEP 1 does not lead from 0 towards 0: no points",
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_grid("a:1:1"), "START: cannot parse \"a\" as a number", UsageError);
  CHECK_THROWS_WITH_AS(parse_grid("0::1"), "STOP: empty field where a number is required", UsageError);
  CHECK_THROWS_WITH_AS(parse_grid("0:nan:1"), "STOP: \"nan\" is not a finite number", UsageError);
  CHECK_THROWS_WITH_AS(parse_grid("0:1e9:1e-3"), "0:1e9:1e-3 has more than 100000000 points",
                       UsageError);
}

TEST_CASE("linspace includes both ends") {
  CHECK(nwreg::linspace(0, 1, 5) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  CHECK(nwreg::linspace(2, 3, 1) == std::vector<double>{2});
  CHECK(nwreg::linspace(0.1, 0.7, 3).back() == 0.7);
}

TEST_CASE("shards split exactly for any K/N below 2^64") {
  const nwreg::Shard last = nwreg::parse_shard("18446744073709551615/18446744073709551615");
  CHECK(last.first(50) == 49);
  CHECK(last.last(50) == 50);
  const nwreg::Shard mid = nwreg::parse_shard("368934881474191033/1152921504606846976");
  CHECK(mid.first(50) == 15);  // floor(50 (K - 1) / N)
  CHECK(mid.last(50) == 16);
  const nwreg::Shard big = nwreg::parse_shard("3/4");
  const std::size_t m = std::size_t{1} << 63;
  CHECK(big.first(m) == m / 2);
  CHECK(big.last(m) == m / 4 * 3);
  std::size_t covered = 0;
  for (std::size_t k = 1; k <= 7; ++k) covered += nwreg::Shard{k, 7}.last(1000) - nwreg::Shard{k, 7}.first(1000);
  CHECK(covered == 1000);
}

TEST_CASE("calendar steps on a date grid: months and years, the day clamped to the month's last") {
  auto dates = [](const std::string& grid) {
    std::vector<std::string> out;
    for (double t : parse_grid(grid)) out.push_back(nwreg::format_instant(t, true));
    return out;
  };
  CHECK(dates("2024-01-31/2024-06-01/1month") ==
        std::vector<std::string>{"2024-01-31", "2024-02-29", "2024-03-31", "2024-04-30", "2024-05-31"});
  CHECK(dates("2024-02-29/2029-01-01/1year") ==
        std::vector<std::string>{"2024-02-29", "2025-02-28", "2026-02-28", "2027-02-28", "2028-02-29"});
  CHECK(dates("1960-01-01/1961-01-01/3months") ==
        std::vector<std::string>{"1960-01-01", "1960-04-01", "1960-07-01", "1960-10-01"});
  CHECK(dates("1969-11-15/1970-03-01/2months") == std::vector<std::string>{"1969-11-15", "1970-01-15"});
  // The time of day is kept; STOP is excluded.
  const auto t = parse_grid("2024-01-31T06:30Z/2024-03-31T06:30Z/1month");
  REQUIRE(t.size() == 2);
  CHECK(nwreg::format_instant(t[1]) == "2024-02-29T06:30:00Z");
  // The core's words (the CLI adds "--grid: ").
  CHECK_THROWS_WITH_AS(parse_grid("2024-03-01/2024-01-01/1month"),
                       "STEP 1month does not lead from 2024-03-01T00:00:00Z towards 2024-01-01T00:00:00Z: no points",
                       nwreg::ParameterError);
  CHECK_THROWS_WITH_AS(parse_grid("2024-01-01/2025-01-01/0years"), "STEP must not be 0", nwreg::ParameterError);
  CHECK_THROWS_WITH_AS(parse_grid("2000-01-01/3000-01-01/1month", 100), "more than 100 points", nwreg::ParameterError);
}
