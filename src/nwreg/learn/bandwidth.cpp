#include "nwreg/learn/bandwidth.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string_view>
#include <utility>

#include "nwreg/engine/attention.h"
#include "nwreg/engine/estimator.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/timestamp.h"
#include "nwreg/learn/coordinates.h"
#include "nwreg/learn/plugin.h"

namespace nwreg {
namespace {

std::vector<double> scaled(const std::vector<ColumnStats>& stats, double c) {
  std::vector<double> h;
  for (const auto& s : stats) h.push_back(c * s.sd);
  return h;
}

// A local polynomial in one x column: the smallest bandwidth above which the fit's variance
// nowhere in the x range exceeds one observation's, max_q sum_i l_i(q)^2 <= 1 over 101 points
// spread over [min x, max x] (l the equivalent weights; NW's are <= 1 everywhere). Below it the
// curve swings where the data are sparse: a line through the two or three keys that carry the
// weight, extrapolated across a gap or the thin end of a skewed design. The sum falls as h
// grows except far below the spacing (where the fit is the nearest key's y again), so the grid
// is searched from its widest end for the first bandwidth that fails, then refined between
// grid points. 0 where every bandwidth of the grid passes.
double stable_floor(const Dataset& data, const EngineOptions& engine, const std::vector<double>& grid, double sd) {
  double lo = data.x[0], hi = data.x[0];
  for (double v : data.x) lo = std::min(lo, v), hi = std::max(hi, v);
  std::vector<double> q(101);
  for (std::size_t j = 0; j < q.size(); ++j) q[j] = lo + (hi - lo) * static_cast<double>(j) / 100;
  EngineOptions e = engine;
  e.out_of_reach = OutOfReach::error;
  e.leave_out = 0;
  std::vector<double> out(q.size()), w2(q.size());
  Attention engine_at(data, e);  // the keys laid out once, each bandwidth set on them
  auto fails = [&](double c) {
    try {
      engine_at.set_bandwidth({c * sd});
      engine_at.predict_detail(q.data(), q.size(), {}, out.data(), w2.data(), nullptr);
    } catch (const DataError&) {  // a point of the range no key reaches
      return true;
    }
    return !(*std::max_element(w2.begin(), w2.end()) <= 1);
  };
  std::size_t k = grid.size();
  while (k > 0 && !fails(grid[k - 1])) --k;
  if (k == grid.size()) return grid.back() * sd;  // even the widest fails: hold it there
  if (k == 0) return 0;
  double bad = std::log(grid[k - 1]), good = std::log(grid[k]);
  for (int i = 0; i < 20; ++i) {
    const double mid = 0.5 * (bad + good);
    (fails(std::exp(mid)) ? bad : good) = mid;
  }
  return std::exp(good) * sd;
}

// A local polynomial in several x columns: the fewest keys a learned bandwidth may weigh, in
// effective numbers of the kernel weights (1 / sum a^2 of a row's leave-one-out kernel weights,
// normalised; NW's weights), the local fit's coefficients + 1. With fewer, the bandwidths are
// small against the spacing in every column and one or two keys carry each row's weight: the
// local design has too little spread, terms drop, and the leave-one-out error is the nearest
// key's, flat in h, a corner the descent cannot leave (0 epochs), or a polynomial through a
// handful of keys whose equivalent weights swing with the last bit of h. The local fit's own
// equivalent weights cannot tell: they are what degenerates. One column has stable_floor
// instead; 0 for NW and one column. At most (n - 1) / 2, which the scan's widest bandwidths pass.
double corner_floor(const Dataset& data, const EngineOptions& engine) {
  if (method_degree(engine.method, engine.degree) == 0 || data.d < 2) return 0;
  const auto terms = static_cast<double>(Estimator(engine.method, engine.degree, data.d).p());
  return std::min(terms + 1, (static_cast<double>(data.n) - 1) / 2);
}

EngineOptions kernel_weights_of(EngineOptions engine) {
  engine.method = Method::nw;
  engine.degree = 0;
  return engine;
}

// The objective (LOO or another criterion) over a fixed set of rows (all by default), in log h.
class Objective {
 public:
  /// `stats`: x_column_stats(data), made before the engine's keys (each sorts a copy of a column).
  Objective(const Dataset& data, const FitOptions& options, const std::vector<ColumnStats>& stats)
      : engine_(data, options.engine), loss_(options.loss), criterion_(options.criterion),
        min_neighbours_(options.min_neighbours), neighbour_rows_(options.neighbour_rows),
        tolerance_(options.engine.tolerance), in_force_(tolerance_) {
    for (std::size_t i = 0; i < data.n; ++i) keys_ += data.weight.empty() || data.weight[i] > 0;
    // Leave-block-out below the spacing of x: each row's estimate is the nearest key beyond its
    // block, which says nothing about the fit at that bandwidth (it interpolates).
    if (options.engine.leave_out > 0 && data.d == 1) min_h_ = typical_spacing(data, 0);
    if (method_degree(options.engine.method, options.engine.degree) > 0 && data.d == 1 && !is_categorical(data.kind(0))) {
      stable_h = stable_floor(data, options.engine, scan_scales(stats), stats[0].sd);
      min_h_ = std::max(min_h_, stable_h);
    }
    corner_neighbours = corner_floor(data, options.engine);
    if (corner_neighbours > 0) kernel_weights_.emplace(data, kernel_weights_of(options.engine));
    use_rows(0);
    const EngineOptions& e = options.engine;
    if (data.d > 1 && method_degree(e.method, e.degree) == 0 && !is_compact(e.kernel) && e.tolerance > 0 &&
        !e.neighbour_policy && !uses_in_sample(criterion_) && min_neighbours_ == 0) {
      const auto [lo, hi] = std::minmax_element(data.y.begin(), data.y.end());
      y_range_ = *hi - *lo;
    }
  }
  double stable_h = 0;  //!< the local fit's floor (stable_floor), 0 where none applies
  double corner_neighbours = 0;  //!< the local fit's floor in effective neighbours (corner_floor), 0: none

