#pragma once
/// Is the training set a series with correlated errors? (--leave-out auto)

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "nwreg/data/dataset.h"

namespace nwreg {

class ThreadPool;

/// The rule behind `--leave-out auto`: is this a series measured at evenly spaced x whose errors
/// are correlated? Leave-one-out then undersmooths (a neighbour left in the fit carries the
/// left-out point's error), and leave-block-out cross-validation is used instead.
///  - evenly spaced: one x column, no sample weights, at least 40 rows, no repeated x, every gap
///    between consecutive sorted x within 1% of a whole number of median gaps, at most 5% of
///    them longer than one (a few missing points);
///  - correlated: the estimate r = 1 + 2 c of the errors' lag-1 correlation exceeds 0.3, c the
///    lag-1 autocorrelation of the differences of consecutive residuals (in x order) of the local
///    linear Gaussian fit at the plug-in bandwidth. Differences of errors with lag-1 correlation
///    rho have lag-1 correlation -(1 - rho) / 2, so r estimates rho whatever the variance; the
///    differences remove what the pilot left of the trend, and the plug-in's block fits are
///    little disturbed by correlated errors;
///  - K = ceil(log 0.05 / log min(r, 0.95)), the lag at which an AR(1) process with that rho has
///    correlation 0.05, between 1 and n / 20.
/// Chosen on bench/bandwidth_quality's simulations (bench/RESULTS.md).
///  - structure, not noise: correlated errors give c between -1 and 0 (near 0 for rho near 1);
///    c above max(0.1, 2 / sqrt(m)), m the differences (over 2 standard errors of a correlation
///    that is 0), says the residuals move together because the pilot fit missed a cycle or a
///    season, and leave-one-out stays (r is then reported clamped to 1). A simulated 11-year cycle
///    (289 years) gives c = 0.21; AR(1) errors with rho 0.8 about a smooth trend -0.07, LakeHuron -0.05.
inline double structure_bound(std::size_t m) { return std::max(0.1, 2 / std::sqrt(static_cast<double>(m))); }
struct SeriesCheck {
  bool evenly_spaced = false;
  bool pilot = false;          //!< the plug-in bandwidth was defined (else no test)
  bool structure = false;      //!< c > max_structure_c: a cycle the pilot missed, not correlated errors
  double autocorrelation = 0;  //!< r, the errors' estimated lag-1 correlation (when tested), in [-1, 1]
  std::size_t leave_out = 0;   //!< K; 0 = leave one out
};
/// Up to this many rows every residual is used; beyond, series_runs runs of three consecutive
/// rows spread over x.
inline constexpr std::size_t series_rows = 3000, series_runs = 1000;
SeriesCheck check_series(const Dataset& data, ThreadPool* pool);

}  // namespace nwreg
