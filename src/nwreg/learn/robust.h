#pragma once
/// Robust smoothing, as R's lowess(iter = N) and loess(family = "symmetric"): after the first
/// fit, N times over, each training row gets a robustness weight from its residual, and the
/// smoother is fitted again with those weights multiplied into the rows' sample weights. The
/// neighbourhoods stay as they were (a row of weight 0 still counts as a neighbour).

#include <vector>

namespace nwreg {

/// The bisquare robustness weights of residuals r_i (Cleveland 1979), with the thresholds of
/// R's lowess and loess: s = 6 median |r_i| (the mean of the two middle values for an even
/// count), and weight 1 where |r_i| <= 0.001 s, (1 - (r_i / s)^2)^2 where |r_i| <= 0.999 s,
/// else 0. None (empty) where s < 1e-7 mean |r_i| (more than half the residuals vanish, an
/// exact fit there): then, as lowess does, the iterations stop and the fit before stands.
std::vector<double> robustness_weights(const std::vector<double>& residuals);

}  // namespace nwreg
