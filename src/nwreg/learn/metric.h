#pragma once
/// Learning a metric (--metric full): a linear map A of x, r x d, so that the Gaussian score is
/// -|A (q - x)|^2 / 2, learned by gradient descent on the leave-one-out error (metric learning
/// for kernel regression, Weinberger and Tesauro 2007). Diagonal bandwidths are the special case
/// A = diag(1/h); a rank r < d projects x onto the r directions that matter. The engine runs on
/// the mapped points (engine/metric_map.h).

#include <cstddef>
#include <functional>
#include <vector>

#include "nwreg/learn/bandwidth.h"
#include "nwreg/data/dataset.h"
#include "nwreg/engine/metric_map.h"

namespace nwreg {


struct MetricFit {
  Metric metric;
  double loo_mse = 0;          //!< mean LOO squared error over every row at the metric reached
  std::vector<Epoch> history;  //!< Epoch::metric holds A after each step
  std::string stop_reason;
  int evaluations = 0;
};

/// Learns A (rank r, 1 <= r <= d) by line_search on the LOO error of the Gaussian NW
/// estimator, from A = P diag(1/h): P the identity (r = d), or its r rows for the columns with
/// the smallest h_k / sd_k (the columns that matter most). The parameters are B = A diag(h),
/// dimensionless. options.engine sets threads and sample weights come from `data`; the
/// descent's rows follow options.descent_rows (unset: sampled_descent_rows). Each step costs O(rows n r d).
MetricFit fit_metric(const Dataset& data, const FitOptions& options, const std::vector<double>& h,
                     std::size_t rank, const std::function<void(const Epoch&)>& on_epoch = {});

}  // namespace nwreg
