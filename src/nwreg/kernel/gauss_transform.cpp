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

// The sums a target-side transform answers: for m < order0, M_m = sum w E z^m, and for
// m < order1, My_m = sum w (y - y0) E z^m (z = (x - q) / h = -sqrt 2 (t - s)). With
// tau^m = m! / 2^m sum_j H_(m-2j)(tau) / (j! (m - 2j)!), E z^m = sum_j c_mj h_(m-2j)(t - s),
// c_mj = (-sqrt 2)^m m! / (2^m j! (m - 2j)!).
std::vector<GaussTransform::Fn> all_functions(std::size_t order0, std::size_t order1) {
  std::vector<GaussTransform::Fn> out;
  for (int v = 0; v < 2; ++v)
    for (std::size_t m = 0; m < (v ? order1 : order0); ++m) {
      GaussTransform::Fn f;
      f.y = v == 1;
      for (std::size_t j = 0; 2 * j <= m; ++j) {
        const double md = static_cast<double>(m), jd = static_cast<double>(j);
        const double lc = std::lgamma(md + 1) - md * std::log(2.0) - std::lgamma(jd + 1) - std::lgamma(md - 2 * jd + 1) +
                          0.5 * md * std::log(2.0);
        f.k[f.count] = m - 2 * j;
        f.c[f.count++] = (m % 2 ? -1 : 1) * std::exp(lc);
      }
      out.push_back(f);
    }
  return out;
}

// The fewest terms p whose left-out terms (k = n + m >= p) bound a key's error below `bound` in
// every function: h_(l + k) weighs at most 1.0865 sqrt(2^(l+k) (l+k)!) a key, and the terms
// with n + m = l at most rho^l / l! of it, so a function errs by at most
// 1.0865 sum_t |c_t| sum_(l >= p) rho^l sqrt(2^(l + k_t) (l + k_t)!) / l!; 0 past max_terms.
std::size_t target_terms(double bound, const std::vector<GaussTransform::Fn>& fns) {
  constexpr double rho = 0.625;
  auto term = [&](double l, double k) {
    return cramer *
           std::exp(l * std::log(rho) + 0.5 * ((l + k) * std::log(2.0) + std::lgamma(l + k + 1)) - std::lgamma(l + 1));
  };
  for (std::size_t p = 1; p <= max_terms; ++p) {
    bool holds = true;
    for (const GaussTransform::Fn& f : fns) {
      double tail = 0;  // the terms fall faster than geometrically: 400 of them are the tail
      for (std::size_t l = p; l < p + 400; ++l)
        for (std::size_t t = 0; t < f.count; ++t)
          tail += std::abs(f.c[t]) * term(static_cast<double>(l), static_cast<double>(f.k[t]));
      holds = holds && tail <= bound;
    }
    if (holds) return p;
  }
  return 0;
}

