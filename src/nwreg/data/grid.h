#pragma once
/// Query grids given on the command line.

#include <cstddef>
#include <string>
#include <vector>

namespace nwreg {

/// Most points a grid may have (8 GB of doubles beyond this is surely a typo).
inline constexpr std::size_t max_grid_points = 100'000'000;

/// `START:STOP:STEP`, like numpy.arange: START, START+STEP, ... while before STOP (excluded).
/// When the three numbers are short decimals, point i is the double nearest the exact decimal
/// START + i*STEP (so 0:1:0.1 gives 0.3, not 0.30000000000000004). Throws UsageError naming
/// `--grid` for text that is not three numbers, STEP = 0, STEP pointing away from STOP, or a
/// grid of more than `max_points` points.
///
/// Between instants the form is `START/STOP/STEP` (ISO 8601 times hold colons; the slash is
/// ISO 8601's own interval separator): two ISO dates or date-times and a time span (6h, 1d; see
/// parse_duration) or a number of seconds, e.g. 2024-01-01/2024-02-01/1d. The points are in
/// seconds since the epoch; `*time` (when given) says which form it was.
std::vector<double> parse_grid(const std::string& text, std::size_t max_points = max_grid_points,
                               bool* time = nullptr);

/// One of N slices of the queries, K in 1..N.
struct Shard {
  std::size_t k = 1;
  std::size_t n = 1;
  /// The slice [first, last) of m queries: contiguous, in order, sizes differing by at most 1.
  std::size_t first(std::size_t m) const { return split(m, k - 1); }
  std::size_t last(std::size_t m) const { return split(m, k); }

 private:
  // floor(m * j / n) in 128 bits: exact for any m, j <= n < 2^64.
  __extension__ typedef unsigned __int128 Wide;
  std::size_t split(std::size_t m, std::size_t j) const { return static_cast<std::size_t>(Wide{m} * j / n); }
};

/// Parses `K/N` with 1 <= K <= N. Throws UsageError naming `--shard`.
Shard parse_shard(const std::string& text);

/// N points evenly spanning [lo, hi], both ends included (numpy.linspace). N >= 1.
std::vector<double> linspace(double lo, double hi, std::size_t n);

}  // namespace nwreg
