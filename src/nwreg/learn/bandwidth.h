#pragma once
/// Choosing the bandwidth: rules of thumb, and learning it by gradient descent on the
/// leave-one-out error (the objective and its gradient are set out in docs/bandwidths.md).

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nwreg/engine/options.h"
#include "nwreg/engine/pooling.h"
#include "nwreg/engine/results.h"
#include "nwreg/data/dataset.h"
#include "nwreg/learn/criteria.h"
#include "nwreg/learn/rules.h"
#include "nwreg/learn/series.h"

namespace nwreg {


enum class Optimizer {
  line_search,  //!< "auto": scan of log h, then gradient descent with backtracking line search
  sgd,          //!< "sgd": fixed-rate steps, exactly `epochs` of them, no scan (the d2l run)
  adam,         //!< "adam": Adam's steps, exactly `epochs` of them (learned scores)
};
enum class Parameter {
  log_h,  //!< theta = log h: scale-free steps, h stays positive
  w,      //!< w = 1/h, as the d2l textbook writes the Gaussian: s = -((q - x) w)^2 / 2
};
enum class Loss {
  mean,  //!< (1/n) sum_j (y_j - f_-j)^2, the LOO mean squared error
  sum,   //!< sum_j (y_j - f_-j)^2, as the d2l run
};


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
  /// over all rows. 0 = every row. sgd always uses every row. The descent's rows, unset, are
  /// every row where a leave-one-out pass costs O(n log n) (descent_rows_for), else
  /// sampled_descent_rows: a learned metric and scores keep their sample.
  std::size_t scan_rows = 1000;
  std::optional<std::size_t> descent_rows;
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
  /// tr(H) at `bandwidth`, where the pass over every row that made loo_mse made it too
  /// (LooResult::trace); else NaN.
  double trace = std::numeric_limits<double>::quiet_NaN();
  double criterion = 0;        //!< the criterion's value at `bandwidth` over every row (LOO: loo_mse)
  std::vector<Epoch> history;  //!< epoch 0 first; thinned past max_history (record_epoch)
  bool converged = false;      //!< line search: tolerance met or no further decrease possible
  std::string stop_reason;     //!< "tolerance", "no further decrease", "epoch cap", "epochs done"
  int evaluations = 0;         //!< LOO passes, the scan's and the final full one included
  int scan_evaluations = 0;    //!< of which the scan's
  Counters work;               //!< every pass's kernel evaluations key by key and rows by moments or transforms
  std::size_t descent_rows = 0;  //!< rows whose LOO error the descent minimised (n = all)
  std::size_t start_rows = 0;    //!< rows the start points descended on before the best went on (0: descent_rows)
  bool scan_widest = false;    //!< the scan's best point was its widest bandwidth (4 x the range)
  std::vector<std::size_t> smoothed_out;  //!< several columns: those whose bandwidth is at its top (smoothed_out_at)
  /// A local polynomial in one column: the smallest bandwidth at which the fit's variance
  /// nowhere in the x range exceeds one observation's (0: none); the search stays above it.
  double stable_floor = 0;
  /// A local polynomial in several columns: the fewest effective neighbours of the kernel weights
  /// (NW's) the search allows, the local fit's coefficients + 1 (0: none), and theirs at
  /// `bandwidth` (0 where no floor applies).
  double corner_neighbours = 0;
  std::optional<double> constant_y;  //!< y's one value where it is constant (no search made)
  double kernel_neighbours = 0;
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

/// The rows the descent minimises the LOO error of, unless FitOptions::descent_rows says: where
/// sums by moments make a leave-one-out pass O(n log n) (one continuous x column, no leave-block-
/// out), every row (0); elsewhere (several columns, leave-block-out, metrics, scores) a sample of
/// sampled_descent_rows spread over x.
inline constexpr std::size_t sampled_descent_rows = 50000;
std::size_t descent_rows_for(const Dataset& data, const FitOptions& options);

/// The remedies a warning may suggest, less those already given (--criterion aicc when it was
/// the criterion; --min-neighbours 5 when it was at least 5), and empty entries.
std::vector<std::string> untried(const FitOptions& options, const std::vector<std::string>& remedies);
/// "a", "a or b", "a, b, or c".
std::string either(const std::vector<std::string>& remedies);

/// Why a learned bandwidth is suspect, one sentence each (none: empty): a fit that nearly
/// interpolates (fewer than 3 effective neighbours, or than (n - 1) / 2 for tiny n, when
/// `neighbours` is known, or with one x
/// column a bandwidth below the median gap between neighbouring distinct x), a descent stopped by the epoch cap, a criterion that kept
/// falling towards the widest bandwidth (no structure found).
std::vector<std::string> fit_warnings(const Dataset& data, const FitResult& fit, std::optional<double> neighbours,
                                      const FitOptions& options);

/// Below how many effective neighbours a fit of n rows nearly interpolates: about 3, and at
/// most half of the n - 1 there can be (4 rows: 1.5).
double few_neighbours(std::size_t n);


/// Where a line search ended.
struct Descent {
  std::vector<double> theta;  //!< the parameters reached
  double loss = 0;            //!< the objective there
  int epochs = 0;             //!< accepted steps
  bool converged = false;
  std::string stop_reason;    //!< "tolerance", "no further decrease", "epoch cap" (or Rivalry's)
  /// The inverse Hessian estimate reached (d x d, row-major), to go on from (line_search).
  std::vector<double> curvature;
};

/// Per-parameter bounds of a descent, lo[k] <= theta[k] <= hi[k] (empty: none); a step that
/// takes parameter k up past snap[k] (where given) goes on to hi[k] at once.
struct Box {
  std::vector<double> lo, hi, snap;
  bool empty() const { return lo.empty(); }
};

/// With several x columns, a continuous column whose learned bandwidth rises past
/// smoothed_out_from times its range is smoothed out: its bandwidth goes to smoothed_out_at
/// times its range, where its kernel weighs every pair of rows alike (to about 1e-12; Laplace's,
/// 1e-6), and stays
/// there unless the criterion's slope turns back (an irrelevant column's h would otherwise
/// creep upwards by a factor of about 1.4 an epoch for ever).
inline constexpr double smoothed_out_from = 10, smoothed_out_at = 1e6;

/// Quasi-Newton descent from theta (BFGS directions) with Armijo backtracking, no step
/// moving a parameter by more than 1: the loss never rises (the exact loss, with `accuracy`
/// below). With a `box`, each trial point is
/// projected onto it and the Armijo test measures the step actually taken (projected gradient
/// descent), so a parameter whose best value is a bound lands there in a step or two; `eval`
/// should report 0 for a gradient component that points out of the box at a bound. `eval` gives
/// the objective and its gradient (mse = +inf where theta is unusable); `record` sees (epoch,
/// theta, loss) after each accepted step, epoch 0 first. Stops per FitOptions::tol and epochs.
/// `curvature` (an earlier Descent's) goes on from that inverse Hessian estimate instead of
/// plain gradient steps. Throws DataError when the start point is unusable (but see Rivalry).
///
/// `accuracy`, when given, lets trial points be measured more cheaply: before each evaluation
/// the search calls it with the error the loss may have there (absolute; 0: none) and the loss
/// it is measured against, and it returns a bound on the error of the evaluations that follow
/// (0: exact, as without it). A trial may err by 1% of its step's first-order decrease. The
/// Armijo test is read from such measures only where it comes out clear of the errors of both
/// points (a pass by more than their sum: the exact loss then decreases as the test asks, or a
/// failure by more); within them, and after a refusal, the points are measured again exactly.
/// Every stopping test, and the loss returned, are on exact measures (but a Rivalry's give-up:
/// below); the losses `record` sees may be loose ones, within their bounds (the last one too:
/// `descend` mends it in the history).
using Accuracy = std::function<double(double error, double loss)>;

/// A descent that only competes with others for the best point (the further start points of a
/// fit). `optional_start`: an unusable start point returns at once, loss +inf, nothing
/// recorded and stop reason "the start point is unusable", instead of throwing. `give_up`,
/// when given, is asked after each accepted step with theta and a lower bound on the loss
/// there; true ends the descent at that point (not converged, stop reason "another start's
/// basin", the loss as measured there, perhaps loosely: not measured again exactly).
struct Rivalry {
  bool optional_start = false;
  std::function<bool(const std::vector<double>& theta, double loss_low)> give_up;
};
Descent line_search(std::vector<double> theta, const FitOptions& options,
                    const std::function<LooResult(const std::vector<double>&)>& eval,
                    const std::function<void(int, const std::vector<double>&, double)>& record,
                    const Box& box = {}, const std::vector<double>& curvature = {}, const Accuracy& accuracy = {},
                    const Rivalry& rivalry = {});

/// `epochs` fixed-rate steps from theta: Adam's (Kingma and Ba 2015: beta1 0.9, beta2 0.999,
/// eps 1e-8, rate options.lr) or, with `adam` false, plain gradient steps theta -= lr g. The
/// loss may rise on the way: the lowest point met is returned. Stops early, "not finite", where
/// a step leaves the objective undefined. Throws DataError when the start point is unusable.
Descent fixed_steps(std::vector<double> theta, const FitOptions& options, bool adam,
                    const std::function<LooResult(const std::vector<double>&)>& eval,
                    const std::function<void(int, const std::vector<double>&, double)>& record);

/// The scan's grid of common scales c (h_k = c sd_k), from a quarter of the smallest gap
/// between x values to four times the range, ten points a decade. Exposed for tests.
std::vector<double> scan_scales(const Dataset& data);
/// The same from the x columns' statistics (x_column_stats), where they are at hand.
std::vector<double> scan_scales(const std::vector<ColumnStats>& stats);

}  // namespace nwreg
