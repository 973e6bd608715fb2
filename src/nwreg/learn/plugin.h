#pragma once
/// The direct plug-in bandwidth of Ruppert, Sheather and Wand (1995) for local linear regression
/// on one x column, computed step for step as R KernSmooth's `dpill` with its defaults.
///
/// The asymptotically optimal (AMISE) bandwidth of local linear regression with the Gaussian
/// kernel and homoscedastic errors is
///   h = ( sigma^2 (b - a) / (2 sqrt(pi) theta22 n) )^(1/5),  theta22 = mean of m''(x_i)^2,
/// [a, b] the range of x. The plug-in estimates the two unknowns in stages:
///  1. sort by x and trim 1% of the rows at each end (what follows uses the trimmed rows; a, b
///     are their range);
///  2. split the rows into N blocks of consecutive x (N <= min(5, n / 20), picked by Mallows'
///     Cp) and fit a quartic to each by least squares: sigma^2_Q = RSS / (n - 5N),
///     theta24_Q = mean of m'' m'''' over the rows;
///  3. pilot g = (C sigma^2_Q (b - a) / (|theta24_Q| n))^(1/7), C = 3/(8 sqrt(pi)) when
///     theta24_Q < 0, 15/(16 sqrt(pi)) when > 0; theta22 = sum of m''(g)^2 over the binned grid
///     (cubic local fit, ends trimmed 5%) weighted by bin counts, over n;
///  4. pilot lambda = C3 (sigma^4_Q (b - a) / (theta22 n)^2)^(1/9) with
///     C3 = (4 (1/2 + 2 sqrt 2 - 4/3 sqrt 3) / sqrt(2 pi))^(1/9); sigma^2 = RSS / (n - 2 tr S +
///     tr S S^T) of the binned local linear fit at lambda;
///  5. h from the formula above.
/// The binned fits use linear binning onto 401 grid points over [a, b] and Gaussian weights cut
/// at 4 bandwidths, as KernSmooth's locpoly, sdiag and sstdiag do.
///
/// x is mapped onto [0, 1] and y to zero mean and unit spread first, and the block fits centre
/// and scale x within each block: KernSmooth fits raw powers of x, which loses digits when x is
/// far from 0 relative to its spread (years: its value for LakeHuron moves by 7e-7 when x is
/// centred first), and fails on large magnitudes of x or y; this gives the centred value.

#include <vector>

#include "nwreg/engine/options.h"
#include "nwreg/engine/results.h"
#include "nwreg/data/dataset.h"

namespace nwreg {

/// The plug-in's intermediate figures, for tests and `-v`.
struct PluginResult {
  double bandwidth = 0;  //!< h for the Gaussian kernel
  int blocks = 0;        //!< N, chosen by Cp
  double sigma2_blocks = 0;   //!< sigma^2_Q
  double theta24_blocks = 0;  //!< theta24_Q
  double pilot_g = 0;         //!< the pilot for theta22
  double theta22 = 0;
  double pilot_lambda = 0;    //!< the pilot for sigma^2
  double sigma2 = 0;
};

/// The Gaussian-kernel plug-in bandwidth of (x_i, y_i). Throws DataError when it is undefined:
/// too few rows or distinct x values for the block fits, y an exact quartic of x, a pilot
/// bandwidth narrower than the binning grid, or a gap in x wider than a pilot's reach (where
/// KernSmooth returns NaN).
PluginResult plugin_bandwidth(const std::vector<double>& x, const std::vector<double>& y);

/// The plug-in bandwidth for `kernel` on a data set of one x column: the Gaussian one times
/// canonical_ratio(kernel). Throws DataError as above and for sample weights or several columns.
double plugin_bandwidth(const Dataset& data, Kernel kernel);

/// delta_K / delta_gaussian, delta_K = (R(K) / mu2(K)^2)^(1/5) for K scaled to integrate to 1
/// (R = integral of K^2, mu2 = integral of u^2 K): the factor that carries an AMISE-optimal
/// Gaussian bandwidth over to K as nwreg parameterises it (Marron and Nolan 1988).
double canonical_ratio(Kernel kernel);

}  // namespace nwreg