  /// Restricts later evaluations to `count` rows spread over x (0 or >= n: all rows, listed
  /// nowhere: a pass over every row makes them as it goes).
  void use_rows(std::size_t count) {
    count_ = engine_.spread_size(count == 0 ? std::numeric_limits<std::size_t>::max() : count);
    rows_.reset();
    if (count_ < engine_.spread_size(std::numeric_limits<std::size_t>::max())) rows_ = engine_.spread_rows(count_);
  }
  std::size_t rows() const { return count_; }
  /// The rows the kernel weights' effective neighbours are averaged over (corner_floor), and
  /// sets them; returns the count before.
  std::size_t use_neighbour_rows(std::size_t count) { return std::exchange(neighbour_rows_, count); }

  /// Lets the evaluations from here on err by up to `error` (in the objective's units; 0: none)
  /// against the loss `loss`, and returns the bound in force (line_search's Accuracy). Several
  /// columns, Gaussian or Laplace NW, leave-one-out: the passes then prune at a looser
  /// tolerance t. Each row's prediction is within t R of the sum over every key (R = max y -
  /// min y; attention.h), so the mean squared error moves by at most 2 t R sqrt(mse) + (t R)^2,
  /// within `error` at t = error / (3 R sqrt(mse)) (mse the loss per row, the rows' weighted
  /// mean). t is at most loose_tolerance, and the options' tolerance (exact: 0 returned) where
  /// the error allows no more. Elsewhere every pass is at the options' tolerance.
  double allow(double error, double loss) {
    const double m = mean(loss);
    double t = y_range_ > 0 && error > 0 && m > 0 && std::isfinite(m)
                   ? std::min(mean(error) / (3 * y_range_ * std::sqrt(m)), loose_tolerance)
                   : 0.0;
    if (!(t >= min_loosening * tolerance_)) t = tolerance_;
    if (t != in_force_) engine_.set_tolerance(in_force_ = t);
    if (t == tolerance_) return 0;
    const double bound = 2 * t * y_range_ * std::sqrt(m) + (t * y_range_) * (t * y_range_);
    return loss_ == Loss::sum ? bound * static_cast<double>(count_) : bound;
  }
  /// The loosest tolerance allow sets (each prediction within 1e-6 R of every key's sum), and
  /// the least loosening it takes: below 1e4 times the options' tolerance the reach shrinks by
  /// little (T by the log of the ratio), and the point measured is more likely to be measured
  /// again exactly (line_search).
  static constexpr double loose_tolerance = 1e-6, min_loosening = 1e4;

