#pragma once
/// What the engine's passes return (pooling.h): the leave-one-out error, the in-sample fit, and
/// the per-row leave-one-out details. Kept apart from the engines so that the criteria, the
/// learners and the command line include only these.

#include <cstddef>
#include <limits>
#include <vector>

namespace nwreg {

/// Leave-one-out mean squared error and its gradient with respect to log h_k.
struct LooResult {
  double mse = 0;                 //!< sum_j s_j (y_j - f_-j)^2 / sum_j s_j (s = sample weights)
  std::vector<double> gradient;   //!< d mse / d log h_k (empty unless asked for)
  std::size_t out_of_reach = 0;   //!< rows no other key reaches (OutOfReach::error): mse is +inf
  std::size_t first_out_of_reach = 0;  //!< the first such row in input order (input index)
  /// tr(H) of the in-sample fit (InSample::trace), where a pass over every row made it on the
  /// way (Engine::loo: NW in several continuous columns at a fixed bandwidth); else NaN.
  double trace = std::numeric_limits<double>::quiet_NaN();
};

/// The in-sample fit at the training points (each row's own key included), for the selection
/// criteria AICc and GCV.
struct InSample {
  double mse = 0;    //!< sum_j s_j (y_j - f_j)^2 / sum_j s_j, f_j the fit at x_j (RSS / n unweighted)
  double trace = 0;  //!< tr(H) = sum_j l_jj, each key's weight on itself (NW: a_jj), over every key
  /// n - tr(H) = sum_j (1 - l_jj), summed without the cancellation of n - trace where the fit
  /// nearly interpolates (l_jj -> 1): what GCV and AICc divide by
  double room = 0;
  std::vector<double> d_mse, d_trace;  //!< their gradients in log h_k (empty unless asked for)
};

/// Per-row leave-one-out details, for statistics and standard errors.
struct LooDetail {
  std::vector<double> residual;  //!< y_j - f_-j per input row (0 for rows of sample weight 0)
  /// Mean over rows (sample-weighted) of 1 / sum_i a_ji^2, the a_ji being row j's
  /// leave-one-out weights as --weights writes them: the effective number of neighbours
  /// (over a spread sample of rows when loo_detail was asked for one).
  double neighbours = 0;
};

}  // namespace nwreg
