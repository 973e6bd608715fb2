#pragma once
/// A model bound to its training data: predictions, attention weights, leave-one-out
/// statistics and pointwise standard errors, with queries mapped through the learned metric
/// when the model has one. The engine (pooling.h) is Attention for the distance kernels (the
/// gaussian score), ScoreAttention for the other scores, chosen once in the constructor.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "nwreg/engine/attention.h"
#include "nwreg/data/dataset.h"
#include "nwreg/engine/metric_map.h"
#include "nwreg/engine/pooling.h"

namespace nwreg {

struct Model;

/// The standard normal quantile Phi^-1(p), 0 < p < 1, to full double precision.
double normal_quantile(double p);

/// Throws UsageError naming --level unless 0 < level < 1.
void check_level(double level);

/// z = Phi^-1((1 + level) / 2), the band's multiplier, finite and accurate for every level < 1.
double band_quantile(double level);

/// Pointwise standard errors and a confidence band:
///   se(q)^2 = sigma^2(q) sum_i w_i(q)^2,  sigma^2(q) = sum_i a_i(q) r_i^2,
/// w the weights of the estimate (local-linear: the equivalent weights), a the normalised
/// kernel weights (NW), r_i the leave-one-out residuals; band f -+ z se, z = Phi^-1((1 + level)/2).
struct Band {
  std::vector<double> se, lower, upper;
};

/// Leave-one-out R^2: 1 - LOO MSE / var(y), the variance (and mean) sample-weighted when there
/// are sample weights; 0 when y is constant.
double loo_r2(const Dataset& data, double loo_mse);

class Fitted {
 public:
  /// `train` must outlive this. engine's kernel and method are taken from the model, and its
  /// robustness weights (Model::robustness) multiply the training rows' sample weights.
  Fitted(const Dataset& train, const Model& model, EngineOptions engine);
  // The metric map and the engine refer to robust_: neither copied nor moved.
  Fitted(const Fitted&) = delete;
  Fitted& operator=(const Fitted&) = delete;

  void predict(const double* q, std::size_t m, double* out) const;
  void weights(const double* q, std::size_t m, const std::function<void(std::size_t, const double*)>& row) const;
  LooResult loo() const { return engine_->loo(false); }
  LooDetail loo_detail(std::size_t neighbour_rows = 0, bool residuals = true) const {
    return engine_->loo_detail(neighbour_rows, residuals);
  }
  LooDetail loo_residuals() const { return engine_->loo_residuals(); }
  /// The in-sample fit and tr(H) (the degrees of freedom).
  InSample insample() const { return engine_->insample(false); }
  /// Predicts into out and returns the band at `level` (see Band); `loo` from loo_residuals()
  /// (or loo_detail()).
  Band predict_band(const double* q, std::size_t m, double level, const LooDetail& loo, double* out) const;
  /// The slopes df/dq_k at m queries (m x d, row-major; Attention::slopes) and, with `loo`,
  /// their standard errors se_k(q)^2 = sigma^2(q) sum_i l_ik(q)^2 (sigma^2 as in Band). Throws
  /// UsageError for a model with a learned metric.
  struct Slopes {
    std::vector<double> slope, se;  //!< m x d each (se empty without loo)
  };
  Slopes slopes(const double* q, std::size_t m, const LooDetail* loo) const;

 private:
  // The queries as the engine takes them: through the metric's map where there is one.
  const double* mapped(const double* q, std::size_t m, std::vector<double>& z) const;
  std::optional<Dataset> robust_;  // the training data with the model's robustness weights
  std::optional<MetricMap> map_;
  std::size_t d_;                        // x columns of the queries
  std::unique_ptr<const Pooling> engine_;  // Attention, or ScoreAttention for a score other than gaussian
};

}  // namespace nwreg
