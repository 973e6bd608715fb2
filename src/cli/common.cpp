#include "cli/common.h"

#include "cli/choices.h"
#include "cli/wording.h"

#include <CLI/CLI.hpp>

#include <glob.h>
#include <sys/stat.h>

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
std::string join(const double* first, const double* last) {
  std::string s;
  for (const double* p = first; p != last; ++p) s += (p == first ? "" : " ") + format_double(*p);
  return s;
}

std::vector<std::string> expand(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const auto& a : args) {
    struct stat st;
    glob_t g{};
    if (is_glob(a) && ::stat(a.c_str(), &st) != 0 && ::glob(a.c_str(), 0, nullptr, &g) == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
    } else {
      files.push_back(a);
    }
    globfree(&g);
  }
  return files;
}

bool is_batch(const std::vector<std::string>& args, const std::vector<std::string>& files) {
  return files.size() > 1 || (args.size() == 1 && is_glob(args[0]) && files.size() == 1 && files[0] != args[0]);
}

std::string error_message(const Error& e) {
  if (const auto* p = dynamic_cast<const ParameterError*>(&e)) return option_name(p->parameter()) + ": " + in_cli_words(e.what());
  return in_cli_words(e.what());
}

void report_threads(const ThreadPool& pool, std::ostream& log) {
  if (!pool.shortfall().empty())
    log << "nwreg: warning: " << pool.shortfall() << "; running on " << pool.size() << "\n";
}

std::string join(const std::vector<double>& v) { return join(v.data(), v.data() + v.size()); }

void add_input_options(CLI::App& app, InputOptions& o, bool positional) {
  app.option_defaults()->group("Input");
  if (positional)
    app.add_option("TRAIN", o.train,
                   "Training data: a CSV file, or - for standard input (the default when it is not a terminal)");
  app.add_option("-x,--x", o.x,
                 "x column(s): header names or 1-based indices, comma-separated or repeated, one bandwidth "
                 "each (default: the first column)");
  app.add_option("-y,--y", o.y, "y column: header name or 1-based index (default: the second)");
  app.add_flag("--no-header", o.no_header,
               "The first row is data, in every input file (default: a first row that is not all numbers or "
               "dates is a header)");
  app.add_option("--delimiter", o.delimiter,
                 "Field separator: one character, or tab (default: detected from the first line, the most "
                 "frequent of , ; tab |, else ,)");
  app.add_option("--decimal", o.decimal, "Decimal mark of numbers in the input: . or , (then the delimiter is found among ; tab |, "
                 "else ;)")
      ->capture_default_str();
  app.add_option("--date-format", o.date_format,
                 "Dates and times written otherwise than ISO 8601, in strptime's directives: %Y %y %m %b %B %d %H "
                 "%M %S %%, e.g. %m/%d/%Y for 05/01/1973 (read in UTC; ISO stamps are still read)");
  app.add_option("--sample-weight", o.sample_weight,
                 "Column of sample weights (>= 0) multiplying each key's kernel weight; learning and the "
                 "LOO error weight each row's squared error by it too");
  app.add_option("--na", o.na,
                 "Missing values (empty, NA, N/A, NaN, nan, null, NULL, NaT) in the columns read: fail names "
                 "the line; skip drops the row and says how many on stderr")
      ->capture_default_str();
  app.add_option("--categorical", o.categorical,
                 "x column(s) of unordered labels (text or numbers): a key weighs less the more its level differs "
                 "from the query's, by a lambda per column learned with the bandwidths (see --categorical-kernel)");
  app.add_option("--ordered", o.ordered,
                 "x column(s) of ordered labels: numbers are ordered by value, their differences the distances; "
                 "text is ordered as --levels lists it, else sorted");
  app.add_option("--levels", o.levels,
                 "COL=a,b,c: the levels of a categorical column in order (repeat per column); levels listed but "
                 "not in the data count too");
}

