#pragma once
/// Sums by moments in one continuous x column: a query's sums over every key in reach in
/// O(log n) or a few boxes' terms, not one term a key, for every estimator. One backend per
/// kernel family, each exact within a stated bound (docs/numerics.md):
///
///   MomentLine (moment_line.h)   compact kernels: power sums in a segment tree over the sorted
///                                keys, any bandwidth per query (fixed, knn, span)
///   GaussLine (below)            Gaussian: a fast Gauss transform of the weights times powers
///                                of z, one per pass (its bandwidth fixed)
///   LaplaceLine (below)          Laplace: exp(-|z|) z^m summed by a recursion over the sorted
///                                keys from each side, one per pass (its bandwidth fixed)
///   HermiteLine (hermite_line.h) Gaussian at each row's own bandwidth (knn, span): the keys'
///                                power sums in a tree, a Taylor series in each node's offset
///
/// Each gives, at query q with 1 / h = inv_h, over every key but `exclude`, with z = (x - q) / h,
/// s the key's sample weight (a merged key's, the sum of its rows') and e = s K(z) (times a
/// constant per query, the same in every sum: only ratios are used; `unit` says what a key at
/// distance 0 weighs in those units, per unit of sample weight):
///
///   M[m]  = sum e z^m,                 m <= 2P      (P the degree; NW: P = 0)
///   My[m] = sum e z^m (y - y_mid),     m <= P
///   G[m]  = sum e dlog z^m,            m <= 2P      (with the gradient; dlog = d log K / d log h)
///   Gy[m] = sum e dlog z^m (y - y_mid), m <= P
///
/// from which the Estimator makes the prediction, the local fit's coefficients and the gradient
/// in log h (estimator.h) as it would from the key-by-key sums. A backend answers false where its
/// bound does not hold at q (the weights in reach too small against what it leaves out or
/// mis-sums, a left-out key carrying most of the weight): the caller then sums key by key.

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "nwreg/engine/key_set.h"
#include "nwreg/model/settings.h"

namespace nwreg {

/// What a backend sums over the keys: each key's weight s and value y (measured from y_mid).
/// Default: the keys' own (sample weights, targets); standard errors also sum the squared
/// weights (s^2 q2 with the squared kernel) and other values (squared residuals).
struct LineData {
  const double* w = nullptr;  //!< null: KeySet::weight
  const double* y = nullptr;  //!< null: KeySet::ys, and y_mid the keys'
  double y_mid = 0;
  static LineData of(const KeySet& keys) { return {keys.ws.empty() ? nullptr : keys.ws.data(), keys.ys.data(), keys.y_mid}; }
  double weight(std::size_t i) const { return w ? w[i] : 1.0; }
};

struct LineMoments {
  static constexpr std::size_t cap = 2 * max_degree + 1;
  double M[cap] = {}, My[cap] = {}, G[cap] = {}, Gy[cap] = {};
  double unit = 1;  //!< the weight of a key at distance 0, per unit of its sample weight
  /// The Gaussian's, from sums of e z^m (m <= 2P + 2) and e z^m (y - y_mid) (m <= P + 2): its
  /// dlog is z^2, so G and Gy are those sums two powers up; unit 1.
  void gaussian(const double* Z, const double* Zy, std::size_t P, bool gradient) {
    for (std::size_t m = 0; m <= 2 * P; ++m) {
      M[m] = Z[m];
      if (gradient) G[m] = Z[m + 2];
    }
    for (std::size_t m = 0; m <= P; ++m) {
      My[m] = Zy[m];
      if (gradient) Gy[m] = Zy[m + 2];
    }
    unit = 1;
  }
};

class LineSums {
 public:
  virtual ~LineSums() = default;
  /// The moments above at q (G and Gy only if `gradient`); false where the bound does not hold.
  virtual bool sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const = 0;
};

class GaussTransform;
class ThreadPool;

/// Buffers an engine keeps between passes, so that a backend made per pass reuses the pages the
/// last one touched instead of mapping new ones for the kernel to fault in and zero (a Laplace
/// recursion's sums take 112 MB at 1e6 keys, once a pass). Thread-safe; keeps a few.
class BufferPool {
 public:
  /// At least n doubles, not zeroed.
  std::unique_ptr<double[]> take(std::size_t n);
  void give(std::unique_ptr<double[]> buffer, std::size_t n);

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::size_t, std::unique_ptr<double[]>>> free_;
};

/// The Gaussian kernel's moments by a fast Gauss transform (gauss_transform.h) of the keys'
/// sample weights times exp(-z^2 / 2), kept to the powers a degree-P fit and its gradient need
/// (dlog = z^2: G[m] = M[m + 2]). Each sum errs by at most weight_error() times the keys' total
/// weight; a row is answered only where that is below `tolerance` times its M[0] (so within the
/// bound the key-by-key sums keep, attention.h), and, with a key left out (subtracted: it weighs
/// its sample weight at distance 0), where the rest keep at least half of M[0].
class GaussLine : public LineSums {
 public:
  /// Over `keys` (one column, sorted; they must outlive it) at bandwidth h, for about `rows`
  /// rows. usable() is false where the transform would not pay (gauss_transform.h). `targets`:
  /// target-side series where rows are many a box (values that do not span many orders).
  GaussLine(const KeySet& keys, double h, std::size_t degree, double tolerance, std::size_t rows, ThreadPool* pool,
            const LineData& data, bool targets);
  ~GaussLine() override;
  bool usable() const { return fgt_ != nullptr; }
  bool sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const override;