// Factorials and the Hermite functions' recurrence, for k < 2 max_terms + 2.
struct Tables {
  static constexpr std::size_t size = 2 * max_terms + GaussTransform::max_target_order + 2;
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

// One box's series at a query (gauss_transform.h), h[k] = h_k(t - c): out[f] += the function's
// sum_n sum_t c_t h_(n + k_t) alpha_n, alpha the box's a_n / n! (then those with y - y0).
void box_at(const double* h, const double* alpha, std::size_t p, const std::vector<GaussTransform::Fn>& fns,
            double* out) {
  for (std::size_t f = 0; f < fns.size(); ++f) {
    const double* al = alpha + (fns[f].y ? p : 0);
    double s = 0;
    for (std::size_t t = 0; t < fns[f].count; ++t) {
      double st = 0;
      for (std::size_t n = 0; n < p; ++n) st += h[n + fns[f].k[t]] * al[n];
      s += fns[f].c[t] * st;
    }
    out[f] += s;
  }
}

// A box's power sums over keys [lo, hi): m[n] = sum w b^n, m[P + n] = sum w b^n (y - y0) for
// n < P (w the weights, 1 if null), b = (x - c) inv; eight keys at a time, each lane summed apart and the lanes added in order.
NWREG_CLONES void box_powers(const double* x, const double* y, const double* w, std::size_t lo, std::size_t hi, double c,
                             double inv, double y0, std::size_t P, double* m) {
  using kernel::lanes;
  std::vector<double> acc(2 * P * lanes, 0.0);
  double* a0 = acc.data();
  double* a1 = a0 + P * lanes;
  double pw[lanes], pd[lanes], b[lanes];
  for (std::size_t i = lo; i < hi; i += lanes) {
    for (int l = 0; l < lanes; ++l) {
      const bool in = i + l < hi;
      b[l] = in ? (x[i + l] - c) * inv : 0.0;
      pw[l] = in ? (w ? w[i + l] : 1.0) : 0.0;
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

// A cell's Taylor coefficients (gauss_transform.h) from one box, h[k] = h_k(c' - c) for
// k < 2 p + kmax: with S[j] = sum_n h_(n+j) alpha_n (and Sy with y), for r < p,
// out[r * nf + f] += (-1)^r / r! sum_t c_t S[r + k_t].
NWREG_CLONES void cell_from_box(const double* h, const double* alpha, std::size_t p, std::size_t kmax,
                                const GaussTransform::Fn* fns, std::size_t nf, const double* sign_fact, double* out) {
  double S[2 * (max_terms + GaussTransform::max_target_order)];
  double* Sy = S + p + kmax;
  for (std::size_t j = 0; j < p + kmax; ++j) {
    double a = 0, b = 0;
    for (std::size_t n = 0; n < p; ++n) {
      a = std::fma(h[n + j], alpha[n], a);
      b = std::fma(h[n + j], alpha[p + n], b);
    }
    S[j] = a;
    Sy[j] = b;
  }
  for (std::size_t r = 0; r < p; ++r)
    for (std::size_t f = 0; f < nf; ++f) {
      const double* src = fns[f].y ? Sy : S;
      double v = 0;
      for (std::size_t t = 0; t < fns[f].count; ++t) v += fns[f].c[t] * src[r + fns[f].k[t]];
      out[r * nf + f] += sign_fact[r] * v;
    }
}

// A cell's series at u, by Horner's rule side by side: out[f] for f < nf (NW's 4 and a local
// line's 9 with their counts known to the compiler, so that the loop unrolls).
template <std::size_t NF>
NWREG_INLINE inline void horner(const double* c, std::size_t p, std::size_t nf, double u, double* out) {
  const std::size_t count = NF ? NF : nf;
  double r[2 * GaussTransform::max_target_order] = {};
  for (std::size_t m = p; m-- > 0;)
    for (std::size_t f = 0; f < count; ++f) r[f] = std::fma(r[f], u, c[m * count + f]);
  std::copy(r, r + count, out);
}
NWREG_CLONES void cell_at(const double* c, std::size_t p, std::size_t nf, double u, double* out) {
  if (nf == 4) horner<4>(c, p, nf, u, out);
  else if (nf == 9) horner<9>(c, p, nf, u, out);
  else horner<0>(c, p, nf, u, out);
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
    box_powers(x, y, nullptr, lo, hi, centre[f], 1 / width, y0, terms, out);
  });
}

std::vector<GaussTransform::Fn> GaussTransform::functions(std::size_t order0, std::size_t order1) {
  if (order0 == 3 && order1 == 3) {  // NW's plain sums: E, E D, and both with y - y0
    const std::vector<Fn> all = all_functions(3, 3);
    return {all[0], all[2], all[3], all[5]};
  }
  return all_functions(order0, order1);
}

std::size_t GaussTransform::target_terms(std::size_t n, double tolerance) {
  return nwreg::target_terms(tolerance / (2 * e_const * static_cast<double>(n)), functions(3, 3));
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
  // Target-side series where the keys span 8 widths or more: each power z^m E comes from
  // Hermite functions, whose terms cancel where every key lies within a small |t - s| of the
  // query (h wide against the keys' spread: there the boxes' series about the keys' middle keep
  // their digits). E alone (NW without its gradient) has no such terms.
  const bool spread = x[n - 1] - x[0] >= 8 * width_ || (!shape.gradient && order0_ == 3 && order1_ == 3 && power == 0);
  if (shape.targets && order0_ <= max_target_order && order1_ <= max_target_order && spread) {
    fns_ = functions(order0_, order1_);
    for (auto& row : fn_) std::fill(std::begin(row), std::end(row), fns_.size());
    for (std::size_t f = 0; f < fns_.size(); ++f) {
      const std::size_t m = fns_[f].k[0];  // its first term's index is its power
      fn_[fns_[f].y][m] = f;
      kmax_ = std::max(kmax_, m);
    }
    pc_ = nwreg::target_terms(bound, fns_);
  }
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
    const std::vector<double> a = per_box(start, 2 * p, pool, [&](std::size_t lo, std::size_t hi, std::size_t B, double* out) {
      box_powers(x, y, shape.weights, lo, hi, centre_[B], inv_, y0_, p, out);
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
  if (bins.first.empty() || bins.first.back() != n || bins.y0 != y0_ || !(width_ > bins.width)) return false;
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
  // about 16 boxes' keys a query (every key where there are fewer boxes).
  const double p = static_cast<double>(pc_), reached = std::min<double>(16, static_cast<double>(boxes));
  if (static_cast<double>(n) < min_keys_per_box * static_cast<double>(boxes) ||
      reached * static_cast<double>(queries) * static_cast<double>(n) <
          static_cast<double>(boxes) * static_cast<double>(count) * p * p)
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
  const std::size_t boxes = centre_.size(), p = pc_, K = 2 * p + kmax_, nf = fns_.size();
  const double* sign_fact = tables().sign_fact;
  // A cell's queries lie within 1/2 of the box centre: boxes farther than R + 1 hold keys beyond
  // R of each, left out as in at().
  cells_.assign(boxes * cells_per_box * p * nf, 0.0);
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
          cell_from_box(h.data(), &alpha_[B * 2 * p], p, kmax_, fns_.data(), nf, sign_fact,
                        &cells_[(T * cells_per_box + j) * p * nf]);
        }
      }
    }
  });
}