std::optional<std::size_t> EngineCliOptions::fixed_leave_out() const {
  if (leave_out == "auto") return std::nullopt;
  std::size_t k = 0;
  const auto [end, ec] = std::from_chars(leave_out.data(), leave_out.data() + leave_out.size(), k);
  if (ec != std::errc() || end != leave_out.data() + leave_out.size())
    throw UsageError("--leave-out: expected a whole number of keys or auto, got " + quote(leave_out));
  return k;
}

EngineOptions EngineCliOptions::options(ThreadPool& pool) const {
  check_tolerance(tolerance);
  EngineOptions e{tolerance, &pool};
  e.kernel = parse_kernel(kernel);
  e.method = parse_method(method);
  if (degree < 0) throw ParameterError("degree", "must be between 0 and " + std::to_string(max_degree) + ", got " + std::to_string(degree));
  check_degree(static_cast<std::size_t>(degree));
  if (degree_given && e.method != Method::local_polynomial)
    throw UsageError("--degree: only with --method local-polynomial (local-linear is degree 1, nw degree 0)");
  e.degree = static_cast<std::size_t>(degree);
  e.out_of_reach = engine_reach(parse_unsupported(out_of_reach));
  e.leave_out = fixed_leave_out().value_or(0);  // auto: decided per data set by choose_bandwidth
  e.categorical = parse_categorical_kernel(categorical_kernel);
  e.categorical_in_fit = parse_choice<bool>(categorical_fit, categorical_fit_choices, "--categorical-fit", "choice");
  e.lowess_window = lowess_window;
  return e;
}

void add_method_options(CLI::App& app, EngineCliOptions& o) {
  app.option_defaults()->group("Method");
  app.add_option("--score", o.score,
                 "Attention score of a query q and a key k: " + in_cli_words(score_help()) +
                     ". The others than gaussian act on x as given, by nw; see docs/scores.md")
      ->capture_default_str();
  app.add_option("--hidden", o.hidden, "--score additive: the number H of tanh units")
      ->capture_default_str()
      ->check(CLI::Range(1LL, static_cast<long long>(max_hidden)))
      ->each([&o](const std::string&) { o.hidden_given = true; });
  app.add_flag("--no-bias", o.no_bias, "--score additive: no b inside the tanh, w_v^T tanh(W_q q + W_k k) as the texts write it");
  app.add_option("--kernel", o.kernel,
                 kernel_help() + "; u = (q - x)/h. The compact ones are 0 for |u| >= 1 (uniform: > 1): h is their radius")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.kernel_given = true; });
  app.add_option("--method", o.method, in_cli_words(method_help()))
      ->capture_default_str()
      ->each([&o](const std::string&) { o.method_given = true; });
  app.add_option("--degree", o.degree, "Degree of --method local-polynomial, 0 to 3 (1 is local-linear, 0 nw)")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.degree_given = true; });
  app.add_option("--out-of-reach", o.out_of_reach,
                 "Queries the data do not support: past an x column's training range, or with no key within a "
                 "compact kernel's reach. auto: predictions past the range extrapolated (said on stderr), their "
                 "--se band cells empty, a query out of reach an error; extrapolate (or nearest): every cell "
                 "answered, out of reach by the nearest key's y; empty: their cells empty; error: refused")
      ->capture_default_str();
  app.add_option("--leave-out", o.leave_out,
                 "Leave-block-out cross-validation (one x column): each leave-one-out row also leaves out the K "
                 "nearest keys on each side in x order, for series whose errors are correlated. auto: K for an "
                 "evenly spaced series whose residuals are correlated, else 0 (learning by loo only)")
      ->capture_default_str();
  app.add_option("--categorical-kernel", o.categorical_kernel,
                 "Kernels of --categorical / --ordered columns: aitchison-aitken (with Wang-van Ryzin for ordered "
                 "ones, as statsmodels and R np) or li-racine; each column's lambda (in --bandwidth) sets how much "
                 "other levels weigh (see docs/methods.md, \"Categorical columns\")")
      ->capture_default_str();
  app.add_option("--categorical-fit", o.categorical_fit,
                 "How a local fit (local-linear, local-polynomial) treats categorical columns: weights (only "
                 "through the kernel weights, as R np) or line (their level values in the polynomial too, as "
                 "statsmodels KernelReg)")
      ->capture_default_str();
}

