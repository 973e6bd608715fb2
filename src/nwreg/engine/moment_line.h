#pragma once
/// Sums by moments for one continuous column and a compact polynomial kernel (Epanechnikov,
/// tricube, uniform): a query's sums over a window of keys in O(log n), not O(window), so that
/// a wide window (span:0.3 at 1e6 rows holds 3e5 keys) costs what a narrow one does.
///
/// On its support K(|z|) = sum_k c_k |z|^e_k (kernels.h), z = (x - q) / h, and |z|^e = (-+z)^e
/// on either side of q. So a local polynomial's moments M_m = sum_i s_i K(|z_i|) z_i^m
/// (m <= 2P) and My_m = sum_i s_i K(|z_i|) z_i^m (y_i - y_mid) (m <= P), s_i the key's sample
/// weight, follow from the plain power sums sum s_i z_i^j, j up to 2P + max e_k, over the keys
/// on each side. Those come from a segment tree over blocks of 32 keys sorted by x: each node
/// holds sum s_i u_i^j and sum s_i u_i^j (y_i - y_mid), u_i = (x_i - c) / r about its own centre
/// c and half-width r, shifted to the query by the binomial sum
///   sum s_i z_i^j = sum_l C(j, l) t^(j - l) rho^l A_l,   t = (c - q) / h, rho = r / h,
/// for the O(log n) nodes that tile the window's side; the partial blocks at its ends are
/// summed key by key. Every node lies on one side of q within the window (|t| <= 1, rho <= 1/2),
/// so no shift's term is large against its power sum. The kernel's terms (1, -3|z|^3, ...) do
/// cancel where the weight is small against the keys' mass (keys crowded at the support's edge,
/// an extrapolated query): there the caller sums key by key (min_share). Elsewhere the result
/// agrees with the key-by-key sums to about 1e-13 of the range of y
/// (tests/unit/test_moment_line.cpp). The window itself is the kernel's exact support: keys with
/// K(u) > 0 by the same arithmetic as the key-by-key path.

#include <cstddef>
#include <utility>
#include <vector>

#include "nwreg/engine/key_set.h"
#include "nwreg/engine/line_sums.h"
#include "nwreg/kernel/kernels.h"

namespace nwreg {

class MomentLine : public LineSums {
 public:
  /// Whether it applies: one continuous column (keys sorted by x) and a compact kernel.
  static bool applies(const KeySet& keys, Kernel kernel);

  /// Over `keys` (which must outlive it), for local polynomials up to `degree` (NW: 0), summing
  /// `data` (line_sums.h: the keys' weights and values by default); `squared`: the kernel's
  /// square K(z)^2 (its polynomial squared), for squared weights; `edge`: the window's half-width
  /// as a fraction of h (lowess's 0.999: keys beyond weigh 0; else 1, the kernel's support).
  MomentLine(const KeySet& keys, Kernel kernel, std::size_t degree, const LineData& data, bool squared = false,
             double edge = 1);

  /// Windows shorter than this are summed key by key by the caller.
  static constexpr std::size_t min_window = 128;

  /// The exact support of the kernel at q with 1/h = inv_h within [lo, hi) (a window that
  /// holds it), cut at the edge.
  std::pair<std::size_t, std::size_t> support(double q, double inv_h, std::size_t lo, std::size_t hi) const;

  /// M[0..2P] and My[0..P] (above) over keys [lo, hi) less key `exclude` (no_key: none), and
  /// where G is not null the gradient's G[0..2P] and Gy[0..P] (line_sums.h: dK/dlog h =
  /// -sum_k e_k c_k |z|^e_k, the same power sums); returns sum s_i over those keys, the mass the
  /// kernel weights M[0] are a share of.
  double sums(double q, double inv_h, std::size_t lo, std::size_t hi, std::size_t exclude, double* M, double* My,
              double* G = nullptr, double* Gy = nullptr) const;
  /// LineSums: over the kernel's support at q; false where M[0] is below min_share of the mass.
  bool sums(double q, double inv_h, std::size_t exclude, bool gradient, LineMoments& out) const override;

  /// The kernel's terms cancel where the window's weight sits near its edge (an extrapolated
  /// query, keys crowded at the support's end): sums by moments are used only where M[0] is at
  /// least this share of the mass, their error then within about 1e-12 of the result.
  static constexpr double min_share = 0.05;

 private:
  void node_sums(std::size_t node, double q, double inv_h, double* P, double* Py) const;
  void key_sums(std::size_t lo, std::size_t hi, double q, double inv_h, double* P, double* Py) const;

  const KeySet& keys_;
  LineData data_;
  Kernel kernel_;
  double edge_;
  std::size_t degree_;
  std::vector<std::pair<double, int>> poly_;  // K(a) = sum c a^e on the support
  std::size_t J_ = 0, Jy_ = 0;                // power sums kept: j < J_ (plain), j < Jy_ (times y)
  std::size_t blocks_ = 0, size_ = 0;         // blocks of `block` keys; leaves of the tree (a power of 2)
  std::vector<double> centre_, radius_, A_, Ay_;  // per node
  std::vector<double> binom_;                     // C(j, l) at j * J_ + l
  static constexpr std::size_t block = 32;
};

}  // namespace nwreg
