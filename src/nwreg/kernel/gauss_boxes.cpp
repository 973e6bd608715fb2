#include "nwreg/kernel/gauss_boxes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "nwreg/base/simd.h"
#include "nwreg/kernel/kernels.h"

namespace nwreg {

namespace {

// log of the largest per-key truncation bound exp(-max(0, x - rho)^2) (2 x rho)^p / p! over
// 0 <= x <= A (gauss_boxes.h): increasing up to rho, then at most at the root of its log's
// derivative, x = (rho + sqrt(rho^2 + 2p)) / 2.
double log_bound(std::size_t p, double rho, double A) {
  const double P = static_cast<double>(p);
  auto at = [&](double x) {
    const double out = std::max(0.0, x - rho);
    return x > 0 ? -out * out + P * std::log(2 * x * rho) - std::lgamma(P + 1) : -std::numeric_limits<double>::infinity();
  };
  double best = at(std::min(rho, A));
  if (A > rho) best = std::max(best, at(std::clamp((rho + std::sqrt(rho * rho + 2 * P)) / 2, rho, A)));
  return best;
}

double choose(double n, double k) {  // C(n, k)
  return std::exp(std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1));
}

constexpr std::size_t L = kernel::lanes;

// sum_i w_i exp(-|t - s_i|^2) over every key but `skip`, t = q in x's units, key by key.
NWREG_CLONES double probe_sum(const double* x, std::size_t n, std::size_t d, const double* w, const double* inv,
                              const double* q, std::size_t skip) {
  double acc[L] = {};
  for (std::size_t a = 0; a < n; a += L) {
    double r2[L] = {};
    const std::size_t m = std::min(L, n - a);
    for (std::size_t k = 0; k < d; ++k)
      for (std::size_t l = 0; l < m; ++l) {
        const double u = (x[k * n + a + l] - q[k]) * inv[k];
        r2[l] += u * u;
      }
    for (std::size_t l = 0; l < m; ++l)
      acc[l] += (a + l == skip ? 0.0 : w ? w[a + l] : 1.0) * kernel::exp2_inline(-r2[l] * kernels::log2e);
  }
  double s = 0;
  for (double v : acc) s += v;
  return s;
}

// One box's moments from its keys (indices idx[0, m)), L keys at a time in lanes: mono[r * L +
// l] is monomial r of key l times its weight exp(-|b|^2); acc holds each term's lane sums.
NWREG_CLONES void box_block_moments(const double* x, std::size_t n, std::size_t d, const double* w, const double* y,
                                    double y0, const double* inv, const double* centre, const std::size_t* idx,
                                    std::size_t m, const std::size_t* parent, const std::size_t* col, std::size_t terms,
                                    double* mono, double* acc0, double* acc1, double* M) {
  using V = double __attribute__((vector_size(sizeof(double) * L)));  // L lanes, added up in order below
  V* mv = reinterpret_cast<V*>(mono);  // (mono, acc0 and acc1: terms * L doubles, aligned by the caller)
  V* a0 = reinterpret_cast<V*>(acc0);
  V* a1 = reinterpret_cast<V*>(acc1);
  std::fill(acc0, acc0 + terms * L, 0.0);
  std::fill(acc1, acc1 + terms * L, 0.0);
  V b[16];  // d <= 16
  for (std::size_t a = 0; a < m; a += L) {
    V r2 = {}, dy = {}, wt = {};
    for (std::size_t l = 0; l < L; ++l) {
      const bool in = a + l < m;
      const std::size_t i = in ? idx[a + l] : idx[0];
      double s = 0;
      for (std::size_t k = 0; k < d; ++k) {
        const double u = in ? (x[k * n + i] - centre[k]) * inv[k] : 0.0;
        b[k][l] = u;
        s += u * u;
      }
      r2[l] = s;
      dy[l] = in ? y[i] - y0 : 0.0;
      wt[l] = in ? (w ? w[i] : 1.0) : 0.0;
    }
    V e;
    for (std::size_t l = 0; l < L; ++l) e[l] = kernel::exp2_inline(-r2[l] * kernels::log2e);
    mv[0] = wt * e;
    a0[0] += mv[0];
    a1[0] += mv[0] * dy;
    for (std::size_t r = 1; r < terms; ++r) {
      mv[r] = mv[parent[r]] * b[col[r]];
      a0[r] += mv[r];
      a1[r] += mv[r] * dy;
    }
  }
  for (std::size_t r = 0; r < terms; ++r) {
    double s0 = 0, s1 = 0;
    for (std::size_t l = 0; l < L; ++l) s0 += a0[r][l], s1 += a1[r][l];
    M[r] = s0;
    M[terms + r] = s1;
  }
}

// A box's series at a query: sum over runs of (the prefix's coefficients) times the run's dot
// product of the last column's coefficients with its moments (M, then My at `stride`; runs at
// `off`, padded with zeros to whole lanes), in lanes. P: each column's coefficients at the box.
NWREG_CLONES void box_runs(const double* const* P, std::size_t d, const double* M, std::size_t stride,
                           const std::size_t* off, const std::size_t* len, const std::size_t* alpha, std::size_t runs,
                           double& t0, double& t1) {
  using V = double __attribute__((vector_size(sizeof(double) * L)));  // L lanes, added up in order below
  const double* last = P[d - 1];
  V a0 = {}, a1 = {};
  for (std::size_t r = 0; r < runs; ++r) {
    double c = 1;
    for (std::size_t k = 0; k + 1 < d; ++k) c *= P[k][alpha[r * (d - 1) + k]];
    const V cv = V{} + c;
    const double* m0 = M + off[r];
    const double* m1 = M + stride + off[r];
    for (std::size_t j = 0; j < len[r]; j += L) {
      V lv, v0, v1;
      std::memcpy(&lv, last + j, sizeof(V));
      std::memcpy(&v0, m0 + j, sizeof(V));
      std::memcpy(&v1, m1 + j, sizeof(V));
      const V v = cv * lv;
      a0 += v * v0;
      a1 += v * v1;
    }
  }
  t0 = t1 = 0;
  for (std::size_t l = 0; l < L; ++l) t0 += a0[l], t1 += a1[l];
}

}  // namespace

