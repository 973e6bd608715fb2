#include "nwreg/kernel/gauss_transform.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "nwreg/kernel/binomial.h"
#include "nwreg/kernel/gauss_series.h"
#include "nwreg/kernel/kernels.h"
#include "nwreg/base/simd.h"
#include "nwreg/base/thread_pool.h"

namespace nwreg {
namespace {

using gauss::e_const;
using gauss::max_terms;
using gauss::tables;

// The largest over a in [0, amax] of exp(-a^2 + a) a^p / p! (2 (a + 1/2)^2)^(power / 2): the
// truncation error a key, times the largest factor sqrt(2)^m |b - a|^m <= that a power m of z
// adds (|b| <= 1/2), on a grid fine enough for this smooth function, widened by a margin.
double truncation(std::size_t p, double amax, std::size_t power) {
  double worst = -std::numeric_limits<double>::infinity();  // log of the largest
  for (double a = 0.005; a <= amax + 0.005; a += 0.005) {
    const double lg = -a * a + a + static_cast<double>(p) * std::log(a) - std::lgamma(static_cast<double>(p) + 1) +
                      0.5 * static_cast<double>(power) * std::log(2 * (a + 0.5) * (a + 0.5));
    worst = std::max(worst, lg);
  }
  return 1.5 * std::exp(worst);
}

// The boxes [lo, hi)'s terms at q (see at): compiled for each instruction set, so that the
// fused multiply-adds are instructions (the baseline's are exact too, and slower).
NWREG_CLONES GaussTransform::Sums box_sums(const double* centre, const double* coef, std::size_t p, std::size_t stride,
                                           std::size_t o0, const std::size_t* terms, std::size_t nterms,
                                           std::size_t lo, std::size_t hi, double q, double inv, bool gradient) {
  GaussTransform::Sums s;
  for (std::size_t B = lo; B < hi; ++B) {
    const double a = (q - centre[B]) * inv, z = 2 * a, ea = std::exp(-a * a);
    const double* c = coef + B * p * stride;
    // Six polynomials in z by Horner's rule, side by side: sum_k z^k m_(k+j) / k!, to the
    // terms a box at this |a| needs.
    double r[6] = {};
    for (std::size_t k = terms[std::min(static_cast<std::size_t>(std::abs(a) * 4), nterms - 1)]; k-- > 0;)
      for (int j = 0; j < 3; ++j) {
        r[j] = std::fma(r[j], z, c[k * stride + j]);
        r[3 + j] = std::fma(r[3 + j], z, c[k * stride + o0 + j]);
      }
    s.s0 += ea * r[0];
    s.s1 += ea * r[3];
    if (gradient) {
      // D = 2 (b - a)^2: sum_k z^k / k! (m_(k+2) - 2a m_(k+1) + a^2 m_k), twice.
      s.t += 2 * ea * (r[2] - 2 * a * r[1] + a * a * r[0]);
      s.v += 2 * ea * (r[5] - 2 * a * r[4] + a * a * r[3]);
    }
  }
  return s;
}

// The boxes [lo, hi)'s moments at q (see moments): per box, sum E b^l = exp(-a^2) r_l with
// r_l = sum_k (2a)^k / k! m_(k+l), then z^m = sqrt(2)^m (b - a)^m by the binomial sum.
NWREG_CLONES void box_moments_at(const double* centre, const double* coef, std::size_t p, std::size_t o0,
                                 std::size_t o1, const std::size_t* terms, std::size_t nterms, std::size_t n0,
                                 std::size_t n1, std::size_t lo, std::size_t hi, double q, double inv, double* M,
                                 double* My) {
  const std::size_t stride = o0 + o1;
  double r[64], B0[32], B1[32];
  std::fill(B0, B0 + o0, 0.0);
  std::fill(B1, B1 + o1, 0.0);
  for (std::size_t B = lo; B < hi; ++B) {
    const double a = (q - centre[B]) * inv, z = 2 * a, ea = std::exp(-a * a);
    const double* c = coef + B * p * stride;
    std::fill(r, r + stride, 0.0);
    // To the terms a box at this |a| needs (every moment kept: one loop the compiler unrolls).
    for (std::size_t k = terms[std::min(static_cast<std::size_t>(std::abs(a) * 4), nterms - 1)]; k-- > 0;)
      for (std::size_t j = 0; j < stride; ++j) r[j] = std::fma(r[j], z, c[k * stride + j]);
    // sum E (b - a)^m = ea sum_l C(m, l) (-a)^(m - l) r_l
    double na[32];
    na[0] = 1;
    for (std::size_t m = 1; m < o0 || m < o1; ++m) na[m] = na[m - 1] * -a;
    kernel::binomial_shift(r, na, n0, ea, B0);
    kernel::binomial_shift(r + o0, na, n1, ea, B1);
  }
  double f = 1;  // sqrt(2)^m
  for (std::size_t m = 0; m < o0 || m < o1; ++m, f *= 1.4142135623730951) {
    if (m < o0) M[m] = f * B0[m];
    if (m < o1) My[m] = f * B1[m];
  }
}


}  // namespace

namespace gauss {

// A box's power sums over keys [lo, hi): m[k] = sum w b^k g(b) and m[P + k] = sum w b^k g(b)
// (y - y0) for k < P (w the weights, 1 if null), b = (x - c) inv, g(b) = exp(-b^2) where `damped`
// (the boxes' series) and 1 where not (the target-side series); eight keys at a time, each lane
// summed apart and the lanes added in order.
NWREG_CLONES void box_moments(const double* x, const double* y, const double* w, std::size_t lo, std::size_t hi,
                              double c, double inv, double y0, std::size_t P, bool damped, double* m) {
  using kernel::lanes;
  std::vector<double> acc(2 * P * lanes, 0.0);
  double* a0 = acc.data();
  double* a1 = a0 + P * lanes;
  double pw[lanes], pd[lanes], b[lanes];
  for (std::size_t i = lo; i < hi; i += lanes) {
    for (int l = 0; l < lanes; ++l) {
      const bool in = i + l < hi;
      const double xi = in ? x[i + l] : c;
      b[l] = (xi - c) * inv;
      const double g = damped ? kernel::exp2_inline(-b[l] * b[l] * kernels::log2e) : 1.0;
      pw[l] = in ? g * (w ? w[i + l] : 1.0) : 0.0;
      pd[l] = pw[l] * (in ? y[i + l] - y0 : 0.0);
    }
    for (std::size_t k = 0; k < P; ++k)
      for (int l = 0; l < lanes; ++l) {
        a0[k * lanes + l] += pw[l];
        a1[k * lanes + l] += pd[l];
        pw[l] *= b[l];
        pd[l] *= b[l];
      }
  }
  for (std::size_t k = 0; k < P; ++k) {
    double s0 = 0, s1 = 0;
    for (int l = 0; l < lanes; ++l) {
      s0 += a0[k * lanes + l];
      s1 += a1[k * lanes + l];
    }
    m[k] = s0;
    m[P + k] = s1;
  }
}

}  // namespace gauss

GaussTransform::GaussTransform(const double* x, const double* y, std::size_t n, double h, double tolerance, double y0,
                               std::size_t queries, ThreadPool* pool)
    : GaussTransform(x, y, n, h, tolerance, y0, queries, pool, Shape{}) {}

GaussTransform::GaussTransform(const double* x, const double* y, std::size_t n, double h, double tolerance, double y0,
                               std::size_t queries, ThreadPool* pool, const Shape& shape)
    : y0_(y0), order0_(std::max<std::size_t>(shape.order0, 3)), order1_(std::max<std::size_t>(shape.order1, 3)) {
  if (n == 0 || !(tolerance > 0) || order0_ > 24 || order1_ > 24) return;
  // The largest power of z a moment carries, where the bound must hold for those sums too.
  const std::size_t power = shape.powers ? std::max(order0_, order1_) - 1 : 0;
  width_ = std::sqrt(2.0) * h;
  inv_ = 1 / width_;
  if (!std::isfinite(width_) || !std::isfinite(inv_) || !(width_ > 0)) return;
  // Left out: keys beyond R of the query (in s), each below exp(-R^2) = tolerance / (2e n).
  const double bound = tolerance / (2 * e_const * static_cast<double>(n));
  bound_ = 2 * bound;  // truncated, or left out
  // Left out, a key at |b - a| >= R weighs E |z|^m <= exp(-R^2) (sqrt(2) R)^m (for R^2 >= m/2).
  double R = std::sqrt(std::log(1 / bound));
  while (power > 0 && -R * R + static_cast<double>(power) * std::log(std::sqrt(2.0) * R) > std::log(bound)) R += 0.05;
  reach_ = (R + 0.5) * width_;
  // Target-side series where the keys span 8 widths or more: each power z^m E comes from
  // Hermite functions, whose terms cancel where every key lies within a small |t - s| of the
  // query (h wide against the keys' spread: there the boxes' series about the keys' middle keep
  // their digits). E alone (NW without its gradient) has no such terms.
  const bool spread = x[n - 1] - x[0] >= 8 * width_ || (!shape.gradient && order0_ == 3 && order1_ == 3 && power == 0);
  if (shape.targets && order0_ <= max_target_order && order1_ <= max_target_order && spread) plan_targets(bound);
  // The bins hold NW's power sums (no weights).
  if (pc_ > 0 && shape.bins && !shape.weights && shape.bins->terms >= pc_ && merge_bins(*shape.bins, n, queries)) {
    total_ = static_cast<double>(n);
    const std::size_t boxes = centre_.size();
    if (queries >= 1024 * boxes && n >= 1024 * boxes) build_cells(R, pool);
    usable_ = classic_ = binned_ = true;
    return;
  }
  // Each box spans less than a width, so there are at least range / width of them, each to
  // serve 4 queries: a pass of few queries (a stream answers one at a time) is told so in O(1),
  // not after a scan of every key.
  if (static_cast<double>(queries) < 4 * std::max(1.0, (x[n - 1] - x[0]) * inv_)) return;
  for (std::size_t i = 0; i < n; ++i) total_ += shape.weights ? shape.weights[i] : 1.0;
  // Boxes: each starts at its first key and holds the keys within one width of it.
  std::vector<std::size_t> start;
  for (std::size_t i = 0; i < n;) {
    start.push_back(i);
    const double end = x[i] + width_;
    if (!(end > x[i])) return;  // the width is below the keys' spacing in doubles
    while (i < n && x[i] < end) ++i;
  }
  const std::size_t boxes = start.size();
  // Building costs about n p; it pays over boxes of many keys and queries that reach many
  // boxes' keys each.
  if (static_cast<double>(n) < min_keys_per_box * static_cast<double>(boxes) || queries < 4 * boxes) return;
  start.push_back(n);
  centre_.resize(boxes);
  for (std::size_t B = 0; B < boxes; ++B) {
    // The middle of its keys (within half a width of each): where h is wide against the keys'
    // spread, b and a stay as small as z, and the binomial sums over powers of b - a do not cancel.
    const double first = x[start[B]], last = x[start[B + 1] - 1];
    centre_[B] = first + (last - first) / 2;
  }
  // Target-side series: a box's four cells cost about 32 p^2 terms a box in reach, against a
  // query's 6 p terms a box in reach from the boxes' series: worth it at some 200 queries a
  // box. At 1024 keys a box and more their 5 KB a box stay below 5 bytes a key.
  if (pc_ > 0 && queries >= 1024 * boxes && n >= 1024 * boxes) {
    const std::size_t p = pc_;
    const std::vector<double> a = gauss::per_box(start, 2 * p, pool, [&](std::size_t lo, std::size_t hi, std::size_t B, double* out) {
      gauss::box_moments(x, y, shape.weights, lo, hi, centre_[B], inv_, y0_, p, false, out);
    });
    alpha_.resize(boxes * 2 * p);
    for (std::size_t i = 0; i < alpha_.size(); ++i) alpha_[i] = a[i] * tables().inv_fact[i % p];
    build_cells(R, pool);
    usable_ = classic_ = true;
    return;
  }
  build_boxes(x, y, shape.weights, start, R, power, bound, pool);
}

void GaussTransform::build_boxes(const double* x, const double* y, const double* weights,
                                 const std::vector<std::size_t>& start, double R, std::size_t power, double bound,
                                 ThreadPool* pool) {
  const std::size_t boxes = centre_.size();
  // The terms for every box, and fewer for the boxes near the query: those where |a| <= (i + 1)
  // / 4 (kept by the arguments: the same at every transform of a pass's bandwidth).
  static gauss::Memo<std::tuple<double, std::size_t, double>, std::pair<std::size_t, std::vector<std::size_t>>> kept;
  std::tie(p_, terms_) = kept.get({R, power, bound}, [&] {
    std::size_t p = 1;
    std::vector<std::size_t> terms;
    while (p <= max_terms && truncation(p, R + 0.5, power) > bound) ++p;
    if (p > max_terms) return std::pair{p, terms};
    std::size_t pp = 1;
    for (double amax = 0.25;; amax += 0.25) {
      while (pp < p && truncation(pp, std::min(amax, R + 0.5), power) > bound) ++pp;
      terms.push_back(pp);
      if (amax >= R + 0.5) break;
    }
    return std::pair{p, terms};
  });
  if (p_ > max_terms) return;
  const std::size_t stride = order0_ + order1_, top = std::max(order0_, order1_);
  coef_.assign(boxes * p_ * stride, 0.0);
  const double* inv_fact = tables().inv_fact;
  const std::size_t P = p_ + top - 1;
  const std::vector<double> m = gauss::per_box(start, 2 * P, pool, [&](std::size_t lo, std::size_t hi, std::size_t B, double* out) {
    gauss::box_moments(x, y, weights, lo, hi, centre_[B], inv_, y0_, P, true, out);
  });
  for (std::size_t B = 0; B < boxes; ++B) {
    const double* mb = &m[B * 2 * P];
    double* out = &coef_[B * p_ * stride];
    for (std::size_t k = 0; k < p_; ++k) {
      for (std::size_t j = 0; j < order0_; ++j) out[k * stride + j] = mb[k + j] * inv_fact[k];
      for (std::size_t j = 0; j < order1_; ++j) out[k * stride + order0_ + j] = mb[P + k + j] * inv_fact[k];
    }
  }
  usable_ = true;
}

void GaussTransform::reach(double q, std::size_t& lo, std::size_t& hi) const {
  lo = static_cast<std::size_t>(std::lower_bound(centre_.begin(), centre_.end(), q - reach_) - centre_.begin());
  hi = static_cast<std::size_t>(std::upper_bound(centre_.begin(), centre_.end(), q + reach_) - centre_.begin());
}

GaussTransform::Sums GaussTransform::at(double q, bool gradient) const {
  if (classic_) {
    double F[2 * max_target_order];
    classic_at(q, F);
    return {F[fn_[0][0]], F[fn_[1][0]], F[fn_[0][2]], F[fn_[1][2]]};
  }
  std::size_t lo, hi;
  reach(q, lo, hi);
  return box_sums(centre_.data(), coef_.data(), p_, order0_ + order1_, order0_, terms_.data(), terms_.size(), lo, hi, q,
                  inv_, gradient);
}

void GaussTransform::moments(double q, double* M, double* My, std::size_t n0, std::size_t n1) const {
  if (classic_) {
    double F[2 * max_target_order];
    classic_at(q, F);
    for (std::size_t m = 0; m < std::min(n0, order0_); ++m) M[m] = F[fn_[0][m]];
    for (std::size_t m = 0; m < std::min(n1, order1_); ++m) My[m] = F[fn_[1][m]];
    return;
  }
  std::size_t lo, hi;
  reach(q, lo, hi);
  box_moments_at(centre_.data(), coef_.data(), p_, order0_, order1_, terms_.data(), terms_.size(), std::min(n0, order0_),
                 std::min(n1, order1_), lo, hi, q, inv_, M, My);
}

}  // namespace nwreg