  /// The objective at h; +inf where a row has no other key in reach (compact kernels), the
  /// criterion is undefined, or h lies out of bounds (bounded: below min_h_, the corner floor
  /// or min_neighbours).
  LooResult at(const std::vector<double>& h, bool gradient) {
    ++evaluations;
    // Without the gradient (the scan, column_grid's points) a point below the corner floor is
    // +inf whatever the local fit gives there: the kernel weights' pass (NW's) first, the local
    // fit's (p(p + 1) / 2 moments a key) only above it. On the corner recipe most of the 512
    // points in 3 columns lie below. With the gradient the pass runs as before: sgd steps by
    // the gradient of a point below the floor.
    if (!gradient && below_floor(h)) {
      LooResult r;
      r.mse = std::numeric_limits<double>::infinity();
      return r;
    }
    engine_.set_bandwidth(h);
    if (uses_in_sample(criterion_)) {
      const InSample fit = engine_.insample(gradient, listed());
      if (!std::isfinite(fit.mse))
        throw DataError("the residual sum of squares overflows: y values are too large to square");
      return bounded(criterion_value(criterion_, fit, keys_, gradient), h, gradient);
    }
    LooResult r = engine_.loo(gradient, listed());
    if (r.out_of_reach) return r;
    if (!std::isfinite(r.mse))
      throw DataError("the leave-one-out error overflows: y values are too large to square");
    const double factor = loss_ == Loss::sum ? static_cast<double>(count_) : 1.0;
    r.mse *= factor;
    for (double& g : r.gradient) g *= factor;
    return bounded(r, h, gradient);
  }
  double mean(double objective) const {
    return loss_ == Loss::sum ? objective / static_cast<double>(count_) : objective;
  }

  int evaluations = 0;
  /// The work of every pass so far (Counters): the kernel evaluations key by key and the rows
  /// by moments, series or transforms, of the fit's engine and of its kernel weights'
  /// (corner_floor).
  Counters work() const {
    Counters c = engine_.counters();
    if (kernel_weights_) {
      const Counters k = kernel_weights_->counters();
      c.pairs += k.pairs;
      c.moment_rows += k.moment_rows;
      c.transformed_rows += k.transformed_rows;
    }
    return c;
  }
  /// The leave-one-out mean squared error at h over every row (for the report).
  LooResult loo_at(const std::vector<double>& h) {
    engine_.set_bandwidth(h);
    return engine_.loo(false);
  }
  /// The kernel weights' effective neighbours at h (corner_floor); 0 where no floor applies.
  double kernel_neighbours(const std::vector<double>& h) {
    if (!kernel_weights_) return 0;
    kernel_weights_->set_bandwidth(h);
    return neighbours_of(*kernel_weights_);
  }

 private:
  Attention engine_;
  std::optional<Attention> kernel_weights_;  //!< NW on the same keys: the kernel weights' neighbours (corner_floor)
  Loss loss_;
  Criterion criterion_;
  double min_neighbours_;
  std::size_t neighbour_rows_;
  double keys_ = 0;
  double min_h_ = 0;
  double tolerance_ = 0;  //!< the options' pruning tolerance,
  double in_force_ = 0;   //!< and the one the passes use now (allow)
  double y_range_ = 0;    //!< max y - min y where allow may loosen the passes, else 0

