#include <CLI/CLI.hpp>

#include <algorithm>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/choices.h"
#include "cli/batch.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/io/plot.h"
#include "nwreg/io/writers.h"

namespace nwreg::cli {

CLI::App* setup_fit(CLI::App& app, FitCommand& cmd) {
  CLI::App* sub = app.add_subcommand("fit", "Learn the bandwidth and report it with its leave-one-out error");
  sub->add_option("TRAIN", cmd.trains,
                  "Training data: a CSV file, or - for standard input (the default when it is not a terminal). "
                  "Several files (or quoted globs such as 'runs/*.csv') fit each and print one summary row per file");
  add_input_options(*sub, cmd.input, false);
  add_bandwidth_options(*sub, cmd.bandwidth);
  add_method_options(*sub, cmd.engine);
  add_like_option(*sub, cmd.engine);
  sub->option_defaults()->group("Output");
  sub->add_option("-o,--output", cmd.output, "Write the model (JSON) to this file; - for stdout");
  sub->add_option("--format", cmd.format,
                  "Report on stdout: text or json (the model), or csv (the batch summary row, one file or many); for a batch, csv (default) or json")
      ->capture_default_str();
  sub->add_option("--curve", cmd.curve,
                  "Write LOO, GCV, AICc and df over the grid the bandwidth is chosen on (the scan's scales, or "
                  "K or F of knn/adaptive/span) to this CSV file");
  sub->add_option("--plot", cmd.plot, "Draw the criteria over that grid, each relative to its minimum, to this SVG file");
  add_performance_options(*sub, cmd.engine);
  sub->footer(R"(Examples:
  nwreg fit data/synthetic.csv                  learn h; print it, the LOO error
  nwreg fit data/mcycle.csv -o mcycle.json      ... and save it for predict
  nwreg fit data/faithful.csv -x waiting -y eruptions --verbose
  nwreg fit data.csv --bandwidth 0.3            LOO error at a fixed h
  nwreg fit data/synthetic.csv --optimizer sgd --param w --init-w 0.3 \
            --loss sum --lr 0.5 --epochs 5      the d2l textbook's training run
  nwreg fit data/synthetic.csv --score additive an additive attention score
  nwreg fit data/*.csv -x 1 -y 2                a batch: a summary row per file
  nwreg fit 'runs/*.csv' --format json          globs expanded by nwreg
  nwreg fit data/airquality_daily.csv -y Temp   a daily series: h in s and days
  nwreg fit data/lakehuron.csv --curve c.csv --plot c.svg   the criteria over h)");
  return sub;
}

namespace {

// A score's lines of the report: its name and its parameters, a line for each row of a matrix
// (general: W; additive: w_v, W_q and W_k's rows, one per unit, and b).
void write_score(std::ostream& s, const Model& m) {
  const ScoreParameters& p = m.score;
  const std::size_t d = p.d, H = p.hidden;
  const double* t = p.theta.data();
  auto rows = [&](const char* name, const double* at, std::size_t count) {
    for (std::size_t r = 0; r < count; ++r) s << name << ": " << join(at + r * d, at + (r + 1) * d) << '\n';
  };
  s << "score: " << to_string(p.score) << '\n';
  if (p.score == Score::general) rows("W", t, d);
  if (p.score != Score::additive) return;
  s << "hidden: " << H << '\n' << "w_v: " << join(t, t + H) << '\n';
  rows("W_q", t + H, H);
  rows("W_k", t + H + H * d, H);
  if (p.bias) s << "b: " << join(t + H + 2 * H * d, t + p.theta.size()) << '\n';
}

// Several files: one summary row each; a failing file gets its error on its row and on
// stderr, and the others still run. Returns whether all succeeded.
// The grid's parameter as a column: K or span for a nearest-neighbour policy, else h (lambda
// for a categorical column), one per x column named after it when there are several.
std::vector<std::string> curve_columns(const Model& m) {
  if (m.neighbour_policy) return {m.neighbour_policy.kind == Neighbours::span ? "span" : "K"};
  std::vector<std::string> names;
  for (std::size_t k = 0; k < m.x_columns.size(); ++k) {
    const std::string what = is_categorical(column_kind(m, k)) ? "lambda" : "h";
    names.push_back(m.x_columns.size() == 1 ? what : what + "_" + m.x_columns[k]);
  }
  return names;
}

// --curve: a CSV row per grid point, an empty field where a criterion is undefined.
void write_curve(std::ostream& os, const Model& m) {
  std::string line;
  for (const auto& name : curve_columns(m)) line += csv_field(name, ',') + ",";
  os << line << "loo,gcv,aicc,df\n";
  auto field = [](const std::optional<double>& v) { return v ? format_double(*v) : std::string(); };
  for (const CurvePoint& p : m.curve) {
    line.clear();
    if (m.neighbour_policy) line += format_double(p.parameter) + ",";
    else
      for (double h : p.bandwidth) line += format_double(h) + ",";
    os << line << field(p.loo) << ',' << field(p.gcv) << ',' << field(p.aicc) << ',' << field(p.df) << '\n';
  }
}

// --plot: the same curves, x the grid's parameter (the first column's h with several).
CurvePlot curve_plot(const Model& m) {
  CurvePlot p;
  p.names = {m.leave_out ? "LOO (leave-block-out " + std::to_string(m.leave_out) + ")" : std::string("LOO"), "GCV",
             "AICc"};
  p.values.resize(3);
  p.logarithmic = {false, false, true};
  for (const CurvePoint& c : m.curve) {
    p.x.push_back(m.neighbour_policy ? c.parameter : c.bandwidth.at(0));
    p.values[0].push_back(c.loo);
    p.values[1].push_back(c.gcv);
    p.values[2].push_back(c.aicc);
  }
  const NeighbourBandwidth& nb = m.neighbour_policy;
  p.x_name = nb ? to_string(nb.kind) + (nb.kind == Neighbours::span ? " F" : " K")
                : "h of " + m.x_columns.at(0) + (m.x_columns.size() > 1 ? " (h of each column in proportion)" : "");
  p.chosen = nb ? (nb.kind == Neighbours::span ? nb.F : static_cast<double>(nb.K)) : m.bandwidth.at(0);
  p.title = "criteria over the bandwidth grid, n = " + std::to_string(m.n) + "; dashed: " +
            (m.criterion ? "chosen by " + to_string(*m.criterion) : std::string("the bandwidth"));
  return p;
}

bool run_batch(const FitCommand& cmd, const std::vector<std::string>& files, const BandwidthPlan& plan) {
  const bool json = cmd.format == "json";
  ThreadPool pool(cmd.engine.threads);
  report_threads(pool, std::cerr);
  const EngineOptions engine = cmd.engine.options(pool);  // an option error once, not per file
  return write_batch(
      files, json, "file,n,bandwidth,loo_mse,loo_r2,neighbours,df,criterion,criterion_value,warning,error\n", 9,
      [&](const std::string& file, nlohmann::ordered_json& rec, std::string& row) {
        auto reader = open_csv(file, cmd.input, std::cin);
        Dataset data = load_training(*reader, cmd.input, nullptr, std::cerr);
        reader.reset();
        const std::size_t n = data.n;
        Progress progress(!cmd.engine.quiet);
        const Model m = choose_bandwidth(std::move(data), plan, engine, true, std::cerr, &progress);  // (given up)
        if (n < 2) throw DataError("the leave-one-out error needs at least 2 training rows, got 1");
        // The LOO statistics are absent where another criterion chose a bandwidth that leaves a
        // row with no other key in reach: an empty field, null in JSON.
        auto value = [](const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(); };
        auto field = [](const std::optional<double>& v) { return v ? format_double(*v) : std::string(); };
        std::string warning;
        for (const auto& w : m.warnings) warning += (warning.empty() ? "" : "; ") + w;
        rec["n"] = n;
        if (!m.score.distance()) rec["score"] = to_string(m.score.score);
        rec["bandwidth"] = m.score.distance() ? nlohmann::ordered_json(m.bandwidth) : nlohmann::ordered_json();
        // Neighbour bandwidths: K beside the scale ("1 knn:6" in CSV).
        std::string neighbours;
        if (m.neighbour_policy) {
          const NeighbourBandwidth& p = m.neighbour_policy;
          if (p.kind == Neighbours::span) rec["span"] = p.F;
          else rec[to_string(p.kind)] = p.K;
          neighbours = " " + to_string(p);
        }
        if (m.robust) rec["robust"] = m.robust;
        rec["loo_mse"] = value(m.loo_mse);
        rec["loo_r2"] = value(m.loo_r2);
        rec["neighbours"] = value(m.neighbours);
        rec["df"] = value(m.df);
        rec["criterion"] = m.criterion ? nlohmann::ordered_json(to_string(*m.criterion)) : nlohmann::ordered_json();
        rec["criterion_value"] = value(m.criterion_value);
        rec["warnings"] = m.warnings;
        rec["error"] = nullptr;
        const std::string bandwidth = m.score.distance() ? join(m.bandwidth) + neighbours : "score:" + to_string(m.score.score);
        row = csv_field(file) + "," + std::to_string(n) + "," + bandwidth + "," + field(m.loo_mse) + "," +
              field(m.loo_r2) + "," + field(m.neighbours) + "," + field(m.df) + "," +
              (m.criterion ? to_string(*m.criterion) : std::string()) + "," + field(m.criterion_value) + "," +
              csv_field(warning) + ",\n";
      },
      [](nlohmann::ordered_json& rec) {
        for (const char* k : {"n", "bandwidth", "loo_mse", "loo_r2", "neighbours", "df", "criterion", "criterion_value"})
          rec[k] = nullptr;
        rec["warnings"] = nlohmann::ordered_json::array();
      });
}

}  // namespace

bool run_fit(const FitCommand& given) {
  FitCommand cmd = given;
  const EndNote note(apply_like(cmd.engine, cmd.bandwidth));
  parse_choice<ReportFormat>(cmd.format, report_format_choices, "--format", "format");
  const BandwidthPlan plan = plan_bandwidth(cmd.bandwidth, cmd.engine);
  check_input_options(cmd.input);
  check_plan_columns(plan, cmd.engine, cmd.input);
  check_tolerance(cmd.engine.tolerance);
  const std::vector<std::string> files = expand(cmd.trains);
  std::vector<FileUse> uses;
  for (const auto& f : files) uses.push_back({f, "the training data", false});
  if (!cmd.output.empty()) uses.push_back({cmd.output, "-o", true});
  for (auto [path, option] : {std::pair{&cmd.curve, "--curve"}, std::pair{&cmd.plot, "--plot"}}) {
    if (*path == "-") throw UsageError(std::string(option) + ": stdout carries fit's report; give a file name");
    if (!path->empty()) uses.push_back({*path, option, true});
  }
  if (cmd.output != "-") uses.push_back({"-", "stdout", true});
  check_svg_name(cmd.plot, "--plot");
  check_distinct(uses);
  // A batch: several files, a glob, or one file summarised as a CSV row (as in a batch).
  if (is_batch(cmd.trains, files) || cmd.format == "csv") {
    for (auto [path, option] : {std::pair{&cmd.curve, "--curve"}, std::pair{&cmd.plot, "--plot"}})
      if (!path->empty())
        throw UsageError(std::string(option) + ": one training file's criteria; a batch writes a summary row per file");
    if (!cmd.output.empty())
      throw UsageError(files.size() > 1 || cmd.format != "csv"
                           ? "-o: a model file holds one fit; a batch writes its summary to stdout"
                           : "-o: --format csv writes the summary row to stdout (as a batch does); -o writes the "
                             "model, as --format json");
    return run_batch(cmd, files, plan);
  }
  FitCommand one = cmd;
  one.input.train = files.at(0);
  return run_fit_one(one, plan);
}

bool run_fit_one(const FitCommand& cmd, const BandwidthPlan& given) {
  check_tolerance(cmd.engine.tolerance);
  BandwidthPlan plan = given;
  plan.curve = !cmd.curve.empty() || !cmd.plot.empty();
  std::optional<OutputFile> model_file, curve_file, plot_file;  // opened first: an unwritable path fails at once
  if (!cmd.output.empty() && cmd.output != "-") model_file.emplace(cmd.output, "-o");
  if (!cmd.curve.empty()) curve_file.emplace(cmd.curve, "--curve");
  if (!cmd.plot.empty()) plot_file.emplace(cmd.plot, "--plot");
  auto reader = open_csv(cmd.input.train, cmd.input, std::cin);
  Dataset data = load_training(*reader, cmd.input, nullptr, std::cerr);
  reader.reset();
  ThreadPool pool(cmd.engine.threads);
  report_threads(pool, std::cerr);
  std::optional<Progress> progress(std::in_place, !cmd.engine.quiet);
  // (The rows are given up: the model is all that is written.)
  const Model m = choose_bandwidth(std::move(data), plan, cmd.engine.options(pool), true, std::cerr, &*progress);
  progress.reset();  // clear the status line before the report

  const bool json_to_stdout = cmd.output == "-" || (cmd.output.empty() && cmd.format == "json");
  // The model file is written first and committed only once the report is out: a failure
  // of either leaves the file as it was.
  if (model_file) model_file->write([&](std::ostream& os) { write_model(os, m); });
  if (curve_file) curve_file->write([&](std::ostream& os) { write_curve(os, m); });
  if (plot_file) plot_file->write([&](std::ostream& os) { write_curve_svg(os, curve_plot(m)); });
  OutputFile out("-", "stdout");
  if (json_to_stdout) {
    out.write([&](std::ostream& os) { write_model(os, m); });
  } else {
    auto opt = [](const std::optional<double>& v) { return v ? format_double(*v) : std::string("none"); };
    std::ostream& s = out.stream();
    if (m.score.distance()) s << "bandwidth: " << join(m.bandwidth) << '\n';
    else write_score(s, m);
    if (m.neighbour_policy) {
      const NeighbourBandwidth& p = m.neighbour_policy;
      s << to_string(p.kind) << ": " << (p.kind == Neighbours::span ? format_double(p.F) : std::to_string(p.K)) << '\n';
    }
    if (m.robust) s << "robust: " << m.robust << '\n';
    if (m.score.distance() && std::any_of(m.x_kinds.begin(), m.x_kinds.end(), [](ColumnKind k) { return is_time(k); })) {
      // Time columns' bandwidths (seconds) in a unit people read: "bandwidth_readable: 6 h".
      s << "bandwidth_readable:";
      for (std::size_t k = 0; k < m.bandwidth.size(); ++k)
        s << ' ' << (is_time(column_kind(m, k)) ? format_duration(m.bandwidth[k]) : format_double(m.bandwidth[k]));
      s << '\n';
    }
    if (std::any_of(m.x_kinds.begin(), m.x_kinds.end(), [](ColumnKind k) { return is_categorical(k); })) {
      // A categorical column's entry is its lambda: say which are.
      s << "x_kinds:";
      for (std::size_t k = 0; k < m.bandwidth.size(); ++k) s << ' ' << to_string(column_kind(m, k));
      s << "\ncategorical_kernel: " << to_string(m.categorical) << '\n';
    }
    const std::size_t d = m.x_columns.size();
    for (std::size_t a = 0; a < m.metric.rank; ++a)
      s << "metric: " << join(m.metric.a.data() + a * d, m.metric.a.data() + (a + 1) * d) << '\n';
    s << "loo_mse: " << opt(m.loo_mse) << '\n'
      << "loo_r2: " << opt(m.loo_r2) << '\n'
      << "neighbours: " << opt(m.neighbours) << '\n';
    if (!m.reach.min.empty())  // a nearest-neighbour policy's bandwidths: "-" for a lambda
      for (auto [name, v] : {std::pair{"reach_min", &m.reach.min}, {"reach_median", &m.reach.median}, {"reach_max", &m.reach.max}}) {
        s << name << ':';
        for (double x : *v) s << ' ' << (std::isnan(x) ? std::string("-") : format_double(x));
        s << '\n';
      }
    if (m.df) s << "df: " << format_double(*m.df) << '\n';
    s << "n: " << m.n << '\n';
    if (m.score.distance()) s << "kernel: " << to_string(m.kernel) << '\n';
    s << "method: " << to_string(m.method) << '\n';
    if (m.method == Method::local_polynomial) s << "degree: " << m.degree << '\n';
    if (!m.sample_weight.empty()) s << "sample_weight: " << m.sample_weight << '\n';
    s << "source: " << m.bandwidth_source << '\n';
    if (!m.history.empty())
      s << "epochs: " << m.history.back().epoch << " (" << m.stop_reason << ")\n";
    if (m.criterion) s << "criterion: " << to_string(*m.criterion) << ' ' << opt(m.criterion_value) << '\n';
  }
  OutputFile::commit_all({&out, model_file ? &*model_file : nullptr, curve_file ? &*curve_file : nullptr,
                          plot_file ? &*plot_file : nullptr});
  return true;
}

}  // namespace nwreg::cli
