#pragma once
/// The key index: which keys a query can reach, and how far its neighbours lie. One of three
/// kinds, chosen once per engine from the keys' layout (KeySet):
///
/// - line: one continuous column, keys sorted by x. A query's keys within reach are one sorted
///   window, its nearest key a binary search away, its K-th nearest distance O(log n).
/// - tree: several columns stored in a k-d tree's leaf order; a query sums over the leaves
///   within reach, or over every key where at the bandwidth in use the leaves would hold most
///   of them (decided once per bandwidth by `choose`, measured on 32 keys spread over the tree).
///   Its K-th nearest distance is a search of the tree for the K nearest (KdTree::search).
/// - every: every key, in input order.
///
/// Reach: for compact kernels the support; for Gaussian and Laplace the keys whose weight
/// relative to the nearest key b (of weight wb) is at least e^-T, T = ln(n / (tolerance S0_low)),
/// S0_low a lower bound on the row's weight sum, so the omitted weights add up to less than
/// tolerance * S0. Every distance is in bandwidths (scaled by 1/h per column), so the caller's
/// bandwidth policy decides the scale; the index holds no bandwidth.

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "nwreg/engine/key_set.h"
#include "nwreg/kernel/kernel_nd.h"
#include "nwreg/kernel/kernels.h"
#include "nwreg/model/settings.h"

namespace nwreg {

using Range = std::pair<std::size_t, std::size_t>;

/// Keys [lo, hi) (engine order) left out of a leave-one-out row: the row itself, and with
/// leave-block-out (one x column) the keys on each side in x order.
struct Block {
  std::size_t lo = 0, hi = 0;
  bool contains(std::size_t i) const { return i >= lo && i < hi; }
};

/// The K-th distance a query found, kept (per thread) to bound the next one's: by the triangle
/// inequality the next query's K-th distance is at most this one's plus the distance between
/// them, where both are plain queries or both leave-one-out rows at their own keys (the earlier
/// row's key then counts for the one the later row leaves out). At the same bandwidths.
struct KthHint {
  std::vector<double> q, inv_h;
  double kth = 0;  // the last query's K-th distance, as found (not settled)
  bool at_key = false;
};

class KeyIndex {
 public:
  enum class Kind { line, tree, every };

  /// `line` asks for windows (one continuous column sorted by x); otherwise the tree where the
  /// keys have one, else every key. `leave_out` keys on each side join a left-out row (line only).
  /// `edge`: a compact kernel's window in one column, as a fraction of h (lowess's 0.999, else 1).
  KeyIndex(const KeySet& keys, Kernel kernel, double tolerance, bool line, std::size_t leave_out, double edge = 1);

  Kind kind() const { return kind_; }
  /// Keys left out on each side of a leave-one-out row (line only).
  std::size_t leave_out() const { return leave_out_; }
  /// How a query's keys are found at the current bandwidths: a window of the sorted line, the
  /// tree's leaves within reach, or every key (no index, or a tree that would not prune).
  enum class Search { window, leaves, every };
  Search search() const { return search_; }
  /// Whether sums run over reach (windows or pruned leaves) rather than every key.
  bool prunes() const { return search_ != Search::every; }

  /// Decides whether the tree prunes at these bandwidths (inv_h over the continuous columns;
  /// `keys` gives the categorical factors); with `per_query` scales (knn) it always prunes:
  /// each query's reach is measured at its own scale.
  void choose(const double* tree_inv_h, const kernel::Keys& keys, bool per_query);

  /// The left-out block of a leave-one-out row at key `exclude` (none: empty).
  Block block(std::size_t exclude) const;

  /// Adaptive bandwidths: each key's 1 / s_i and log2(1 / s_i) (BandwidthPolicy), summarised
  /// over blocks of keys in x order (one continuous column, the every kind) or over the k-d
  /// tree's nodes (the tree kind), so that cover prunes (nullptr: none). Set at each bandwidth.
  void set_scales(const double* inv_s, const double* lognorm);
  /// Another pruning tolerance (EngineOptions::tolerance), for the reach from here on; the
  /// caller sets the bandwidth again (choose measures the reach at it).
  void set_tolerance(double tolerance) { tolerance_ = tolerance; }

  /// The keys a query covers, into `ranges`, and its nearest key b (by the whole distance,
  /// categorical costs included), other than `exclude`. With rest > 0, q is key `exclude`
  /// itself, whose other rows weigh at least `rest`: b is that key, reach measured from it.
  /// Exponential kernels measure every weight from b's: where b weighs 0 (a row of weight 0
  /// kept as a neighbour), b is the key of largest kernel weight among those covered that weigh
  /// something (see weighed_reference).
  /// `h` is the one-column bandwidth (line), `inv_h` each column's 1/h, `tree_inv_h` the
  /// continuous columns' (tree), `buf` d doubles of scratch.
  std::size_t cover(const double* q, std::size_t exclude, double rest, double h, const double* inv_h,
                    const double* tree_inv_h, const kernel::Keys& keys, std::vector<Range>& ranges, double* buf) const;