  // Where the kernel weights average fewer than corner_neighbours neighbours.
  bool below_floor(const std::vector<double>& h) {
    return kernel_weights_ && kernel_neighbours(h) < corner_neighbours;
  }
  // Out of bounds (+inf) below min_h_, below the corner floor (`floor`: not tested before the
  // pass), or where the fit averages fewer than min_neighbours_.
  LooResult bounded(LooResult r, const std::vector<double>& h, bool floor) {
    if (h[0] < min_h_) r.mse = std::numeric_limits<double>::infinity();
    if (!std::isfinite(r.mse)) return r;
    if (floor && below_floor(h)) r.mse = std::numeric_limits<double>::infinity();
    if (min_neighbours_ > 0 && neighbours_of(engine_) < min_neighbours_) r.mse = std::numeric_limits<double>::infinity();
    return r;
  }
  double neighbours_of(const Attention& engine) const {
    try {
      return engine.loo_detail(neighbour_rows_, false).neighbours;
    } catch (const DataError&) {  // a row no other key reaches: no neighbours to count
      return 0;
    }
  }
  const std::vector<std::size_t>* listed() const { return rows_ ? &*rows_ : nullptr; }
  std::optional<std::vector<std::size_t>> rows_;  //!< the rows evaluated (none: every row)
  std::size_t count_ = 0;                          //!< how many
};

bool usable(const std::vector<double>& h) {
  return std::all_of(h.begin(), h.end(), [](double v) {
    return v > 0 && std::isfinite(v) && std::isfinite(1 / v);
  });
}

}  // namespace

namespace {

// How one descent runs beside the others of a fit: `curvature`, when given, starts from that
// inverse Hessian estimate (empty: plain gradient steps) and receives the last one. Going on
// from an earlier descent that ended at epoch `resume_at` (>= 0), its epochs are numbered on
// from there and its start point, that descent's last, is not recorded again. `loose`: trial
// points may be measured at a looser tolerance (Objective::allow). `rivalry`: how a further
// start point, which only competes with the first, may end early (line_search's).
struct Leg {
  std::vector<double>* curvature = nullptr;
  int resume_at = -1;
  bool loose = false;
  Rivalry rivalry = {};
};

// A line search from h (line_search's).
FitResult descend(const FitOptions& opt, const Coordinates& coords, const std::vector<double>& h, Objective& obj,
                  const std::function<void(const Epoch&)>& on_epoch, const Leg& leg) {
  FitResult res;
  auto eval = [&](const std::vector<double>& t) {
    const auto trial_h = coords.h(t);
    if (!usable(trial_h)) {
      LooResult r;
      r.mse = std::numeric_limits<double>::infinity();
      return r;
    }
    LooResult r = obj.at(trial_h, true);
    coords.project(t, r.gradient);
    return r;
  };
  auto record = [&](int epoch, const std::vector<double>& t, double loss) {
    if (leg.resume_at >= 0 && epoch == 0) return;
    Epoch e{std::max(leg.resume_at, 0) + epoch, coords.h(t), loss, {}};
    if (on_epoch) on_epoch(e);
    record_epoch(res.history, std::move(e));
  };
  Accuracy accuracy;
  if (leg.loose) accuracy = [&](double error, double loss) { return obj.allow(error, loss); };
  Descent dsc = line_search(coords.theta(h), opt, eval, record, coords.box(),
                            leg.curvature ? *leg.curvature : std::vector<double>{}, accuracy, leg.rivalry);
  if (leg.curvature) *leg.curvature = std::move(dsc.curvature);
  res.bandwidth = coords.h(dsc.theta);
  // The last epoch's loss as measured again exactly (its trial may have been measured loosely;
  // a rival that gave up keeps its measure: it lost).
  if (leg.loose && !res.history.empty() && res.history.back().bandwidth == res.bandwidth)
    res.history.back().loss = dsc.loss;
  res.criterion = obj.mean(dsc.loss);
  res.converged = dsc.converged;
  res.stop_reason = dsc.stop_reason;
  return res;
}

FitResult sgd(const Dataset& data, const FitOptions& opt, std::vector<double> h, Objective& obj,
              const std::function<void(const Epoch&)>& on_epoch) {
  FitResult res;
  const std::size_t d = data.d;
  LooResult cur = obj.at(h, true);
  if (cur.out_of_reach)
    throw DataError("sgd: the start bandwidth leaves training row " + std::to_string(cur.first_out_of_reach + 1) +
                    " with no other key in reach; start from a wider bandwidth");
  record_epoch(res.history, {0, h, cur.mse, {}});
  if (on_epoch) on_epoch(res.history.back());
  std::vector<double> w(d);
  for (std::size_t k = 0; k < d; ++k) w[k] = 1 / h[k];
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    for (std::size_t k = 0; k < d; ++k) {
      if (opt.parameter == Parameter::log_h) {
        h[k] = std::exp(std::log(h[k]) - opt.lr * cur.gradient[k]);
      } else {
        // theta = log h = -log|w|, so dL/dw = -(dL/dtheta) / w.
        w[k] -= opt.lr * (-cur.gradient[k] / w[k]);
        h[k] = 1 / std::abs(w[k]);
      }
    }
    if (!usable(h))
      throw DataError("sgd diverged at epoch " + std::to_string(epoch) + ": the bandwidth left the range of a double (" +
                      format_double(h[0]) + "); lower `lr`");
    cur = obj.at(h, true);
    if (cur.out_of_reach)
      throw DataError("sgd: at epoch " + std::to_string(epoch) + " training row " +
                      std::to_string(cur.first_out_of_reach + 1) + " has no other key in reach; lower `lr`");
    Epoch e{epoch, h, cur.mse, {}};
    if (on_epoch) on_epoch(e);
    record_epoch(res.history, std::move(e));
  }
  res.bandwidth = h;
  res.criterion = obj.mean(cur.mse);
  res.stop_reason = "epochs done";
  return res;
}

// A local polynomial in several columns: the common scale's best is often a poor start, the
// LOO error rough, with basins apart where one column carries little (it wants a wide bandwidth,
// the others narrow ones). A product grid over the continuous columns' bandwidths, each from 1%
// to 200% of its range in log steps (8 a column; with two or three columns), then two sweeps
// over the columns, each trying 8 such values with the others held, move the start to the best
// point found.
// `sampled`: the scan's rows are a sample of the data (more rows than scan_rows). The product
// grid is then ranked on a quarter of them first (the floor's effective neighbours too), and only
// its grid_finalists best are measured on all of them. On a scan over every row (at most
// scan_rows) each point is measured whole, so that the learned error is never above the grid's
// best there.
void column_grid(const std::vector<ColumnStats>& stats, const Coordinates& coords, Objective& obj,
                 std::vector<double>& start, double& best, bool sampled) {
  constexpr int points = 8;
  constexpr std::size_t grid_finalists = 16;
  std::vector<std::size_t> free;
  for (std::size_t k = 0; k < start.size(); ++k)
    if (coords.top[k] == 0) free.push_back(k);
  auto value = [&](std::size_t k, int i) { return stats[k].range * 0.01 * std::pow(200.0, double(i) / (points - 1)); };
  auto consider = [&](std::vector<double> h) {
    if (!usable(h)) return;
    const double loss = obj.at(h, false).mse;
    if (loss < best) best = loss, start = std::move(h);
  };
  if (free.size() == 2 || free.size() == 3) {
    const std::vector<double> base = start;
    std::vector<std::vector<double>> grid;
    std::vector<int> at(free.size(), 0);
    for (;;) {
      std::vector<double> h = base;
      for (std::size_t j = 0; j < free.size(); ++j) h[free[j]] = value(free[j], at[j]);
      if (usable(h)) grid.push_back(std::move(h));
      std::size_t j = 0;
      while (j < free.size() && ++at[j] == points) at[j++] = 0;
      if (j == free.size()) break;
    }
    const std::size_t rows = obj.rows();
    if (sampled && grid.size() > grid_finalists) {
      obj.use_rows(rows / 4);
      const std::size_t neighbour_rows = obj.use_neighbour_rows(rows / 4);  // (the floor's, on as few)
      std::vector<std::pair<double, std::size_t>> ranked;
      for (std::size_t g = 0; g < grid.size(); ++g) ranked.emplace_back(obj.at(grid[g], false).mse, g);
      obj.use_neighbour_rows(neighbour_rows);
      std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<std::vector<double>> finalists;
      for (std::size_t g = 0; g < grid_finalists; ++g) finalists.push_back(std::move(grid[ranked[g].second]));
      grid = std::move(finalists);
      obj.use_rows(rows);
    }
    for (auto& h : grid) consider(std::move(h));
  }
  for (int sweep = 0; sweep < 2; ++sweep)
    for (std::size_t k : free)
      for (int i = 0; i < points; ++i) {
        std::vector<double> h = start;
        h[k] = value(k, i);
        consider(std::move(h));
      }
}

// y's one value where every row of positive weight holds it.
std::optional<double> constant_y(const Dataset& data) {
  std::optional<double> y;
  for (std::size_t i = 0; i < data.n; ++i) {
    if (!data.weight.empty() && !(data.weight[i] > 0)) continue;
    if (y && data.y[i] != *y) return std::nullopt;
    y = data.y[i];
  }
  return y;
}

}  // namespace