GaussBoxes::GaussBoxes(const double* x, std::size_t n, std::size_t d, const double* w, const double* y, double y0,
                       const double* h, double tolerance, std::size_t rows, double direct, bool gradient)
    : d_(d), gradient_(gradient), tolerance_(tolerance) {
  if (n < 2 || d < 2 || d > 16 || !(tolerance > 0 && tolerance < 1)) return;
  double W = 0;
  for (std::size_t i = 0; i < n; ++i) W += w ? w[i] : 1.0;
  lo_.resize(d);
  hi_.resize(d);
  inv_.resize(d);
  std::vector<double> span(d);  // each column's range in units of sqrt(2) h
  for (std::size_t k = 0; k < d; ++k) {
    const auto [mn, mx] = std::minmax_element(x + k * n, x + (k + 1) * n);
    lo_[k] = *mn, hi_[k] = *mx;
    inv_[k] = 1 / (std::sqrt(2.0) * h[k]);
    span[k] = (hi_[k] - lo_[k]) * inv_[k];
    if (!std::isfinite(span[k])) return;
  }
  // The grid (m boxes along the widest column, the others in proportion) and order of least
  // cost for a target per-key error exp(log_target); its cost in key-by-key terms.
  const double widest = *std::max_element(span.begin(), span.end());
  if (!(widest > 0) || !(W > 0)) return;
  auto plan = [&](double log_target) {
    double best_cost = std::numeric_limits<double>::infinity();
    std::vector<std::size_t> grid(d);
    p_ = 0;
    for (std::size_t m = 1; m <= 16; ++m) {
      double rho2 = 0, A2 = 0, cells = 1;
      for (std::size_t k = 0; k < d; ++k) {
        grid[k] = std::max<std::size_t>(
            1, static_cast<std::size_t>(std::ceil(span[k] / widest * static_cast<double>(m) - 1e-9)));
        const double half = span[k] / (2 * static_cast<double>(grid[k]));
        rho2 += half * half;
        A2 += (span[k] - half) * (span[k] - half);
        cells *= static_cast<double>(grid[k]);
      }
      if (cells > 4096) break;
      // A key's terms add up to at most exp(-(|a| - |b|)^2) in magnitude against its weight
      // exp(-|a - b|^2): where a.b < 0 across a wide box they cancel, and the sums lose digits.
      // Boxes of half-diagonal rho <= 2 keep them within 1e-13 of long-double sums in the tests
      // (keys along a box's anti-diagonal, queries at its empty corners, included).
      if (rho2 > max_rho2) continue;
      const double rho = std::sqrt(rho2), A = std::sqrt(A2);
      // The values' bound at p; with the gradient also 2 span^2 times the largest at p - 2 to
      // p: a key's D_k = 2 (a_k - b_k)^2, and |a_k| + |b_k| is at most column k's span
      // (gauss_boxes.h).
      auto log_error = [&](std::size_t p) {
        double e = log_bound(p, rho, A);
        if (gradient)
          e = std::max({e, std::log(2.0) + 2 * std::log(widest) +
                               std::max({log_bound(p - 2, rho, A), log_bound(p - 1, rho, A), e})});
        return e;
      };
      std::size_t p = gradient ? 3 : 1;
      while (p <= 96 && log_error(p) > log_target) ++p;
      if (p > 96) continue;
      const double terms = choose(static_cast<double>(p - 1 + d), static_cast<double>(d));
      if (terms > 20000) continue;
      // A row sums each run padded to whole lanes: the runs of prefix degree s, C(s + d - 2, d - 2)
      // of them, hold p - s terms each.
      double padded = 0;
      for (std::size_t s = 0; s < p; ++s)
        padded += choose(static_cast<double>(s + d - 2), static_cast<double>(d - 2)) *
                  static_cast<double>((p - s + L - 1) / L * L);
      // (With the gradient a row sums the runs 1 + d times, once with each column's
      // coefficients changed.)
      const double sums = gradient ? static_cast<double>(d + 1) : 1.0;
      const double cost = build_cost * terms * static_cast<double>(n) +
                          eval_cost * sums * padded * static_cast<double>(rows) * std::min(cells, static_cast<double>(n));
      if (cost < best_cost) {
        best_cost = cost;
        grid_ = grid;
        p_ = p;
        error_ = W * std::exp(log_error(p));
      }
    }
    return best_cost;
  };
  // Worth it where it costs less than half the key-by-key terms: first for the largest sum a
  // row could have (W), which no smaller one can beat.
  if (!(plan(std::log(tolerance) - std::log(4.0)) < 0.5 * direct)) {
    p_ = 0;
    return;
  }
  // The least sum a row is likely to have: at the corners of the keys' box (every row's is at
  // least exp(-D^2) (W - w_top), D the box's diagonal, but mostly far more) and at keys spread
  // over them. The series aims at a quarter of tolerance times it; each row checks its own
  // (within), and rows below it are gathered.
  double low = std::numeric_limits<double>::infinity();
  std::vector<double> at(d);
  if (d <= 6)
    for (std::size_t c = 0; c < (std::size_t{1} << d); ++c) {
      for (std::size_t k = 0; k < d; ++k) at[k] = (c >> k) & 1 ? hi_[k] : lo_[k];
      low = std::min(low, probe_sum(x, n, d, w, inv_.data(), at.data(), n));
    }
  for (std::size_t j = 0; j < 16; ++j) {
    const std::size_t i = (2 * j + 1) * n / 32;
    for (std::size_t k = 0; k < d; ++k) at[k] = x[k * n + i];
    low = std::min(low, probe_sum(x, n, d, w, inv_.data(), at.data(), i));
  }
  if (!(low > 0) || !(plan(std::log(tolerance) + std::log(low) - std::log(4.0) - std::log(W)) < 0.5 * direct)) {
    p_ = 0;
    return;
  }
  // The monomials of total degree < p, the last column's power innermost: each run of them
  // shares its powers of the other columns (its prefix) and holds the last column's from 0 up.
  // Each is its parent times one column: the one before it in its run, or a run's first the
  // first of the run whose prefix has one less of the prefix's last column that has any.
  parent_.clear();
  col_.clear();
  std::vector<std::size_t> alpha(d, 0);
  std::map<std::vector<std::size_t>, std::size_t> first;  // a prefix's first monomial
  auto runs = [&](auto& self, std::size_t k, std::size_t left) -> void {
    if (k + 1 == d) {
      const std::vector<std::size_t> prefix(alpha.begin(), alpha.end() - 1);
      const std::size_t at = parent_.size();
      first[prefix] = at;
      std::size_t c = d;  // the prefix's last column with a power
      for (std::size_t j = d - 1; j-- > 0;)
        if (prefix[j] > 0) {
          c = j;
          break;
        }
      if (c == d) {
        parent_.push_back(0), col_.push_back(0);  // (the constant: its own parent, unused)
      } else {
        std::vector<std::size_t> up = prefix;
        --up[c];
        parent_.push_back(first.at(up)), col_.push_back(c);
      }
      for (std::size_t j = 1; j < left; ++j) parent_.push_back(parent_.size() - 1), col_.push_back(d - 1);
      run_off_.push_back(at);
      run_len_.push_back(left);
      run_alpha_.insert(run_alpha_.end(), prefix.begin(), prefix.end());
      return;
    }
    for (std::size_t a = 0; a < left; ++a) {
      alpha[k] = a;
      self(self, k + 1, left - a);
    }
    alpha[k] = 0;
  };
  runs(runs, 0, p_);
  terms_ = parent_.size();
  // Each run stored from a multiple of L and padded with zeros to one: the dot products run in
  // whole lanes.
  pos_.resize(terms_);
  run_pos_.clear();
  stride_ = 0;
  for (std::size_t r = 0; r < run_off_.size(); ++r) {
    run_pos_.push_back(stride_);
    for (std::size_t j = 0; j < run_len_[r]; ++j) pos_[run_off_[r] + j] = stride_ + j;
    stride_ += (run_len_[r] + L - 1) / L * L;
  }
  inv_j_.assign(p_, 0.0);
  for (std::size_t j = 1; j < p_; ++j) inv_j_[j] = 1 / static_cast<double>(j);
  // The keys' boxes (cells of the grid that hold a key) in the order of their first key, each
  // key's in the order given; the grid's centres and the boxes' moments.
  std::size_t cells = 1;
  for (std::size_t k = 0; k < d; ++k) cells *= grid_[k];
  std::vector<double> width(d);
  grid_offset_.assign(1, 0);
  for (std::size_t k = 0; k < d; ++k) {
    width[k] = (hi_[k] - lo_[k]) / static_cast<double>(grid_[k]);
    for (std::size_t i = 0; i < grid_[k]; ++i) grid_centre_.push_back(lo_[k] + (static_cast<double>(i) + 0.5) * width[k]);
    grid_offset_.push_back(grid_offset_.back() + grid_[k]);
  }
  std::vector<std::size_t> slot(cells, static_cast<std::size_t>(-1)), box_of(n), count;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t cell = 0;
    for (std::size_t k = d; k-- > 0;) {
      const double u = width[k] > 0 ? (x[k * n + i] - lo_[k]) / width[k] : 0.0;
      cell = cell * grid_[k] + std::min(grid_[k] - 1, static_cast<std::size_t>(std::max(0.0, u)));
    }
    if (slot[cell] == static_cast<std::size_t>(-1)) {
      slot[cell] = count.size();
      count.push_back(0);
      std::size_t c = cell;
      for (std::size_t k = 0; k < d; ++k) {
        cell_.push_back(c % grid_[k]);
        c /= grid_[k];
      }
    }
    box_of[i] = slot[cell];
    ++count[slot[cell]];
  }
  const std::size_t boxes = count.size();
  std::vector<std::size_t> start(boxes + 1, 0), idx(n);
  for (std::size_t j = 0; j < boxes; ++j) start[j + 1] = start[j] + count[j];
  for (std::size_t i = 0; i < n; ++i) idx[start[box_of[i]]++] = i;
  for (std::size_t j = boxes; j-- > 0;) start[j + 1] = start[j];
  start[0] = 0;
  moments_.assign(boxes * 2 * stride_, 0.0);
  struct alignas(64) Lane {
    double v[L];
  };
  std::vector<Lane> mono(terms_), acc0(terms_), acc1(terms_);
  std::vector<double> M(2 * terms_), centre(d);
  for (std::size_t j = 0; j < boxes; ++j) {
    for (std::size_t k = 0; k < d; ++k) centre[k] = grid_centre_[grid_offset_[k] + cell_[j * d + k]];
    box_block_moments(x, n, d, w, y, y0, inv_.data(), centre.data(), idx.data() + start[j],
                      start[j + 1] - start[j], parent_.data(), col_.data(), terms_, mono.data()->v,
                      acc0.data()->v, acc1.data()->v, M.data());
    double* to = moments_.data() + j * 2 * stride_;
    for (std::size_t r = 0; r < terms_; ++r) to[pos_[r]] = M[r], to[stride_ + pos_[r]] = M[terms_ + r];
  }
}

