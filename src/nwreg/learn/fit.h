#pragma once
/// The fit pipeline: from a data set and a plan to a model. The bandwidth is learned (scan and
/// descent on the criterion, then a learned metric if asked), taken from a rule of thumb or
/// given; then the leave-one-out statistics and the warnings about a learned bandwidth. The
/// caller hears of progress through callbacks and formats it as it likes.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nwreg/learn/bandwidth.h"
#include "nwreg/data/dataset.h"
#include "nwreg/model/model.h"

namespace nwreg {

/// How to choose the bandwidth, and what to compute besides.
struct FitPlan {
  BandwidthSpec::Kind kind = BandwidthSpec::Kind::learn;
  std::vector<double> fixed;  //!< Kind::fixed: one bandwidth (for every column), or one per x column;
                              //!< Kind::knn: the columns' scales when given (else learned or loess's)
  NeighbourBandwidth neighbour_policy;  //!< Kind::knn: the policy and K (or F), or 0 to choose it by the criterion
  FitOptions fit;             //!< Kind::learn; a single fit.init value is spread over the columns
  std::string init_rule;      //!< "silverman", "scott" or "plugin": the start of the descent
  bool metric_full = false;   //!< learn a linear map after the bandwidths (Gaussian NW)
  std::size_t rank = 0;       //!< its rows; 0 = one per x column
  /// Check whether the data are a series with correlated errors (check_series) and leave
  /// blocks out if so.
  bool leave_out_auto = false;
  bool loo_statistics = true;  //!< the LOO error, R^2 and effective neighbours, for any kind
  std::size_t robust = 0;      //!< robustness iterations after the first fit (learn/robust.h)
  /// --score: another than gaussian has no bandwidth (kind learn, nothing fixed); a learned one
  /// (general, additive) learns its parameters by fit.optimizer (learn/score_fit.h).
  Score score = Score::gaussian;
  std::size_t hidden = 8;      //!< additive: units
  bool bias = true;            //!< additive: b inside the tanh
  std::uint64_t seed = 0;      //!< additive: the random start's seed
  /// Model::curve: LOO, GCV, AICc and df over the grid the bandwidth is chosen on (the scan's
  /// common scales, or K or F of a nearest-neighbour policy), whatever chose it.
  bool curve = false;
  /// Compare NW with local linear and warn where local linear's error is under half (advise_method);
  /// off for refits whose warnings nobody reads (the test's permutations).
  bool advise = true;
  /// fit_model on rows given up: from this many rows of one continuous column it puts them in
  /// x order, and its engines read x in place.
  std::size_t in_place_rows = std::size_t{1} << 20;
};

/// A descent that stopped: the metric's or the bandwidth's, after `epochs` epochs, why, the
/// leave-one-out passes it took, the rows whose error its epochs' losses are (n: every row), the
/// fewer rows the start points' epochs were over (0: none), and the bandwidth's passes' work,
/// scan and report included (FitResult::work; zeros for the metric's and a score's).
struct DescentStop {
  bool metric = false;
  int epochs = 0;
  std::string reason;
  int evaluations = 0;
  std::size_t rows = 0, start_rows = 0;
  Counters work;
};

/// What fit_model reports as it goes; each may be empty.
struct FitEvents {
  /// leave_out_auto found a series and leaves `series.leave_out` keys out on each side.
  std::function<void(const SeriesCheck& series)> on_series;
  /// After each scan point (see FitOptions::on_scan).
  std::function<void(std::size_t, std::size_t, const std::vector<double>&, double)> on_scan;
  /// After each epoch: the bandwidth's, then the metric's, numbered on from the bandwidth's.
  std::function<void(const Epoch&)> on_epoch;
  /// A descent stopped (DescentStop).
  std::function<void(const DescentStop&)> on_stop;
};

/// Where learning both is cheap (at most advice_rows rows), NW's learned fit is compared with
/// local linear's at its own learned bandwidth: when local linear's leave-one-out error is under
/// half NW's (a trend: NW bends toward the mean at the ends), fit_model adds a warning with both.
inline constexpr std::size_t advice_rows = 2000;
void advise_method(Model& m, const Dataset& data, const FitPlan& plan, const EngineOptions& engine);

/// Chooses the bandwidth (and metric) per the plan, with the kernel, method and threads of
/// `engine`, and returns the model with its statistics and warnings. Throws DataError for data
/// the plan cannot use (a row out of reach, a rule that needs spread, too few rows) and
/// UsageError for a bandwidth of the wrong size.
Model fit_model(const Dataset& data, const FitPlan& plan, EngineOptions engine, const FitEvents& events = {});
/// The same on rows the caller gives up, which it may leave in x order: from
/// FitPlan::in_place_rows rows of one continuous column (no sample weights, robustness
/// iterations, learned score or metric, or compact kernel) the engines then read x in place
/// rather than each copying it, and the model is the same (the row order changes only sums
/// over rows, such as y's variance, in their last bits).
Model fit_model(Dataset&& data, const FitPlan& plan, EngineOptions engine, const FitEvents& events = {});

/// Whether engines may read these rows' x in place once put_in_x_order has sorted them (fit_model
/// on rows given up, and predict on its training rows): at least `min_rows` rows of one
/// continuous column, no sample weights, a distance score with no learned metric, no robustness
/// weights (they keep a row's place) and a kernel without compact support (whose errors name a
/// row).
bool x_in_place_pays(const Dataset& data, Kernel kernel, bool robust, bool learned_score_or_metric,
                     std::size_t min_rows = FitPlan{}.in_place_rows);

}  // namespace nwreg
