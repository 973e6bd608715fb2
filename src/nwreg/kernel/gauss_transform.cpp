#include "nwreg/kernel/gauss_transform.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "nwreg/kernel/kernels.h"
#include "nwreg/base/simd.h"
#include "nwreg/base/thread_pool.h"

namespace nwreg {
namespace {

constexpr std::size_t max_terms = 64;
constexpr double e_const = 2.718281828459045;

// The largest over a in [0, amax] of exp(-a^2 + a) a^p / p!: the truncation error a key, on a
// grid fine enough for this smooth function, widened by a margin.
double truncation(std::size_t p, double amax) {
  double worst = -std::numeric_limits<double>::infinity();  // log of the largest
  for (double a = 0.005; a <= amax + 0.005; a += 0.005) {
    const double lg = -a * a + a + static_cast<double>(p) * std::log(a) - std::lgamma(static_cast<double>(p) + 1);
    worst = std::max(worst, lg);
  }
  return 1.5 * std::exp(worst);
}

// The boxes [lo, hi)'s terms at q (see at): compiled for each instruction set, so that the
// fused multiply-adds are instructions (the baseline's are exact too, and slower).
NWREG_CLONES GaussTransform::Sums box_sums(const double* centre, const double* coef, std::size_t p, std::size_t lo,
                                           std::size_t hi, double q, double inv, bool gradient) {
  GaussTransform::Sums s;
  for (std::size_t B = lo; B < hi; ++B) {
    const double a = (q - centre[B]) * inv, z = 2 * a, ea = std::exp(-a * a);
    const double* c = coef + B * p * 6;
    // Six polynomials in z by Horner's rule, side by side: sum_k z^k m_(k+j) / k!.
    double r[6] = {};
    for (std::size_t k = p; k-- > 0;)
      for (int j = 0; j < 6; ++j) r[j] = std::fma(r[j], z, c[k * 6 + j]);
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

// A box's moments over keys [lo, hi): m[k] = sum b^k exp(-b^2) and m[P + k] = sum b^k
// exp(-b^2) (y - y0) for k < P, b = (x - c) inv; eight keys at a time, each lane summed apart
// and the lanes added in order.
NWREG_CLONES void box_moments(const double* x, const double* y, std::size_t lo, std::size_t hi, double c, double inv,
                              double y0, std::size_t P, double* m) {
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
      pw[l] = in ? kernel::exp2_inline(-b[l] * b[l] * kernels::log2e) : 0.0;
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

}  // namespace

GaussTransform::GaussTransform(const double* x, const double* y, std::size_t n, double h, double tolerance, double y0,
                               std::size_t queries, ThreadPool* pool)
    : y0_(y0) {
  if (n == 0 || !(tolerance > 0)) return;
  width_ = std::sqrt(2.0) * h;
  inv_ = 1 / width_;
  if (!std::isfinite(width_) || !std::isfinite(inv_) || !(width_ > 0)) return;
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
  // Left out: keys beyond R of the query (in s), each below exp(-R^2) = tolerance / (2e n).
  const double bound = tolerance / (2 * e_const * static_cast<double>(n));
  bound_ = 2 * bound;  // truncated, or left out
  const double R = std::sqrt(std::log(1 / bound));
  reach_ = (R + 0.5) * width_;
  for (p_ = 1; p_ <= max_terms && truncation(p_, R + 0.5) > bound; ++p_) {
  }
  if (p_ > max_terms) return;
  centre_.resize(boxes);
  coef_.assign(boxes * p_ * 6, 0.0);
  std::vector<double> inv_fact(p_ + 2, 1.0);
  for (std::size_t k = 1; k < p_ + 2; ++k) inv_fact[k] = inv_fact[k - 1] / static_cast<double>(k);
  // The moments over segments of at most `seg` keys of a box, in parallel (a few wide boxes
  // hold every key when h is large), then each box's segments added in order: the same sums
  // whatever the threads.
  constexpr std::size_t seg = 4096;
  const std::size_t P = p_ + 2;
  std::vector<std::size_t> first_seg;  // each box's first segment
  std::vector<std::pair<std::size_t, std::size_t>> segs;
  for (std::size_t B = 0; B < boxes; ++B) {
    centre_[B] = x[start[B]] + 0.5 * width_;
    first_seg.push_back(segs.size());
    for (std::size_t i = start[B]; i < start[B + 1]; i += seg) segs.emplace_back(i, std::min(i + seg, start[B + 1]));
  }
  first_seg.push_back(segs.size());
  std::vector<double> part(segs.size() * 2 * P);
  std::vector<std::size_t> seg_box(segs.size());
  for (std::size_t B = 0; B < boxes; ++B)
    for (std::size_t g = first_seg[B]; g < first_seg[B + 1]; ++g) seg_box[g] = B;
  parallel_for(pool, segs.size(), 4, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t g = lo; g < hi; ++g)
      box_moments(x, y, segs[g].first, segs[g].second, centre_[seg_box[g]], inv_, y0, P, &part[g * 2 * P]);
  });
  std::vector<double> m(2 * P);
  for (std::size_t B = 0; B < boxes; ++B) {
    std::fill(m.begin(), m.end(), 0.0);
    for (std::size_t g = first_seg[B]; g < first_seg[B + 1]; ++g)
      for (std::size_t k = 0; k < 2 * P; ++k) m[k] += part[g * 2 * P + k];
    double* out = &coef_[B * p_ * 6];
    for (std::size_t k = 0; k < p_; ++k)
      for (std::size_t j = 0; j < 3; ++j) {
        out[k * 6 + j] = m[k + j] * inv_fact[k];
        out[k * 6 + 3 + j] = m[P + k + j] * inv_fact[k];
      }
  }
  usable_ = true;
}

void GaussTransform::reach(double q, std::size_t& lo, std::size_t& hi) const {
  lo = static_cast<std::size_t>(std::lower_bound(centre_.begin(), centre_.end(), q - reach_) - centre_.begin());
  hi = static_cast<std::size_t>(std::upper_bound(centre_.begin(), centre_.end(), q + reach_) - centre_.begin());
}

GaussTransform::Sums GaussTransform::at(double q, bool gradient) const {
  std::size_t lo, hi;
  reach(q, lo, hi);
  return box_sums(centre_.data(), coef_.data(), p_, lo, hi, q, inv_, gradient);
}

}  // namespace nwreg