std::vector<double> scan_scales(const Dataset& data) { return scan_scales(x_column_stats(data, "learning the bandwidth")); }

std::vector<double> scan_scales(const std::vector<ColumnStats>& stats) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& s : stats) {
    lo = std::min(lo, 0.25 * s.min_gap / s.sd);
    hi = std::max(hi, 4 * s.range / s.sd);
  }
  lo = std::max(lo, hi * 1e-8);  // at most eight decades
  std::vector<double> c;
  const int steps = static_cast<int>(std::ceil(10 * std::log10(hi / lo)));
  for (int i = 0; i <= steps; ++i) c.push_back(lo * std::pow(hi / lo, double(i) / steps));
  return c;
}

double few_neighbours(std::size_t n) { return std::min(3.0, (static_cast<double>(n) - 1) / 2); }

std::size_t descent_rows_for(const Dataset& data, const FitOptions& options) {
  if (options.descent_rows) return *options.descent_rows;
  const bool linear = data.d == 1 && !is_categorical(data.kind(0)) && options.engine.leave_out == 0;
  return linear ? 0 : sampled_descent_rows;
}

void check_fit_options(const FitOptions& options) {
  if (!(options.min_neighbours >= 0) || !std::isfinite(options.min_neighbours))
    throw ParameterError("min_neighbours", "must be >= 0, got " + format_double(options.min_neighbours));
  if (uses_in_sample(options.criterion)) {
    if (options.optimizer == Optimizer::sgd || options.loss == Loss::sum)
      throw ParameterError("criterion", to_string(options.criterion) +
                                            " only with the line search on the mean loss (the d2l run minimises the LOO error)");
  }
  if (options.epochs < 0) throw ParameterError("epochs", "must be >= 0, got " + std::to_string(options.epochs));
  if (!(options.lr > 0) || !std::isfinite(options.lr))
    throw ParameterError("lr", "must be > 0, got " + format_double(options.lr));
  if (!(options.tol >= 0) || !std::isfinite(options.tol))
    throw ParameterError("tol", "must be >= 0, got " + format_double(options.tol));
}