void add_like_option(CLI::App& app, EngineCliOptions& o) {
  app.add_option("--like", o.like,
                 "loess: R's loess(y ~ x, surface = \"direct\") (tricube, --method local-polynomial --degree 2, "
                 "-b span:0.75); lowess: lowess(x, y, f = 2/3, iter = 3, delta = 0) (tricube, --method local-linear, "
                 "-b span:2/3, --robust 3, and its window: keys past 0.999 h weigh 0). Options given override them; "
                 "-b must then be span:F")
      ->group("Method");
}

EndNote::~EndNote() {
  if (!text_.empty() && std::uncaught_exceptions() == exceptions_) std::cerr << text_;
}

std::string apply_like(EngineCliOptions& engine, BandwidthOptions& bandwidth) {
  if (engine.like.empty()) {
    if (bandwidth.bandwidth.rfind("span:", 0) != 0 || engine.kernel == "tricube" || engine.score != "gaussian") return {};
    return "nwreg: note: -b " + escape_excerpt(bandwidth.bandwidth, 60) + " weighs by the " +
           escape_excerpt(engine.kernel, 40) +
           " kernel, which loess never uses (loess weighs by tricube): --like loess is R's loess(y ~ x, surface = "
           "\"direct\"), --like lowess its lowess(x, y)\n";
  }
  const bool loess = parse_choice<bool>(engine.like, like_choices, "--like", "R call");
  if (!bandwidth.bandwidth.empty() && bandwidth.bandwidth.rfind("span:", 0) != 0)
    throw UsageError("--like " + engine.like + ": its bandwidth is a span, -b span:F (or span:auto); got -b " +
                     quote(bandwidth.bandwidth));
  if (!engine.kernel_given) engine.kernel = "tricube";
  if (!engine.method_given) engine.method = loess ? "local-polynomial" : "local-linear";
  if (!engine.degree_given && loess) engine.degree = 2;
  if (bandwidth.bandwidth.empty()) bandwidth.bandwidth = loess ? "span:0.75" : "span:" + format_double(2.0 / 3);
  if (!bandwidth.robust_given && !loess) bandwidth.robust = 3;
  engine.lowess_window = !loess;
  return {};
}

void add_performance_options(CLI::App& app, EngineCliOptions& o) {
  app.option_defaults()->group("Performance");
  app.add_option("--threads", o.threads,
                 "Threads to use, at most " + std::to_string(max_threads) +
                     "; 0 = the CPUs this process may use (affinity mask, cgroup quota)")
      ->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "No progress display (shown only when stderr is a terminal)");
  app.add_option("--tolerance", o.tolerance,
                 "Skip keys whose weights add up to less than this; each prediction stays within "
                 "tolerance * (max y - min y) of the full sum. 0 = use every key")
      ->capture_default_str();
}

