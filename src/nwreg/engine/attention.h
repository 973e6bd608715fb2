#pragma once
/// The attention engine's facade: every prediction, every attention row written out, and the
/// leave-one-out loss and gradient go through this class. It holds the parts, each a type chosen
/// once per engine (docs/architecture.md):
///
///   KeySet (key_set.h)            the keys in engine order, merged where identical
///   KeyIndex (key_index.h)        which keys a query reaches: line window, k-d tree, every key
///   BandwidthPolicy (bandwidth_policy.h)  each query's bandwidths: fixed, knn, adaptive
///   Estimator (estimator.h)       what a row reduces to: NW or a local polynomial
///   FusedLine (fused_line.h)      the fused 1-D Gaussian NW path and its fast Gauss transform
///   LineSums (line_sums.h)        one column, every kernel: a row's sums by moments
///
/// and runs its passes (predict.cpp, loo.cpp) through one driver (pass.h): a query's row is the
/// fused path's where it applies, else gathered (gather.cpp) and reduced.
///
///   weight e_i(q) = s_i prod_k K((q_k - x_ik) / h_k)       (s_i the sample weight, default 1)
///   a_i(q)        = e_i / sum_j e_j
///   f(q)          = sum_i a_i(q) y_i                       (--method nw)
///
/// For the Gaussian kernel K(u) = exp(-u^2/2) this is the softmax of the scores
/// -1/2 sum_k ((q_k - x_ik) / h_k)^2, made stable by measuring each score from the row maximum:
/// M is the score of the nearest key b, found by an exact comparison, and each s_i - M is
/// computed in the factored form -1/2 sum_k (x_ik - x_bk)(x_ik + x_bk - 2 q_k) / h_k^2, which
/// neither overflows nor cancels where (q - x)^2 would (q = 1e200, keys a unit apart). The
/// Laplace kernel exp(-|u|) is measured from the nearest key in the same way; the compact
/// kernels (Epanechnikov 1 - u^2, tricube (1 - |u|^3)^3, uniform 1, all zero for |u| >= 1,
/// |u| > 1 for uniform) are bounded and need no shift. A query whose weights are all zero (no
/// key within h on every column) is "out of reach": an error, or the nearest key's value
/// (OutOfReach). Keys with sample weight 0 take no part at all (with a nearest-neighbour policy
/// they still count as neighbours: bandwidth_policy.h).
///
/// --method local-polynomial --degree P fits a weighted polynomial of degree P in z instead
/// (every monomial up to P; P = 1 is local linear, P = 0 NW), its value at q the prediction.
/// --method local-linear fits a weighted line at each query (the weights e_i above) and
/// predicts its value at q; the prediction is still sum_i l_i y_i, with the equivalent-kernel
/// weights l_i = e_i c^T z_i, z_i = (1, (x_i - q) / h), c = (sum_j e_j z_j z_j^T)^-1 (1, 0..0):
/// they sum to 1 and can be negative. A direction in which the keys in reach do not spread
/// (fewer than d + 1 keys, or all on a line) is fitted as constant, down to plain NW.
///
/// Each kernel is one type (kernels.h), chosen once per call; the loops over keys run on
/// contiguous ranges of keys stored by column (kernel_nd.h), vectorised, for every kernel,
/// method and column count. With one x column the keys are sorted once, and each query sums
/// only over the window of keys that can matter: within h for compact kernels; for Gaussian and
/// Laplace the keys whose weight relative to the nearest key is at least e^-T,
/// T = ln(n / (tolerance S0_low)), S0_low a lower bound on the row's weight sum: the omitted
/// weights add up to less than tolerance * S0, so each prediction is within
/// tolerance * (max y - min y) of the sum over all keys, and each omitted attention weight is
/// below tolerance / n. Rows whose windows hold many keys in one column are summed by moments
/// instead (line_sums.h: a segment tree of power sums for compact kernels, a fast Gauss
/// transform for the Gaussian, an exact recursion for Laplace), for every estimator, their
/// gradients and standard errors, within a stated bound (docs/numerics.md). With several columns the keys are stored in the leaf order of a k-d
/// tree and each query sums over the leaves within the same bound (key_index.h), or over every
/// key where at this bandwidth the leaves would hold most of them (many columns, wide h). The
/// Gaussian NW sums without sample weights in one column run fused (kernel1d.h). Queries run
/// in parallel; each result is summed in a fixed order, whatever the number of threads.
///
/// Categorical columns (levels.h) multiply each key's weight by their kernel's factor, measured
/// like a distance (the nearest key counts it), and stay out of a local fit's polynomial; the
/// k-d tree then splits on the continuous columns, its reach measured from the key nearest in
/// them with its factor (at most 1), and b is the nearest by the whole distance within reach.
/// Nearest-neighbour bandwidths scale h per query (EngineOptions::knn) or per key (adaptive).
/// knn sums the window (one column) or the k-d tree's leaves (several) within reach at the
/// query's own scale, its K-th nearest distance found by binary search or a tree search;
/// adaptive bandwidths sum, in one column, the blocks of keys in x order that some key reaches
/// at its own scale (KeyIndex::set_scales: a tree over the blocks' widest scale and heaviest
/// normalisation, O(log n) a query plus the keys kept); with several columns, every key.
///
/// Identical keys (equal in every column) are one key to the loops: its weight is the sum of
/// their sample weights W and its value their weighted mean ybar, which gives every prediction
/// as the separate keys would (up to rounding) at the cost of one evaluation. A row's
/// leave-one-out fit attends to the other keys and to the rest of its own group at distance 0:
/// weight W - s_j (K(0) = 1 relative to it) and values sum_i s_i (y_i - ybar) over the rest,
/// each summed over the rest rather than subtracted from the total. The attention rows written
/// out give each row of a group its share s_i / W of the group's weight. Keys are merged
/// whenever some are identical (unless EngineOptions::merge is false), except with
/// --leave-out (its blocks are counted in rows) and on the fused 1-D Gaussian path while more
/// than half the keys are distinct (there the fused loop over every row beats the weighted one
/// over the groups).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/engine/bandwidth_policy.h"
#include "nwreg/engine/estimator.h"
#include "nwreg/engine/fused_line.h"
#include "nwreg/engine/moment_line.h"
#include "nwreg/engine/options.h"
#include "nwreg/engine/pooling.h"
#include "nwreg/engine/pass.h"
#include "nwreg/engine/key_index.h"
#include "nwreg/engine/key_set.h"
#include "nwreg/engine/line_sums.h"
#include "nwreg/kernel/kernel_nd.h"
#include "nwreg/kernel/kernels.h"
#include "nwreg/data/levels.h"
#include "nwreg/kernel/categorical.h"
#include "nwreg/model/settings.h"

