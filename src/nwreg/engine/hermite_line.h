#pragma once
/// Sums by moments for one continuous column and the Gaussian kernel at a bandwidth of each
/// query's own (knn, span): the line_sums.h moments in about O(log n + window / h) node terms,
/// where the key-by-key sums cost the window's keys (knn:auto's largest K at 1e6 rows: 4e4 a row).
///
/// The keys' power sums need no bandwidth: a segment tree over blocks of 32 sorted keys keeps,
/// per node of centre c and half-width r, A_a = sum s u^a and Ay_a = sum s u^a (y - y_mid),
/// u = (x - c) / r in [-1, 1], a < terms (built bottom-up by binomial shifts, every term of which
/// is bounded by its child's sums). At a query with bandwidth h a key of the node lies at
/// z = t + rho u, t = (c - q) / h, rho = r / h, and Taylor's series in rho u gives
///   sum s phi(z) z^m = sum_k c_mk (-1)^k sum_a rho^a A_a / a! phi^(k + a)(t),
/// phi(z) = exp(-z^2 / 2), phi^(j)(t) = (-1)^j He_j(t) phi(t) (probabilists' Hermite polynomials,
/// by their recurrence), z^m = sum_k c_mk He_k(z). Nodes no wider than h (rho <= 1/2) answer so;
/// wider ones split, and blocks at the window's ends or wider than h are summed key by key. By
/// Cramer's inequality |He_j(t)| phi(t) <= 1.0865 sqrt(j!) exp(-t^2 / 4), the series left out
/// after `terms` terms weighs below 4e-27 of the node's keys (bound checked per row, with the
/// keys beyond the window, against tolerance * the row's weight sum; rounding aside, as for
/// the key-by-key sums: the highest powers of a node near q lose a few digits).

#include <cstddef>
#include <vector>

#include "nwreg/engine/key_set.h"
#include "nwreg/engine/line_sums.h"

namespace nwreg {

class HermiteLine : public LineSums {
 public:
  /// Over `keys` (one continuous column, sorted; they must outlive it), for local polynomials up
  /// to `degree` (NW: 0), summing `data`; rows within `tolerance` (EngineOptions::tolerance).
  HermiteLine(const KeySet& keys, std::size_t degree, const LineData& data, double tolerance);
  bool sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const override;

  static constexpr std::size_t terms = 40;  //!< series terms kept per node
  /// About what building costs a key, in key-by-key kernel terms: passes whose rows' windows
  /// hold fewer in all are summed key by key.
  static constexpr double terms_per_key = 40;
  /// A row's series cost about as much as this many keys summed one by one (measured: knn:K
  /// at 1e5 rows breaks even near K = 500, windows of some 5000 keys): narrower windows are
  /// summed key by key.
  static constexpr double min_window = 5000;

 private:
  // Adds the sums over keys [lo, hi) (less `exclude`) key by key: Z[m] += sum s phi(z) z^m and
  // Zy[m] the same times y - y_mid, m <= top.
  void keys_into(std::size_t lo, std::size_t hi, double q, double inv_h, std::size_t exclude, std::size_t top,
                 double* Z, double* Zy) const;
  // Adds node j's series: T[k] += sum_a rho^a A_a / a! phi^(k + a)(t) for k <= top (and Ty),
  // and its truncation bound to *err.
  void node_into(std::size_t j, double q, double inv_h, std::size_t top, double* T, double* Ty, double* err) const;

  const KeySet& keys_;
  LineData data_;
  std::size_t degree_;
  double tolerance_;
  std::size_t blocks_ = 0, size_ = 0;  // blocks of `block` keys; leaves of the tree (a power of 2)
  std::vector<double> centre_, radius_, weight_, A_, Ay_;  // per node (weight_: sum s)
  static constexpr std::size_t block = 32;
};

}  // namespace nwreg
