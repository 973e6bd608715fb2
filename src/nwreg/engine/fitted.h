#pragma once
/// A model bound to its training data: predictions, attention weights, leave-one-out
/// statistics and pointwise standard errors, with queries mapped through the learned metric
/// when the model has one. The engine (pooling.h) is Attention for the distance kernels (the
/// gaussian score), ScoreAttention for the other scores, chosen once in the constructor.

#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nwreg/base/choice.h"
#include "nwreg/base/distributions.h"
#include "nwreg/engine/attention.h"
#include "nwreg/data/dataset.h"
#include "nwreg/engine/metric_map.h"
#include "nwreg/engine/pooling.h"

namespace nwreg {

struct Model;

/// Throws UsageError naming --level unless 0 < level < 1.
void check_level(double level);

/// z = Phi^-1((1 + level) / 2), the band's multiplier, finite and accurate for every level < 1;
/// with nu, Student's t quantile with nu degrees of freedom instead.
double band_quantile(double level, double nu = std::numeric_limits<double>::infinity());

/// Pointwise standard errors and a confidence band:
///   se(q)^2 = sigma^2(q) sum_i w_i(q)^2,  sigma^2(q) = sum_i a_i(q) r_i^2,
/// w the weights of the estimate (local-linear: the equivalent weights), a the normalised
/// kernel weights (NW), r_i the leave-one-out residuals; band f -+ z se, z = Phi^-1((1 + level)/2).
struct Band {
  std::vector<double> se, lower, upper;
};

/// How a band is made (--interval):
///   plain  f -+ z se(f), the estimate's scatter alone: it ignores the smoothing bias;
///   rbc    robust bias correction (Calonico, Cattaneo and Farrell 2018, JASA 113:767), the
///          bias estimated by a local polynomial of degree q = max(p + 1, 2) at the same
///          bandwidth (their rho = 1): then the corrected estimate is that fit's, and the band
///          f_q -+ z se(f_q) carries the variance of the correction too.
enum class Interval { plain, rbc };
/// The rbc band takes the whole correction where the corrected fit's standard error is at most
/// this many times the estimate's (where the data are dense it is about 1.2 to 2.5 times),
/// and a part lambda = (rbc_ratio se / se_q)^2 of it where the corrected fit extrapolates (in
/// gaps and past the data), with the standard error of that partly corrected estimate.
inline constexpr double rbc_ratio = 2.5;
/// The rbc band's noise variance sigma^2(q) rests on at least this many residuals' worth: where
/// its kernel weights give fewer (nu = 1 / sum a_i^2 < min_band_df, a the normalised kernel
/// weights, NW's whatever the method), it is topped up with the
/// mean squared leave-one-out residual of every row, and t takes that mixture's degrees of
/// freedom (Satterthwaite's: min_band_df at nu = min_band_df, more as the rows' mean takes over).
inline constexpr double min_band_df = 4;
/// A query is far from the data (said on stderr) where its nearest training row is more than this
/// many bandwidths away: a Gaussian kernel weighs that row under e^-4.5 = 1.1% of one at the query.
inline constexpr double far_bandwidths = 3;
std::string to_string(Interval interval);

/// The model whose estimate a robust bias-corrected band is centred on: the same bandwidth
/// (and kernel, policy, metric, robustness), method local polynomial of degree max(p + 1, 2).
/// nullopt where there is none: a score other than gaussian, or degree 3 (4 is beyond nwreg).
std::optional<Model> bias_corrected(const Model& model);

/// The critical value of a simultaneous band over the queries of one x column, by the tube
/// formula (Sun and Loader 1994, Ann. Statist. 22:1328; locfit's scb): with T(x) the estimate's
/// weight vector normalised to length 1 and kappa0 the length of the path T traces as x runs
/// over the queries in order (the sum of the angles between neighbours), c solves
///   2 (1 - Phi(c)) + (kappa0 / pi) exp(-c^2 / 2) = 1 - level.
/// It bounds the chance that the band misses the curve anywhere between the smallest and the
/// largest query, so it holds at the queries themselves.
struct Simultaneous {
  double critical = 0;  //!< c (>= the pointwise quantile)
  double kappa0 = 0;
  double nu = 0;        //!< the t form's degrees of freedom (infinite: the normal form)
};

/// What a query the training data do not support gets (--out-of-reach): one past a continuous x
/// column's training range, or one that no key of a compact kernel reaches.
enum class Unsupported {
  flag,         //!< predictions past the range extrapolated, their band cells left empty; a query
                //!< out of a compact kernel's reach an error (the default: "auto")
  extrapolate,  //!< every cell answered: past the range extrapolated, its band too; out of reach,
                //!< the nearest key's y ("nearest", its former name, is the same)
  empty,        //!< the prediction, band and slope cells of such a query left empty
  error         //!< DataError naming the first such query
};
/// "auto", "extrapolate" (or "nearest"), "empty", "error"; ParameterError naming out_of_reach.
inline constexpr Choice<Unsupported> unsupported_choices[] = {{"auto", Unsupported::flag},
                                                             {"extrapolate", Unsupported::extrapolate},
                                                             {"nearest", Unsupported::extrapolate, false},
                                                             {"empty", Unsupported::empty},
                                                             {"error", Unsupported::error}};
Unsupported parse_unsupported(const std::string& name);
/// What the engine does with a query no key reaches, under this policy.
OutOfReach engine_reach(Unsupported policy);

/// The queries past a continuous x column's training range (m x d, row-major; a NaN coordinate,
/// a missing value, is no query and never past): which, how many, and the farthest, measured in
/// its column's ranges past the nearer end.
struct PastRange {
  std::vector<char> past;      //!< per query
  std::size_t count = 0;
  std::size_t first = 0;       //!< the first such query
  std::size_t column = 0;      //!< the farthest one's column,
  double beyond = 0;           //!< how far past the nearer end (in x's unit),
  double ranges = 0;           //!< and in ranges of the column
  double lo = 0, hi = 0;       //!< that column's training range
};
/// The continuous x columns' training ranges, found once: `past` tells the queries past them. A
/// column whose training values are all equal has no range to be past (every query would be).
class TrainingRange {
 public:
  explicit TrainingRange(const Dataset& train);
  PastRange past(const double* q, std::size_t m) const;