namespace nwreg {

class GaussTransform;

/// Leave-one-out mean squared error and its gradient with respect to log h_k.
struct LooResult {
  double mse = 0;                 //!< sum_j s_j (y_j - f_-j)^2 / sum_j s_j (s = sample weights)
  std::vector<double> gradient;   //!< d mse / d log h_k (empty unless asked for)
  std::size_t out_of_reach = 0;   //!< rows no other key reaches (OutOfReach::error): mse is +inf
  std::size_t first_out_of_reach = 0;  //!< the first such row (input index)
};

/// The in-sample fit at the training points (each row's own key included), for the selection
/// criteria AICc and GCV.
struct InSample {
  double mse = 0;    //!< sum_j s_j (y_j - f_j)^2 / sum_j s_j, f_j the fit at x_j (RSS / n unweighted)
  double trace = 0;  //!< tr(H) = sum_j l_jj, each key's weight on itself (NW: a_jj), over every key
  /// n - tr(H) = sum_j (1 - l_jj), summed without the cancellation of n - trace where the fit
  /// nearly interpolates (l_jj -> 1): what GCV and AICc divide by
  double room = 0;
  std::vector<double> d_mse, d_trace;  //!< their gradients in log h_k (empty unless asked for)
};

/// Per-row leave-one-out details, for statistics and standard errors.
struct LooDetail {
  std::vector<double> residual;  //!< y_j - f_-j per input row (0 for rows of sample weight 0)
  /// Mean over rows (sample-weighted) of 1 / sum_i a_ji^2, the a_ji being row j's
  /// leave-one-out weights as --weights writes them: the effective number of neighbours
  /// (over a spread sample of rows when loo_detail was asked for one).
  double neighbours = 0;
};

/// Throws DataError unless `rows` leave a left-out row another key outside its block of
/// `leave_out` keys on each side (rows >= 2 + 2 leave_out).
void check_leave_out(std::size_t rows, std::size_t leave_out);

/// Past this many times a continuous column's range, a local polynomial's bandwidth is taken as
/// this: every kernel weight is then 1 within 1e-12 and the fit is the global polynomial.
inline constexpr double flat_bandwidth = 1e12;

class Attention : public Pooling {
 public:
  /// Prepares the keys: copies them (sorted when d = 1), so `train` need not outlive the engine.
  /// set_bandwidth must be called before use.
  explicit Attention(const Dataset& train, EngineOptions options = {});
  /// Prepares the keys and sets the bandwidth. Throws UsageError for a bad bandwidth.
  Attention(const Dataset& train, std::vector<double> bandwidth, EngineOptions options = {});
  ~Attention() override;

