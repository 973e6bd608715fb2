#pragma once
/// Options and steps shared by `fit` and `predict`: reading the training set and choosing the
/// bandwidth (fixed, rule of thumb, or learned).

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <exception>
#include <string>
#include <utility>

#include "cli/wording.h"
#include "nwreg/engine/options.h"
#include "nwreg/engine/results.h"
#include "nwreg/learn/bandwidth.h"
#include "nwreg/data/csv.h"
#include "nwreg/data/dataset.h"
#include "nwreg/base/errors.h"
#include "nwreg/learn/fit.h"
#include "nwreg/model/model.h"
#include "cli/progress.h"
#include "nwreg/base/thread_pool.h"

namespace CLI {  // CLI11's classes; the files that build the options include <CLI/CLI.hpp>
class App;
}  // namespace CLI

namespace nwreg::cli {

/// Where the training data come from and which columns to use.
struct InputOptions {
  std::string train;             //!< CSV path, or "-" for stdin
  std::vector<std::string> x;    //!< -x: names or 1-based indices ("a,b" or repeated); empty = first column
  std::string y;                 //!< -y: name or 1-based index; empty = second column
  bool no_header = false;        //!< --no-header: the first row is data
  std::string delimiter;         //!< --delimiter: one character, or "tab"; empty = detect
  std::string decimal = ".";     //!< --decimal: . or ,
  std::string date_format;       //!< --date-format: strptime's directives; empty = ISO 8601 only
  std::string sample_weight;     //!< --sample-weight: name or 1-based index; empty = none
  std::string na = "fail";       //!< --na: fail | skip (rows with a missing value)
  std::vector<std::string> categorical;  //!< --categorical: x columns of unordered labels
  std::vector<std::string> ordered;      //!< --ordered: x columns of ordered labels
  std::vector<std::string> levels;       //!< --levels COL=a,b,c (repeated)
};

/// How the bandwidth is chosen and, when learned, how.
struct BandwidthOptions {
  std::string bandwidth;        //!< H, auto, silverman, scott, plugin; empty = auto (or the model's)
  std::string init;             //!< --init: start bandwidth H, silverman, scott or plugin; empty = scan
  double init_w = 0;            //!< --init-w: start at w = 1/h (0 = not given)
  std::string optimizer = "auto";  //!< auto | sgd
  std::string param = "log-h";  //!< log-h | w: what sgd steps in
  std::string loss = "mean";    //!< mean | sum
  std::string criterion = "loo";  //!< --criterion: loo | aicc | gcv
  double min_neighbours = 0;    //!< --min-neighbours K: bound the search (0 = none)
  int epochs = 100;             //!< step cap (auto) or exact step count (sgd)
  double lr = 0.5;              //!< first step in log h (auto) or learning rate (sgd)
  double tol = 1e-9;            //!< auto: gradient and step tolerance (FitOptions::tol)
  bool verbose = false;         //!< loss after each epoch on stderr
  std::string loo_rows = "auto";  //!< --loo-rows: rows the descent uses, 0 = all, auto (descent_rows_for)
  std::string metric = "diagonal";  //!< --metric: diagonal (one bandwidth per column) | full
  std::size_t rank = 0;         //!< --rank: rows of the learned map (0 = the number of x columns)
  std::size_t robust = 0;       //!< --robust N: robustness iterations after the first fit
  std::uint64_t seed = 0;       //!< --seed: the additive score's random start
  bool seed_given = false, epochs_given = false, lr_given = false, robust_given = false;
};

/// --threads takes at most this many (more would only queue on the cores).
inline constexpr unsigned max_threads = 1024;

/// What the engine computes, and how it runs.
struct EngineCliOptions {
  std::string score = "gaussian";        //!< --score
  long long hidden = 8;                  //!< --hidden: the additive score's units
  bool hidden_given = false;
  bool no_bias = false;                  //!< --no-bias: the additive score without b
  std::string kernel = "gaussian";       //!< --kernel
  std::string method = "nw";             //!< --method: nw | local-linear | local-polynomial
  long long degree = 2;                  //!< --degree: local-polynomial's degree (checked: 0 to max_degree)
  bool degree_given = false, kernel_given = false, method_given = false;
  std::string like;                      //!< --like loess|lowess: R's call's settings (apply_like)
  bool lowess_window = false;            //!< set by --like lowess: clowess's window (Smoother::lowess_window)
  std::string out_of_reach = "auto";     //!< --out-of-reach: auto | extrapolate (nearest) | empty | error
  std::string leave_out = "auto";        //!< --leave-out K|auto: leave-block-out cross-validation
  std::string categorical_kernel = "aitchison-aitken";  //!< --categorical-kernel
  std::string categorical_fit = "weights";  //!< --categorical-fit weights|line
  unsigned threads = 0;                  //!< --threads: 0 = available_cpus()
  double tolerance = default_tolerance;  //!< --tolerance: pruning bound, 0 = every key
  bool quiet = false;                    //!< --quiet: no progress display

  /// Checks the values (UsageError naming the option) and binds them to `pool`.
  EngineOptions options(ThreadPool& pool) const;  //!< leave_out: K, or 0 for auto
  /// --leave-out as a number of keys; nullopt for auto. Throws UsageError for anything else.
  std::optional<std::size_t> fixed_leave_out() const;
};

/// Whether a TRAIN argument is a glob (holds *, ? or [).
inline bool is_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }
/// The files TRAIN arguments name: globs that name no file as written are expanded (sorted, as
/// the shell does); a glob that matches nothing stays, and fails on its own row.
std::vector<std::string> expand(const std::vector<std::string>& args);
/// Whether the arguments make a batch (a summary row per file): several files, or a glob that
/// expanded to another name.
bool is_batch(const std::vector<std::string>& args, const std::vector<std::string>& files);

