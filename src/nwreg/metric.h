#pragma once
/// A learned metric (--metric full): a linear map A of x, r x d, so that the Gaussian score is
/// -|A (q - x)|^2 / 2, learned by gradient descent on the leave-one-out error (metric learning
/// for kernel regression, Weinberger and Tesauro 2007). Diagonal bandwidths are the special case
/// A = diag(1/h); a rank r < d projects x onto the r directions that matter.
///
/// The engine runs on the mapped points z = A (x - c), c the training column means (the shift
/// changes no distance and keeps z exact for data far from 0), with every bandwidth 1.

#include <cstddef>
#include <functional>
#include <vector>

#include "nwreg/bandwidth.h"
#include "nwreg/dataset.h"

namespace nwreg {

struct Metric {
  std::size_t rank = 0;   //!< r: rows of A; 0 = no metric (diagonal bandwidths)
  std::vector<double> a;  //!< A, r x d, row-major
};

/// Throws UsageError naming `option` unless A holds rank x d finite numbers, rank >= 1.
void check_metric(const Metric& m, std::size_t d, const std::string& option);

/// The training data in the metric's coordinates, and queries mapped the same way.
class MetricMap {
 public:
  MetricMap(const Metric& metric, const Dataset& train);
  /// z_i = A (x_i - c), columns named z1..zr; y and sample weights as in `train`.
  Dataset data() const;
  /// m queries (m x d) mapped to m x r.
  std::vector<double> queries(const double* q, std::size_t m) const;

 private:
  Metric metric_;
  const Dataset& train_;  // must outlive the map
  std::vector<double> centre_;
};

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
/// descent's rows follow options.descent_rows. Each step costs O(rows n r d).
MetricFit fit_metric(const Dataset& data, const FitOptions& options, const std::vector<double>& h,
                     std::size_t rank, const std::function<void(const Epoch&)>& on_epoch = {});

}  // namespace nwreg