  /// Throws UsageError naming --bandwidth for a bad bandwidth (see check_bandwidth; a
  /// categorical column's entry is its lambda, within its kernel's range: levels.h).
  void set_bandwidth(std::vector<double> bandwidth);
  /// Another K (or F) of the same nearest-neighbour policy, the keys' layout kept (a grid of K
  /// without sorting the keys again). Throws ParameterError for another policy.
  void set_neighbours(NeighbourBandwidth neighbours);

  /// Predicts at m query points (m x d, row-major) into out[0..m). Throws DataError naming the
  /// first query out of reach (OutOfReach::error).
  void predict(const double* queries, std::size_t m, double* out) const override;

  /// Predicts, and for each query also sum_i w_i^2 over its weights as --weights writes them
  /// (into sum_w2) and sum_i a_i v_i over its normalised kernel weights (NW weights, whatever
  /// the method; into smooth), v given per input row. For standard errors.
  void predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out,
                      double* sum_w2, double* smooth) const override;

  /// The slope of the estimate at m queries, out[j * d + k] = df/dq_k (0 for a categorical
  /// column): NW's analytic derivative of f = sum_i a_i y_i, sum_i (de_i/dq_k)(y_i - f) / s0;
  /// local linear's fitted slope beta_k. Both are linear in y, sum_i l_ik y_i; with l_norm
  /// (m x d), sqrt(sum_i l_ik^2) over the training rows, for standard errors (summed scaled, so
  /// that it neither over- nor underflows whatever the scale of x). A query answered by
  /// the nearest key (OutOfReach::nearest) has slope 0. Throws DataError naming the first query
  /// out of reach (OutOfReach::error), ParameterError for NW with knn bandwidths.
  void slopes(const double* queries, std::size_t m, double* out, double* l_norm = nullptr) const override;

  /// Calls row(i, a) for each query i in order, with a[0..n) its attention row over the
  /// training points in input order (summing to 1; pruned keys and keys of sample weight 0 get
  /// 0; non-negative except for local-linear's equivalent weights).
  void weights(const double* queries, std::size_t m,
               const std::function<void(std::size_t, const double*)>& row) const override;

  /// Leave-one-out error at this bandwidth: row j attends to every key but j itself (equal keys
  /// stay in). `rows` (input indices) restricts the mean to those rows, each still attending
  /// to all other keys; by default every row. Needs n >= 2 (throws DataError otherwise).
  LooResult loo(bool with_gradient, const std::vector<std::size_t>* rows = nullptr) const override;

  /// The in-sample mean squared residual and tr(H), with gradients if asked. `rows` (input
  /// indices) estimates both from those rows (tr(H) scaled to every key); default every row.
  InSample insample(bool with_gradient, const std::vector<std::size_t>* rows = nullptr) const override;

  /// Every row's leave-one-out residual (unless `residuals` is false: then every row out of
  /// reach is still found), and the effective number of neighbours averaged over every row, or
  /// over `neighbour_rows` rows spread over the keys when there are more (0 = every row).
  /// Throws DataError for a row out of reach (OutOfReach::error) or fewer than 2 rows.
  LooDetail loo_detail(std::size_t neighbour_rows = 0, bool residuals = true) const override;
  /// Every row's leave-one-out residual alone (neighbours left 0): what standard errors need,
  /// on the fast path where it applies.
  LooDetail loo_residuals() const override;

