#pragma once
/// What a model records about how it was fitted, shared by the engine, the learner and the
/// model file: the method (the estimator at each query), the criterion the bandwidth minimised,
/// the learned metric's map and the loss history. Plain values: no engine or learner here.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "nwreg/kernel/categorical.h"
#include "nwreg/kernel/kernels.h"

namespace nwreg {

/// The estimator at each query: a weighted mean (Nadaraya-Watson, local constant), a weighted
/// line, or a weighted polynomial of a given degree.
enum class Method { nw, local_linear, local_polynomial };
/// The methods' registry, in the order --help lists them: name, degree of the local polynomial
/// (-1: --degree's), and help (engine/estimator.h computes each).
struct MethodDef {
  Method id;
  const char* name;
  int degree;
  const char* help;
};
inline constexpr MethodDef method_table[] = {
    {Method::nw, "nw", 0, "weighted mean (local constant)"},
    {Method::local_linear, "local-linear", 1,
     "weighted line at each query, less bias at the edges (its weights can be negative)"},
    {Method::local_polynomial, "local-polynomial", -1, "a polynomial of `degree` P"},
};
/// "nw: weighted mean (local constant); local-linear: ...", as --method's help lists them.
std::string method_help();
std::string to_string(Method method);
/// The degree of a method's local polynomial: NW 0, local linear 1, local polynomial `degree`.
std::size_t method_degree(Method method, std::size_t degree);
/// Throws UsageError naming --degree unless degree <= max_degree.
inline constexpr std::size_t max_degree = 3;
void check_degree(std::size_t degree);
/// Throws UsageError naming --method for an unknown name.
Method parse_method(const std::string& name);

/// What the bandwidth minimises. RSS = sum_j (y_j - f_j)^2 is the in-sample fit (key j in),
/// tr(H) = sum_j l_jj, n the number of keys; with sample weights RSS / n is their weighted mean.
enum class Criterion {
  loo,   //!< the leave-one-out error (Loss::mean or Loss::sum)
  aicc,  //!< log(RSS / n) + (1 + tr(H) / n) / (1 - (tr(H) + 2) / n)  (Hurvich, Simonoff, Tsai 1998)
  gcv,   //!< n RSS / (n - tr(H))^2  (Craven and Wahba 1979)
};
/// The criteria's names, in the order --help lists them (learn/criteria.h holds their formulas).
inline constexpr std::pair<Criterion, const char*> criterion_names[] = {
    {Criterion::loo, "loo"}, {Criterion::aicc, "aicc"}, {Criterion::gcv, "gcv"}};
std::string to_string(Criterion criterion);
/// Throws UsageError naming --criterion for an unknown name.
Criterion parse_criterion(const std::string& name);

/// One row of the loss history: the parameters after `epoch` steps (0 = the start point) and
/// the objective there.
struct Epoch {
  int epoch = 0;
  std::vector<double> bandwidth;
  double loss = 0;  //!< the objective (mean or sum, per FitOptions::loss) over the rows used
  std::vector<double> metric;  //!< metric descent: the map A (r x d, row-major); else empty
};

/// Most rows a loss history keeps: a run of 10^7 epochs must not keep 10^7 rows.
inline constexpr std::size_t max_history = 10000;

/// Appends `e` to a history whose epochs count up by one: every epoch while there are at most
/// max_history rows, beyond that an evenly thinned selection (the stride doubles each time it
/// fills; the first row and the latest are always kept).
void record_epoch(std::vector<Epoch>& history, Epoch e);

/// Checks a bandwidth vector for `d` columns: each entry finite, > 0, with a finite inverse.
/// Throws UsageError that starts with `option`.
void check_bandwidth(const std::vector<double>& h, std::size_t d, const std::string& option);

/// Nearest-neighbour bandwidth policies, by name: --bandwidth NAME:K (NAME:F for span), the
/// model file's "NAME": K and the fit report. Each scales the bandwidths by the distance to a
/// nearest key, of each query or of each key (engine/bandwidth_policy.h).
enum class Neighbours { none, knn, adaptive, span };
struct NeighbourDef {
  Neighbours id;
  const char* name;
  bool per_key;      //!< each key its own scale (every key summed); else each query its own
  bool fraction;     //!< its parameter is a fraction F of the keys (span), else a count K
  const char* help;  //!< for --bandwidth's help, after "NAME:K"
};
inline constexpr NeighbourDef neighbour_table[] = {
    {Neighbours::knn, "knn", false, false, "each query's bandwidth reaches its K-th nearest key"},
    {Neighbours::adaptive, "adaptive", true, false, "each key's reaches its K-th nearest other key"},
    {Neighbours::span, "span", false, true,
     "loess's neighbourhood: each query's reaches the nearest fraction F of the keys, Euclidean"},
};
/// A nearest-neighbour bandwidth: its policy and K, or F for span (kind none: a fixed bandwidth).
struct NeighbourBandwidth {
  Neighbours kind = Neighbours::none;
  std::size_t K = 0;  //!< >= 1 in an engine or a model; 0 in a plan: choose K by the criterion
  double F = 0;       //!< span: > 0 in an engine or a model; 0 in a plan: choose F by the criterion
  explicit operator bool() const { return kind != Neighbours::none; }
  /// Whether K (or F) is set: false in a plan that chooses it.
  bool given() const { return K > 0 || F > 0; }
};
/// The policy's row (nullptr for none).
const NeighbourDef* neighbour_def(Neighbours kind);
std::string to_string(Neighbours kind);
/// "knn:12", "span:0.3": the policy and its parameter as --bandwidth takes them.
std::string to_string(const NeighbourBandwidth& n);
/// span: the neighbourhood's count q = floor(n F + 1e-5) of n keys, at least 1 and at most n
/// (R's loess: the 1e-5 keeps 100 x 0.29 = 28.999... at 29).
std::size_t span_count(double F, std::size_t n);
/// Throws UsageError starting with `option` unless 0 < F <= 1e6 (a span).
void check_span(double F, const std::string& option);
/// "knn:K (each query's ...), adaptive:K (...) or span:F (...)", as --bandwidth lists them.
std::string neighbour_help();
/// "knn:K, adaptive:K or span:F", and "knn, adaptive or span".
std::string neighbour_forms();
std::string neighbour_names();

/// What an estimate is, one struct shared by the model file (Model) and the engine
/// (EngineOptions), so that neither copies the other field by field: the kernel, the estimator,
/// a nearest-neighbour policy, leave-block-out, and the categorical columns' kernels.
struct Smoother {
  Kernel kernel = Kernel::gaussian;
  Method method = Method::nw;
  std::size_t degree = 2;  //!< Method::local_polynomial's degree (0 to max_degree)
  /// Leave-block-out cross-validation: each leave-one-out row also leaves out the K nearest
  /// keys on each side in x order (one x column only), for series with correlated errors.
  std::size_t leave_out = 0;
  /// Nearest-neighbour bandwidths (engine/options.h says what each scales); none: fixed.
  NeighbourBandwidth neighbour_policy;
  CategoricalKernel categorical = CategoricalKernel::aitchison_aitken;  //!< categorical columns' kernels,
  /// and whether a local fit's polynomial takes categorical columns' level values too, as
  /// statsmodels KernelReg's local linear does (false: only through the weights, as R np)
  bool categorical_in_fit = false;
  /// R lowess's window (--like lowess): in one continuous x column a compact kernel's keys past
  /// 0.999 h weigh 0, as clowess cuts them; loess's (false) weighs them up to h. Elsewhere (several
  /// columns, the Gaussian or Laplace kernel) it changes nothing.
  bool lowess_window = false;
};

/// A learned metric (--metric full): the linear map A of x, r x d, so that the Gaussian score
/// is -|A (q - x)|^2 / 2 (learn/metric.h learns it; engine/metric_map.h applies it).
struct Metric {
  std::size_t rank = 0;   //!< r: rows of A; 0 = no metric (diagonal bandwidths)
  std::vector<double> a;  //!< A, r x d, row-major
};

/// Throws UsageError naming `option` unless A holds rank x d finite numbers, rank >= 1.
void check_metric(const Metric& m, std::size_t d, const std::string& option);

/// The attention score of a query q against a key k (docs/scores.md). gaussian: the distance
/// kernels of --kernel with bandwidths (every other option applies). The others act on the x
/// columns as given (q and k the rows' vectors of d numbers), with the NW estimator, over every
/// key (no pruning: a score need not fall with distance).
enum class Score { gaussian, dot, scaled_dot, general, additive };
/// The scores' registry, in the order --score's help lists them.
struct ScoreDef {
  Score id;
  const char* name;
  bool learned;      //!< has parameters, learned by descent on the leave-one-out error
  const char* help;  //!< for --score's help
};
inline constexpr ScoreDef score_table[] = {
    {Score::gaussian, "gaussian", false, "the distance kernels: `kernel`, with bandwidths"},
    {Score::dot, "dot", false, "q.k"},
    {Score::scaled_dot, "scaled-dot", false, "q.k / sqrt(d)"},
    {Score::general, "general", true, "q^T W k, W (d x d) learned from the identity"},
    {Score::additive, "additive", true, "w_v^T tanh(W_q q + W_k k + b), learned, `hidden` H units"},
};
const ScoreDef& score_def(Score score);
std::string to_string(Score score);
/// Throws ParameterError("score") for an unknown name.
Score parse_score(const std::string& name);
/// "gaussian: ...; dot: q.k; ...", as --score lists them.
std::string score_help();

/// A score and its parameters, flattened into theta in this order: general W (d x d, row-major,
/// s = sum_ab q_a W_ab k_b); additive w_v (H), W_q (H x d), W_k (H x d), then b (H) unless
/// bias is false.
struct ScoreParameters {
  Score score = Score::gaussian;
  std::size_t d = 0;          //!< x columns
  std::size_t hidden = 0;     //!< additive: H, the tanh units
  bool bias = true;           //!< additive: b inside the tanh (false: the texts' form exactly)
  std::vector<double> theta;  //!< the parameters (empty for gaussian, dot and scaled-dot)
  /// theta's length for this score, d and H.
  std::size_t size() const;
  bool distance() const { return score == Score::gaussian; }
};
/// Most additive units: H x (2d + 2) parameters and an n x H table per thread.
inline constexpr std::size_t max_hidden = 4096;
/// Throws UsageError starting with `option` unless theta holds size() finite numbers and
/// 1 <= H <= max_hidden for additive.
void check_score(const ScoreParameters& p, const std::string& option);

}  // namespace nwreg
