#pragma once
/// Choosing the bandwidth: rules of thumb, and learning it by gradient descent on the
/// leave-one-out error (the objective and its gradient are set out in the README, "Choosing the
/// bandwidth").

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nwreg/engine/attention.h"
#include "nwreg/data/dataset.h"

namespace nwreg {

/// A --bandwidth (or --init) value as given on the command line.
struct BandwidthSpec {
  enum class Kind { learn, fixed, silverman, scott, plugin, knn } kind = Kind::learn;
  std::vector<double> values;  //!< Kind::fixed: one bandwidth, or one per x column
  std::size_t knn = 0;         //!< Kind::knn: K, or 0 for auto
  bool adaptive = false;       //!< Kind::knn: per key (adaptive:K), not per query (knn:K)
  std::vector<bool> timed;     //!< per value: given as a time span (6h), in seconds
};

/// Parses "auto" (or ""), "silverman", "scott", "plugin", "knn:K", "adaptive:K" (K or auto), or bandwidths > 0 separated by commas,
/// each a number or a time span with a unit (90s, 15min, 6h, 3d, 2w; see parse_duration), kept
/// in seconds. Throws UsageError that starts with `option`.
BandwidthSpec parse_bandwidth_spec(const std::string& text, const std::string& option);

/// Silverman's rule per column: 0.9 min(sd, IQR/1.34) n^(-1/5) (R's bw.nrd0; sd when IQR = 0).
/// Throws DataError when a column's values are all equal.
std::vector<double> silverman_bandwidth(const Dataset& data);
/// Scott's rule per column: 1.06 sd n^(-1/(4+d)). Throws DataError when a column is constant.
std::vector<double> scott_bandwidth(const Dataset& data);

enum class Optimizer {
  line_search,  //!< "auto": scan of log h, then gradient descent with backtracking line search
  sgd,          //!< "sgd": fixed-rate steps, exactly `epochs` of them, no scan (the d2l run)
};
enum class Parameter {
  log_h,  //!< theta = log h: scale-free steps, h stays positive
  w,      //!< w = 1/h, as the d2l textbook writes the Gaussian: s = -((q - x) w)^2 / 2
};
enum class Loss {
  mean,  //!< (1/n) sum_j (y_j - f_-j)^2, the LOO mean squared error
  sum,   //!< sum_j (y_j - f_-j)^2, as the d2l run
};

/// The criterion at an in-sample fit of n keys; +inf where it is undefined (AICc once
/// tr(H) + 2 >= n, GCV once tr(H) >= n). With `gradient`, its gradient in log h from the
/// fit's (`fit.d_mse`, `fit.d_trace` must be set).
LooResult criterion_value(Criterion criterion, const InSample& fit, double n, bool gradient);

struct FitOptions {
  Optimizer optimizer = Optimizer::line_search;  //!< how to step
  Parameter parameter = Parameter::log_h;        //!< what sgd steps in (line search: log h)
  Loss loss = Loss::mean;                        //!< the objective (Criterion::loo)
  Criterion criterion = Criterion::loo;          //!< what is minimised
  int epochs = 100;          //!< line search: cap on steps; sgd: the number of steps
  double lr = 0.5;           //!< line search: first step length in log h; sgd: learning rate
  double tol = 1e-9;         //!< line search stops when |dL/dlog h| <= tol * L or a step moves
                             //!< every log h by <= tol (h known to a relative tol)
  std::optional<std::vector<double>> init;  //!< start bandwidth; skips the scan. Default: scan
  EngineOptions engine;      //!< pruning tolerance and threads for every LOO pass
  /// auto: the scan and the descent estimate the LOO error from this many rows spread evenly
  /// over x (each still attending to every other key); the error reported is then computed
  /// over all rows. 0 = every row. sgd always uses every row.
  std::size_t scan_rows = 1000;
  std::size_t descent_rows = 50000;
  /// Bounds the search to bandwidths whose fit averages at least this many effective
  /// neighbours (1 / sum a^2 of the leave-one-out weights, over neighbour_rows rows); 0 = none.
  double min_neighbours = 0;
  std::size_t neighbour_rows = 2000;  //!< rows (spread over x) the effective neighbours are averaged over
  /// Called after each scan point: (points done, points in all, its bandwidths, its LOO error;
  /// +inf where some row has no other key in reach).
  std::function<void(std::size_t, std::size_t, const std::vector<double>&, double)> on_scan;
};


struct FitResult {
  std::vector<double> bandwidth;
  double loo_mse = 0;          //!< mean LOO squared error at `bandwidth`
  double criterion = 0;        //!< the criterion's value at `bandwidth` over every row (LOO: loo_mse)
  std::vector<Epoch> history;  //!< epoch 0 first; thinned past max_history (record_epoch)
  bool converged = false;      //!< line search: tolerance met or no further decrease possible
  std::string stop_reason;     //!< "tolerance", "no further decrease", "epoch cap", "epochs done"
  int evaluations = 0;         //!< LOO passes, the scan's and the final full one included
  int scan_evaluations = 0;    //!< of which the scan's
  std::size_t descent_rows = 0;  //!< rows whose LOO error the descent minimised (n = all)
  bool scan_widest = false;    //!< the scan's best point was its widest bandwidth (4 x the range)
};

/// Checks epochs, lr and tol. Throws UsageError naming the option (--epochs, --lr, --tol).
void check_fit_options(const FitOptions& options);

/// Learns the bandwidth: the scan of common scales (unless FitOptions::init), then the descent;
/// with several columns, descents also from the best scale divided and multiplied by 10^0.5,
/// keeping the lowest (the history is the winner's). `on_epoch`, when set, sees each history
/// row as it is made (epoch 0 starts each descent).
/// Throws DataError for fewer than 2 rows or a constant column, UsageError for bad options.
FitResult fit_bandwidth(const Dataset& data, const FitOptions& options,
                        const std::function<void(const Epoch&)>& on_epoch = {});

/// Why a learned bandwidth is suspect, one sentence each (none: empty): a fit that nearly
/// interpolates (fewer than 3 effective neighbours, or than (n - 1) / 2 for tiny n, when
/// `neighbours` is known, or with one x
/// column a bandwidth below the median gap between neighbouring distinct x), a descent stopped by the epoch cap, a criterion that kept
/// falling towards the widest bandwidth (no structure found).
std::vector<std::string> fit_warnings(const Dataset& data, const FitResult& fit, std::optional<double> neighbours,
                                      const FitOptions& options);

/// The rule behind `--leave-out auto`: is this a series measured at evenly spaced x whose errors
/// are correlated? Leave-one-out then undersmooths (a neighbour left in the fit carries the
/// left-out point's error), and leave-block-out cross-validation is used instead.
///  - evenly spaced: one x column, no sample weights, at least 40 rows, no repeated x, every gap
///    between consecutive sorted x within 1% of a whole number of median gaps, at most 5% of
///    them longer than one (a few missing points);
///  - correlated: the estimate r = 1 + 2 c of the errors' lag-1 correlation exceeds 0.3, c the
///    lag-1 autocorrelation of the differences of consecutive residuals (in x order) of the local
///    linear Gaussian fit at the plug-in bandwidth. Differences of errors with lag-1 correlation
///    rho have lag-1 correlation -(1 - rho) / 2, so r estimates rho whatever the variance; the
///    differences remove what the pilot left of the trend, and the plug-in's block fits are
///    little disturbed by correlated errors;
///  - K = ceil(log 0.05 / log min(r, 0.95)), the lag at which an AR(1) process with that rho has
///    correlation 0.05, between 1 and n / 20.
/// Chosen on bench/bandwidth_quality's simulations (bench/RESULTS.md).
struct SeriesCheck {
  bool evenly_spaced = false;
  bool pilot = false;          //!< the plug-in bandwidth was defined (else no test)
  double autocorrelation = 0;  //!< r, the errors' estimated lag-1 correlation (when tested)
  std::size_t leave_out = 0;   //!< K; 0 = leave one out
};
/// Up to this many rows every residual is used; beyond, series_runs runs of three consecutive
/// rows spread over x.
inline constexpr std::size_t series_rows = 3000, series_runs = 1000;
SeriesCheck check_series(const Dataset& data, ThreadPool* pool);

/// Where a line search ended.
struct Descent {
  std::vector<double> theta;  //!< the parameters reached
  double loss = 0;            //!< the objective there
  int epochs = 0;             //!< accepted steps
  bool converged = false;
  std::string stop_reason;    //!< "tolerance", "no further decrease" or "epoch cap"
};

/// Gradient descent from theta with Barzilai-Borwein steps and Armijo backtracking, no step
/// moving a parameter by more than 1: the loss never rises. `eval` gives the objective and its
/// gradient (mse = +inf where theta is unusable); `record` sees (epoch, theta, loss) after each
/// accepted step, epoch 0 first. Stops per FitOptions::tol and epochs. Throws DataError when
/// the start point is unusable.
Descent line_search(std::vector<double> theta, const FitOptions& options,
                    const std::function<LooResult(const std::vector<double>&)>& eval,
                    const std::function<void(int, const std::vector<double>&, double)>& record);

/// The scan's grid of common scales c (h_k = c sd_k), from a quarter of the smallest gap
/// between x values to four times the range, ten points a decade. Exposed for tests.
std::vector<double> scan_scales(const Dataset& data);

}  // namespace nwreg