  /// Columns given per input row (n_in x c, row-major) rearranged for loo_moments: by column,
  /// one entry per row of sample weight > 0, in the engine's order of keys.
  std::vector<double> key_columns(const double* v, std::size_t c) const;
  /// Row j's leave-one-out prediction f (as loo makes it) and, over columns v (from
  /// key_columns, c of them), M[k * c + l] = sum_i a_ji (y_i - f) (v_ik - v_jk) (v_il - v_jl),
  /// summed over the keys in reach only. Returns false, M untouched, for a row out of reach or
  /// of sample weight 0.
  bool loo_moments(std::size_t j, const std::vector<double>& v, std::size_t c, double& f, double* M) const;

  /// Input indices of `count` rows spread evenly over the keys in x order (d = 1), in the k-d
  /// tree's leaf order (several columns: spread over space) or in input order: a stratified,
  /// deterministic sample for LOO estimates. All rows if count >= n.
  std::vector<std::size_t> spread_rows(std::size_t count) const;

  /// A nearest-neighbour policy's bandwidths as the leave-one-out fit uses them, at `count` rows
  /// spread over the keys (all where count >= n): count x d, row-major, h_k s(row) in column
  /// k's units (NaN for a categorical column's lambda, which no policy scales). Empty without a
  /// policy.
  std::vector<double> reach(std::size_t count) const;

  /// Kernel evaluations (query-key pairs) summed so far: for benchmarks.
  std::uint64_t pairs() const { return pairs_.load(std::memory_order_relaxed); }
  std::uint64_t dropped_rows() const override { return dropped_.load(std::memory_order_relaxed); }
  /// Rows summed by moments (line_sums.h) so far: for tests and benchmarks.
  std::uint64_t moment_rows() const { return moment_rows_.load(std::memory_order_relaxed); }