void add_bandwidth_options(CLI::App& app, BandwidthOptions& o) {
  app.option_defaults()->group("Bandwidth");
  app.add_option("-b,--bandwidth", o.bandwidth,
                 std::string("H (fixed, > 0; a time span such as 90s, 15min, 6h, 3d or 2w for a column of dates or times), "
                             "auto (learn it), silverman or scott (rules of thumb), plugin (direct plug-in, one x column), "
                             "df:K (the bandwidth whose fit has K degrees of freedom, tr(H) = K), ") +
                     neighbour_help() + ", K or F a number or auto, then optionally :H,H the columns' scales (span:0.5:1,1 "
                     "is loess's normalize = FALSE); default auto. A categorical column's entry is its lambda");
  app.add_option("--robust", o.robust,
                 "N robustness iterations after the first fit, as R's lowess(iter = N) and loess(family = "
                 "\"symmetric\") with N = 3: each row's weight times a bisquare of its residual / (6 median |residual|)")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.robust_given = true; });
  app.add_option("--init", o.init,
                 "Start the descent at H (a number, or a time span such as 6h for a time column; or silverman, "
                 "scott, plugin) instead of scanning for the basin");
  app.add_option("--init-w", o.init_w, "Start at w = 1/h (the d2l textbook's parameter)");
  app.add_option("--optimizer", o.optimizer,
                 "auto: for bandwidths a scan, then line-search; for learned scores adam. line-search: gradient "
                 "descent with backtracking; adam: Adam's steps (learned scores); sgd: fixed-rate steps")
      ->capture_default_str();
  app.add_option("--param", o.param, "What sgd steps in: log-h or w = 1/h")->capture_default_str();
  app.add_option("--loss", o.loss, "LOO objective: mean or sum of squared errors")
      ->capture_default_str();
  app.add_option("--criterion", o.criterion, "What the learned bandwidth minimises: " + criterion_help())
      ->capture_default_str();
  app.add_option("--min-neighbours", o.min_neighbours,
                 "Learn only bandwidths whose fit averages at least K effective neighbours (1 / sum of squared "
                 "leave-one-out weights); 0 = no bound")
      ->capture_default_str();
  app.add_option("--epochs", o.epochs,
                 "auto: most descent steps; sgd, adam: number of steps (learned scores: default 300 for adam and sgd)")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.epochs_given = true; });
  app.add_option("--lr", o.lr,
                 "auto: first step length in log h; sgd, adam: learning rate (learned scores: default 0.05 for adam "
                 "and sgd)")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.lr_given = true; });
  app.add_option("--seed", o.seed, "--score additive: the seed of the parameters' random start")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.seed_given = true; });
  app.add_option("--tol", o.tol, "auto stops when |dL/dlog h| <= tol * L, a step changes h by a relative tol or less, or the loss's rounding hides any further decrease")->capture_default_str();
  app.add_option("--loo-rows", o.loo_rows,
                 "Rows whose LOO error the descent minimises, spread over x (each against every key); 0 = every "
                 "row. auto: every row with one continuous x column (its passes are O(n log n)), else " +
                     std::to_string(sampled_descent_rows) + ". The error reported is over every row")
      ->capture_default_str();
  app.add_option("--metric", o.metric,
                 "diagonal: one bandwidth per x column; full: then learn a linear map A of x, score "
                 "-|A(q - x)|^2/2 (Gaussian, nw)")
      ->capture_default_str();
  app.add_option("--rank", o.rank, "--metric full: rows of A (a projection to r dimensions); 0 = one per x column")
      ->capture_default_str();
  app.add_flag("-v,--verbose", o.verbose, "Show the loss after each epoch on stderr");
}

void check_input_options(const InputOptions& o) {
  csv_options(o);
  for (const auto& text : o.levels) parse_levels(text);
}

CsvOptions csv_options(const InputOptions& o) {
  CsvOptions opts;
  opts.delimiter = parse_delimiter(o.delimiter);
  opts.decimal = parse_decimal(o.decimal);
  opts.header = o.no_header ? HeaderMode::absent : HeaderMode::detect;
  opts.na = parse_na(o.na);
  if (!o.date_format.empty()) check_date_format(o.date_format);
  opts.date_format = o.date_format;
  return opts;
}

CsvOptions query_csv_options(const InputOptions& o) {
  CsvOptions opts = csv_options(o);
  if (opts.na == NaPolicy::skip) opts.na = NaPolicy::keep;
  return opts;
}

std::unique_ptr<CsvReader> open_csv(const std::string& path, const InputOptions& o,
                                    std::istream& stdin_stream, bool queries) {
  const CsvOptions opts = queries ? query_csv_options(o) : csv_options(o);
  if (path == "-") return std::make_unique<CsvReader>(stdin_stream, "<stdin>", opts);
  return std::make_unique<CsvReader>(path, opts);
}

void report_skipped(const CsvReader& reader, const char* what, std::ostream& log) {
  if (reader.skipped() == 0) return;
  log << "nwreg: dropped " << reader.skipped() << " " << what << (reader.skipped() == 1 ? "" : "s")
      << " with missing values from " << reader.source() << " (first: line " << reader.first_skipped_line() << ")\n";
}