bool GaussBoxes::sums(const double* q, double& s0, double& s1, double* t, double* v) const {
  for (std::size_t k = 0; k < d_; ++k)
    if (!(q[k] >= lo_[k] && q[k] <= hi_[k])) return false;
  if ((t || v) && !(t && v && gradient_)) return false;  // (not made for the gradient: gathered)
  const bool gradient = t != nullptr;
  // Per column and grid position (boxes share them): (2 a)^j / j! for j < p, then zeros to a
  // whole lane, and exp(-a^2); for the gradient also a^2 c_j - 2 a c_(j-1) + c_(j-2), the
  // coefficients of (a - b)^2 exp(2 a b) (gauss_boxes.h).
  const std::size_t width = (p_ + L - 1) / L * L;
  thread_local std::vector<double> P, Q, E;
  P.assign(grid_offset_.back() * width, 0.0);
  if (gradient) Q.assign(grid_offset_.back() * width, 0.0);
  E.resize(grid_offset_.back());
  for (std::size_t k = 0; k < d_; ++k)
    for (std::size_t i = 0; i < grid_[k]; ++i) {
      const std::size_t g = grid_offset_[k] + i;
      const double a = (q[k] - grid_centre_[g]) * inv_[k];
      E[g] = std::exp(-a * a);
      double* Pg = P.data() + g * width;
      Pg[0] = 1;
      for (std::size_t j = 1; j < p_; ++j) Pg[j] = Pg[j - 1] * (2 * a) * inv_j_[j];
      if (!gradient) continue;
      double* Qg = Q.data() + g * width;
      for (std::size_t j = 0; j < p_; ++j)
        Qg[j] = a * a * Pg[j] - (j >= 1 ? 2 * a * Pg[j - 1] : 0.0) + (j >= 2 ? Pg[j - 2] : 0.0);
    }
  s0 = s1 = 0;
  if (gradient) std::fill(t, t + d_, 0.0), std::fill(v, v + d_, 0.0);
  const std::size_t boxes = cell_.size() / d_;
  const double* rows[16];
  for (std::size_t box = 0; box < boxes; ++box) {
    double e = 1;
    for (std::size_t k = 0; k < d_; ++k) {
      const std::size_t g = grid_offset_[k] + cell_[box * d_ + k];
      rows[k] = P.data() + g * width;
      e *= E[g];
    }
    const double* M = moments_.data() + box * 2 * stride_;
    double t0, t1;
    box_runs(rows, d_, M, stride_, run_pos_.data(), run_len_.data(), run_alpha_.data(), run_off_.size(), t0, t1);
    s0 += e * t0;
    s1 += e * t1;
    if (!gradient) continue;
    for (std::size_t k = 0; k < d_; ++k) {  // column k's coefficients those of (a_k - b_k)^2
      const double* keep = rows[k];
      rows[k] = Q.data() + (grid_offset_[k] + cell_[box * d_ + k]) * width;
      box_runs(rows, d_, M, stride_, run_pos_.data(), run_len_.data(), run_alpha_.data(), run_off_.size(), t0, t1);
      rows[k] = keep;
      // D_k = (x_k - q_k)^2 / h_k^2 = 2 (a_k - b_k)^2 in units of sqrt(2) h_k.
      t[k] += 2 * e * t0;
      v[k] += 2 * e * t1;
    }
  }
  return true;
}

}  // namespace nwreg
