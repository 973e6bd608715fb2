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
///
/// Target-side series (Shape::targets, many queries a box): with the box's power sums
/// a_n = sum_i v_i b_i^n and h_k(x) = H_k(x) exp(-x^2) (physicists' Hermite functions,
/// d^k/dx^k exp(-x^2) = (-1)^k h_k(x)), Taylor's series in both b and u = t - c' about a cell
/// centre c' gives
///
///   sum_i v_i exp(-(t - s_i)^2) = sum_m u^m (-1)^m / m! sum_n h_(n+m)(c' - c) a_n / n!,
///
/// so each cell keeps p coefficients, summed once over the boxes in reach, and a query in the
/// cell sums p terms. A power z^m E expands the same way, some indices up: with tau = t - s,
/// E z^m = (-sqrt 2)^m sum_j m! / (2^m j! (m - 2j)!) h_(m-2j)(tau) (Fn; NW's gradient weight
/// E D = E z^2 = (h_2 + 2 h_0) / 2). Cramer's inequality |h_k(x)| <= 1.0865 sqrt(2^k k!)
/// exp(-x^2 / 2) bounds the terms with n + m = k, over |b| <= 1/2 and |u| <= 1/8 (cells of a
/// quarter box), by 1.0865 (5/8)^k sqrt(2^k k!) / k! a key, times sqrt(2^j (k + j)! / k!) j
/// indices up: p (about 40) is chosen so that the terms left out (n >= p or m >= p, so
/// k >= p) stay below the same per-key bound in every sum kept. A query outside every box's
/// span sums the boxes' series at it (m = 0, the same bound).

#include <cstddef>
#include <vector>

namespace nwreg {

class ThreadPool;

/// The keys' power sums in fine bins, made once and merged into any transform's boxes at any
/// bandwidth whose boxes are wider than the bins (O(bins p^2) instead of O(n p) a transform):
/// the sorted keys are cut into runs of keys within `width` of each run's first, each bin
/// keeping sum u^k and sum u^k (y - y0), u = (x - c) / width about the middle c of its keys
/// (|u| <= 1/2), for k < terms. The target-side transforms (Shape::targets) take them.
struct GaussBins {
  /// About `bins` bins over the keys' range (x sorted, |x| <= 4e307), `terms` power sums each.
  GaussBins(const double* x, const double* y, std::size_t n, double y0, std::size_t bins, std::size_t terms,
            ThreadPool* pool);
  double width = 0, y0 = 0;
  std::size_t terms = 0;
  std::vector<std::size_t> first;  // each bin's first key, then n
  std::vector<double> centre;      // the middle of each bin's keys
  std::vector<double> sums;        // per bin: terms sums of u^k, then terms of u^k (y - y0)
};

class GaussTransform {
 public:
  /// The largest order0 and order1 the target-side series serve (a local quadratic's gradient
  /// needs 7).
  static constexpr std::size_t max_target_order = 8;
  /// A sum of the target-side series: sum_t c[t] h_(k[t]) over the keys' weights (y false) or
  /// weights times y - y0 (y true), h_k the Hermite functions (above).
  struct Fn {
    bool y = false;
    std::size_t count = 0, k[max_target_order / 2 + 1] = {};
    double c[max_target_order / 2 + 1] = {};
  };
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
    /// Queries many times the boxes (a pass over every key): at() and moments() answer from
    /// Taylor series about cells of a quarter box (below), a query's cost one cell's terms
    /// instead of every reached box's. For orders up to max_target_order, and for values that
    /// do not span many orders: each key's term rounds within about eps exp(-a^2 + 2|a|) of
    /// its |value| against exp(-a^2 + |a|) from the boxes.
    bool targets = false;
    /// With targets: the keys' bins (made with the same y0 over the same keys), merged into the
    /// boxes where they are narrower, instead of every key's powers summed.
    const GaussBins* bins = nullptr;
    /// With targets and NW's plain sums: whether at()'s gradient sums t and v are wanted. The
    /// target-side series serve powers of z only where the keys span 8 boxes or more (below);
    /// without them, E's series (no power of z) serve at any spread.
    bool gradient = true;
  };
  GaussTransform(const double* x, const double* y, std::size_t n, double h, double tolerance, double y0,
                 std::size_t queries, ThreadPool* pool, const Shape& shape);
  bool usable() const { return usable_; }
  /// Whether at() answers from the target-side series (Shape::targets, where they pay).
  bool targets() const { return !cells_.empty(); }
  /// Whether the boxes' series came from the bins (Shape::bins).
  bool from_bins() const { return binned_; }
  /// The power sums a transform of `n` keys keeps for the target-side series at `tolerance`
  /// (0 where no number of terms up to 64 holds the bound): what GaussBins must keep.
  static std::size_t target_terms(std::size_t n, double tolerance);
  /// The target-side transform's sums (Fn) for order0 and order1 moments.
  static std::vector<Fn> functions(std::size_t order0, std::size_t order1);
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
  // Target-side series (Shape::targets): per box its 2 pc_ power sums over n! (a_n / n!, then
  // the same with y - y0) (classic_), and where queries are many a box, per quarter cell pc_
  // Taylor coefficients of each sum of fns_, side by side:
  // cells_[((box * 4 + cell) * pc_ + m) * fns_.size() + f].
  // fns_: the sums kept (M_m and My_m, m < order0 and order1; NW's plain at() only M_0, M_2,
  // My_0, My_2), fn_[0][m] and fn_[1][m] where each is in fns_ (fns_.size() where not kept),
  // kmax_ their largest Hermite index.
  bool classic_ = false, binned_ = false;
  std::size_t pc_ = 0, kmax_ = 0;
  std::vector<Fn> fns_;
  std::size_t fn_[2][max_target_order] = {};
  std::vector<double> alpha_, cells_;
  // The boxes' series (coef_, terms_, p_) over the keys' boxes from `start`.
  void build_boxes(const double* x, const double* y, const double* weights, const std::vector<std::size_t>& start,
                   double R, std::size_t power, double bound, ThreadPool* pool);
  // The target-side series' sums (fns_, fn_, kmax_) and terms (pc_, 0 where none holds `bound`).
  void plan_targets(double bound);
  // The boxes (centres) and alpha_ from the bins; false where they do not apply.
  bool merge_bins(const GaussBins& bins, std::size_t n, std::size_t queries);
  void build_cells(double R, ThreadPool* pool);
  void classic_at(double q, double* out) const;  // every function of fns_ at q
};

}  // namespace nwreg