  /// The keys identical to key b (not left out), into `ranges`: where the nearest-key fallback
  /// puts its weight when keys are not merged.
  void identical(std::size_t b, std::size_t exclude, const double* tree_inv_h, std::vector<Range>& ranges,
                 double* buf) const;

  /// The key nearest q other than `exclude`, and its distance in bandwidths (rmin; several
  /// columns). Of keys at the same distance, the first as given.
  std::size_t nearest(const double* q, std::size_t exclude, const double* inv_h, const kernel::Keys& keys,
                      double& rmin) const;
  std::size_t nearest_1d(double q, std::size_t exclude) const;
  /// The distance from q to its nearest key in bandwidths over the continuous columns only, in
  /// the kernel's norm (Laplace's sum of |u|, else Euclidean): by the tree (`tree_inv_h` its
  /// columns' 1 / h, `buf` d doubles of scratch), or where there is none a scan. 0 with no
  /// continuous column; NaN with no key; keys of weight 0 left out. With `inv_s` (adaptive
  /// bandwidths: each key's 1 / s_i, set_scales given the same), each key's distance is in its
  /// own bandwidths, times 1 / s_i: the least over the keys, by the tree or the one-column tree
  /// over blocks, pruned by the nodes' widest scales.
  double nearest_distance(const double* q, const double* inv_h, const double* tree_inv_h, double* buf,
                          const double* inv_s = nullptr) const;
  /// The key nearest q (continuous columns, the kernel's nearest-key norm) of weight > 0, other
  /// than `exclude`, by a scan of every key: for the nearest-key fallback where keys of weight 0
  /// are kept as neighbours. no_key when every other key weighs 0.
  std::size_t nearest_weighted(const double* q, std::size_t exclude, const double* inv_h) const;

  /// Where key c, nearest q, weighs 0 (rows of weight 0 kept as neighbours), the reach is
  /// measured from the nearest key that weighs something, other than `exclude`'s block: c
  /// becomes that key where there is one, and rc its distance as the tree measures it (tree
  /// kind; `qt` q's continuous columns). One column: the nearest such key on each side, kept per
  /// key (weighed_left_, weighed_right_); several: the tree's search among them.
  void weighed_anchor(const double* qt, std::size_t exclude, const double* tree_inv_h, std::size_t& c, double& rc) const;

  /// Key b, or where it weighs 0 (exponential kernels), the key of `ranges` of largest kernel
  /// weight at q among those that weigh something, other than `exclude`'s block: the weights
  /// are measured from it, so that no weighed key underflows against a key that weighs nothing
  /// (weights more than 2^-1021 below b's would all be clamped alike, and their mean taken for
  /// the fit). b where no covered key weighs something.
  std::size_t weighed_reference(std::size_t b, const double* q, std::size_t exclude, const double* inv_h,
                                const kernel::Keys& keys, const std::vector<Range>& ranges) const;

  /// The one-column window [lo, hi) of keys within reach of q, whose nearest key b weighs wb.
  void window_1d(double q, double h, std::size_t b, double wb, std::size_t& lo, std::size_t& hi) const;

  /// How far (in the kernel's norm) keys can matter around a query whose nearest key, of weight
  /// wb, lies at rb.
  double reach_bound(double wb, double rb) const;

  /// How a policy measures a neighbour's distance, over the continuous columns:
  /// - `span`: in L2 (loess's rule), never widened.
  /// - `knn` and `adaptive`: in the kernel's norm (Gaussian L2, Laplace L1, compact kernels the
  ///   largest coordinate); with a compact kernel the K-th distance widens to the next distance
  ///   beyond it, so that the K nearest keys (ties too) lie inside the support.
  /// - `knn` only: where K keys lie at q itself (distance 0) and the distance is not widened,
  ///   2^-40 of the nearest positive distance, the limit as q nears them (only they weigh),
  ///   rather than that distance, which would jump (adaptive divides by its scale instead).
  /// - `adaptive` leaves out `exclude` alone, not its leave-out block: a key's own scale belongs
  ///   to the key whichever row is left out.
  Norm norm(Neighbours policy) const;