namespace {

// Every bandwidth fits a constant y exactly (its LOO error 0 everywhere): no search; the
// widest of the scan, where the fit is plainly that constant.
FitResult constant_fit(const Dataset& data, const FitOptions& options, const Coordinates& coords, double y,
                       const std::function<void(const Epoch&)>& on_epoch) {
  FitResult res;  // (x_column_stats refuses constant columns)
  const auto stats = x_column_stats(data, "learning the bandwidth");
  res.bandwidth = scaled(stats, scan_scales(stats).back());
  for (std::size_t k = 0; k < data.d; ++k)
    if (coords.top[k] > 0) res.bandwidth[k] = coords.top[k];
  Objective obj(data, options, stats);
  obj.use_rows(0);
  res.criterion = obj.mean(obj.at(res.bandwidth, false).mse);
  res.loo_mse = obj.loo_at(res.bandwidth).mse;
  res.converged = true;
  res.stop_reason = "y is constant";
  res.constant_y = y;
  record_epoch(res.history, {0, res.bandwidth, res.criterion, {}});
  if (on_epoch) on_epoch(res.history.back());
  res.evaluations = obj.evaluations;
  res.work = obj.work();
  res.descent_rows = data.n;
  return res;
}

// Where the descent starts: `init`, or the best of the scan of common scales (with a grid of
// columns for a local fit in several); with several columns also a half decade below and
// above (into `more`). Says whether the scan's widest scale won.
struct Starts {
  std::vector<double> start;
  std::vector<std::vector<double>> more;  // further start points (several columns)
  bool scan_widest = false;
};

Starts find_starts(const Dataset& data, const FitOptions& options, const Coordinates& coords,
                   const std::vector<ColumnStats>& stats, Objective& obj) {
  Starts out;
  std::vector<double>& start = out.start;
  std::vector<std::vector<double>>& more = out.more;
  bool& scan_widest = out.scan_widest;
  if (options.init) {
    start = *options.init;
    check_bandwidth(start, data.d, "`init`");
  } else {
    obj.use_rows(options.scan_rows);
    double best = std::numeric_limits<double>::infinity();
    const auto scales = scan_scales(stats);
    bool any_usable = false;
    for (std::size_t i = 0; i < scales.size(); ++i) {
      auto h = scaled(stats, scales[i]);
      // A categorical column's lambda follows the scale: small where the continuous columns
      // are narrow, towards its largest (the levels weighed most alike) where they are wide.
      for (std::size_t k = 0; k < data.d; ++k)
        if (coords.top[k] > 0) h[k] = coords.top[k] * scales[i] / (1 + scales[i]);
      any_usable = any_usable || usable(h);
      const double loss = usable(h) ? obj.at(h, false).mse : std::numeric_limits<double>::infinity();
      if (options.on_scan) options.on_scan(i + 1, scales.size(), h, loss);
      if (loss < best) {
        best = loss;
        start = h;
        scan_widest = i + 1 == scales.size();
      }
    }
    if (!any_usable) {  // every scale's bandwidth is subnormal (or overflows) in some column
      std::size_t k = 0;
      for (std::size_t c = 1; c < data.d; ++c)
        if (coords.top[c] == 0 && (coords.top[k] > 0 || stats[c].range < stats[k].range)) k = c;
      throw DataError("x column " + quote(data.x_names[k]) + " spans " + format_double(stats[k].range) +
                      ", too little for a bandwidth in doubles (the least is " +
                      format_double(1 / std::numeric_limits<double>::max()) + "); rescale it");
    }
    if (start.empty() && options.min_neighbours > 0)
      throw DataError("no bandwidth up to 4 times the x range averages " + format_double(options.min_neighbours) +
                      " effective neighbours (`min_neighbours`); the most there can be is n - 1 = " +
                      std::to_string(data.n - 1));
    if (start.empty() && obj.corner_neighbours > 0)
      throw DataError("no bandwidth up to 4 times the x range averages " + format_double(obj.corner_neighbours) +
                      " effective neighbours in its kernel weights, a local polynomial's coefficients + 1 (the sample "
                      "weights leave too few rows that count); give `bandwidth` H");
    if (start.empty() && uses_in_sample(options.criterion))  // tiny data: AICc needs n - tr(H) - 2 > 0, tr >= 1
      throw DataError(to_string(options.criterion) + " is undefined at every bandwidth: it needs n - tr(H)" +
                      (criterion_def(options.criterion).reserved > 0 ? " - " + format_double(criterion_def(options.criterion).reserved) : "") + " > 0, and tr(H) >= 1, which " +
                      std::to_string(data.n) + " training rows cannot leave; give `criterion` loo or `bandwidth` H");
    if (start.empty())  // cannot happen for LOO: a scan that reaches four times the range reaches every row
      throw DataError("no bandwidth of the scan reaches every training row");
    if (obj.corner_neighbours > 0) column_grid(stats, coords, obj, start, best, data.n > options.scan_rows);
    // With several columns the common scale is only a start: the LOO error can have several
    // basins once the columns go their own ways (Boston, local linear). Descend also from a
    // half decade below and above, and keep the best.
    if (data.d > 1)
      for (double f : {std::pow(10.0, -0.5), std::pow(10.0, 0.5)}) {
        std::vector<double> h = start;
        for (std::size_t k = 0; k < data.d; ++k)
          if (coords.top[k] == 0) h[k] *= f;
        more.push_back(h);
      }
  }
  return out;
}

}  // namespace