 private:
  LooDetail loo_pass(std::size_t neighbour_rows, bool residuals, bool neighbours) const;
  WorkShape shape() const { return {ks_.n, ks_.d, estimator_.p()}; }
  // A row of the training data as the engine holds it: its key and its slot (KeySet).
  struct Slot {
    std::size_t key, slot;
  };
  std::vector<Slot> slots(const std::vector<std::size_t>* rows) const;  // of these input rows (default all)
  void check_loo_rows() const;             // DataError unless the leave-one-out rows are defined
  kernel::Keys keys() const;               // the keys by column, for kernel_nd's loops
  // The fused path's fast Gauss transform for a pass over `rows` rows, where it pays; else null.
  std::unique_ptr<GaussTransform> transform(std::size_t rows) const;
  // The weights of a query's row into w.e (see Span); NW's gradient sums if `gradient`. With
  // rest > 0, q is key `exclude` itself, whose other rows weigh at least `rest`: the weights
  // are measured from it (distance 0) and its rows are left for add_rest.
  Span gather(const double* q, std::size_t exclude, Work& w, bool gradient = false, double rest = 0) const;
  // gather's first step, shared with moment_row: the query's bandwidths, the keys it covers
  // (into w.ranges) and its nearest key.
  Span locate(const double* q, std::size_t exclude, Work& w, double rest) const;
  // Adds the rest of slot at.slot's key (rest_w, rest_dy) at distance 0 to a row gathered with
  // rest, or made by moments without the key.
  void add_rest(Span& s, Work& w, const Slot& at) const;
  // Slot s's leave-one-out row reduced (by moments where `line` answers it, else gathered), the
  // rows of its key without it included; a merged key's other rows reuse `cache`, gathered once
  // for the key.
  Row loo_row(const LineSums* line, const Slot& at, Work& w, Rest& cache, Span& s, double* grad, double* c) const;
  // A pass's sums by moments (line_sums.h), where they apply: the compact kernels' tree (kept),
  // or a Gaussian or Laplace backend made for this bandwidth (owned); line null where none does.
  struct PassLine {
    std::unique_ptr<LineSums> owned;
    const LineSums* line = nullptr;
  };
  PassLine line_sums(std::size_t rows, bool gradient = false) const;  // `gradient`: its rows may ask for it
  // Standard errors' sums by moments, for rows line_sums answers: the squared weights' (the
  // kernel squared, each key weighing s^2 q2) and the NW smooth of values v (per key); each
  // null where no backend applies. w2 holds the squared weights the first reads.
  struct DetailLines {
    std::vector<double> w2;
    std::unique_ptr<LineSums> owned, values;
    const LineSums* squares = nullptr;  // owned, or the compact kernels' kept tree (squares_)
  };
  DetailLines detail_lines(std::size_t rows, bool squares, const std::vector<double>* v) const;
  // sum_i l_i^2 of a row by moments, l_i = e_i c^T z_i: sum_(a,b) c_a c_b Q_(a+b), Q the squared
  // weights' moments (NW: c = (1 / s0, 0..0)).
  double squared_weights(const double* c, const LineMoments& sq) const;
  bool lines_apply() const;  // whether line_sums makes a backend (the options and the layout allow one)
  // The mean window (keys in reach, one column) of 16 keys spread over x, as queries at h (each
  // at its own scale under knn or span): what a pass costs key by key, per row.
  double mean_window(double h) const;
  // The backend for this kernel over `data`, of degree `degree`, for the kernel squared if asked;
  // null where it would not pay for `rows` rows. Builds on the pool: never from inside a pool task.
  std::unique_ptr<LineSums> make_line(std::size_t degree, const LineData& data, bool squared, std::size_t rows,
                                      bool gradient = false) const;
  static constexpr std::size_t line_min_keys = 2048;  // fewer keys: the windows are summed key by key
  // The row's sums (no weights per key) by `line` where its window is wide, with the gradient's
  // (Work::G, Gy) if asked: false where it is not, the line's bound does not hold, or no key is in
  // reach and the nearest key's value answers.
  bool moment_row(const LineSums* line, const double* q, std::size_t exclude, Work& w, Span& s, bool gradient) const;
  // Its prediction, with the gradient in log h (grad) and the local fit's c (see equivalent).
  Row reduce(const double* q, const Span& s, Work& w, double* grad, double* c) const;
  // w.e[s.lo..s.hi) times c^T z_i: the equivalent-kernel weights, unnormalised for NW.
  void equivalent(const double* q, const Span& s, const double* c, Work& w) const;
  // Sum over keys [lo, hi) of their rows' squared weights, e the keys' (a merged key's rows
  // share its weight).
  double sum_squares(std::size_t lo, std::size_t hi, const double* e) const;
  // d log e_i / d log h_k at query q whose nearest key is at xb.
  double dlog_weight(const double* q, const double* xb, std::size_t i, std::size_t k) const;
  // gather, reduce, equivalent: w.e over the ranges ends as the row --weights writes (if
  // reached), per key (each of its rows gets its share); `at`: slot's leave-one-out row.
  Row weights_row(const double* q, Work& w, Span& s, double* c) const;
  Row weights_row(const Slot& at, Work& w, Span& s, double* c) const;
  [[noreturn]] void throw_out_of_reach(const double* q, std::size_t index, bool loo) const;

  EngineOptions options_;
  KeySet ks_;        // the keys in engine order
  KeyIndex index_;   // which keys a query reaches
  Estimator estimator_;  // what a row reduces to
  BandwidthPolicy policy_;  // each query's bandwidths
  std::vector<double> h_, inv_h_;
  // Categorical columns: each column's kernel at this bandwidth (cat_[k].on for categorical
  // ones); the k-d tree's columns' 1 / h (the continuous ones).
  std::vector<kernel::Category> cat_;
  std::vector<double> tree_ih_;
  mutable std::atomic<std::uint64_t> pairs_{0}, moment_rows_{0}, dropped_{0};
  std::optional<FusedLine> fused_;  // the fused 1-D Gaussian NW path, where it applies
  std::optional<MomentLine> moments_;  // sums by moments, where they apply
  // Compact kernels: the squared weights' tree, built on first use (it holds for every bandwidth).
  mutable std::mutex squares_mutex_;
  mutable std::vector<double> squares_w2_;
  mutable std::unique_ptr<MomentLine> squares_;
  mutable BufferPool buffers_;  // per-pass backends' storage, kept between passes
};

}  // namespace nwreg