  /// The distance from q to its K-th nearest key other than `exclude` and its leave-out block
  /// (adaptive: `exclude` alone), in bandwidths, measured as `policy` measures (norm() above):
  /// ties counted with multiplicity. Where K keys lie at q itself, the nearest positive distance
  /// (knn: 2^-40 of it); widened, the next distance beyond the K-th; with no key beyond, twice
  /// the K-th. 1 where every key lies at q. `scratch`: n doubles (the every/tree kinds).
  /// `hint` (several columns, the tree): the last query's, bounding the search, then this one's.
  /// `in_sample` (span in several columns, q key `exclude` itself): the same distance for q's
  /// in-sample row, whose K nearest count q itself (the (K-1)-th of the others) where the same
  /// search finds it positive, else NaN.
  double kth_distance(const double* q, std::size_t exclude, std::size_t K, const double* inv_h, double* scratch,
                      Neighbours policy, KthHint* hint = nullptr, double* in_sample = nullptr) const;
  /// The doubles of scratch kth_distance needs: n for the every kind over several columns, else 0.
  std::size_t kth_scratch() const;

 private:
  std::size_t nearest_exact(const double* q, std::size_t exclude, const double* inv_h, const kernel::Keys& keys) const;
  // Whether policy widens the K-th distance to the next beyond it (a compact kernel's knn or
  // adaptive); the K-th distance s settled by that rule and knn's limit (next_above(s): the
  // nearest distance beyond s).
  bool widens(Neighbours policy) const;
  template <class F>
  double settled(double s, Neighbours policy, const F& next_above) const;
  double kth_distance_1d(double q, Block out, std::size_t K, double inv_h, Neighbours policy) const;
  // Merged keys (adaptive bandwidths over repeated x): the same, each key counted with its rows,
  // one row of key `self` (no_key: none) left out.
  double kth_rows_1d(double q, std::size_t self, std::size_t K, double inv_h, Neighbours policy) const;
  // The nearest key distance beyond `after` on either side of q, the block `out` skipped.
  double next_above_1d(double q, Block out, double inv_h, double after) const;
  // The keys [lo, hi) within distance r of q (in bandwidths), p the first key at or past q.
  std::pair<std::size_t, std::size_t> within_1d(double q, std::size_t p, double inv_h, double r) const;
  // Searches within `upper` (at least the K-th distance); with `found`, the K-th distance
  // itself (not settled) into it.
  double kth_distance_tree(const double* q, std::size_t exclude, std::size_t K, const double* inv_h,
                           Neighbours policy, double upper, double* found, double* in_sample = nullptr) const;
  // The bound a hint gives q (+inf: none).
  double hinted_bound(const KthHint& hint, const double* q, std::size_t exclude, const double* inv_h,
                      Neighbours policy) const;
  // Key i's distance from q in bandwidths over the continuous columns, in the kernel's norm.
  double neighbour_distance(std::size_t i, const double* q, const double* inv_h, Norm norm) const;
  // The same for keys [lo, hi), at most distance_block of them, into r.
  static constexpr std::size_t distance_block = 64;
  void neighbour_distances(std::size_t lo, std::size_t hi, const double* q, const double* inv_h, Norm norm,
                           double* r) const;
  double level_factor(std::size_t i, const double* q, const kernel::Keys& keys) const;
  Norm nearest_norm() const;

  // Adaptive bandwidths: the keys a query reaches, each weighing its own scale (see
  // set_scales), and b among them.
  std::size_t cover_scaled(const double* q, std::size_t exclude, const double* inv_h, const double* tree_inv_h,
                           const kernel::Keys& keys, std::vector<Range>& ranges, double* buf) const;

  // Keys [lo, hi), their smallest 1 / s_i (the widest reach) and largest log2(1 / s_i) (the
  // heaviest normalisation). One column: a binary tree over blocks of `scale_block` keys in x
  // order (node 1 the root, node j's children 2j and 2j + 1, leaves from scale_leaf_). Several:
  // one per node of the k-d tree (tree_scales_, as KdTree::summarise numbers them).
  struct ScaleNode {
    std::size_t lo = 0, hi = 0;
    double inv_s = 0, lognorm = 0;
  };
  static constexpr std::size_t scale_block = 32;
  std::vector<ScaleNode> scale_nodes_, tree_scales_;
  std::size_t scale_leaf_ = 0;
  double weight_top_ = 1;  // the largest sample weight
  // One continuous column with keys of weight 0: per key the nearest key at or before it, and at or after
  // it, that weighs something (n: none).
  std::vector<std::uint32_t> weighed_left_, weighed_right_;

  const KeySet& keys_;
  Kernel kernel_;
  double tolerance_;
  std::size_t leave_out_;
  double edge_;
  Kind kind_;
  Search search_;  // tree: leaves where those within reach hold at most half the keys
};

}  // namespace nwreg
