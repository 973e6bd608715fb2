// The bandwidth a command is to use, planned from its options before any data are read, then
// chosen on the data (common.h: plan_bandwidth, choose_bandwidth).
#include "cli/choices.h"
#include "cli/common.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <ostream>

#include "nwreg/engine/attention.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/timestamp.h"
#include "nwreg/base/numbers.h"
#include "nwreg/io/writers.h"

namespace nwreg::cli {

namespace {

// The options that have no meaning for a score other than gaussian, refused by name; the
// additive score's own options refused for the others.
void check_score_options(BandwidthPlan& plan, const BandwidthOptions& o, const EngineCliOptions& engine, Kernel kernel,
                         Method method) {
  const std::string score = "--score " + to_string(plan.score);
  const bool learned = score_def(plan.score).learned;
  if (plan.kind != BandwidthSpec::Kind::learn || !plan.fixed.empty())
    throw UsageError("--bandwidth: " + score + " has no bandwidth; drop --bandwidth");
  if (kernel != Kernel::gaussian)
    throw UsageError("--kernel: the kernels are the gaussian score's; " + score + " weighs by its own score");
  if (method != Method::nw) throw UsageError("--method: " + score + " pools by attention: only --method nw");
  if (o.metric != "diagonal") throw UsageError("--metric: a learned metric is the gaussian score's; not with " + score);
  if (!o.init.empty() || o.init_w != 0)
    throw UsageError(std::string(o.init.empty() ? "--init-w" : "--init") + ": a bandwidth to start from; " + score +
                     (plan.score == Score::additive ? " starts from --seed's random draw" : " has no bandwidth"));
  if (o.param != "log-h") throw UsageError("--param: the bandwidths' parameter; not with " + score);
  if (o.min_neighbours > 0) throw UsageError("--min-neighbours: bounds a bandwidth's search; not with " + score);
  if (engine.fixed_leave_out().value_or(0) > 0)
    throw UsageError("--leave-out: leaves blocks out for a bandwidth; " + score + " leaves one out");
  if (learned && uses_in_sample(plan.fit.criterion))
    throw UsageError("--criterion " + to_string(plan.fit.criterion) + ": " + score +
                     " learns on the leave-one-out error (--criterion loo)");
  plan.hidden = static_cast<std::size_t>(engine.hidden);
  plan.bias = !engine.no_bias;
  plan.seed = o.seed;
}

// Where the descent starts: --init H (or a rule) or --init-w W.
void plan_start(BandwidthPlan& plan, const BandwidthOptions& o) {
  if (o.init_w != 0) {
    if (!o.init.empty()) throw UsageError("--init-w: give --init or --init-w, not both");
    if (!std::isfinite(o.init_w) || !std::isfinite(1 / o.init_w))
      throw UsageError("--init-w: must be a finite nonzero number, got " + format_double(o.init_w));
    plan.fit.init = std::vector<double>{1 / std::abs(o.init_w)};
  } else if (!o.init.empty()) {
    const BandwidthSpec init = parse_bandwidth_spec(o.init, "--init", false);
    if (init.kind == BandwidthSpec::Kind::learn)
      throw UsageError("--init: expected a bandwidth > 0, silverman, scott or plugin, got " + quote(o.init));
    if (init.kind == BandwidthSpec::Kind::fixed) plan.fit.init = init.values, plan.init_timed = init.timed;
    else plan.init_rule = o.init;
  }
}

// --metric full: a map learned after the bandwidths, and what it needs.
void plan_metric(BandwidthPlan& plan, const BandwidthOptions& o, const EngineCliOptions& engine, Kernel kernel,
                 Method method) {
  if (parse_choice<bool>(o.metric, metric_choices, "--metric", "metric")) {
    plan.metric_full = true;
    plan.rank = o.rank;
    if (plan.kind != BandwidthSpec::Kind::learn)
      throw UsageError("--metric full: the map is learned; drop --bandwidth (--init H sets where the descent starts)");
    if (plan.fit.optimizer == Optimizer::sgd || plan.fit.loss == Loss::sum || uses_in_sample(plan.fit.criterion))
      throw UsageError("--metric full: only with --optimizer auto, --loss mean and --criterion loo");
    if (kernel != Kernel::gaussian || method != Method::nw)
      throw UsageError("--metric full: only with --kernel gaussian and --method nw");
    if (engine.fixed_leave_out().value_or(0)) throw UsageError("--metric full: only without --leave-out");
  } else if (o.rank != 0) {
    throw UsageError("--rank: only with --metric full");
  }
}

}  // namespace

BandwidthPlan plan_bandwidth(const BandwidthOptions& o, const EngineCliOptions& engine) {
  BandwidthPlan plan;
  const Kernel kernel = parse_kernel(engine.kernel);
  const Method method = parse_method(engine.method);
  parse_unsupported(engine.out_of_reach);
  plan.verbose = o.verbose;
  const BandwidthSpec spec = parse_bandwidth_spec(o.bandwidth, "--bandwidth");
  plan.kind = spec.kind;
  plan.fixed = spec.values;
  plan.neighbour_policy = spec.neighbour_policy;
  plan.robust = o.robust;
  if (o.robust > max_robust)
    throw UsageError("--robust: at most " + std::to_string(max_robust) + " iterations, got " + std::to_string(o.robust));
  plan.fixed_timed = spec.timed;

  plan.score = parse_score(engine.score);
  const bool learned_score = score_def(plan.score).learned;
  if (plan.score != Score::additive) {
    if (engine.hidden_given) throw UsageError("--hidden: only with --score additive");
    if (engine.no_bias) throw UsageError("--no-bias: only with --score additive");
    if (o.seed_given) throw UsageError("--seed: only with --score additive (the others start where they are: general at W = I)");
  }
  FitOptions& f = plan.fit;
  f.optimizer = parse_choice<std::optional<Optimizer>>(o.optimizer, optimizer_choices, "--optimizer", "optimizer")
                    .value_or(learned_score ? Optimizer::adam : Optimizer::line_search);
  if (f.optimizer == Optimizer::adam && !learned_score)
    throw UsageError("--optimizer adam: for learned scores (--score general or additive); bandwidths learn by auto or sgd, and "
                     "dot and scaled-dot learn nothing");
  f.parameter = parse_choice<Parameter>(o.param, param_choices, "--param", "parameter");
  if (f.parameter == Parameter::w && f.optimizer != Optimizer::sgd)
    throw UsageError("--param w: only with --optimizer sgd (auto always steps in log h)");
  f.loss = parse_choice<Loss>(o.loss, loss_choices, "--loss", "loss");
  f.criterion = parse_criterion(o.criterion);
  f.min_neighbours = o.min_neighbours;
  f.epochs = o.epochs;
  if (o.loo_rows != "auto") {
    std::size_t rows = 0;
    const auto [end, ec] = std::from_chars(o.loo_rows.data(), o.loo_rows.data() + o.loo_rows.size(), rows);
    if (ec != std::errc() || end != o.loo_rows.data() + o.loo_rows.size())
      throw UsageError("--loo-rows: expected auto or a whole number of rows (0: every row), got " + quote(o.loo_rows));
    f.descent_rows = rows;
  }
  f.lr = o.lr;
  f.tol = o.tol;
  if (learned_score && f.optimizer != Optimizer::line_search) {  // fixed-rate steps from a random start
    if (!o.epochs_given) f.epochs = 300;
    if (!o.lr_given) f.lr = 0.05;
  }
  if (plan.score != Score::gaussian) check_score_options(plan, o, engine, kernel, method);
  if (uses_in_sample(f.criterion) && (f.optimizer == Optimizer::sgd || f.loss == Loss::sum))
    throw UsageError("--criterion " + to_string(f.criterion) +
                     ": only with --optimizer auto and --loss mean (the d2l run minimises the LOO error)");
  check_fit_options(f);
  plan_start(plan, o);
  if (f.optimizer == Optimizer::sgd && !f.init && plan.init_rule.empty() && !learned_score)
    throw UsageError("--optimizer sgd: needs a start point, --init H or --init-w W");
  plan_metric(plan, o, engine, kernel, method);
  // A learned h, or a K (F) chosen by the LOO error: a series gets block CV.
  const bool chosen = plan.kind == BandwidthSpec::Kind::learn ||
                      (plan.kind == BandwidthSpec::Kind::knn && !plan.neighbour_policy.given());
  plan.leave_out_auto = !engine.fixed_leave_out() && chosen && !plan.metric_full && plan.score == Score::gaussian &&
                        !uses_in_sample(f.criterion) && f.optimizer == Optimizer::line_search;
  return plan;
}

std::size_t x_column_count(const InputOptions& o) {
  std::size_t d = 0;
  for (const auto& part : o.x) d += parse_column_list(part, "-x").size();
  return std::max<std::size_t>(d, 1);
}

void check_plan_columns(const BandwidthPlan& plan, const EngineCliOptions& engine, const InputOptions& input) {
  const std::size_t d = x_column_count(input);
  if (plan.kind == BandwidthSpec::Kind::plugin || plan.init_rule == "plugin") {
    const char* option = plan.kind == BandwidthSpec::Kind::plugin ? "--bandwidth plugin" : "--init plugin";
    if (d != 1) throw UsageError(std::string(option) + ": only for one x column (the plug-in is one-dimensional)");
    if (!input.sample_weight.empty()) throw UsageError(std::string(option) + ": not with --sample-weight (the plug-in has no weights)");
  }
  if ((plan.kind == BandwidthSpec::Kind::fixed || plan.kind == BandwidthSpec::Kind::knn) && plan.fixed.size() > 1)
    check_bandwidth(plan.fixed, d, "--bandwidth");
  if (plan.fit.init && plan.fit.init->size() != 1) check_bandwidth(*plan.fit.init, d, "--init");
  if (plan.metric_full && plan.rank > d)
    throw UsageError("--rank: must be between 1 and the number of x columns (" + std::to_string(d) + "), got " +
                     std::to_string(plan.rank));
  if (engine.fixed_leave_out().value_or(0) > 0 && d != 1)
    throw UsageError("--leave-out: only for one x column (it leaves out the nearest keys in x order)");
  if (plan.score != Score::gaussian && (!input.categorical.empty() || !input.ordered.empty()))
    throw UsageError("--score " + to_string(plan.score) + ": multiplies numbers; " +
                     (input.categorical.empty() ? "--ordered" : "--categorical") +
                     " columns are the gaussian score's (it weighs levels by their own kernel)");
}

namespace {

// A bandwidth given as a time span (6h) is for a time column only.
void check_time_spans(const std::vector<bool>& timed, const Dataset& data, const char* option) {
  for (std::size_t k = 0; k < data.d; ++k) {
    const bool span = timed.size() == 1 ? timed[0] : k < timed.size() && timed[k];  // one value: every column
    if (span && !is_time(data.kind(k)))
      throw UsageError(std::string(option) + ": a time span is for a column of dates or times; x column " +
                       quote(data.x_names[k]) + " of " + escape_excerpt(data.source, 200) + " holds " + (is_categorical(data.kind(k)) ? "labels: its entry is a lambda, a plain number" : "numbers"));
  }
}

}  // namespace

namespace {

// choose_bandwidth, on rows the caller gives up where `own` points to them (own == &data).
Model choose_on(const Dataset& data, Dataset* own, const BandwidthPlan& plan, EngineOptions engine, bool need_loo,
                std::ostream& log, Progress* progress) {
  check_time_spans(plan.fixed_timed, data, "--bandwidth");
  check_time_spans(plan.init_timed, data, "--init");
  FitPlan fit = plan;
  fit.loo_statistics = need_loo;
  FitEvents events;
  events.on_series = [&](const SeriesCheck& series) {
    log << "nwreg: " << escape_excerpt(data.source, 200) << ": x is evenly spaced and the residuals are correlated "
        << "(lag-1 correlation " << format_g3(series.autocorrelation) << "): leave-block-out cross-validation, "
        << series.leave_out << " keys out on each side (--leave-out 0 turns it off)\n";
  };
  if (plan.verbose || progress)
    // Verbose: a line a second while the scan runs (it can take minutes at 1e7 rows), and
    // where it ended.
    // The scan of a learned bandwidth estimates each point's error from scan_rows rows (a
    // nearest-neighbour grid's points are said as they are).
    events.on_scan = [&plan, &log, progress, n = data.n,
                      scan_rows = plan.kind == BandwidthSpec::Kind::learn ? plan.fit.scan_rows : data.n,
                      best = std::numeric_limits<double>::infinity(), best_h = std::string(),
                      last = std::chrono::steady_clock::now()](std::size_t i, std::size_t total,
                                                               const std::vector<double>& h, double loss) mutable {
      const std::string at = "nwreg: scan " + std::to_string(i) + "/" + std::to_string(total);
      if (!plan.verbose) return progress->line(at);
      if (loss < best) best = loss, best_h = join(h);
      const auto now = std::chrono::steady_clock::now();
      if (i == total) {
        if (std::isfinite(best))
          log << "nwreg: scanned " << total << " bandwidths, best " << best_h << "  loss " << format_double(best)
              << (scan_rows < n ? " (the LOO error of " + std::to_string(scan_rows) + " of " + std::to_string(n) +
                                      " rows spread over x)"
                                : std::string())
              << '\n';
        else
          log << "nwreg: scanned " << total << " bandwidths, none with every row in reach\n";
      } else if (now - last >= std::chrono::seconds(1)) {
        last = now;
        log << at << "  bandwidth " << join(h) << "  loss "
            << (std::isfinite(loss) ? format_double(loss) : std::string("none (a row out of reach)")) << '\n';
      }
    };
  events.on_epoch = [&](const Epoch& e) {
    const bool metric = !e.metric.empty();
    const std::string what = metric ? "  metric " + join(e.metric)
                                     : e.bandwidth.empty() ? std::string()  // a score's parameters: many
                                                           : "  bandwidth " + join(e.bandwidth);
    const std::string line = "nwreg: epoch " + std::to_string(e.epoch) + what;
    if (!plan.verbose) {
      if (progress) progress->line(line + "  loss " + format_double(e.loss), true);
      return;
    }
    log << line;
    if (plan.fit.parameter == Parameter::w) {
      std::vector<double> w;
      for (double h : e.bandwidth) w.push_back(1 / h);
      log << "  w " << join(w);
    }
    log << "  loss " << format_double(e.loss) << '\n';
  };
  if (plan.verbose)
    events.on_stop = [&](const DescentStop& s) {
      auto over = [&](std::size_t r) {
        return r >= data.n ? std::string("every row") : std::to_string(r) + " of " + std::to_string(data.n) + " rows spread over x";
      };
      log << "nwreg: " << (s.metric ? "metric " : "") << "stopped after " << s.epochs << " epochs (" << s.reason << "), "
          << s.evaluations << " leave-one-out passes; the epochs' losses are the LOO error of " << over(s.rows)
          << (s.start_rows > 0 ? " (the start points' descents: of " + over(s.start_rows) + ")" : "") << "\n";
      // The work, the same on every host (timings are not): kernel evaluations key by key, and
      // rows answered from moments, series or transforms without weighing their keys one by one.
      const std::uint64_t summed = s.work.moment_rows + s.work.transformed_rows;
      if (s.work.pairs > 0 || summed > 0)
        log << "nwreg: the passes weighed " << s.work.pairs << " query-key pairs key by key"
            << (summed > 0 ? " and answered " + std::to_string(summed) + " rows from moments, series or transforms"
                           : std::string())
            << '\n';
    };
  Model m = own ? fit_model(std::move(*own), fit, engine, events) : fit_model(data, fit, engine, events);
  for (std::string& w : m.warnings) w = in_cli_words(w);
  for (const auto& w : m.warnings) log << "nwreg: warning: " << escape_excerpt(data.source, 200) << ": " << w << '\n';
  return m;
}

}  // namespace

Model choose_bandwidth(const Dataset& data, const BandwidthPlan& plan, EngineOptions engine, bool need_loo,
                       std::ostream& log, Progress* progress) {
  return choose_on(data, nullptr, plan, std::move(engine), need_loo, log, progress);
}

Model choose_bandwidth(Dataset&& data, const BandwidthPlan& plan, EngineOptions engine, bool need_loo,
                       std::ostream& log, Progress* progress) {
  return choose_on(data, &data, plan, std::move(engine), need_loo, log, progress);
}

}  // namespace nwreg::cli
