#pragma once
/// The attention engine's facade: every prediction, every attention row written out, and the
/// leave-one-out loss and gradient go through this class. It holds the engine (engine.h: its
/// parts, each a type chosen once per engine, and its passes; docs/architecture.md), whose rows
/// are summed whole by the backends one chooser picks for each pass (backends.h), else gathered
/// key by key and reduced.
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
/// whenever some are identical (unless the merge_keys shortcut is left out), except with
/// --leave-out (its blocks are counted in rows) and on the fused 1-D Gaussian path while more
/// than half the keys are distinct (there the fused loop over every row beats the weighted one
/// over the groups).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/engine/options.h"
#include "nwreg/engine/pooling.h"
#include "nwreg/engine/results.h"
#include "nwreg/model/settings.h"

namespace nwreg {

class Engine;
class LooMoments;

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
  /// Prepares the keys and sets the bandwidth. Throws ParameterError for a bad bandwidth.
  Attention(const Dataset& train, std::vector<double> bandwidth, EngineOptions options = {});
  ~Attention() override;

  /// Throws ParameterError naming the bandwidth for a bad one (see check_bandwidth; a
  /// categorical column's entry is its lambda, within its kernel's range: levels.h).
  void set_bandwidth(std::vector<double> bandwidth);
  /// Another K (or F) of the same nearest-neighbour policy, the keys' layout kept (a grid of K
  /// without sorting the keys again). Throws ParameterError for another policy.
  void set_neighbours(NeighbourBandwidth neighbours);
  /// Another pruning tolerance (EngineOptions::tolerance) for the passes from here on, the keys
  /// and the bandwidth kept. Throws ParameterError unless 0 <= tolerance < 1.
  void set_tolerance(double tolerance);

  /// Predicts at m query points (m x d, row-major) into out[0..m). Throws QueryError naming the
  /// first query out of reach (OutOfReach::error).
  void predict(const double* queries, std::size_t m, double* out) const override;
  void nearest_distances(const double* queries, std::size_t m, double* out) const override;

  /// Predicts, and for each query also sum_i w_i^2 over its weights as --weights writes them
  /// (into sum_w2), sum_i a_i v_i over its normalised kernel weights (NW weights, whatever the
  /// method; into smooth), v given per input row, and sum_i a_i^2 (into kernel_w2: 1 / the
  /// number of rows that smooth averages), each where not null. For standard errors.
  void predict_detail(const double* queries, std::size_t m, const std::vector<double>& v, double* out,
                      double* sum_w2, double* smooth, double* kernel_w2 = nullptr) const override;

  /// The slope of the estimate at m queries, out[j * d + k] = df/dq_k (0 for a categorical
  /// column): NW's analytic derivative of f = sum_i a_i y_i, sum_i (de_i/dq_k)(y_i - f) / s0;
  /// local linear's fitted slope beta_k. Both are linear in y, sum_i l_ik y_i; with l_norm
  /// (m x d), sqrt(sum_i l_ik^2) over the training rows, for standard errors (summed scaled, so
  /// that it neither over- nor underflows whatever the scale of x). A query answered by
  /// the nearest key (OutOfReach::nearest) has slope 0. Throws QueryError naming the first query
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

  /// Kernel evaluations, rows summed by moments and predictions whose local fit lost a term,
  /// so far.
  Counters counters() const override;

  /// Input indices of `count` rows spread evenly over the keys in x order (d = 1), in the k-d
  /// tree's leaf order (several columns: spread over space) or in input order: a stratified,
  /// deterministic sample for LOO estimates. All rows if count >= n.
  std::vector<std::size_t> spread_rows(std::size_t count) const;
  /// How many rows spread_rows(count) gives.
  std::size_t spread_size(std::size_t count) const;

 private:
  friend class LooMoments;
  friend std::vector<double> reach(const Attention& engine, std::size_t count);
  std::unique_ptr<Engine> e_;
};

}  // namespace nwreg
