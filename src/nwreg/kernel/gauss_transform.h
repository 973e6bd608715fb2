#pragma once
/// Sums of Gaussian weights over many keys in one column at once: the fast Gauss transform
/// (Greengard and Strain), for leave-one-out rows whose window holds thousands of keys.
///
/// In units s = x / (sqrt(2) h) a key's weight at query t is E = exp(-(s - t)^2). The sorted
/// keys are cut into boxes of width 1 (|s - c| <= 1/2 about the box centre c); with
/// a = t - c and b = s - c,
///
///   exp(-(t - s)^2) = exp(-a^2) exp(-b^2) exp(2ab) = exp(-a^2) sum_k (2a)^k / k! b^k exp(-b^2),
///
/// so each box keeps its moments m_k = sum_i b_i^k exp(-b_i^2) (and the same times y_i - y0),
/// once per bandwidth, and a query sums p terms a box instead of one a key. Cutting the series
/// after p terms errs by at most exp(-a^2 + |a|) |a|^p / p! a key (|2ab| <= |a|); boxes whose
/// centre lies beyond R + 1/2 are left out, their keys weighing below exp(-R^2) each. p and R
/// are chosen so that each bound, summed over every key, stays below tolerance / (2e): for a
/// query whose nearest key lies within sqrt(2) h (weight >= 1/e, so S0 >= 1/e) the weights
/// left out or mis-summed add up to less than tolerance * S0, the bound the exact sums keep
/// (attention.h). The gradient's sums, weighted by D = (x - q)^2 / h^2 = 2 (b - a)^2, come
/// from the same moments shifted by one and two. Differences x - c and q - c are taken before
/// scaling, so keys near 1e9 (time stamps) keep their precision.

#include <cstddef>
#include <vector>

namespace nwreg {

class ThreadPool;

class GaussTransform {
 public:
  /// Sums E, E (y - y0), E D and E (y - y0) D over every key (D = (x - q)^2 / h^2).
  struct Sums {
    double s0 = 0, s1 = 0, t = 0, v = 0;
  };

  /// Keys x sorted ascending (|x| <= 4e307), values y (summed less y0); bandwidth h;
  /// 0 < tolerance < 1; about `queries` queries to answer. usable() is false (nothing is
  /// stored) where it would not pay: boxes of fewer than min_keys_per_box keys on average, or
  /// fewer than 4 queries a box.
  GaussTransform(const double* x, const double* y, std::size_t n, double h, double tolerance, double y0,
                 std::size_t queries, ThreadPool* pool);

  /// What a transform keeps beyond NW's sums: each key's sample weight (null: 1), and `order0`
  /// and `order1` moments of the weights and of the weights times y - y0 (at least 3 each: at()
  /// needs 3), so that moments() gives sums of E z^m up to m = order0 - 1 (order1 - 1 with y).
  /// There the truncation and reach are chosen so that each key's error stays below
  /// weight_error() for every such power too (each term bounded by |z|^m E).
  struct Shape {
    const double* weights = nullptr;
    std::size_t order0 = 3, order1 = 3;
    /// Every sum moments() gives within the bound (truncation and reach widened for the largest
    /// power of z kept); false: the plain bound of E's sums (at(), as NW's fused path has it).
    bool powers = false;
  };
  GaussTransform(const double* x, const double* y, std::size_t n, double h, double tolerance, double y0,
                 std::size_t queries, ThreadPool* pool, const Shape& shape);
  bool usable() const { return usable_; }
  double y0() const { return y0_; }
  /// The sums at q (the gradient's t and v only if asked).
  Sums at(double q, bool gradient) const;
  /// M[m] = sum w E z^m (m < n0 <= order0) and My[m] = sum w E z^m (y - y0) (m < n1 <= order1)
  /// at q, z = (x - q) / h, w the keys' weights: a local polynomial's moments.
  void moments(double q, double* M, double* My, std::size_t n0, std::size_t n1) const;
  /// The sum of the keys' weights (each sum errs by at most weight_error() times this, times
  /// max |y - y0| for the sums with y).
  double total_weight() const { return total_; }
  /// A bound on each key's weight error in at(): the sums err by at most this times the sum
  /// of |values| (|y - y0|, or 1 for s0) over every key.
  double weight_error() const { return bound_; }

  /// Keys a box holds on average below which the transform is not used.
  static constexpr double min_keys_per_box = 64;

 private:
  void reach(double q, std::size_t& lo, std::size_t& hi) const;

  bool usable_ = false;
  double y0_ = 0, bound_ = 0;
  double width_ = 0, inv_ = 0, reach_ = 0;  // box width sqrt(2) h; 1 / width; reach in x
  std::size_t p_ = 0;                       // terms of the series
  std::vector<std::size_t> terms_;          // terms a box needs where |a| <= (i + 1) / 4 (at most p_)
  std::size_t order0_ = 3, order1_ = 3;     // moments kept (Shape)
  double total_ = 0;
  std::vector<double> centre_;
  // Per box, for k < p, order0 + order1 coefficients: m0_k .. m0_(k+order0-1), then m1_k ..
  // m1_(k+order1-1), each over k! (m0 of w exp(-b^2), m1 of w exp(-b^2) (y - y0)):
  // coef_[(box * p + k) * stride + j], stride = order0 + order1.
  std::vector<double> coef_;
};

}  // namespace nwreg
