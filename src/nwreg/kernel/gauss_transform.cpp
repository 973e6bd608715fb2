#include "nwreg/kernel/gauss_transform.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "nwreg/kernel/binomial.h"
#include "nwreg/kernel/kernels.h"
#include "nwreg/base/simd.h"
#include "nwreg/base/thread_pool.h"

namespace nwreg {
namespace {

constexpr std::size_t max_terms = 64;
constexpr double e_const = 2.718281828459045;

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

// A box's moments over keys [lo, hi): m[k] = sum w b^k exp(-b^2) and m[P + k] = sum w b^k
// exp(-b^2) (y - y0) for k < P (w the weights, 1 if null), b = (x - c) inv; eight keys at a time, each lane summed apart
// and the lanes added in order.
NWREG_CLONES void box_moments(const double* x, const double* y, const double* w, std::size_t lo, std::size_t hi,
                              double c, double inv, double y0, std::size_t P, double* m) {
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
      pw[l] = in ? kernel::exp2_inline(-b[l] * b[l] * kernels::log2e) * (w ? w[i + l] : 1.0) : 0.0;
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

// Sums of `width` values over each box's keys ([start[B], start[B + 1])), over segments of at
// most 4096 keys in parallel (a few wide boxes hold every key when h is large), each box's
// segments then added in order: the same sums whatever the threads. sum(lo, hi, B, out) writes
// out[0, width) for keys [lo, hi) of box B. The result: box B's at [B * width, (B + 1) * width).
template <class Sum>
std::vector<double> per_box(const std::vector<std::size_t>& start, std::size_t width, ThreadPool* pool, const Sum& sum) {
  constexpr std::size_t seg = 4096;
  const std::size_t boxes = start.size() - 1;
  std::vector<std::size_t> first_seg;  // each box's first segment
  std::vector<std::pair<std::size_t, std::size_t>> segs;
  std::vector<std::size_t> seg_box;
  for (std::size_t B = 0; B < boxes; ++B) {
    first_seg.push_back(segs.size());
    for (std::size_t i = start[B]; i < start[B + 1]; i += seg) {
      segs.emplace_back(i, std::min(i + seg, start[B + 1]));
      seg_box.push_back(B);
    }
  }
  first_seg.push_back(segs.size());
  std::vector<double> part(segs.size() * width);
  parallel_for(pool, segs.size(), 4, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t g = lo; g < hi; ++g) sum(segs[g].first, segs[g].second, seg_box[g], &part[g * width]);
  });
  std::vector<double> out(boxes * width, 0.0);
  for (std::size_t B = 0; B < boxes; ++B)
    for (std::size_t g = first_seg[B]; g < first_seg[B + 1]; ++g)
      for (std::size_t k = 0; k < width; ++k) out[B * width + k] += part[g * width + k];
  return out;
}

// Target-side series (gauss_transform.h): cells of a quarter box, |u| <= 1/8 about a cell's
// centre, |b| <= 1/2 about a box's; rho = 1/2 + 1/8.
constexpr std::size_t cells_per_box = 4;
constexpr double cramer = 1.0865;

// The fewest terms p whose left-out terms (k = n + m >= p) bound a key's error in E and E D
// below `bound`: 1.0865 sum_(k >= p) rho^k sqrt(2^k k!) / k! (sqrt((k + 1)(k + 2)) + 1); 0 past
// max_terms.
std::size_t target_terms(double bound) {
  constexpr double rho = 0.625;
  auto term = [&](double k) {
    return cramer * std::exp(k * std::log(rho) + 0.5 * (k * std::log(2.0) + std::lgamma(k + 1)) - std::lgamma(k + 1)) *
           (std::sqrt((k + 1) * (k + 2)) + 1);
  };
  for (std::size_t p = 1; p <= max_terms; ++p) {
    double tail = 0;  // the terms fall faster than geometrically: 400 of them are the tail
    for (std::size_t k = p; k < p + 400; ++k) tail += term(static_cast<double>(k));
    if (tail <= bound) return p;
  }
  return 0;
}

// Factorials and the Hermite functions' recurrence, for k < 2 max_terms + 2.
struct Tables {
  static constexpr std::size_t size = 2 * max_terms + 2;
  double inv_fact[size], sign_fact[size];  // 1 / k!, (-1)^k / k!
  double scale[size];                      // sqrt(2^k k!)
  double up[size], back[size];             // sqrt(2 / (k + 1)), sqrt(k / (k + 1))
  Tables() {
    for (std::size_t k = 0; k < size; ++k) {
      const double kd = static_cast<double>(k);
      inv_fact[k] = k == 0 ? 1 : inv_fact[k - 1] / kd;
      sign_fact[k] = k % 2 ? -inv_fact[k] : inv_fact[k];
      scale[k] = std::exp(0.5 * (kd * std::log(2.0) + std::lgamma(kd + 1)));
      up[k] = std::sqrt(2 / (kd + 1));
      back[k] = std::sqrt(kd / (kd + 1));
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

// h[k] = H_k(x) exp(-x^2) for k < count, by the recurrence of the normalised functions
// H_k exp(-x^2) / sqrt(2^k k!) (each within 1.0865 exp(-x^2 / 2): no overflow at any k),
// times sqrt(2^k k!).
void hermite_functions(double x, std::size_t count, double* h) {
  const Tables& t = tables();
  double prev = 0, cur = std::exp(-x * x);
  for (std::size_t k = 0; k < count; ++k) {
    h[k] = cur * t.scale[k];
    const double next = t.up[k] * x * cur - t.back[k] * prev;
    prev = cur;
    cur = next;
  }
}

GaussTransform::Sums add(const GaussTransform::Sums& a, const GaussTransform::Sums& b) {
  return {a.s0 + b.s0, a.s1 + b.s1, a.t + b.t, a.v + b.v};
}

// One box's series at a query (gauss_transform.h), h[k] = h_k(t - c) for k < p + 2:
// sum_n h_n alpha_n, and for E D sum_n (h_(n+2) / 2 + h_n) alpha_n.
GaussTransform::Sums box_at(const double* h, const double* alpha, std::size_t p) {
  GaussTransform::Sums s;
  for (std::size_t n = 0; n < p; ++n) {
    const double hd = 0.5 * h[n + 2] + h[n];
    s.s0 += h[n] * alpha[n];
    s.s1 += h[n] * alpha[p + n];
    s.t += hd * alpha[n];
    s.v += hd * alpha[p + n];
  }
  return s;
}

// A box's power sums over keys [lo, hi): m[n] = sum b^n, m[P + n] = sum b^n (y - y0) for n < P,
// b = (x - c) inv; eight keys at a time, each lane summed apart and the lanes added in order.
NWREG_CLONES void box_powers(const double* x, const double* y, std::size_t lo, std::size_t hi, double c, double inv,
                             double y0, std::size_t P, double* m) {
  using kernel::lanes;
  std::vector<double> acc(2 * P * lanes, 0.0);
  double* a0 = acc.data();
  double* a1 = a0 + P * lanes;
  double pw[lanes], pd[lanes], b[lanes];
  for (std::size_t i = lo; i < hi; i += lanes) {
    for (int l = 0; l < lanes; ++l) {
      const bool in = i + l < hi;
      b[l] = in ? (x[i + l] - c) * inv : 0.0;
      pw[l] = in ? 1.0 : 0.0;
      pd[l] = in ? y[i + l] - y0 : 0.0;
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

// A cell's Taylor coefficients (gauss_transform.h) from one box at x = c' - c (in s): for
// m < p, out[m * 4 + f] += (-1)^m / m! sum_n g_f(n + m) alpha_n with g = h for E and
// (h_(k+2) + 2 h_k) / 2 for E D, alpha the box's a_n / n! (f = 0, 2) or with y (f = 1, 3).
NWREG_CLONES void cell_from_box(const double* h, const double* alpha, std::size_t p, const double* sign_fact,
                                double* out) {
  for (std::size_t m = 0; m < p; ++m) {
    double e0 = 0, e1 = 0, d0 = 0, d1 = 0;
    for (std::size_t n = 0; n < p; ++n) {
      const double he = h[n + m], hd = 0.5 * h[n + m + 2] + h[n + m];
      e0 = std::fma(he, alpha[n], e0);
      e1 = std::fma(he, alpha[p + n], e1);
      d0 = std::fma(hd, alpha[n], d0);
      d1 = std::fma(hd, alpha[p + n], d1);
    }
    out[m * 4 + 0] += sign_fact[m] * e0;
    out[m * 4 + 1] += sign_fact[m] * e1;
    out[m * 4 + 2] += sign_fact[m] * d0;
    out[m * 4 + 3] += sign_fact[m] * d1;
  }
}

// A cell's four series at u, by Horner's rule side by side.
NWREG_CLONES GaussTransform::Sums cell_at(const double* c, std::size_t p, double u) {
  double r[4] = {};
  for (std::size_t m = p; m-- > 0;)
    for (int f = 0; f < 4; ++f) r[f] = std::fma(r[f], u, c[m * 4 + f]);
  return {r[0], r[1], r[2], r[3]};
}

}  // namespace

GaussBins::GaussBins(const double* x, const double* y, std::size_t n, double y0_, std::size_t bins, std::size_t terms_,
                     ThreadPool* pool)
    : y0(y0_), terms(terms_) {
  if (n == 0 || bins == 0 || terms == 0) return;
  width = (x[n - 1] - x[0]) / static_cast<double>(bins);
  if (!(width > 0) || !std::isfinite(width)) return;
  for (std::size_t i = 0; i < n;) {
    first.push_back(i);
    const double end = x[i] + width;
    if (!(end > x[i])) {  // the width is below the keys' spacing in doubles: no bins
      first.clear();
      return;
    }
    while (i < n && x[i] < end) ++i;
  }
  first.push_back(n);
  const std::size_t count = first.size() - 1;
  centre.resize(count);
  for (std::size_t f = 0; f < count; ++f) centre[f] = x[first[f]] + (x[first[f + 1] - 1] - x[first[f]]) / 2;
  sums = per_box(first, 2 * terms, pool, [&](std::size_t lo, std::size_t hi, std::size_t f, double* out) {
    box_powers(x, y, lo, hi, centre[f], 1 / width, y0, terms, out);
  });
}

std::size_t GaussTransform::target_terms(std::size_t n, double tolerance) {
  return nwreg::target_terms(tolerance / (2 * e_const * static_cast<double>(n)));
}

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
  const bool plain = shape.targets && !shape.weights && power == 0 && order0_ == 3 && order1_ == 3;
  if (plain) pc_ = nwreg::target_terms(bound);
  if (pc_ > 0 && shape.bins && shape.bins->terms >= pc_ && merge_bins(*shape.bins, n, queries)) {
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
    const std::vector<double> a = per_box(start, 2 * p, pool, [&](std::size_t lo, std::size_t hi, std::size_t B, double* out) {
      box_powers(x, y, lo, hi, centre_[B], inv_, y0_, p, out);
    });
    alpha_.resize(boxes * 2 * p);
    for (std::size_t i = 0; i < alpha_.size(); ++i) alpha_[i] = a[i] * tables().inv_fact[i % p];
    build_cells(R, pool);
    usable_ = classic_ = true;
    return;
  }
  for (p_ = 1; p_ <= max_terms && truncation(p_, R + 0.5, power) > bound; ++p_) {
  }
  if (p_ > max_terms) return;
  // Fewer terms serve the boxes near the query: those where |a| <= (i + 1) / 4.
  std::size_t pp = 1;
  for (double amax = 0.25;; amax += 0.25) {
    while (pp < p_ && truncation(pp, std::min(amax, R + 0.5), power) > bound) ++pp;
    terms_.push_back(pp);
    if (amax >= R + 0.5) break;
  }
  const std::size_t stride = order0_ + order1_, top = std::max(order0_, order1_);
  coef_.assign(boxes * p_ * stride, 0.0);
  const double* inv_fact = tables().inv_fact;
  const std::size_t P = p_ + top - 1;
  const std::vector<double> m = per_box(start, 2 * P, pool, [&](std::size_t lo, std::size_t hi, std::size_t B, double* out) {
    box_moments(x, y, shape.weights, lo, hi, centre_[B], inv_, y0, P, out);
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

bool GaussTransform::merge_bins(const GaussBins& bins, std::size_t n, std::size_t queries) {
  if (bins.first.empty() || !(width_ > bins.width)) return false;
  // Boxes: runs of bins whose keys lie within one width of the run's first key. A box of the
  // bins' keys spans less than a width, as the keys' boxes do.
  const std::size_t count = bins.centre.size();
  std::vector<std::size_t> start;  // each box's first bin
  for (std::size_t f = 0; f < count;) {
    start.push_back(f);
    const double lo = bins.centre[f] - bins.width / 2;  // at or below the bin's first key
    ++f;
    while (f < count && bins.centre[f] + bins.width / 2 < lo + width_) ++f;
  }
  const std::size_t boxes = start.size();
  // The series pay over boxes of many keys; merging costs about p^2 a bin, summing key by key
  // about 16 boxes' keys a query.
  const double p = static_cast<double>(pc_);
  if (static_cast<double>(n) < min_keys_per_box * static_cast<double>(boxes) ||
      16 * static_cast<double>(queries) * static_cast<double>(n) < static_cast<double>(boxes) * static_cast<double>(count) * p * p)
    return false;
  start.push_back(count);
  centre_.resize(boxes);
  alpha_.assign(boxes * 2 * pc_, 0.0);
  const double* inv_fact = tables().inv_fact;
  const double rho = bins.width * inv_;
  std::vector<double> nu(2 * pc_), dpow(pc_);
  for (std::size_t B = 0; B < boxes; ++B) {
    // The middle of the box's bins' spans: within half a width of each key.
    const double lo = bins.centre[start[B]] - bins.width / 2, hi = bins.centre[start[B + 1] - 1] + bins.width / 2;
    centre_[B] = lo + (hi - lo) / 2;
    double* al = &alpha_[B * 2 * pc_];
    for (std::size_t f = start[B]; f < start[B + 1]; ++f) {
      // b = rho u + delta: a_n / n! = sum_k (rho^k sum u^k / k!) (delta^(n-k) / (n-k)!), every
      // term within (|rho u| + |delta|)^n <= 2^-n of the bin's keys: no cancellation.
      const double delta = (bins.centre[f] - centre_[B]) * inv_;
      const double* mu = &bins.sums[f * 2 * bins.terms];
      double rk = 1, dk = 1;
      for (std::size_t k = 0; k < pc_; ++k, rk *= rho, dk *= delta) {
        nu[k] = mu[k] * rk * inv_fact[k];
        nu[pc_ + k] = mu[bins.terms + k] * rk * inv_fact[k];
        dpow[k] = dk * inv_fact[k];
      }
      for (std::size_t m = 0; m < pc_; ++m)
        for (std::size_t k = 0; k <= m; ++k) {
          al[m] += nu[k] * dpow[m - k];
          al[pc_ + m] += nu[pc_ + k] * dpow[m - k];
        }
    }
  }
  return true;
}

void GaussTransform::build_cells(double R, ThreadPool* pool) {
  const std::size_t boxes = centre_.size(), p = pc_, K = 2 * p + 1;
  const double* sign_fact = tables().sign_fact;
  // A cell's queries lie within 1/2 of the box centre: boxes farther than R + 1 hold keys beyond
  // R of each, left out as in at().
  cells_.assign(boxes * cells_per_box * p * 4, 0.0);
  const double cell_reach = (R + 1) * width_;
  parallel_for(pool, boxes, 1, [&](std::size_t lo, std::size_t hi) {
    std::vector<double> h(K);
    for (std::size_t T = lo; T < hi; ++T) {
      const auto first = std::lower_bound(centre_.begin(), centre_.end(), centre_[T] - cell_reach);
      const auto last = std::upper_bound(centre_.begin(), centre_.end(), centre_[T] + cell_reach);
      for (std::size_t j = 0; j < cells_per_box; ++j) {
        // The cell's centre c' = c_T + d (d in s) is never formed: near 1e9 (time stamps) it
        // would round by more than the series can bear. c' - c_B = (c_T - c_B) / width + d.
        const double d = (static_cast<double>(j) - 1.5) * 0.25;
        for (auto B = static_cast<std::size_t>(first - centre_.begin()); B < static_cast<std::size_t>(last - centre_.begin()); ++B) {
          hermite_functions((centre_[T] - centre_[B]) * inv_ + d, K, h.data());
          cell_from_box(h.data(), &alpha_[B * 2 * p], p, sign_fact, &cells_[(T * cells_per_box + j) * p * 4]);
        }
      }
    }
  });
}

GaussTransform::Sums GaussTransform::classic_at(double q) const {
  // The box whose centre lies nearest q; within its span (|a| <= 1/2), the cell's series.
  auto it = std::upper_bound(centre_.begin(), centre_.end(), q);
  std::size_t B = static_cast<std::size_t>(it - centre_.begin());
  if (B == centre_.size() || (B > 0 && q - centre_[B - 1] <= centre_[B] - q)) --B;
  const double a = (q - centre_[B]) * inv_;
  const std::size_t p = pc_;
  if (!cells_.empty() && std::abs(a) <= 0.5) {
    const std::size_t j = std::min<std::size_t>(cells_per_box - 1, static_cast<std::size_t>((a + 0.5) * 4));
    return cell_at(&cells_[(B * cells_per_box + j) * p * 4], p, a - (static_cast<double>(j) - 1.5) * 0.25);
  }
  // Each box's series at q (no cells, or q outside every box's span: a gap, beyond the keys).
  std::size_t lo, hi;
  reach(q, lo, hi);
  double h[max_terms + 2];
  Sums s;
  for (std::size_t b = lo; b < hi; ++b) {
    hermite_functions((q - centre_[b]) * inv_, p + 2, h);
    s = add(s, box_at(h, &alpha_[b * 2 * p], p));
  }
  return s;
}

void GaussTransform::reach(double q, std::size_t& lo, std::size_t& hi) const {
  lo = static_cast<std::size_t>(std::lower_bound(centre_.begin(), centre_.end(), q - reach_) - centre_.begin());
  hi = static_cast<std::size_t>(std::upper_bound(centre_.begin(), centre_.end(), q + reach_) - centre_.begin());
}

GaussTransform::Sums GaussTransform::at(double q, bool gradient) const {
  if (classic_) return classic_at(q);
  std::size_t lo, hi;
  reach(q, lo, hi);
  return box_sums(centre_.data(), coef_.data(), p_, order0_ + order1_, order0_, terms_.data(), terms_.size(), lo, hi, q,
                  inv_, gradient);
}

void GaussTransform::moments(double q, double* M, double* My, std::size_t n0, std::size_t n1) const {
  std::size_t lo, hi;
  reach(q, lo, hi);
  box_moments_at(centre_.data(), coef_.data(), p_, order0_, order1_, terms_.data(), terms_.size(), std::min(n0, order0_),
                 std::min(n1, order1_), lo, hi, q, inv_, M, My);
}

}  // namespace nwreg