Dataset load_training(CsvReader& reader, const InputOptions& o, const Model* model, std::ostream& log,
                      const std::string& model_path, const std::vector<std::string>& keep) {
  ColumnChoice c;
  c.keep = keep;
  auto columns = [](const std::vector<std::string>& parts, const char* option) {
    std::vector<std::string> out;
    for (const auto& part : parts)
      for (auto& name : parse_column_list(part, option)) out.push_back(std::move(name));
    return out;
  };
  c.unordered = columns(o.categorical, "--categorical");
  c.ordered = columns(o.ordered, "--ordered");
  for (const auto& text : o.levels) c.levels.push_back(parse_levels(text));
  const bool by_model = model && reader.has_header();
  if (!o.x.empty()) {
    c.x.clear();
    for (const auto& part : o.x)
      for (auto& name : parse_column_list(part, "-x")) c.x.push_back(std::move(name));
  } else if (by_model) {
    c.x = model->x_columns;
  }
  if (!o.y.empty()) c.y = o.y;
  else if (by_model) c.y = model->y_column;
  if (reader.row_names() && !by_model) {  // R's write.csv: the first column names the rows
    c.x_position = 1;
    c.y_position = 2;
  }
  if (!o.sample_weight.empty()) c.weight = o.sample_weight;
  else if (by_model) c.weight = model->sample_weight;
  if (by_model) {
    // The columns taken from the model, as it names them: a file without them is the wrong
    // data (exit 1), not a wrong option (exit 2).
    std::vector<std::string> wanted;
    if (o.x.empty()) wanted = c.x;
    if (o.y.empty()) wanted.push_back(c.y);
    if (o.sample_weight.empty() && !c.weight.empty()) wanted.push_back(c.weight);
    for (const auto& name : wanted)
      if (std::find(reader.names().begin(), reader.names().end(), name) == reader.names().end())
        throw InputError(model_path, 0, "",
                         "fitted on a column named " + quote(name) + ", which " + escape_excerpt(reader.source(), 200) +
                             " lacks; give -x and -y to choose its columns");
  }
  if (model)  // the model's categorical columns (as -x names them), their levels in its order
    for (std::size_t k = 0; k < model->x_columns.size(); ++k) {
      const ColumnKind kind = column_kind(*model, k);
      if (!is_categorical(kind)) continue;
      const std::string spec = k < c.x.size() ? c.x[k] : std::to_string(c.x_position + 1);
      (kind == ColumnKind::ordered ? c.ordered : c.unordered).push_back(spec);
      if (k < model->levels.size() && !model->levels[k].numeric) c.levels.emplace_back(spec, model->levels[k].labels);
    }
  Dataset data;
  try {
    data = read_dataset(reader, c);
  } catch (const ParameterError& e) {  // the model's levels, not --levels, do not fit the data
    if (!model || e.parameter() != "levels" || !o.levels.empty()) throw;
    throw InputError(model_path, 0, "", "fitted on other levels than " + escape_excerpt(reader.source(), 200) + " holds: " + e.what());
  }
  report_skipped(reader, "training row", log);
  for (std::size_t k = 0; k < data.x_local_time.size(); ++k)
    if (data.x_local_time[k])
      log << "nwreg: " << escape_excerpt(reader.source(), 200) << ": column " << quote(data.x_names[k])
          << ": date-times without a UTC offset are read as UTC, so a local clock's repeated or skipped "
             "daylight-saving hour goes unseen (write Z or an offset such as +01:00)\n";
  return data;
}

void check_svg_name(const std::string& path, const char* option) {
  if (path.empty() || path == "-" || path.rfind("/dev/", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0) return;
  if (!has_extension(path, ".svg"))
    throw UsageError(std::string(option) + ": writes SVG; give a file name ending in .svg (or - for stdout), got " +
                     quote(path));
}

}  // namespace nwreg::cli