FitResult fit_bandwidth(const Dataset& data, const FitOptions& options,
                        const std::function<void(const Epoch&)>& on_epoch) {
  check_fit_options(options);
  if (data.n < 2)
    throw DataError("learning the bandwidth needs at least 2 training rows, got " + std::to_string(data.n));
  Coordinates coords(data, options.engine.categorical);
  if (coords.categorical() && options.optimizer == Optimizer::sgd)
    throw UsageError("`optimizer` sgd: not with categorical columns (their lambdas are learned by the line search)");
  if (const std::optional<double> y = constant_y(data)) return constant_fit(data, options, coords, *y, on_epoch);
  const std::vector<ColumnStats> stats = x_column_stats(data, "learning the bandwidth");  // (refuses constant columns)
  coords.smooth_out(stats);
  Objective obj(data, options, stats);
  auto [start, more, scan_widest] = find_starts(data, options, coords, stats, obj);
  const int scan_evaluations = obj.evaluations;
  const bool sgd_run = options.optimizer == Optimizer::sgd;
  const std::size_t rows = sgd_run ? 0 : descent_rows_for(data, options);
  // With several start points each descends until its gradient is within start_tol of its
  // loss (the loss then known to about start_tol^2), on at most start_rows of the descent's
  // rows, and only the best goes on to the tolerance on all of them, from its curvature: the
  // others' last epochs would polish a basin that loses, and which basin wins shows on fewer
  // rows (the scan picks its basin on scan_rows).
  constexpr double start_tol = 1e-4;
  constexpr std::size_t start_rows = 5000;
  const bool polish = !more.empty() && options.tol < start_tol;
  obj.use_rows(polish && !sgd_run && (rows == 0 || rows > start_rows) ? start_rows : rows);  // (sgd: every row)
  const bool sampled_starts = polish && obj.rows() < (rows == 0 ? data.n : std::min(rows, data.n));
  FitOptions first = options;
  if (polish) first.tol = start_tol;
  std::vector<double> curvature;
  FitResult res = sgd_run ? sgd(data, options, start, obj, on_epoch)
                          : descend(first, coords, start, obj, on_epoch, {.curvature = &curvature, .loose = polish});
  // A further start gives up once each coordinate of it (log h; a categorical column's lambda
  // over its largest) lies within same_basin of the best point so far, at a loss above that
  // point's: it is descending into the basin whose minimum is found, and its last epochs would
  // only find it again.
  constexpr double same_basin = 0.05;
  for (const auto& h : more) {
    if (!usable(h)) continue;  // (the box may clamp an overflowing h into range: not left to optional_start)
    std::vector<double> c;
    const std::vector<double> best = coords.theta(res.bandwidth);
    const double best_loss = res.criterion;
    auto give_up = [&](const std::vector<double>& theta, double loss_low) {
      if (!(obj.mean(loss_low) > best_loss)) return false;
      for (std::size_t k = 0; k < theta.size(); ++k)
        if (!(std::abs(theta[k] - best[k]) <= same_basin)) return false;
      return true;
    };
    FitResult other =
        descend(first, coords, h, obj, on_epoch, {.curvature = &c, .loose = polish, .rivalry = {true, give_up}});
    if (other.criterion < res.criterion) res = std::move(other), curvature = std::move(c);
  }
  if (sampled_starts) {
    res.start_rows = obj.rows();
    obj.use_rows(rows);
  }
  if (polish && (res.stop_reason == "tolerance" || (sampled_starts && res.converged))) {
    const int done = res.history.back().epoch;
    if (done >= options.epochs) {  // only the looser tolerance met
      res.converged = false;
      res.stop_reason = "epoch cap";
    } else {
      FitOptions rest = options;
      rest.epochs = options.epochs - done;
      FitResult fine =
          descend(rest, coords, res.bandwidth, obj, on_epoch, {.curvature = &curvature, .resume_at = done});
      for (Epoch& e : fine.history) record_epoch(res.history, std::move(e));
      res.bandwidth = std::move(fine.bandwidth);
      res.criterion = fine.criterion;
      res.converged = fine.converged;
      res.stop_reason = std::move(fine.stop_reason);
    }
  } else if (sampled_starts) {  // the start points' loss was over their rows
    res.criterion = obj.mean(obj.at(res.bandwidth, false).mse);
  }
  res.descent_rows = obj.rows();
  res.scan_widest = scan_widest;
  res.smoothed_out = coords.at_top(res.bandwidth);
  res.stable_floor = obj.stable_h;
  res.corner_neighbours = obj.corner_neighbours;
  res.kernel_neighbours = obj.kernel_neighbours(res.bandwidth);
  if (obj.rows() < data.n) {  // the value reported is over every row
    obj.use_rows(0);
    const LooResult full = obj.at(res.bandwidth, false);
    if (full.out_of_reach)
      throw DataError("the bandwidth learned on " + std::to_string(res.descent_rows) + " rows leaves training row " +
                      std::to_string(full.first_out_of_reach + 1) + " with no other key in reach; give `loo_rows` 0");
    res.criterion = obj.mean(full.mse);
    res.trace = full.trace;  // (NaN for an in-sample criterion: its passes make none)
  }
  // The LOO error is reported whatever the criterion: +inf when a row has no other key in
  // reach of a compact kernel (another criterion can choose such a bandwidth).
  res.loo_mse = !uses_in_sample(options.criterion) ? res.criterion : obj.loo_at(res.bandwidth).mse;
  res.evaluations = obj.evaluations;
  res.scan_evaluations = scan_evaluations;
  res.work = obj.work();
  return res;
}

}  // namespace nwreg
