#pragma once
/// Attention pooling under the scores that are not distance kernels (--score dot, scaled-dot,
/// general, additive; docs/scores.md): each query attends to every key through
///
///   a_i(q) = s_i exp(score(q, x_i)) / sum_j s_j exp(score(q, x_j))    (s_i the sample weight)
///   f(q)   = sum_i a_i(q) y_i
///
///   dot         score = q.k                      scaled-dot  score = q.k / sqrt(d)
///   general     score = q^T W k                  additive    score = w_v^T tanh(W_q q + W_k k + b)
///
/// with q and k the x rows as given. The softmax is made stable by measuring each score from
/// the row's largest (the exponents are <= 0, the largest weight s_i). No key is pruned: a
/// score need not fall with distance, so every key is summed, O(n d) a query (additive:
/// O(n H), the key's half W_k k + b made once). A score that overflows (|x| so large that q.k
/// is not a finite number) is an error, never a NaN.
///
/// The same facade as Attention for what Fitted needs (predictions, standard errors' sums,
/// slopes, attention rows, the leave-one-out error), and the leave-one-out error's gradient in
/// the parameters for learning them (learn/score_fit.h): with c_j = dL/df_j and
/// g_ji = c_j a_ji (y_i - f_j), dL/dtheta = sum_j sum_i g_ji d score(x_j, x_i)/dtheta.
/// Every query's result is made by one thread in a fixed order: the same for any --threads.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/engine/attention.h"
#include "nwreg/engine/options.h"
#include "nwreg/engine/pooling.h"
#include "nwreg/model/settings.h"

namespace nwreg {

class ScoreAttention : public Pooling {
 public:
  /// Copies the keys. Throws UsageError for parameters that do not fit the data's columns,
  /// DataError for a categorical x column or data whose every sample weight is 0.
  ScoreAttention(const Dataset& train, ScoreParameters params, EngineOptions options = {});

  const ScoreParameters& parameters() const { return p_; }

  /// As Attention's (attention.h). A query whose score overflows is a QueryError.
  void predict(const double* queries, std::size_t m, double* out) const override;
  void predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out,
                      double* sum_w2, double* smooth, double* kernel_w2 = nullptr) const override;
  /// df/dq_k = sum_i a_i (y_i - f) d score_i/dq_k; l_norm (m x d) as Attention::slopes.
  void slopes(const double* queries, std::size_t m, double* out, double* l_norm = nullptr) const override;
  void weights(const double* queries, std::size_t m,
               const std::function<void(std::size_t, const double*)>& row) const override;

  /// The leave-one-out error: row j attends to every key but its own row (an identical row
  /// stays in). `rows` restricts the mean as Attention::loo. With `gradient`, its gradient in
  /// theta (ScoreParameters' order). Throws DataError with fewer than 2 keys of positive weight.
  LooResult loo(bool gradient, const std::vector<std::size_t>* rows = nullptr) const override {
    return objective(gradient, rows, false);
  }
  /// loo's, or with `sum` the sample-weighted sum of squared errors instead of their mean (Loss::sum).
  LooResult objective(bool gradient, const std::vector<std::size_t>* rows, bool sum) const;
  /// The in-sample fit (each row's own key in) and tr(H) = sum_j a_jj, from `rows` (tr(H)
  /// scaled to every key) or every row. No gradient: the scores learn on the leave-one-out error.
  InSample insample(bool gradient = false, const std::vector<std::size_t>* rows = nullptr) const override;
  /// Every row's leave-one-out residual (0 for rows of sample weight 0) and the mean effective
  /// number of neighbours 1 / sum_i a_ji^2 over every row, or over `neighbour_rows` spread rows.
  LooDetail loo_detail(std::size_t neighbour_rows = 0, bool residuals = true) const override;
  LooDetail loo_residuals() const override { return loo_detail(0, true); }
  /// `count` rows spread over the data (x order in one column, else input order): Attention's.
  std::vector<std::size_t> spread_rows(std::size_t count) const;

  /// Score evaluations (query-key pairs) so far: for benchmarks.
  std::uint64_t pairs() const { return pairs_.load(std::memory_order_relaxed); }

 private:
  struct Scratch;
  void check_loo_rows() const;  // DataError unless 2 keys weigh something
  // Row `index` (a query's number, or a training row with loo) attends: the scores into
  // w.s (additive: the units' tanh into w.t when `units`), the weights a into w.a over every key
  // but `exclude`, and returns f. Throws QueryError (loo: DataError) where a score overflows.
  double attend(const double* q, std::size_t exclude, Scratch& w, bool units, std::size_t index, bool loo) const;
  // d score_i / dq into g (d values) for key i, the units' tanh in w.t (additive).
  void score_slope(const double* q, std::size_t i, const Scratch& w, double* g) const;
  // Adds row j's gradient in theta, for dL/df_j = c, into grad.
  void add_gradient(std::size_t j, double f, double c, Scratch& w, double* grad) const;

  ScoreParameters p_;
  EngineOptions options_;
  std::size_t n_ = 0, d_ = 0, H_ = 0;
  std::vector<double> xc_;  // keys by column, d x n
  std::vector<double> x_;   // keys by row, n x d (queries of the leave-one-out rows)
  std::vector<double> y_, w_;
  std::size_t positive_ = 0;  // keys of sample weight > 0
  // dot, scaled-dot, general: score = z(q) . k with z = c q (c = 1 or 1/sqrt(d)) or W^T q.
  // additive: the keys' half of each unit, pk_[h * n + i] = (W_k x_i + b)_h.
  std::vector<double> pk_;
  mutable std::atomic<std::uint64_t> pairs_{0};
};

}  // namespace nwreg