/// An error's message for the user, in the command line's words (wording.h): a ParameterError's
/// prefixed with its option's name.
std::string error_message(const Error& e);

/// Says once on `log` when the pool could not start every thread asked for.
void report_threads(const ThreadPool& pool, std::ostream& log);

/// Numbers in shortest round-trip form, separated by spaces: "0.5 1.25".
std::string join(const double* first, const double* last);
std::string join(const std::vector<double>& v);

/// Checks the input options (--delimiter, --decimal, --na) before any file is read. Throws UsageError.
void check_input_options(const InputOptions& o);

/// Binds the input options; `positional` adds TRAIN (fit binds its own list of files).
void add_input_options(CLI::App& app, InputOptions& o, bool positional = true);
/// The engine's options in two help sections: Method (kernel, method, reach, leave-out) and
/// Performance (threads, progress, pruning tolerance). Each add_* sets the section of what
/// follows it.
void add_method_options(CLI::App& app, EngineCliOptions& o);
void add_performance_options(CLI::App& app, EngineCliOptions& o);
void add_bandwidth_options(CLI::App& app, BandwidthOptions& o);

/// The CSV options of the input options (delimiter, decimal mark, header, missing values).
CsvOptions csv_options(const InputOptions& o);
/// The same for query rows: --na skip keeps a query row with a missing value in its place
/// (NaPolicy::keep), answered with empty cells.
CsvOptions query_csv_options(const InputOptions& o);

/// Opens a CSV (stdin for "-"): the training data, or with `queries` query rows.
std::unique_ptr<CsvReader> open_csv(const std::string& path, const InputOptions& o,
                                    std::istream& stdin_stream, bool queries = false);

/// Reads the training set; when -x/-y/--sample-weight are not given, `model_columns` (from the
/// model file `model_path`) pick the columns by name if the file has a header, else the first
/// and second columns are used. A column the model names that the file lacks is an InputError
/// naming the model file. Rows dropped for missing values (--na skip) are counted on `log`.
/// `keep` names columns kept as text (Dataset::kept).
Dataset load_training(CsvReader& reader, const InputOptions& o, const Model* model_columns, std::ostream& log,
                      const std::string& model_path = "", const std::vector<std::string>& keep = {});

/// Says on `log` how many rows `reader` dropped for missing values, if any.
void report_skipped(const CsvReader& reader, const char* what, std::ostream& log);

/// The bandwidth options, checked and parsed before any data are read: the core's plan
/// (leave_out_auto where --leave-out auto can apply: learning by the LOO criterion with the
/// line search, no learned metric), and what only the command line has.
struct BandwidthPlan : FitPlan {
  std::vector<bool> fixed_timed;  //!< per fixed value: given as a time span (seconds)
  std::vector<bool> init_timed;   //!< per --init value: given as a time span
  bool verbose = false;
};

/// --like (fit and predict): loess or lowess, the settings of the R call each reproduces.
void add_like_option(CLI::App& app, EngineCliOptions& o);
/// Fills in what --like sets and the command line left unset: loess is loess(y ~ x, surface =
/// "direct") (tricube, local polynomial of degree 2, span 0.75), lowess is lowess(x, y, f = 2/3,
/// iter = 3, delta = 0) (tricube, local linear, span 2/3, --robust 3); a -b given must be a span.
/// Without --like, a span with another kernel than tricube is not loess: the note that says so
/// is returned (empty where none), for the end of a run that succeeds (EndNote).
/// Throws UsageError naming the option.
std::string apply_like(EngineCliOptions& engine, BandwidthOptions& bandwidth);

/// A note written to stderr when it goes out of scope, unless an exception is leaving it: said
/// after a command's output, never beside its error.
class EndNote {
 public:
  explicit EndNote(std::string text) : text_(std::move(text)), exceptions_(std::uncaught_exceptions()) {}
  EndNote(const EndNote&) = delete;
  EndNote& operator=(const EndNote&) = delete;
  ~EndNote();

 private:
  std::string text_;
  int exceptions_;
};

/// Parses and checks the options, the engine's too (a learned metric needs the Gaussian NW
/// estimator). Throws UsageError naming the option.
BandwidthPlan plan_bandwidth(const BandwidthOptions& o, const EngineCliOptions& engine);

/// --plot and --heatmap write SVG: a file name must say so (stdout and devices are taken as they
/// are). Throws UsageError naming `option`.
void check_svg_name(const std::string& path, const char* option);

/// The number of x columns -x names (1 when it names none).
std::size_t x_column_count(const InputOptions& o);

/// Checks what depends only on the options (bandwidth and --init counts, --rank, --leave-out and
/// the plug-in against the number of x columns, the plug-in against --sample-weight) before any
/// file is read, so that a batch says it once. Throws UsageError.
void check_plan_columns(const BandwidthPlan& plan, const EngineCliOptions& engine, const InputOptions& input);

/// fit_model with the time spans checked against the columns, progress on `log` when verbose
/// (or on `progress`), and the warnings on `log`. `need_loo` adds the leave-one-out statistics
/// (error, R^2, effective neighbours), for a fixed bandwidth too.
Model choose_bandwidth(const Dataset& data, const BandwidthPlan& plan, EngineOptions engine,
                       bool need_loo, std::ostream& log, Progress* progress = nullptr);
/// The same on rows the caller gives up (fit_model's Dataset&&: they may be left in x order).
Model choose_bandwidth(Dataset&& data, const BandwidthPlan& plan, EngineOptions engine,
                       bool need_loo, std::ostream& log, Progress* progress = nullptr);

}  // namespace nwreg::cli
