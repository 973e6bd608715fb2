#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/choices.h"
#include "cli/batch.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/learn/significance.h"

namespace nwreg::cli {

namespace {
constexpr std::size_t default_permutations = 199;
constexpr std::size_t default_df = 6;  //!< per x column, as sm.regression (6 for one, 12 for two)
}

CLI::App* setup_test(CLI::App& app, TestCommand& cmd) {
  CLI::App* sub = app.add_subcommand(
      "test", "Test whether x has any effect on y (--null constant) or whether a line is enough (--null linear)");
  sub->add_option("TRAIN", cmd.trains,
                  "Training data: a CSV file, or - for standard input (the default when it is not a terminal). "
                  "Several files (or quoted globs such as 'runs/*.csv') test each and print one summary row per file");
  add_input_options(*sub, cmd.input, false);
  sub->option_defaults()->group("Test");
  sub->add_option("--null", cmd.null,
                  "The null model the smooth is tested against: constant (no effect of x) or linear (y = b0 + b.x; "
                  "an unordered categorical column enters as its levels' effects)")
      ->capture_default_str();
  sub->add_option("--permutations", cmd.permutations,
                  "B: the p-value from up to B data sets made under the null (residuals permuted), the bandwidth "
                  "chosen afresh on each as on the data (it stops once 10 reach the data's F); 0: from the chi-square "
                  "approximation at the bandwidth, as if fixed in advance; auto: " +
                      std::to_string(default_permutations) + " where the bandwidth depends on y (learned, plug-in), else 0")
      ->capture_default_str();
  sub->add_option("--format", cmd.format,
                  "Report on stdout: text or json; for a batch, csv (a row per file, the default) or json (an array)");
  add_bandwidth_options(*sub, cmd.bandwidth);
  sub->get_option("--seed")->description("The permutations' seed (and --score additive's random start)");
  // The test refuses --robust with its reason (plan_test); it is not offered in help or completions.
  sub->get_option("--robust")->group("");
  CLI::Option* b = sub->get_option("--bandwidth");
  b->description(b->get_description() + ". For test the default is df:6 per x column (sm.regression's), auto only with "
                                        "categorical columns");
  add_method_options(*sub, cmd.engine);
  add_performance_options(*sub, cmd.engine);
  sub->footer(R"(The statistic is F = (RSS0 - RSS1) / RSS1: the null model's residual sum of squares
against the smooth's of those residuals. At a bandwidth fixed by x alone (the default df:6, as
R's sm.regression; -b H) its p-value is the chi-square approximation for normal errors; at a
learned one (-b auto) it comes from permutations, the bandwidth learned afresh on each. See
docs/methods.md, "Tests".
Exit status 0 whatever the p-value; 1 and 2 for errors, as for fit (a batch: 1 if any file failed,
each on its row and on stderr).

Examples:
  nwreg test data/mcycle.csv                     does x have any effect?
  nwreg test data/cars.csv --null linear         is a line enough?
  nwreg test data/cars.csv -b auto --method nw   at the learned bandwidth (permutations)
  nwreg test data/cars.csv --format json | jq .p_value
  nwreg test 'runs/*.csv' -x 1 -y 2               a batch: a summary row per file)");
  return sub;
}

namespace {

// --permutations: auto (nullopt), or B >= 0.
std::optional<std::size_t> parse_permutations(const std::string& text) {
  if (text == "auto") return std::nullopt;
  std::size_t used = 0;
  unsigned long long b = 0;
  try {
    b = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || text[0] == '-' || b > 1000000)
    throw UsageError("--permutations: expected auto or a whole number from 0 to 1000000, got " + quote(text));
  return static_cast<std::size_t>(b);
}

// The bandwidth as fit reports it, with a neighbour policy's K or span.
std::string bandwidth_text(const Model& m) {
  if (!m.score.distance()) return "score:" + to_string(m.score.score);
  std::string s = join(m.bandwidth);
  if (m.neighbour_policy) s += " " + to_string(m.neighbour_policy);
  return s;
}

// What every file of a run shares: the options, checked once.
struct Plan {
  NullModel null;
  std::optional<std::size_t> permutations;  // nullopt: auto
  BandwidthPlan bandwidth;
  bool default_df = false;  // the bandwidth is test's default (df:6 a column), not -b
};

// Whether a nearest-neighbour bandwidth depends on x alone: K (or F) given, and the column
// scales given, or none to learn (one continuous column's is 1, span's the columns' trimmed sds).
bool neighbours_fixed(const FitPlan& plan, const Dataset& data) {
  if (!plan.neighbour_policy.given()) return false;  // the criterion chooses K (or F)
  return !plan.fixed.empty() || plan.neighbour_policy.kind == Neighbours::span ||
         (data.d == 1 && !is_categorical(data.kind(0)));
}

Plan plan_test(const TestCommand& cmd) {
  parse_choice<ReportFormat>(cmd.format, report_format_choices, "--format", "format");
  Plan plan{parse_null_model(cmd.null), parse_permutations(cmd.permutations), {}, false};
  if (cmd.bandwidth.robust)
    throw UsageError("--robust: the test needs a smooth linear in y, and robustness weights depend on y");
  BandwidthOptions bandwidth = cmd.bandwidth;  // --seed seeds the permutations here, whatever the score
  if (bandwidth.seed_given && cmd.engine.score != "additive") bandwidth.seed_given = false;
  // The default bandwidth is sm.regression's: 6 degrees of freedom a continuous x column, fixed
  // by x alone, so that the chi-square p-value holds; categorical columns have no such scale
  // and learn theirs (calibrated by permutations).
  if (bandwidth.bandwidth.empty() && cmd.engine.score == "gaussian" && cmd.input.categorical.empty() &&
      cmd.input.ordered.empty()) {
    bandwidth.bandwidth = "df:" + std::to_string(default_df * x_column_count(cmd.input));
    plan.default_df = true;
  }
  plan.bandwidth = plan_bandwidth(bandwidth, cmd.engine);
  check_input_options(cmd.input);
  check_plan_columns(plan.bandwidth, cmd.engine, cmd.input);
  return plan;
}

// One file's test: the data, the smooth's model, the result, and whether the bandwidth
// depended on y; warnings on `log`.
struct Outcome {
  Dataset data;
  Model model;
  TestResult result;
  bool depends_on_y = false;
};

Outcome test_file(const TestCommand& cmd, const std::string& file, const Plan& plan, const EngineOptions& engine,
                  std::ostream& log) {
  Outcome o;
  InputOptions input = cmd.input;
  input.train = file;
  auto reader = open_csv(file, input, std::cin);
  o.data = load_training(*reader, input, nullptr, log);
  reader.reset();
  // Too many rows for the chi-square calibration: said before the bandwidth is chosen, where
  // that calibration is sure (B = 0 given, or auto with a bandwidth fixed by x alone).
  using Kind = BandwidthSpec::Kind;
  const Kind kind = plan.bandwidth.kind;
  const bool by_x = kind == Kind::fixed || kind == Kind::df || kind == Kind::silverman || kind == Kind::scott;
  if (plan.permutations == std::size_t{0} || (!plan.permutations && by_x)) check_test_rows(o.data, 0);
  std::optional<Progress> progress(std::in_place, !cmd.engine.quiet);
  try {
    o.model = choose_bandwidth(o.data, plan.bandwidth, engine, false, log, &*progress);
  } catch (const DataError& e) {
    const std::string what = e.what();
    if (!plan.default_df || what.rfind("`bandwidth` df:", 0) != 0) throw;
    throw DataError(what + " (test's default bandwidth; give -b H, or -b df:K with a K in that range)");
  }
  // A bandwidth that depends on x alone (given, a rule of thumb on x, df:K, a nearest-neighbour
  // policy whose every parameter is given) is fixed in advance.
  const std::string& source = o.model.bandwidth_source;
  o.depends_on_y = source != "fixed" && source != "silverman" && source != "scott" && source != "df" &&
                   !(o.model.neighbour_policy && neighbours_fixed(plan.bandwidth, o.data));
  TestOptions options;
  options.null = plan.null;
  options.permutations = plan.permutations.value_or(o.depends_on_y ? default_permutations : 0);
  options.seed = cmd.bandwidth.seed;
  // Fixed by x alone, the bandwidth is the same on every permuted data set: given, not chosen again
  // (df:K's bisection built about 50 engines a data set).
  FitPlan relearn = plan.bandwidth;
  if (!o.depends_on_y && !o.model.neighbour_policy) {
    relearn.kind = Kind::fixed;
    relearn.fixed = o.model.bandwidth;
  }
  options.relearn = &relearn;
  options.on_permutation = [&](std::size_t done, std::size_t total) { progress->bar("permutations", done, total); };
  o.result = test_null_model(o.data, o.model, options, engine);
  progress.reset();
  std::vector<std::string>& warnings = o.result.warnings;
  for (std::string& w : warnings) w = in_cli_words(w);
  if (o.depends_on_y && !options.permutations)
    warnings.insert(warnings.begin(), "the bandwidth (" + source +
                                          ") depends on y: the chi-square p-value treats it as fixed in advance and "
                                          "comes out too small (use --permutations B)");
  if (options.permutations && options.permutations < 19)
    warnings.insert(warnings.begin(), "with " + std::to_string(options.permutations) + " permutation" +
                                          (options.permutations == 1 ? "" : "s") + " the p-value cannot fall below " +
                                          format_g3(1.0 / static_cast<double>(options.permutations + 1)));
  for (const auto& w : warnings) log << "nwreg: warning: " << w << '\n';
  return o;
}

std::string test_name(NullModel null) { return null == NullModel::constant ? "no effect" : "linearity"; }

std::string calibration(const Outcome& o) {
  const TestResult& r = o.result;
  return r.permutations ? "permutation (" + std::to_string(r.permutations) + " data sets under the null, " +
                              (o.depends_on_y ? "the bandwidth chosen afresh on each)" : "the same bandwidth)")
                        : "chi-square at a fixed bandwidth";
}

// Where the form is skewed to the left the matched chi-square overstates p (see significance.h).
std::string approximation(const TestResult& r) {
  return std::string("shifted chi-square matched on three cumulants") +
         (r.skew_negative ? "; conservative here (the exact p-value is smaller)" : "");
}

nlohmann::ordered_json to_json(const Outcome& o) {
  const TestResult& r = o.result;
  const Model& m = o.model;
  nlohmann::ordered_json j;
  j["test"] = test_name(r.null);
  j["null"] = to_string(r.null);
  j["statistic"] = r.statistic;
  j["p_value"] = r.p_value;
  j["calibration"] = calibration(o);
  j["permutations"] = r.permutations;
  j["p_value_fixed_bandwidth"] = r.p_fixed_bandwidth ? nlohmann::ordered_json(*r.p_fixed_bandwidth) : nlohmann::ordered_json();
  j["rss_null"] = r.rss_null;
  j["rss_smooth"] = r.rss_smooth;
  j["df"] = r.df_smooth;
  j["null_terms"] = r.null_terms;
  j["n"] = o.data.n;
  j["rows"] = r.rows;
  j["bandwidth"] = m.score.distance() ? nlohmann::ordered_json(m.bandwidth) : nlohmann::ordered_json();
  if (m.neighbour_policy) {
    const NeighbourBandwidth& p = m.neighbour_policy;
    if (p.kind == Neighbours::span) j["span"] = p.F;
    else j[to_string(p.kind)] = p.K;
  }
  if (!m.score.distance()) j["score"] = to_string(m.score.score);
  else j["kernel"] = to_string(m.kernel);
  j["method"] = to_string(m.method);
  if (m.method == Method::local_polynomial) j["degree"] = m.degree;
  j["source"] = m.bandwidth_source;
  if (r.p_fixed_bandwidth) {
    j["approximation"] = approximation(r);
    j["chi_square"] = {{"df", r.chi_df}, {"scale", r.chi_scale}, {"shift", r.chi_shift}};
  }
  j["warnings"] = r.warnings;
  return j;
}

void write_text(std::ostream& os, const Outcome& o) {
  const TestResult& r = o.result;
  const Model& m = o.model;
  os << "test: " << test_name(r.null) << '\n'
     << "null: " << to_string(r.null) << '\n'
     << "statistic: " << format_double(r.statistic) << '\n'
     << "p_value: " << format_double(r.p_value) << '\n'
     << "calibration: " << calibration(o) << '\n';
  if (r.permutations && r.p_fixed_bandwidth) os << "p_value_fixed_bandwidth: " << format_double(*r.p_fixed_bandwidth) << '\n';
  // A sum beyond a double's range (y of 1e300: a warning says so) is "none", as JSON's null.
  auto sum = [](double v) { return std::isfinite(v) ? format_double(v) : std::string("none"); };
  os << "rss_null: " << sum(r.rss_null) << '\n'
     << "rss_smooth: " << sum(r.rss_smooth) << '\n'
     << "df: " << format_double(r.df_smooth) << '\n'
     << "n: " << o.data.n << '\n';
  if (r.rows != o.data.n) os << "rows: " << r.rows << " (with a positive sample weight)\n";
  os << "bandwidth: " << bandwidth_text(m) << '\n';
  if (m.score.distance()) os << "kernel: " << to_string(m.kernel) << '\n';
  os << "method: " << to_string(m.method) << '\n';
  if (m.method == Method::local_polynomial) os << "degree: " << m.degree << '\n';
  os << "source: " << m.bandwidth_source << '\n';
  if (r.p_fixed_bandwidth && !r.permutations) os << "approximation: " << approximation(r) << '\n';
}

// Several files: a row each (CSV) or an object each (JSON array); a failing file gets its error
// on its row and on stderr, and the others still run. Returns whether all succeeded.
bool run_batch(const TestCommand& cmd, const std::vector<std::string>& files, const Plan& plan,
               const EngineOptions& engine) {
  return write_batch(
      files, cmd.format == "json",
      "file,n,null,statistic,p_value,calibration,permutations,p_value_fixed_bandwidth,bandwidth,df,warning,error\n", 10,
      [&](const std::string& file, nlohmann::ordered_json& rec, std::string& row) {
        const Outcome o = test_file(cmd, file, plan, engine, std::cerr);
        const nlohmann::ordered_json j = to_json(o);
        for (auto it = j.begin(); it != j.end(); ++it) rec[it.key()] = *it;
        rec["error"] = nullptr;
        std::string warning;
        for (const auto& w : o.result.warnings) warning += (warning.empty() ? "" : "; ") + w;
        const TestResult& r = o.result;
        row = csv_field(file) + "," + std::to_string(o.data.n) + "," + to_string(r.null) + "," +
              format_double(r.statistic) + "," + format_double(r.p_value) + "," + csv_field(calibration(o)) + "," +
              std::to_string(r.permutations) + "," + (r.p_fixed_bandwidth ? format_double(*r.p_fixed_bandwidth) : "") +
              "," + csv_field(bandwidth_text(o.model)) + "," + format_double(r.df_smooth) + "," + csv_field(warning) +
              ",\n";
      });
}

}  // namespace

bool run_test(const TestCommand& cmd) {
  const Plan plan = plan_test(cmd);
  const std::vector<std::string> files = expand(cmd.trains);
  ThreadPool pool(cmd.engine.threads);
  report_threads(pool, std::cerr);
  const EngineOptions engine = cmd.engine.options(pool);
  if (is_batch(cmd.trains, files) || cmd.format == "csv") return run_batch(cmd, files, plan, engine);
  const Outcome o = test_file(cmd, files.at(0), plan, engine, std::cerr);
  OutputFile out("-", "stdout");
  out.write([&](std::ostream& os) {
    if (cmd.format == "json") os << to_json(o).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
    else write_text(os, o);
  });
  out.commit();
  return true;
}

}  // namespace nwreg::cli
