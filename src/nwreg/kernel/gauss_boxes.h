#pragma once
/// Sums of Gaussian weights over every key in several columns at once, by Taylor series about
/// the centres of a grid of boxes: for passes whose bandwidths are wide against the keys' span
/// (the scan of common scales, its widest), where each row would otherwise weigh every key.
///
/// In units s_k = x_k / (sqrt(2) h_k) a key's weight at query t is E = exp(-|t - s|^2). With a
/// = t - c and b = s - c about a box's centre c,
///
///   exp(-|t - s|^2) = exp(-|a|^2) exp(-|b|^2) exp(2 a.b)
///                   = exp(-|a|^2) sum_alpha (2a)^alpha / alpha! b^alpha exp(-|b|^2),
///
/// the multinomial expansion of sum_m (2 a.b)^m / m!, so each box keeps the moments
/// M_alpha = sum_i w_i b_i^alpha exp(-|b_i|^2) (and the same times y_i - y0) for |alpha| < p,
/// C(p - 1 + d, d) of them, and a query sums that many terms a box instead of one a key. Cutting
/// the series at m < p errs by at most exp(-(|a| - |b|)^2) (2 |a| |b|)^p / p! a key (the tail of
/// exp(z) past z^p / p! is at most |z|^p / p! e^|z|), so over every key by W E_p, W the keys'
/// summed sample weights and E_p that bound's largest value over |b| <= rho (a box's
/// half-diagonal) and |a| <= A (a query in the keys' bounding box to the farthest centre). p is
/// the least with W E_p <= tolerance S_low / 4, S_low the least sum (less the key itself) found
/// at the box's corners and at 16 keys spread over the rows, and each row checks its own sum:
/// W E_p <= tolerance (S0 - W E_p), so that its prediction is within tolerance (max y - min y)
/// of the sum over every key, the bound the exact sums keep; a row that fails is gathered.
/// Differences x - c and q - c are taken before scaling (keys near 1e9 keep their precision).
/// The grid (boxes per column) is the one of least cost among a few, and the series is made
/// only where it costs less than half the key-by-key sums it replaces (the cost rule below).
///
/// NW's gradient in log h_k weighs each key by d log E / d log h_k = 2 (a_k - b_k)^2, and
/// (a_k - b_k)^2 exp(2 a.b) expands in the same moments: its terms of total degree m are
/// a_k^2 T_m - 2 a_k b_k T_(m-1) + b_k^2 T_(m-2), T_m the terms of exp(2 a.b) of degree m, so
/// column k's coefficients (2 a_k)^j / j! become a_k^2 c_j - 2 a_k c_(j-1) + c_(j-2). Cut at
/// degree p, D_k's sum errs by at most 2 (|a_k| + |b_k|)^2 <= 2 span_k^2 (the column's range in
/// those units) times the largest of the bounds at p - 2, p - 1 and p a key; with the gradient
/// asked for, p is the least for which both that and the values' bound are within the target,
/// so the one error W E_p and each row's check cover both.

#include <cstddef>
#include <vector>

namespace nwreg {

class GaussBoxes {
 public:
  /// Keys x by column (column k at x + k n, n keys, 2 <= d <= 16 columns), sample weights w
  /// (nullptr: 1 each; >= 0), values y summed less y0; bandwidths h (one a column, > 0); 0 <
  /// tolerance < 1; about `rows` queries to answer; `direct`: the key-by-key terms those rows
  /// would sum; `gradient`: the rows want NW's gradient sums too. usable() is false (nothing
  /// built) where no series meets the bound or pays.
  GaussBoxes(const double* x, std::size_t n, std::size_t d, const double* w, const double* y, double y0,
             const double* h, double tolerance, std::size_t rows, double direct, bool gradient = false);
  bool usable() const { return p_ > 0; }
  /// The sums over every key at q (d coordinates): s0 = sum w E, s1 = sum w (y - y0) E, and
  /// where t and v are given (d each; built with `gradient`) t_k = sum w E D_k and v_k = sum w
  /// (y - y0) E D_k, D_k = d log E / d log h_k = (x_k - q_k)^2 / h_k^2; false where q lies
  /// outside the keys' bounding box (the bound holds within it), or where t and v are asked of
  /// a series not made for the gradient.
  bool sums(const double* q, double& s0, double& s1, double* t = nullptr, double* v = nullptr) const;
  /// Whether a row's sum s0 (less any keys it leaves out) is large enough for the series'
  /// error, as the class comment says.
  bool within(double s0) const { return error_ <= tolerance_ * (s0 - error_); }
  /// The series' order p (terms of total degree < p) and its boxes (0: not built).
  std::size_t order() const { return p_; }
  std::size_t boxes() const { return cell_.size() / (d_ == 0 ? 1 : d_); }
  /// What a series term costs in key-by-key terms (a key's distance, exp and sums), in the cost
  /// rule: made (a term a key, in lanes) and summed by a row (a term a box, its coefficient
  /// made first). Measured in two columns at 1e5 keys (bench/RESULTS.md).
  static constexpr double build_cost = 0.5, eval_cost = 0.3;
  /// The largest squared half-diagonal of a box, in units of sqrt(2) h (rounding, in the .cpp).
  static constexpr double max_rho2 = 4;

 private:
  std::size_t d_ = 0, p_ = 0, terms_ = 0, stride_ = 0;
  bool gradient_ = false;
  double tolerance_ = 0, error_ = 0;
  std::vector<double> lo_, hi_, inv_;      // per column: the keys' range and 1 / (sqrt(2) h)
  std::vector<std::size_t> grid_;          // boxes per column
  std::vector<std::size_t> cell_;          // per box (a cell that holds a key): its place in the grid, d
  std::vector<double> grid_centre_;        // the grid's centres in x's units, column after column
  std::vector<std::size_t> grid_offset_;   // each column's first in grid_centre_ (d + 1)
  std::vector<double> moments_;            // per box: M, then M times y - y0 (stride_ each)
  std::vector<std::size_t> parent_, col_;  // monomial r = monomial parent_[r] times column col_[r]
  // The runs of monomials (gauss_boxes.cpp): each one's first, its length, and its prefix's
  // powers of the columns but the last (d - 1 each).
  std::vector<std::size_t> run_off_, run_len_, run_alpha_, run_pos_, pos_;  // (pos: where each is stored)
  std::vector<double> inv_j_;  // 1 / j, j < p
};

}  // namespace nwreg
