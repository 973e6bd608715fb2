#include "nwreg/learn/series.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "nwreg/base/errors.h"
#include "nwreg/engine/attention.h"
#include "nwreg/learn/plugin.h"

namespace nwreg {

namespace {

// Whether x, sorted, is evenly spaced: every gap a whole number of steps (within 1% of a step,
// the median gap); a few missing points (at most 5% of the gaps longer than one step) leave a
// series a series. Takes a copy: its gaps are made in place (8 bytes a row, where a row order
// and its gaps took 24), and only a series goes on to its rows' order.
bool evenly_spaced(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const std::size_t gaps = x.size() - 1;
  for (std::size_t i = 0; i < gaps; ++i) x[i] = x[i + 1] - x[i];
  x.pop_back();
  // Every gap is tested alike, so their order may change.
  std::nth_element(x.begin(), x.begin() + gaps / 2, x.end());
  const double median = x[gaps / 2];
  std::size_t skips = 0;
  return median > 0 && std::all_of(x.begin(), x.end(), [&](double g) {
    const double steps = std::round(g / median);
    skips += steps > 1;
    return steps >= 1 && std::abs(g - steps * median) <= 0.01 * median;
  }) && static_cast<double>(skips) <= 0.05 * static_cast<double>(gaps);
}

// The lag-1 autocorrelation of the differences d (per run, about their mean over all `count`).
double lag_one(const std::vector<std::vector<double>>& d, double mean, std::size_t count) {
  double lag = 0, var = 0;
  std::size_t lags = 0;
  for (const auto& dr : d)
    for (std::size_t i = 0; i < dr.size(); ++i) {
      var += (dr[i] - mean) * (dr[i] - mean);
      if (i) lag += (dr[i] - mean) * (dr[i - 1] - mean), ++lags;
    }
  // Lag products and squares averaged over their own counts (equal but for one in a single run).
  return var > 0 ? (lag / static_cast<double>(lags)) / (var / static_cast<double>(count)) : 0;
}

}  // namespace

SeriesCheck check_series(const Dataset& data, ThreadPool* pool) {
  SeriesCheck out;
  if (data.d != 1 || is_categorical(data.kind(0)) || !data.weight.empty() || data.n < 40) return out;
  const std::size_t n = data.n;
  // (One value is no series, and the learner refuses it: no sorted copy of it made here.)
  const auto [lo, hi] = std::minmax_element(data.x.begin(), data.x.end());
  if (*lo == *hi) return out;
  out.evenly_spaced = evenly_spaced(data.x);
  if (!out.evenly_spaced) return out;
  std::vector<std::size_t> order(n);  // rows in x order
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return data.x[a] < data.x[b]; });
  double h = 0;
  try {
    h = plugin_bandwidth(data.x, data.y).bandwidth;
  } catch (const DataError&) {
    return out;  // no pilot, no test
  }
  out.pilot = true;
  // The residuals of consecutive rows: every row up to series_rows; beyond, runs of three
  // consecutive rows at series_runs places spread over x (the estimate's standard error is
  // then about 1 / sqrt(series_runs), and the pilot costs the same at any n).
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // [first, last) in x order
  if (n <= series_rows) {
    runs.emplace_back(0, n);
  } else {
    for (std::size_t k = 0; k < series_runs; ++k) {
      const std::size_t c = 1 + (2 * k + 1) * (n - 2) / (2 * series_runs);
      runs.emplace_back(c - 1, c + 2);
    }
  }
  std::vector<double> q;
  for (const auto& [first, last] : runs)
    for (std::size_t i = first; i < last; ++i) q.push_back(data.x[order[i]]);
  EngineOptions engine(default_tolerance, pool);
  engine.method = Method::local_linear;
  std::vector<double> f(q.size());
  Attention(data, {h}, engine).predict(q.data(), q.size(), f.data());
  // Differences of the residuals in x order (x has no repeats, so the order is unique): for
  // errors e with lag-1 correlation rho, d_i = e_(i+1) - e_i has lag-1 correlation -(1 - rho)/2,
  // whatever the variance, and what the pilot fit left of the trend differences away.
  std::vector<std::vector<double>> d;  // per run
  double mean = 0;
  std::size_t count = 0, at = 0;
  for (const auto& [first, last] : runs) {
    auto& dr = d.emplace_back();
    for (std::size_t i = first; i < last; ++i, ++at)
      if (i > first)
        dr.push_back((data.y[order[i]] - f[at]) - (data.y[order[i - 1]] - f[at - 1]));
    for (double v : dr) mean += v, ++count;
  }
  const double c = lag_one(d, mean / static_cast<double>(count), count);
  // Correlated errors alone give c in [-1, 0]. Well above 0 the differences move together: the
  // residuals carry structure the pilot fit missed (a cycle, a season), not noise, and leaving
  // blocks out would flatten it.
  if (c > structure_bound(count)) {
    out.structure = true;
    out.autocorrelation = std::min(1.0, 1 + 2 * c);
    return out;
  }
  out.autocorrelation = std::clamp(1 + 2 * c, -1.0, 1.0);
  if (out.autocorrelation > 0.3) {
    const double k = std::ceil(std::log(0.05) / std::log(std::min(out.autocorrelation, 0.95)));
    out.leave_out = std::max<std::size_t>(1, std::min(static_cast<std::size_t>(k), n / 20));
  }
  return out;
}

}  // namespace nwreg