 private:
  std::vector<double> lo_, hi_;
  std::vector<char> checked_;  // continuous columns with a spread
};

/// Leave-one-out R^2: 1 - LOO MSE / var(y), the variance (and mean) sample-weighted when there
/// are sample weights; 0 when y is constant.
double loo_r2(const Dataset& data, double loo_mse);

class Fitted {
 public:
  /// `train` must outlive this. engine's kernel and method are taken from the model, and its
  /// robustness weights (Model::robustness) multiply the training rows' sample weights.
  Fitted(const Dataset& train, const Model& model, EngineOptions engine);
  // The metric map and the engine refer to rows_: neither copied nor moved.
  Fitted(const Fitted&) = delete;
  Fitted& operator=(const Fitted&) = delete;

  /// The training rows as the model weighs them (its robustness weights times the sample weights).
  const Dataset& rows() const { return *rows_; }

  void predict(const double* q, std::size_t m, double* out) const;
  void weights(const double* q, std::size_t m, const std::function<void(std::size_t, const double*)>& row) const;
  LooResult loo() const { return engine_->loo(false); }
  LooDetail loo_detail(std::size_t neighbour_rows = 0, bool residuals = true) const {
    return engine_->loo_detail(neighbour_rows, residuals);
  }
  LooDetail loo_residuals() const { return engine_->loo_residuals(); }
  /// A nearest-neighbour policy's bandwidths at `count` spread rows (Attention::reach); empty
  /// for a score, a learned metric (its units are the map's) or no policy.
  std::vector<double> reach(std::size_t count) const;
  /// Each query's distance to its nearest training row in bandwidths (Pooling::nearest_distances;
  /// with a learned metric in the map's units; adaptive: in each row's own), NaN under knn and
  /// span.
  std::vector<double> nearest_distances(const double* q, std::size_t m) const;
  /// Predictions so far whose local polynomial lost a term (Counters::dropped_rows).
  std::uint64_t dropped_rows() const { return engine_->counters().dropped_rows - uncounted_; }
  /// The in-sample fit and tr(H) (the degrees of freedom).
  InSample insample() const { return engine_->insample(false); }
  /// Predicts into out and returns the band at `level` (see Band); `loo` from loo_residuals()
  /// (or loo_detail()).
  Band predict_band(const double* q, std::size_t m, double level, const LooDetail& loo, double* out) const;
  /// The same centred on `centre`'s estimate with its standard error where it is given
  /// (Interval::rbc: the Fitted of bias_corrected(model) on the same data), the multiplier then
  /// Student's t with 1 / sum a_i^2 degrees of freedom over the normalised kernel weights a (the
  /// noise variance is their mean of squared residuals); `se` stays the standard error of `out`. `critical`, when
  /// given, is the multiplier (a simultaneous band's).
  Band predict_band(const double* q, std::size_t m, double level, const LooDetail& loo, double* out,
                    const Fitted* centre, std::optional<double> critical) const;
  /// The tube formula's critical value for a band over these m queries (one x column; any order,
  /// ties allowed): of this fit's estimate, or with `centre` (rbc) of centre's, in the t form
  /// with nu the harmonic mean over the queries of 1 / sum a_i^2 (as predict_band's). Throws UsageError
  /// for several x columns.
  Simultaneous simultaneous(const double* q, std::size_t m, double level, const Fitted* centre = nullptr) const;
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
  WeighedRows rows_;  // the training rows with the model's robustness weights
  std::optional<MetricMap> map_;
  std::size_t d_;                        // x columns of the queries
  std::size_t n_;                        // training rows (a weight row's length)
  std::vector<double> weight_;           // each row's sample times robustness weight (empty: all 1)
  mutable std::uint64_t uncounted_ = 0;  // dropped rows of passes that repeat a prediction (slopes' se)
  std::unique_ptr<const Pooling> engine_;  // Attention, or ScoreAttention for a score other than gaussian
};

}  // namespace nwreg
