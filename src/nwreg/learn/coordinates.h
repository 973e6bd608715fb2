#pragma once
// Internal to the bandwidth learner (bandwidth.cpp): the coordinates its descent moves in.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/kernel/categorical.h"
#include "nwreg/learn/bandwidth.h"

namespace nwreg {

// The descent's coordinates: theta_k = log h_k for a continuous column; for a categorical one
// theta_k = lambda_k / top_k, top_k its kernel's range (levels.h), in the box [2^-30, 1]. Linear,
// not log: the loss's slope in log lambda vanishes as lambda -> 0, so a column that separates
// the rows (best lambda 0) would halve lambda every epoch for ever; in lambda itself the slope
// stays finite and the projected line search lands on the floor (another level's rows weigh
// 2^-30, 1e-9, of its own) in a step or two, as it lands on the top for a column best ignored.
// With several columns a continuous column's log h has a top too, where it is smoothed out
// (smoothed_out_at times its range), reached at once from smoothed_out_from times it.
struct Coordinates {
  static constexpr double floor = 0x1p-30;
  std::vector<double> top;  // per column: lambda's largest value, or 0 (continuous)
  std::vector<double> log_top, log_snap;  // per column (several): a continuous one's top of log h, and where it snaps

  Coordinates(const Dataset& data, CategoricalKernel kernel) {
    for (std::size_t k = 0; k < data.d; ++k)
      top.push_back(is_categorical(data.kind(k)) ? lambda_max(kernel, data.kind(k), data.levels.at(k).size()) : 0.0);
  }
  std::vector<double> h(const std::vector<double>& theta) const {
    std::vector<double> out;
    for (std::size_t k = 0; k < theta.size(); ++k)
      out.push_back(top[k] > 0 ? std::clamp(theta[k], floor, 1.0) * top[k] : std::exp(theta[k]));
    return out;
  }
  std::vector<double> theta(const std::vector<double>& h) const {
    std::vector<double> out;
    for (std::size_t k = 0; k < h.size(); ++k) out.push_back(top[k] > 0 ? h[k] / top[k] : std::log(h[k]));
    return out;
  }
  /// Several columns: each continuous column's top of log h, from its range.
  void smooth_out(const std::vector<ColumnStats>& stats) {
    if (top.size() < 2) return;
    constexpr double inf = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < top.size(); ++k) {
      const bool capped = top[k] == 0 && stats[k].range > 0 && std::isfinite(smoothed_out_at * stats[k].range);
      log_top.push_back(capped ? std::log(smoothed_out_at * stats[k].range) : inf);
      log_snap.push_back(capped ? std::log(smoothed_out_from * stats[k].range) : inf);
    }
  }
  Box box() const {
    if (!categorical() && log_top.empty()) return {};
    Box b;
    for (std::size_t k = 0; k < top.size(); ++k) {
      b.lo.push_back(top[k] > 0 ? floor : -std::numeric_limits<double>::infinity());
      b.hi.push_back(top[k] > 0 ? 1.0 : log_top.empty() ? std::numeric_limits<double>::infinity() : log_top[k]);
    }
    b.snap = log_snap;
    return b;
  }
  // The engine's gradient (in log h) in these coordinates, projected: 0 where a parameter is at
  // a bound and the descent would take it out.
  void project(const std::vector<double>& theta, std::vector<double>& gradient) const {
    for (std::size_t k = 0; k < gradient.size(); ++k) {
      if (!(top[k] > 0)) {
        if (!log_top.empty() && theta[k] >= log_top[k] && gradient[k] < 0) gradient[k] = 0;
        continue;
      }
      const double t = std::clamp(theta[k], floor, 1.0);
      gradient[k] /= t;  // d/d(lambda/top) = d/d log lambda / (lambda/top)
      if ((t >= 1 && gradient[k] < 0) || (t <= floor && gradient[k] > 0)) gradient[k] = 0;
    }
  }
  /// The continuous columns whose bandwidth in h is at its top (to rounding: exp then log).
  std::vector<std::size_t> at_top(const std::vector<double>& h) const {
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < log_top.size(); ++k)
      if (top[k] == 0 && std::log(h[k]) >= log_top[k] - 1e-12) out.push_back(k);
    return out;
  }
  bool categorical() const {
    return std::any_of(top.begin(), top.end(), [](double t) { return t > 0; });
  }
};

}  // namespace nwreg
