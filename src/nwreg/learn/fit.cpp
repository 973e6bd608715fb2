#include "nwreg/learn/fit.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "nwreg/base/errors.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/learn/metric.h"
#include "nwreg/base/numbers.h"
#include "nwreg/learn/plugin.h"
#include "nwreg/learn/robust.h"
#include "nwreg/learn/rules.h"
#include "nwreg/learn/score_fit.h"

namespace nwreg {
namespace {

std::optional<double> finite(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

// The statistics of a chosen model: the leave-one-out error (unless the fit left it), R^2 and
// the effective number of neighbours (over at most FitOptions::neighbour_rows rows spread over
// x: at 1e5 rows every row would cost several times the learning); the degrees of freedom
// tr(H); and the criterion's value at the bandwidth, `asked` where nothing chose it (a fixed
// or rule-of-thumb bandwidth). Throws DataError for a row no other key reaches.
void add_loo_statistics(Model& m, const Dataset& data, const EngineOptions& engine, Criterion asked) {
  const std::size_t neighbour_rows = FitOptions{}.neighbour_rows;
  // Another criterion chose h where a row has no other key in reach: no LOO statistics.
  const bool loo_undefined = m.score.distance() && m.criterion && !m.loo_mse;
  const Fitted fitted(data, m, engine);
  // tr(H): the learner's pass over every row made it with the LOO error (m.df beside m.loo_mse),
  // or the LOO pass below does (NW in several columns: LooResult::trace); else the in-sample pass.
  std::optional<double> trace = m.loo_mse ? m.df : std::nullopt;
  if (!loo_undefined) {
    // Every row's error first: where each is in reach, the detail pass need not look again.
    double every;
    if (m.loo_mse) {
      every = *m.loo_mse;
    } else {
      const LooResult all = fitted.loo();
      every = all.mse;
      trace = finite(all.trace);
    }
    const LooDetail detail = fitted.loo_detail(neighbour_rows, false);  // names a row out of reach
    m.loo_mse = every;
    if (!std::isfinite(*m.loo_mse))
      throw DataError("the leave-one-out error overflows: y values are too large to square");
    m.loo_r2 = loo_r2(fitted.rows(), *m.loo_mse);
    // Not finite where the weights underflow against each other (x at 1e-300 or 1e300 with
    // distances to match): left out ("none"), never written as nan.
    if (std::isfinite(detail.neighbours)) m.neighbours = detail.neighbours;
  }
  m.reach = {};
  if (const std::vector<double> h = fitted.reach(neighbour_rows); !h.empty()) {
    const std::size_t d = data.d, count = h.size() / d;
    for (std::size_t k = 0; k < d; ++k) {
      std::vector<double> col;
      for (std::size_t r = 0; r < count; ++r) col.push_back(h[r * d + k]);
      std::sort(col.begin(), col.end());
      const bool none = std::isnan(col.front());
      m.reach.min.push_back(none ? NAN : col.front());
      m.reach.median.push_back(none ? NAN : col.size() % 2 ? col[col.size() / 2] : (col[col.size() / 2 - 1] + col[col.size() / 2]) / 2);
      m.reach.max.push_back(none ? NAN : col.back());
    }
  }
  if (!m.criterion) m.criterion = asked;
  const bool in_sample = uses_in_sample(*m.criterion);
  m.criterion_value = m.loo_mse;
  if (in_sample || !trace) {
    const InSample fit = fitted.insample();
    trace = finite(fit.trace);
    if (in_sample) m.criterion_value = criterion_value(*m.criterion, fit, static_cast<double>(data.n), false).mse;
  }
  m.df = trace;
  if (m.criterion_value && !std::isfinite(*m.criterion_value)) m.criterion_value.reset();  // undefined there: "none"
}

// The rows a learned metric's or score's descent minimises the error of (they keep a sample).
std::size_t sampled_rows(const Dataset& data, const FitOptions& options) {
  const std::size_t rows = options.descent_rows.value_or(sampled_descent_rows);
  return rows == 0 ? data.n : std::min(rows, data.n);
}

// A score other than gaussian: its start, then (general, additive) its parameters learned.
void choose_score(Model& m, const Dataset& data, const FitPlan& plan, const EngineOptions& engine,
                  const FitEvents& events) {
  for (std::size_t k = 0; k < data.d; ++k)
    if (is_categorical(data.kind(k)))
      throw UsageError("`score` " + to_string(plan.score) + ": multiplies numbers; x column " + quote(data.x_names[k]) +
                       " is categorical (the gaussian score weighs levels by their own kernel)");
  m.bandwidth.clear();
  m.score = score_start(plan.score, data, plan.hidden, plan.bias, plan.seed);
  m.bandwidth_source = "fixed";
  if (!score_def(plan.score).learned) {
    if (plan.loo_statistics) m.criterion = plan.fit.criterion;  // its value with the statistics
    return;
  }
  m.criterion = Criterion::loo;
  FitOptions f = plan.fit;
  f.engine = engine;
  f.engine.progress = nullptr;
  ScoreFit r = fit_score(data, m.score, f, events.on_epoch);
  if (events.on_stop) events.on_stop({false, r.history.back().epoch, r.stop_reason, r.evaluations, sampled_rows(data, f), 0, {}});
  m.score = std::move(r.parameters);
  m.bandwidth_source = "learned";
  m.loo_mse = r.loo_mse;
  m.criterion_value = r.loo_mse;
  m.history = std::move(r.history);
  m.stop_reason = r.stop_reason;
}

// The learned bandwidth (and metric) into m; what fit_warnings needs of it into `learned`.
void learn(Model& m, FitResult& learned, const Dataset& data, const FitPlan& plan, const EngineOptions& engine,
           const FitEvents& events) {
  FitOptions f = plan.fit;
  f.engine = engine;
  f.engine.progress = nullptr;
  if (plan.init_rule == "silverman") f.init = silverman_bandwidth(data);
  else if (plan.init_rule == "scott") f.init = scott_bandwidth(data);
  else if (plan.init_rule == "plugin") f.init = std::vector<double>{plugin_bandwidth(data, engine.kernel)};
  else if (f.init && f.init->size() == 1) f.init = std::vector<double>(data.d, f.init->front());
  f.on_scan = events.on_scan;
  int offset = 0;  // metric epochs are numbered on from the bandwidth's
  auto on_epoch = [&](const Epoch& e) {
    if (!events.on_epoch) return;
    Epoch numbered = e;
    numbered.epoch += offset;
    events.on_epoch(numbered);
  };
  FitResult r = fit_bandwidth(data, f, on_epoch);
  if (events.on_stop)
    events.on_stop({false, r.history.back().epoch, r.stop_reason, r.evaluations, r.descent_rows, r.start_rows, r.work});
  learned.bandwidth = r.bandwidth;
  learned.stop_reason = r.stop_reason;
  learned.scan_widest = r.scan_widest;
  learned.smoothed_out = r.smoothed_out;
  learned.constant_y = r.constant_y;
  learned.stable_floor = r.stable_floor;
  learned.corner_neighbours = r.corner_neighbours;
  learned.kernel_neighbours = r.kernel_neighbours;
  m.bandwidth = r.bandwidth;
  m.bandwidth_source = "learned";
  // The LOO error (none where a row has no other key in reach) and tr(H) where the same pass
  // made it (add_loo_statistics keeps it), else none: never an earlier fit's (a robustness
  // iteration learns again on a copy of the model).
  m.loo_mse = finite(r.loo_mse);
  m.df = finite(r.trace);
  m.criterion = f.criterion;
  m.criterion_value = r.criterion;
  m.history = std::move(r.history);
  m.stop_reason = r.stop_reason;
  if (!plan.metric_full) return;
  offset = m.history.back().epoch;
  MetricFit mf = fit_metric(data, f, m.bandwidth, plan.rank ? plan.rank : data.d, on_epoch);
  if (events.on_stop) events.on_stop({true, mf.history.back().epoch, mf.stop_reason, mf.evaluations, sampled_rows(data, f), 0, {}});
  for (Epoch& e : mf.history) {
    e.epoch += offset;
    if (e.epoch > offset) m.history.push_back(std::move(e));
  }
  m.metric = mf.metric;
  learned.stop_reason = mf.stop_reason;
  m.loo_mse = mf.loo_mse;
  m.df.reset();
  m.criterion_value = mf.loo_mse;
  m.stop_reason = mf.stop_reason;
}

// The grid a nearest-neighbour parameter is chosen on, rising by about a quarter: K from 1 to
// n - 1; a span's count q from the local fit's terms + 1 (the q-th nearest weighs 0) to n, as
// F = q / n (nudged up where n F rounds below q).
std::vector<NeighbourBandwidth> neighbour_grid(Neighbours kind, std::size_t n, std::size_t terms) {
  std::vector<NeighbourBandwidth> grid;
  const bool span = kind == Neighbours::span;
  const double top = static_cast<double>(span ? n : n - 1);
  for (double k = span ? static_cast<double>(std::min(n, terms + 1)) : 1; k <= top;
       k = std::max(k + 1, std::round(k * 1.25))) {
    NeighbourBandwidth g{kind, static_cast<std::size_t>(k), 0};
    if (span) {
      g.F = k / static_cast<double>(n);
      while (span_count(g.F, n) < g.K) g.F = std::nextafter(g.F, 2.0);
      g.K = 0;
    }
    grid.push_back(g);
  }
  return grid;
}

// Nearest-neighbour bandwidths: the space the distances are measured in (the scales given; one
// continuous column alone: x itself; span over several: loess's trimmed standard deviations;
// else the learned bandwidths, lambdas included), then K (or F), given or the one of a grid that
// minimises the criterion.
// df:K: the common scale c (h_k = c sd_k, as the scan's grid) whose fit has tr(H) = K, by
// bisection in log c between the scan's ends (tr(H) falls as c grows: n at a bandwidth below
// the gaps, towards 1 for NW and p + 1 terms for a local polynomial at a wide one).
std::vector<double> df_bandwidth(const Dataset& data, double k, const EngineOptions& engine) {
  for (std::size_t j = 0; j < data.d; ++j)
    if (is_categorical(data.kind(j)))
      throw UsageError("`bandwidth` df:K: scales the continuous columns' bandwidths; a categorical column's lambda "
                       "is not a scale (give `bandwidth` H or auto)");
  const auto stats = x_column_stats(data, "`bandwidth` df:K");
  const std::vector<double> grid = scan_scales(stats);
  auto bandwidth = [&](double c) {
    std::vector<double> h(data.d);
    for (std::size_t j = 0; j < data.d; ++j) h[j] = c * stats[j].sd;
    return h;
  };
  std::optional<Attention> fit;  // the keys laid out once, each bandwidth set on them
  auto trace = [&](double log_c) {
    if (!fit) fit.emplace(data, bandwidth(std::exp(log_c)), engine);
    else fit->set_bandwidth(bandwidth(std::exp(log_c)));
    return fit->insample(false).trace;
  };
  double lo = std::log(grid.front()), hi = std::log(grid.back());
  const double most = trace(lo), least = trace(hi);
  if (!(k <= most && k >= least))
    throw DataError("`bandwidth` df:" + format_double(k) + ": the fit's degrees of freedom run from " +
                    format_double(least) + " (a bandwidth of 4 times the x range) to " + format_double(most) +
                    " (a quarter of the smallest gap between x values) here");
  for (int i = 0; i < 100 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (trace(mid) > k ? lo : hi) = mid;
  }
  return bandwidth(std::exp(0.5 * (lo + hi)));
}

// A nearest-neighbour policy's checks against the data (`continuous` x columns): K within the
// rows a left-out row has (n - 1 - 2 leave_out), a span holding a key.
void check_neighbours(const Dataset& data, const NeighbourBandwidth& given, std::size_t leave_out, std::size_t continuous) {
  const bool span = given.kind == Neighbours::span;
  const std::string what = to_string(given.kind);
  if (continuous == 0)
    throw DataError(what + " bandwidths need a continuous x column; every x column is categorical");
  if (span && continuous < data.d)
    throw DataError("span bandwidths measure loess's Euclidean distance over numbers; x column " +
                    quote(data.x_names[std::find_if(data.x_kind.begin(), data.x_kind.end(), is_categorical) -
                                       data.x_kind.begin()]) +
                    " is categorical: give knn:K instead");
  if (data.n < 3) throw DataError(what + " bandwidths need at least 3 training rows, got " + std::to_string(data.n));
  // A left-out row has n - 1 others, or n - 1 - 2L with --leave-out L (the engine's rule).
  const std::size_t out = 2 * leave_out, most = data.n - 1 - std::min(out, data.n - 1);
  check_leave_out(data.n, leave_out);
  if (!span && given.K > most)
    throw ParameterError("bandwidth", to_string(given) + " needs K between 1 and the training rows less one (" +
                                          std::to_string(most) + (out ? ", less the " + std::to_string(out) +
                                          " keys `leave_out` leaves out beside each row" : "") + ")");
  if (span && given.F > 0 && static_cast<double>(data.n) * given.F < 1)
    throw ParameterError("bandwidth", to_string(given) + " holds no key of " + std::to_string(data.n) +
                                          " training rows: F must be at least 1/n (" + format_double(1.0 / static_cast<double>(data.n)) + ")");
}

void choose_knn(Model& m, const Dataset& data, const FitPlan& plan, EngineOptions& engine, const FitEvents& events) {
  std::size_t continuous = 0;
  for (std::size_t k = 0; k < data.d; ++k) continuous += !is_categorical(data.kind(k));
  const NeighbourBandwidth given = plan.neighbour_policy;
  const bool span = given.kind == Neighbours::span;
  const std::string what = to_string(given.kind);
  const std::size_t out = 2 * engine.leave_out;
  check_neighbours(data, given, engine.leave_out, continuous);
  if (!plan.fixed.empty()) {  // the scales given
    m.bandwidth = plan.fixed.size() == 1 ? std::vector<double>(data.d, plan.fixed[0]) : plan.fixed;
  } else if (continuous == 1 && data.d == 1) {
    m.bandwidth = {1.0};
  } else if (span) {
    m.bandwidth = trimmed_sd_scales(data);
  } else {
    FitResult ignored;
    learn(m, ignored, data, plan, engine, events);
  }
  m.history.clear();
  m.loo_mse.reset();
  m.df.reset();
  m.criterion.reset();
  m.criterion_value.reset();
  m.bandwidth_source = what;
  NeighbourBandwidth chosen = given;
  // Else K (or F) on a grid, the criterion over up to 2000 rows spread over x.
  const std::vector<NeighbourBandwidth> grid =
      given.given() ? std::vector<NeighbourBandwidth>{}
                    : neighbour_grid(given.kind, span ? data.n : data.n - std::min(out, data.n - 1), kernel::make_design(data.d, method_degree(engine.method, engine.degree)).p);
  double best = std::numeric_limits<double>::infinity();
  bool found = false;
  std::optional<Attention> grid_engine;  // the keys laid out once for the grid
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (!grid_engine) {
      EngineOptions e = engine;
      e.neighbour_policy = grid[i];
      e.progress = nullptr;
      grid_engine.emplace(data, m.bandwidth, e);
    } else {
      grid_engine->set_neighbours(grid[i]);
    }
    const Attention& a = *grid_engine;
    const auto rows = a.spread_rows(2000);
    double value;
    if (!uses_in_sample(plan.fit.criterion)) {
      const LooResult r = a.loo(false, &rows);
      value = r.out_of_reach ? std::numeric_limits<double>::infinity() : r.mse;
    } else {
      value = criterion_value(plan.fit.criterion, a.insample(false, &rows), static_cast<double>(data.n), false).mse;
    }
    if (plan.fit.min_neighbours > 0 && std::isfinite(value) &&
        a.loo_detail(plan.fit.neighbour_rows, false).neighbours < plan.fit.min_neighbours)
      value = std::numeric_limits<double>::infinity();  // --min-neighbours bounds K as it bounds h
    if (events.on_scan) events.on_scan(i + 1, grid.size(), {span ? grid[i].F : static_cast<double>(grid[i].K)}, value);
    if (value < best) best = value, chosen = grid[i], found = true;
  }
  const char* parameter = span ? "F" : "K";
  if (!given.given() && !found && plan.fit.min_neighbours > 0)
    throw DataError(std::string("no ") + parameter + " of the " + what + " grid averages " +
                    format_double(plan.fit.min_neighbours) + " effective neighbours (`min_neighbours`)");
  if (!given.given() && !found)
    throw DataError(std::string("no ") + parameter + " of the " + what + " grid gives every training row a key in reach");
  engine.neighbour_policy = chosen;
  m.neighbour_policy = chosen;
  // The values over every row: made by add_loo_statistics where it follows (one pass on one
  // engine, not two), else here. (An in-sample criterion stands where a row has no other key in
  // reach, the LOO statistics then left out: made here.)
  if (plan.loo_statistics && plan.robust == 0 && data.n >= 2 && !uses_in_sample(plan.fit.criterion)) return;
  m.criterion = plan.fit.criterion;  // what chose K (or F); given, its value there
  const Attention a(data, m.bandwidth, engine);  // the values reported are over every row
  const LooResult loo = a.loo(false);
  if (!loo.out_of_reach) m.loo_mse = loo.mse;
  const double value = !uses_in_sample(plan.fit.criterion)
                           ? loo.mse
                           : criterion_value(plan.fit.criterion, a.insample(false), static_cast<double>(data.n), false).mse;
  if (std::isfinite(value)) {
    m.criterion_value = value;
  } else {  // a given K or F where a row has no other key in reach (or the criterion is undefined)
    m.criterion.reset();
  }
}

// The bandwidth as the plan chooses it, into m (and what fit_warnings needs of a learned one
// into `learned`).
void choose(Model& m, std::optional<FitResult>& learned, const Dataset& data, const FitPlan& plan,
            EngineOptions& engine, const FitEvents& events) {
  using Kind = BandwidthSpec::Kind;
  if (plan.score != Score::gaussian) return choose_score(m, data, plan, engine, events);
  switch (plan.kind) {
    case Kind::learn:
      learn(m, learned.emplace(), data, plan, engine, events);
      break;
    case Kind::silverman:
      m.bandwidth = silverman_bandwidth(data);
      m.bandwidth_source = "silverman";
      break;
    case Kind::scott:
      m.bandwidth = scott_bandwidth(data);
      m.bandwidth_source = "scott";
      break;
    case Kind::plugin:
      m.bandwidth = {plugin_bandwidth(data, engine.kernel)};
      m.bandwidth_source = "plugin";
      break;
    case Kind::knn:
      choose_knn(m, data, plan, engine, events);
      break;
    case Kind::df:
      m.bandwidth = df_bandwidth(data, plan.fixed.at(0), engine);
      m.bandwidth_source = "df";
      break;
    case Kind::fixed:
      m.bandwidth = plan.fixed.size() == 1 ? std::vector<double>(data.d, plan.fixed[0]) : plan.fixed;
      m.bandwidth_source = "fixed";
      break;
  }
}

// Robustness iterations (robust.h): each from the in-sample residuals of the fit before, every
// training row's (one of sample weight 0 too); a learned bandwidth (or K, or F) is learned again
// on the reweighted rows, so that outliers weigh little in the criterion as in the fit.
void robust_fit(Model& m, std::optional<FitResult>& learned, const Dataset& data, const FitPlan& plan,
                EngineOptions& engine, const FitEvents& events) {
  const bool relearn = (plan.kind == BandwidthSpec::Kind::learn && (plan.score == Score::gaussian || score_def(plan.score).learned)) ||
                       (plan.kind == BandwidthSpec::Kind::knn && !plan.neighbour_policy.given());
  std::vector<double> fitted(data.n);
  // A row of weight 0 need not be in reach of the others: its residual is then from the
  // nearest key that weighs something.
  EngineOptions residuals = engine;
  residuals.out_of_reach = OutOfReach::nearest;
  for (std::size_t it = 0; it < plan.robust; ++it) {
    const Fitted f(data, m, residuals);
    f.predict(data.x.data(), data.n, fitted.data());
    std::vector<double> residual(data.n);
    for (std::size_t i = 0; i < data.n; ++i) residual[i] = data.y[i] - fitted[i];
    std::vector<double> w = robustness_weights(residual);
    if (w.empty()) break;  // an exact fit at most rows: the fit before stands
    m.robustness = std::move(w);
    if (!relearn) continue;
    Model again = m;
    again.robustness.clear();
    choose(again, learned, *WeighedRows(data, m.robustness), plan, engine, events);
    again.robustness = std::move(m.robustness);
    m = std::move(again);
  }
  m.robust = plan.robust;
  // Nothing learned again (a given K, F or scales): the error and criterion the first fit
  // recorded are the plain fit's; those of the robust fit, on the rows as it weighs them, are
  // made afresh (add_loo_statistics), as for a fixed h.
  if (!relearn && !m.robustness.empty()) {
    m.loo_mse.reset();
    m.df.reset();
    m.criterion_value.reset();
    m.criterion.reset();
  }
}

// The criteria over the grid the bandwidth is chosen on (FitPlan::curve): for a bandwidth, the
// scan's common scales (h_k = c sd_k, a categorical column's lambda following c as in the scan);
// for a nearest-neighbour policy, its K (or F) grid at the model's scales. Each point is one
// leave-one-out pass (with the model's leave-out) and one in-sample pass, over every row.
std::vector<CurvePoint> criterion_curve(const Dataset& data, const Model& m, EngineOptions engine) {
  engine.progress = nullptr;
  const double n = static_cast<double>(data.n);
  auto point = [&](const std::vector<double>& h, const EngineOptions& e, double parameter) {
    CurvePoint c{h, parameter, {}, {}, {}, {}};
    const Attention a(data, h, e);
    const LooResult loo = a.loo(false);
    if (!loo.out_of_reach && std::isfinite(loo.mse)) c.loo = loo.mse;
    const InSample fit = a.insample(false);
    if (std::isfinite(fit.trace)) c.df = fit.trace;
    for (auto [criterion, value] : {std::pair{Criterion::gcv, &c.gcv}, std::pair{Criterion::aicc, &c.aicc}}) {
      const double v = criterion_value(criterion, fit, n, false).mse;
      if (std::isfinite(v)) *value = v;
    }
    return c;
  };
  std::vector<CurvePoint> out;
  if (m.neighbour_policy) {
    const std::size_t left = std::min(2 * engine.leave_out, data.n - 1);
    const bool span = m.neighbour_policy.kind == Neighbours::span;
    for (const NeighbourBandwidth& g :
         neighbour_grid(m.neighbour_policy.kind, span ? data.n : data.n - left,
                        kernel::make_design(data.d, method_degree(engine.method, engine.degree)).p)) {
      EngineOptions e = engine;
      e.neighbour_policy = g;
      out.push_back(point(m.bandwidth, e, span ? g.F : static_cast<double>(g.K)));
    }
    return out;
  }
  const auto stats = x_column_stats(data, "the criterion curve");
  for (double c : scan_scales(stats)) {
    std::vector<double> h;
    for (std::size_t k = 0; k < data.d; ++k)
      h.push_back(is_categorical(data.kind(k))
                      ? lambda_max(engine.categorical, data.kind(k), data.levels.at(k).size()) * c / (1 + c)
                      : c * stats[k].sd);
    out.push_back(point(h, engine, 0));
  }
  return out;
}

// y as the learner sees it, when its values are far from 1: times 2^-k, k the binary exponent
// of the largest |y|, so that no squared residual over- or underflows (y times 1e300 or 1e-300).
// Exact (a power of two), and every choice is scale-free: h, K, the metric and a score's
// parameters are those of y; the errors and criteria are taken back to y's units once, by
// `value`.
struct YScale {
  int k = 0;
  explicit YScale(const Dataset& data) {
    double top = 0;
    for (double y : data.y) top = std::max(top, std::abs(y));
    if (top > 0 && std::isfinite(top) && std::abs(std::ilogb(top)) > 128) k = std::ilogb(top);
  }
  // A criterion's value (LOO error, mean or sum; GCV; AICc, a logarithm) in y's units.
  double value(double v, Criterion c) const { return in_units_of_y(c, v, k); }
  Dataset apply(const Dataset& data) const {
    Dataset scaled = data;
    for (double& y : scaled.y) y = std::ldexp(y, -k);
    return scaled;
  }
  // The model's errors and criterion values in y's units; one that a double cannot hold is
  // dropped, with a warning.
  void restore(Model& m) const {
    const Criterion c = m.criterion.value_or(Criterion::loo);
    bool lost = false;
    auto back = [&](std::optional<double>& v, Criterion as) {
      if (!v) return;
      const double before = *v;
      v = value(*v, as);
      if (!std::isfinite(*v) || (*v == 0 && before != 0)) v.reset(), lost = true;  // over- or underflowed
    };
    back(m.loo_mse, Criterion::loo);
    back(m.criterion_value, c);
    for (CurvePoint& p : m.curve)  // (a point beyond a double's range is left out)
      for (auto [v, as] : {std::pair{&p.loo, Criterion::loo}, std::pair{&p.gcv, Criterion::gcv},
                           std::pair{&p.aicc, Criterion::aicc}})
        if (*v) {
          const double before = **v;
          if (!std::isfinite(**v = value(before, as)) || (**v == 0 && before != 0)) v->reset();
        }
    for (Epoch& e : m.history) e.loss = value(e.loss, c);
    if (lost || std::any_of(m.history.begin(), m.history.end(), [](const Epoch& e) { return !std::isfinite(e.loss); })) {
      m.history.clear();
      m.warnings.push_back("the leave-one-out error and criterion are beyond a double's range at this scale of y "
                           "(about 1e" + std::to_string(static_cast<int>(2 * k * std::log10(2.0))) +
                           "); the fit is unaffected, its errors are not reported");
    }
  }
};

// What a learned score that explains less than the mean can try besides the gaussian score.
std::vector<std::string> untried_score(const FitPlan& plan) {
  std::vector<std::string> out = {"`score` gaussian (a learned bandwidth)"};
  if (plan.fit.optimizer != Optimizer::line_search) out.push_back("`optimizer` line-search");
  out.push_back("more `epochs`");
  if (plan.score == Score::additive) out.push_back("another `seed`");
  return out;
}


}  // namespace

bool x_in_place_pays(const Dataset& data, Kernel kernel, bool robust, bool learned_score_or_metric,
                     std::size_t min_rows) {
  return data.d == 1 && !is_categorical(data.kind(0)) && data.weight.empty() && data.n >= min_rows && !robust &&
         !learned_score_or_metric && !is_compact(kernel);
}

namespace {

// fit_model, on rows the caller gives up where `own` points to them (own == &given).
Model fit_rows(const Dataset& given, Dataset* own, const FitPlan& plan, EngineOptions engine,
               const FitEvents& given_events) {
  const YScale scale(given);
  const std::optional<Dataset> scaled = scale.k ? std::optional<Dataset>(scale.apply(given)) : std::nullopt;
  const Dataset& data = scaled ? *scaled : given;
  FitEvents events = given_events;  // losses reported in y's units
  const Criterion criterion = plan.fit.criterion;
  if (scale.k && given_events.on_scan)
    events.on_scan = [&](std::size_t i, std::size_t n, const std::vector<double>& h, double loss) {
      given_events.on_scan(i, n, h, scale.value(loss, criterion));
    };
  if (scale.k && given_events.on_epoch)
    events.on_epoch = [&](const Epoch& e) {
      Epoch shown = e;
      shown.loss = scale.value(e.loss, criterion);
      given_events.on_epoch(shown);
    };
  if (plan.leave_out_auto) {
    const SeriesCheck series = check_series(data, engine.pool);
    if (series.leave_out) {
      engine.leave_out = series.leave_out;
      if (events.on_series) events.on_series(series);
    }
  }
  if (plan.metric_full && plan.score == Score::gaussian)
    for (std::size_t k = 0; k < data.d; ++k)
      if (is_categorical(data.kind(k)))
        throw UsageError("`metric` full: not with categorical columns (the map mixes continuous columns); column " +
                         quote(data.x_names[k]) + " is categorical");
  Model m;
  static_cast<Smoother&>(m) = engine;
  m.neighbour_policy = {};  // set where a policy is chosen
  m.x_columns = data.x_names;
  m.x_kinds = data.x_kind;
  if (std::any_of(data.x_offset.begin(), data.x_offset.end(), [](const UtcOffset& o) { return o.has_value(); }))
    m.x_offsets = data.x_offset;
  m.levels = data.levels;
  m.y_column = data.y_name;
  m.sample_weight = data.weight_name;
  m.n = data.n;
  m.checksum = checksum(given);
  // Rows given up, of one continuous column, many: in x order the engines read x in place, 8
  // bytes a row less than their copy. After all that reads their order (the series check, the
  // checksum); not where a result keeps a row's place (robustness weights, a learned score's or
  // metric's sample) or an error names a row (a compact kernel's row out of reach).
  if (own && !scaled &&
      x_in_place_pays(data, engine.kernel, plan.robust > 0, plan.score != Score::gaussian || plan.metric_full,
                      plan.in_place_rows)) {
    put_in_x_order(*own);
    engine.x_in_place = own;
  }
  std::optional<FitResult> learned;  // what fit_warnings needs of a learned bandwidth
  choose(m, learned, data, plan, engine, events);
  if (plan.robust > 0) robust_fit(m, learned, data, plan, engine, events);
  if (plan.loo_statistics && data.n >= 2) add_loo_statistics(m, data, engine, plan.fit.criterion);
  if (plan.curve) {
    if (!m.score.distance() || m.metric.rank)
      throw UsageError(std::string("`curve`: the criteria over bandwidths; not with ") +
                       (m.metric.rank ? "`metric` full" : "`score` " + to_string(m.score.score)));
    // (After robustness iterations, on the rows as the last fit weighed them.)
    m.curve = criterion_curve(*WeighedRows(data, m.robustness), m, engine);
  }
  if (learned) {
    FitOptions used = plan.fit;
    used.engine = engine;  // with the leave-out leave_out_auto chose
    m.warnings = fit_warnings(data, *learned, m.neighbours, used);
  } else if (plan.kind == BandwidthSpec::Kind::knn && !plan.neighbour_policy.given() && plan.score == Score::gaussian &&
             m.neighbours && *m.neighbours < few_neighbours(data.n)) {
    // K (or F) chosen by the criterion, as suspect as a learned h would be.
    m.warnings.push_back("the fit nearly interpolates (" + format_g3(*m.neighbours) + " effective neighbours at " +
                         to_string(m.neighbour_policy) + "): the curve steps from point to point. Try " +
                         either(untried(plan.fit, {"`criterion` aicc",
                                                   std::string("a larger ") + (m.neighbour_policy.kind == Neighbours::span ? "F" : "K"),
                                                   "`min_neighbours` 5"})));
  }
  if (plan.score != Score::gaussian && score_def(plan.score).learned && m.loo_r2 && *m.loo_r2 < 0)
    m.warnings.push_back("the learned " + to_string(plan.score) + " score's leave-one-out R^2 is " + format_g3(*m.loo_r2) +
                         ": it predicts y worse than y's mean does. Try " + either(untried_score(plan)));
  scale.restore(m);
  advise_method(m, given, plan, engine);
  return m;
}

}  // namespace

Model fit_model(const Dataset& data, const FitPlan& plan, EngineOptions engine, const FitEvents& events) {
  return fit_rows(data, nullptr, plan, std::move(engine), events);
}

Model fit_model(Dataset&& data, const FitPlan& plan, EngineOptions engine, const FitEvents& events) {
  return fit_rows(data, &data, plan, std::move(engine), events);
}

void advise_method(Model& m, const Dataset& data, const FitPlan& plan, const EngineOptions& engine) {
  if (!plan.advise || m.method != Method::nw || plan.kind != BandwidthSpec::Kind::learn || plan.score != Score::gaussian ||
      plan.metric_full || data.n > advice_rows || !m.loo_mse || !(*m.loo_mse > 0) ||
      std::all_of(data.x_kind.begin(), data.x_kind.end(), [](ColumnKind k) { return is_categorical(k); }))
    return;
  // Several columns where NW nearly interpolates: its bandwidths lie below local linear's
  // floor, so local linear would learn from its own scan and starts (2 columns, 2000 rows:
  // 19 s against NW's 0.5 s) to advise against a bias NW at such a bandwidth has not got, the
  // mean pulled in where a trend meets the ends; the interpolation's own warning stands.
  if (data.d > 1 && m.neighbours && *m.neighbours < few_neighbours(data.n)) return;
  FitPlan other = plan;
  other.curve = false;
  other.advise = false;
  EngineOptions linear = engine;
  linear.method = Method::local_linear;
  linear.progress = nullptr;
  auto learn_linear = [&](const FitPlan& p) -> std::optional<Model> {
    try {
      return fit_model(data, p, linear, {});
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  // Several columns: local linear descends from NW's learned bandwidths. Its own scan and grid
  // of starts cost about 10 times NW's whole learn (3 columns, 2000 rows: 4.2 s against 0.3 s),
  // and the advice needs only a local-linear fit under half NW's error, not its best one.
  FitPlan from_nw = other;
  from_nw.fit.init = m.bandwidth;
  from_nw.init_rule.clear();
  std::optional<Model> ll = data.d > 1 ? learn_linear(from_nw) : std::nullopt;
  if (!ll) ll = learn_linear(other);  // one column, or NW's bandwidths below local linear's floor
  if (!ll) return;                    // local linear cannot learn here: nothing to compare
  if (!ll->loo_mse || !(*ll->loo_mse < 0.5 * *m.loo_mse)) return;
  m.warnings.push_back("local linear's leave-one-out error is " + format_g3(*ll->loo_mse) + ", under half of NW's " +
                       format_g3(*m.loo_mse) + ": NW bends toward the mean where a trend meets the ends of the data. "
                       "Try `method` local-linear");
}

}  // namespace nwreg