void GaussTransform::classic_at(double q, double* out) const {
  const std::size_t p = pc_, nf = fns_.size();
  std::fill(out, out + nf, 0.0);
  // The box whose centre lies nearest q; within its span (|a| <= 1/2), the cell's series.
  auto it = std::upper_bound(centre_.begin(), centre_.end(), q);
  std::size_t B = static_cast<std::size_t>(it - centre_.begin());
  if (B == centre_.size() || (B > 0 && q - centre_[B - 1] <= centre_[B] - q)) --B;
  const double a = (q - centre_[B]) * inv_;
  if (!cells_.empty() && std::abs(a) <= 0.5) {
    const std::size_t j = std::min<std::size_t>(cells_per_box - 1, static_cast<std::size_t>((a + 0.5) * 4));
    cell_at(&cells_[(B * cells_per_box + j) * p * nf], p, nf, a - (static_cast<double>(j) - 1.5) * 0.25, out);
    return;
  }
  // Each box's series at q (no cells, or q outside every box's span: a gap, beyond the keys).
  std::size_t lo, hi;
  reach(q, lo, hi);
  double h[max_terms + max_target_order];
  for (std::size_t b = lo; b < hi; ++b) {
    hermite_functions((q - centre_[b]) * inv_, p + kmax_, h);
    box_at(h, &alpha_[b * 2 * p], p, fns_, out);
  }
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