 private:
  LineData data_;
  std::size_t degree_;
  double tolerance_;
  std::unique_ptr<GaussTransform> fgt_;
};

/// The Laplace kernel's moments, exact (no pruning, no series): on each side of a query the keys'
/// terms s exp(-D) D^m, D = |x - q| / h, follow from their sums at the nearest key on that side,
/// which a recursion over the sorted keys makes for every key at once:
///   L_m(j) = s_j [m = 0] + exp(-d) sum_l C(m, l) d^(m - l) L_l(j - 1),   d = (x_j - x_(j-1)) / h,
/// every term non-negative (the same from the right). A query then shifts them by its own
/// distance in the same way, measured from the nearer side (unit = exp(D_nearest), so nothing
/// underflows). dlog = |z|: G[m] = -M_left[m + 1] + M_right[m + 1]. O(n P^2) to build per
/// bandwidth, O(log n + P^2) a row; 2 (3P + 4) doubles a key (2 (3P + 2) without the gradient).
class LaplaceLine : public LineSums {
 public:
  /// Its sums' storage from `buffers` (null: its own), given back when it goes.
  /// With `gradient`, the moments the gradient needs too (one more power). The two sides'
  /// recursions run in parallel on `pool`.
  LaplaceLine(const KeySet& keys, double h, std::size_t degree, const LineData& data, BufferPool* buffers = nullptr,
              bool gradient = true, ThreadPool* pool = nullptr);
  /// About what one key of the recursion costs, in key-by-key kernel terms (measured: 1e6 keys,
  /// local linear, 2 threads): a pass of fewer rows x window keys sums key by key instead.
  static constexpr double terms_per_key = 50;
  ~LaplaceLine() override;
  bool sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const override;

 private:
  // Adds one side's sums s exp(-D) D^m (m < o0_) and the same times y - y_mid (m < o1_) at
  // distance d beyond a key whose sums are u (D measured from it), times exp(-(d - dmin)):
  // sum_l C(m, l) d^(m - l) u_l, every term non-negative.
  void shift(const double* u, double d, double dmin, double* P, double* Py) const;
  const KeySet& keys_;
  LineData data_;
  std::size_t degree_;
  bool gradient_;
  std::size_t o0_, o1_;
  double inv_h_;
  BufferPool* buffers_;
  std::unique_ptr<double[]> left_, right_;  // per key: o0_ sums, then o1_ (every entry written)
  void (*shift_)(const double* u, double d, double f, double* P, double* Py);  // shift's sums, for this degree
};

/// A backend of the kernel squared, K(z)^2 = K2(r z), read in powers of z: its sums at 1/h
/// r / h divided by r^m (Gaussian: r = sqrt(2), Laplace: 2; a compact kernel's squared
/// polynomial: r = 1). For the squared weights standard errors need, sum_i l_i^2.
class ScaledLine : public LineSums {
 public:
  ScaledLine(std::unique_ptr<LineSums> inner, double r) : inner_(std::move(inner)), r_(r) {}
  bool sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const override;

 private:
  std::unique_ptr<LineSums> inner_;
  double r_;
};

}  // namespace nwreg
