#include <iostream>
#include <nlohmann/json.hpp>

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
  add_input_options(*sub, cmd.input);
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
  sub->add_option("--format", cmd.format, "Report on stdout: text or json")->capture_default_str();
  add_bandwidth_options(*sub, cmd.bandwidth);
  sub->get_option("--seed")->description("The permutations' seed (and --score additive's random start)");
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
Exit status 0 whatever the p-value; 1 and 2 for errors, as for fit.

Examples:
  nwreg test data/mcycle.csv                     does x have any effect?
  nwreg test data/cars.csv --null linear         is a line enough?
  nwreg test data/cars.csv -b auto --method nw   at the learned bandwidth (permutations)
  nwreg test data/cars.csv --format json | jq .p_value)");
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

}  // namespace

void run_test(const TestCommand& cmd) {
  if (cmd.format != "text" && cmd.format != "json")
    throw UsageError("--format: unknown format " + quote(cmd.format) + " (known: text, json)");
  const NullModel null = parse_null_model(cmd.null);
  if (cmd.bandwidth.robust)
    throw UsageError("--robust: the test needs a smooth linear in y, and robustness weights depend on y");
  const std::optional<std::size_t> asked = parse_permutations(cmd.permutations);
  BandwidthOptions bandwidth = cmd.bandwidth;  // --seed seeds the permutations here, whatever the score
  if (bandwidth.seed_given && cmd.engine.score != "additive") bandwidth.seed_given = false;
  // The default bandwidth is sm.regression's: 6 degrees of freedom a continuous x column, fixed
  // by x alone, so that the chi-square p-value holds; categorical columns have no such scale
  // and learn theirs (calibrated by permutations).
  if (bandwidth.bandwidth.empty() && cmd.engine.score == "gaussian" && cmd.input.categorical.empty() &&
      cmd.input.ordered.empty())
    bandwidth.bandwidth = "df:" + std::to_string(default_df * x_column_count(cmd.input));
  const BandwidthPlan plan = plan_bandwidth(bandwidth, cmd.engine);
  check_input_options(cmd.input);
  check_plan_columns(plan, cmd.engine, cmd.input);
  auto reader = open_csv(cmd.input.train, cmd.input, std::cin);
  const Dataset data = load_training(*reader, cmd.input, nullptr, std::cerr);
  reader.reset();
  ThreadPool pool(cmd.engine.threads);
  report_threads(pool, std::cerr);
  const EngineOptions engine = cmd.engine.options(pool);
  std::optional<Progress> progress(std::in_place, !cmd.engine.quiet);
  const bool default_df = bandwidth.bandwidth != cmd.bandwidth.bandwidth;
  const Model m = [&] {
    try {
      return choose_bandwidth(data, plan, engine, false, std::cerr, &*progress);
    } catch (const DataError& e) {
      const std::string what = e.what();
      if (!default_df || what.rfind("--bandwidth df:", 0) != 0) throw;
      throw DataError(what + " (test's default bandwidth; give -b H, or -b df:K with a K in that range)");
    }
  }();
  // A bandwidth that depends on x alone (given, a rule of thumb on x, df:K) is fixed in advance.
  const bool depends_on_y = m.bandwidth_source != "fixed" && m.bandwidth_source != "silverman" &&
                            m.bandwidth_source != "scott" && m.bandwidth_source != "df";
  TestOptions options;
  options.null = null;
  options.permutations = asked.value_or(depends_on_y ? default_permutations : 0);
  options.seed = cmd.bandwidth.seed;
  options.relearn = &plan;
  options.on_permutation = [&](std::size_t done, std::size_t total) {
    progress->bar("permutations", done, total);
  };
  const TestResult r = test_null_model(data, m, options, engine);
  progress.reset();
  if (depends_on_y && !options.permutations)
    std::cerr << "nwreg: warning: the bandwidth (" << m.bandwidth_source
              << ") depends on y: the chi-square p-value treats it as fixed in advance and comes out too small (use "
                 "--permutations B)\n";
  if (options.permutations && options.permutations < 19)
    std::cerr << "nwreg: warning: with " << options.permutations << " permutation"
              << (options.permutations == 1 ? "" : "s") << " the p-value cannot fall below "
              << format_g3(1.0 / static_cast<double>(options.permutations + 1)) << "\n";
  for (const auto& w : r.warnings) std::cerr << "nwreg: warning: " << w << '\n';

  const std::string test = null == NullModel::constant ? "no effect" : "linearity";
  // Where the form is skewed to the left the matched chi-square overstates p (see significance.h).
  const std::string approximation = std::string("shifted chi-square matched on three cumulants") +
                                    (r.skew_negative ? "; conservative here (the exact p-value is smaller)" : "");
  const std::string calibration =
      r.permutations ? "permutation (" + std::to_string(r.permutations) + " data sets under the null, " +
                           (depends_on_y ? "the bandwidth chosen afresh on each)" : "the same bandwidth)")
                     : "chi-square at a fixed bandwidth";
  OutputFile out("-", "stdout");
  out.write([&](std::ostream& os) {
    if (cmd.format == "json") {
      nlohmann::ordered_json j;
      j["test"] = test;
      j["null"] = to_string(null);
      j["statistic"] = r.statistic;
      j["p_value"] = r.p_value;
      j["calibration"] = calibration;
      j["permutations"] = r.permutations;
      j["p_value_fixed_bandwidth"] =
          r.p_fixed_bandwidth ? nlohmann::ordered_json(*r.p_fixed_bandwidth) : nlohmann::ordered_json();
      j["rss_null"] = r.rss_null;
      j["rss_smooth"] = r.rss_smooth;
      j["df"] = r.df_smooth;
      j["null_terms"] = r.null_terms;
      j["n"] = data.n;
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
        j["approximation"] = approximation;
        j["chi_square"] = {{"df", r.chi_df}, {"scale", r.chi_scale}, {"shift", r.chi_shift}};
      }
      j["warnings"] = r.warnings;
      os << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
      return;
    }
    os << "test: " << test << '\n'
       << "null: " << to_string(null) << '\n'
       << "statistic: " << format_double(r.statistic) << '\n'
       << "p_value: " << format_double(r.p_value) << '\n'
       << "calibration: " << calibration << '\n';
    if (r.permutations && r.p_fixed_bandwidth)
      os << "p_value_fixed_bandwidth: " << format_double(*r.p_fixed_bandwidth) << '\n';
    os
       << "rss_null: " << format_double(r.rss_null) << '\n'
       << "rss_smooth: " << format_double(r.rss_smooth) << '\n'
       << "df: " << format_double(r.df_smooth) << '\n'
       << "n: " << data.n << '\n';
    if (r.rows != data.n) os << "rows: " << r.rows << " (with a positive sample weight)\n";
    os << "bandwidth: " << bandwidth_text(m) << '\n';
    if (m.score.distance()) os << "kernel: " << to_string(m.kernel) << '\n';
    os << "method: " << to_string(m.method) << '\n';
    if (m.method == Method::local_polynomial) os << "degree: " << m.degree << '\n';
    os << "source: " << m.bandwidth_source << '\n'
       ;
    if (r.p_fixed_bandwidth && !r.permutations) os << "approximation: " << approximation << '\n';
  });
  out.commit();
}

}  // namespace nwreg::cli
