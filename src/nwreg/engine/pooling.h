#pragma once
/// What a model bound to its data (fitted.h) asks of its engine, whichever scores the keys:
/// Attention for the distance kernels (the gaussian score), ScoreAttention for the others.
/// Each implements these passes as its own header describes them.

#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

#include "nwreg/engine/results.h"

namespace nwreg {

/// What an engine has counted so far: for warnings, tests and benchmarks (the work a pass did,
/// the same on every host: `fit -v` prints it).
struct Counters {
  std::uint64_t pairs = 0;  //!< kernel evaluations key by key (query-key pairs gathered)
  /// Rows answered without weighing their keys one by one (none of their pairs in `pairs`): from
  /// sums of moments or series (line_sums.h, moment_line.h, gauss_boxes.h), and from one column's
  /// fast Gauss transform (fused_line.h).
  std::uint64_t moment_rows = 0;
  std::uint64_t transformed_rows = 0;
  /// predictions whose local fit lost a term (its keys of weight above 0 too few or not spread
  /// along it: the term was fitted as 0); 0 for estimators without terms
  std::uint64_t dropped_rows = 0;
};

class Pooling {
 public:
  virtual ~Pooling() = default;
  /// Predictions at m queries (m x d, row-major).
  virtual void predict(const double* queries, std::size_t m, double* out) const = 0;
  /// Each query's distance to its nearest key in bandwidths over the continuous columns, in the
  /// kernel's norm (KeyIndex::nearest_distance), into out[0..m); under adaptive bandwidths each
  /// key's distance in its own bandwidths, the least. NaN under knn and span (a query's own
  /// bandwidth reaches its K nearest keys: never far in it), with a learned score, and for a
  /// query with a missing x.
  virtual void nearest_distances(const double* /*queries*/, std::size_t m, double* out) const {
    std::fill(out, out + m, std::numeric_limits<double>::quiet_NaN());
  }
  /// Predictions with sum_i w_i^2 (the weights --weights writes), sum_i a_i v_i (v per input row)
  /// and sum_i a_i^2, a_i the normalised kernel weights (NW's, whatever the method): each where not
  /// null.
  virtual void predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out,
                              double* sum_w2, double* smooth, double* kernel_w2 = nullptr) const = 0;
  /// df/dq (m x d) and, where asked, the norm of each slope's weights sqrt(sum_i l_ik^2) (m x d).
  virtual void slopes(const double* queries, std::size_t m, double* out, double* l_norm = nullptr) const = 0;
  /// Each query's attention row over the training rows in input order, in query order.
  virtual void weights(const double* queries, std::size_t m,
                       const std::function<void(std::size_t, const double*)>& row) const = 0;
  /// The leave-one-out error (mean over `rows`, default every row) and, where asked, its gradient.
  virtual LooResult loo(bool with_gradient, const std::vector<std::size_t>* rows = nullptr) const = 0;
  /// The in-sample fit's mean squared residual and tr(H).
  virtual InSample insample(bool with_gradient, const std::vector<std::size_t>* rows = nullptr) const = 0;
  /// Every row's leave-one-out residual and the mean effective number of neighbours.
  virtual LooDetail loo_detail(std::size_t neighbour_rows = 0, bool residuals = true) const = 0;
  virtual LooDetail loo_residuals() const = 0;
  /// What it has counted so far.
  virtual Counters counters() const { return {}; }
};

}  // namespace nwreg
