// The fast Gauss transform's target-side series (Taylor coefficients about quarter-box cells
// from the boxes' Hermite expansions) and the keys' binned power sums (gauss_transform.h).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <tuple>
#include <vector>

#include "nwreg/base/simd.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/kernel/gauss_series.h"
#include "nwreg/kernel/gauss_transform.h"

namespace nwreg {
namespace gauss {

namespace {

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

// S[j] = sum_n h[n + j] alpha_n and Sy[j] the same with the box's y - y0 sums (alpha + p), for
// j < count: the sums every function of a box's series is made of (gauss_transform.h).
NWREG_INLINE inline void hermite_sums(const double* h, const double* alpha, std::size_t p, std::size_t count, double* S,
                                      double* Sy) {
  for (std::size_t j = 0; j < count; ++j) {
    double a = 0, b = 0;
    for (std::size_t n = 0; n < p; ++n) {
      a = std::fma(h[n + j], alpha[n], a);
      b = std::fma(h[n + j], alpha[p + n], b);
    }
    S[j] = a;
    Sy[j] = b;
  }
}

// Function f's combination sum_t c_t S[r + k_t] (Sy for a function with y).
NWREG_INLINE inline double combined(const GaussTransform::Fn& f, const double* S, const double* Sy, std::size_t r) {
  const double* src = f.y ? Sy : S;
  double v = 0;
  for (std::size_t t = 0; t < f.count; ++t) v += f.c[t] * src[r + f.k[t]];
  return v;
}

// One box's series at a query, h[k] = h_k(t - c) for k < p + kmax: out[f] += each function's
// sum_t c_t sum_n h_(n + k_t) alpha_n, alpha the box's a_n / n! (then those with y - y0).
// Cloned, as every caller of std::fma here: compiled for the baseline alone, each fma was a
// call into libm (a third of a one-column learn at 1e6 rows whose windows took this path).
NWREG_CLONES void box_at(const double* h, const double* alpha, std::size_t p, std::size_t kmax,
                         const std::vector<GaussTransform::Fn>& fns, double* out) {
  double S[GaussTransform::max_target_order], Sy[GaussTransform::max_target_order];
  hermite_sums(h, alpha, p, kmax + 1, S, Sy);
  for (std::size_t f = 0; f < fns.size(); ++f) out[f] += combined(fns[f], S, Sy, 0);
}

// A cell's Taylor coefficients (gauss_transform.h) from one box, h[k] = h_k(c' - c) for
// k < 2 p + kmax: for r < p, out[r * nf + f] += (-1)^r / r! sum_t c_t S[r + k_t].
NWREG_CLONES void cell_from_box(const double* h, const double* alpha, std::size_t p, std::size_t kmax,
                                const GaussTransform::Fn* fns, std::size_t nf, const double* sign_fact, double* out) {
  double S[max_terms + GaussTransform::max_target_order], Sy[max_terms + GaussTransform::max_target_order];
  hermite_sums(h, alpha, p, p + kmax, S, Sy);
  for (std::size_t r = 0; r < p; ++r)
    for (std::size_t f = 0; f < nf; ++f) out[r * nf + f] += sign_fact[r] * combined(fns[f], S, Sy, r);
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

}  // namespace gauss

using namespace gauss;

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
    box_moments(x, y, nullptr, lo, hi, centre[f], 1 / width, y0, terms, false, out);
  });
}

std::vector<GaussTransform::Fn> GaussTransform::functions(std::size_t order0, std::size_t order1) {
  if (order0 == 3 && order1 == 3) {  // NW's plain sums: E, E D, and both with y - y0
    const std::vector<Fn> all = all_functions(3, 3);
    return {all[0], all[2], all[3], all[5]};
  }
  return all_functions(order0, order1);
}

namespace {

// target_terms by its bound and the functions' orders (which name the functions).
std::size_t kept_target_terms(double bound, std::size_t order0, std::size_t order1,
                              const std::vector<GaussTransform::Fn>& fns) {
  static gauss::Memo<std::tuple<double, std::size_t, std::size_t>, std::size_t> kept;
  return kept.get({bound, order0, order1}, [&] { return gauss::target_terms(bound, fns); });
}

}  // namespace

std::size_t GaussTransform::target_terms(std::size_t n, double tolerance) {
  return kept_target_terms(tolerance / (2 * e_const * static_cast<double>(n)), 3, 3, functions(3, 3));
}

void GaussTransform::plan_targets(double bound) {
  fns_ = functions(order0_, order1_);
  for (auto& row : fn_) std::fill(std::begin(row), std::end(row), fns_.size());
  for (std::size_t f = 0; f < fns_.size(); ++f) {
    const std::size_t m = fns_[f].k[0];  // its first term's index is its power
    fn_[fns_[f].y][m] = f;
    kmax_ = std::max(kmax_, m);
  }
  pc_ = kept_target_terms(bound, order0_, order1_, fns_);
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
    box_at(h, &alpha_[b * 2 * p], p, kmax_, fns_, out);
  }
}

}  // namespace nwreg
