#include "nwreg/engine/estimator.h"

#include <algorithm>
#include <cmath>

#include "nwreg/engine/small_system.h"

namespace nwreg {

Estimator::Estimator(Method method, std::size_t degree, std::size_t d, LossFunction loss, double min_spread)
    : degree_(method_degree(method, degree)),
      design_(degree_ > 1 ? std::make_unique<kernel::Design>(kernel::make_design(d, degree_)) : nullptr),
      p_(design_ ? design_->p : d + 1),
      loss_(loss),
      min_spread_(degree_ == 1 && d == 1 ? min_spread : 0) {}

bool Estimator::too_narrow(const Work& w, double inv_h) const {
  // S = [sum e, sum e z; sum e z, sum e z^2] over z = (x - q) / h: the weighted variance of x is
  // (S_11 / S_00 - (S_10 / S_00)^2) h^2.
  if (!(min_spread_ > 0)) return false;
  const double mean = w.S[2] / w.S[0], var = std::max(0.0, w.S[3] / w.S[0] - mean * mean);
  return std::sqrt(var) / inv_h <= min_spread_;
}

void Estimator::prepare(kernel::Targets& sums, Work& w, bool gradient) const {
  if (local()) {
    std::fill(w.S.begin(), w.S.end(), 0.0);
    std::fill(w.tz.begin(), w.tz.end(), 0.0);
    sums.S = w.S.data();
    sums.tz = w.tz.data();
    sums.z = w.z.data();
  } else if (gradient) {
    std::fill(w.t.begin(), w.t.end(), 0.0);
    std::fill(w.v.begin(), w.v.end(), 0.0);
    sums.t = w.t.data();
    sums.v = w.v.data();
  }
}

Row Estimator::reduce(Kernel kernel, const kernel::Keys& keys, const double* ys, const double* q, const double* xb,
                      const Span& s, Work& w, double* grad, double* c) const {
  const std::size_t d = keys.d;
  const double* e = w.e;
  const double yb = ys[s.b];
  Row row;
  if (s.s0 == 0) {  // out of reach (OutOfReach::error)
    row.reached = false;
    return row;
  }
  if (!local() || s.fallback) {
    // f = y_b + s1 / s0; df/dlog h_k = sum_i a_i (y_i - f) dlog_ik = (v_k - (f - y_b) t_k) / s0.
    const double fc = s.s1 / s.s0;
    row.f = yb + fc;
    if (c) {  // NW as a local fit with no slopes
      std::fill(c, c + p_, 0.0);
      c[0] = 1 / s.s0;
    }
    if (grad)
      for (std::size_t k = 0; k < d; ++k) grad[k] = s.fallback ? 0.0 : (w.v[k] - fc * w.t[k]) / s.s0;
    return row;
  }
  // Local linear: minimise sum_i e_i (y_i - yb - beta^T z_i)^2, z_i = (1, (x_i - q) / h), from
  // the moments gather summed.
  const std::size_t p = p_;
  const SmallSystem sys = SmallSystem::factored(p, w.S.data());
  std::vector<double> beta(p), cc(p), e1(p, 0.0);
  e1[0] = 1;
  // Local linear where the moments about q cancel (a pivot below 1e-4 of its diagonal keeps 4
  // fewer digits; below 1e-10 it was dropped): solved again about the weights' mean.
  bool full = sys.full_rank();
  if (design_ || sys.worst_pivot() >= 1e-4 || s.moments ||
      !centred_solve(keys, ys, q, s, w, yb, beta.data(), cc.data(), full)) {
    sys.solve(e1.data(), cc.data());
    sys.solve(w.tz.data(), beta.data());
  }
  if (too_narrow(w, s.inv_h[0])) {  // lowess's rule: the weighted mean, no slope
    std::fill(beta.begin(), beta.end(), 0.0);
    std::fill(cc.begin(), cc.end(), 0.0);
    beta[0] = w.tz[0] / w.S[0];
    cc[0] = 1 / w.S[0];
    full = true;
  }
  row.dropped = !full;
  row.f = yb + beta[0];
  if (c) std::copy(cc.begin(), cc.end(), c);
  if (grad && s.moments) {
    // One column: sum_i e_i dlog_i z_i^a r_i = Gy_a - sum_r beta_r G_(a+r), the moments' form.
    double g = 0;
    for (std::size_t a = 0; a < p; ++a) {
      double v = w.Gy[a];
      for (std::size_t r = 0; r < p; ++r) v -= beta[r] * w.G[a + r];
      g += cc[a] * v;
    }
    grad[0] = g;
  } else if (grad) {
    // df/dlog h_k = c^T sum_i (de_i/dlog h_k) z_i r_i, r_i the local fit's residual.
    s.each([&](std::size_t lo, std::size_t hi) {
      kernel::linear(keys, lo, hi, q, s.inv_h, beta.data(), w.a);
      for (std::size_t i = lo; i < hi; ++i) w.a[i] = (ys[i] - yb) - w.a[i];
      kernel::linear(keys, lo, hi, q, s.inv_h, cc.data(), w.b);
    });
    for (std::size_t k = 0; k < d; ++k)
      grad[k] = s.sum([&](std::size_t lo, std::size_t hi) {
        return kernel::dlog_dot(kernel, keys, k, lo, hi, q, xb, s.inv_h, e, {w.a}, {w.b});
      });
  }
  return row;
}

bool Estimator::centred_solve(const kernel::Keys& keys, const double* ys, const double* q, const Span& s, Work& w,
                              double yb, double* beta, double* c, bool& full) const {
  // The moments about q cancel where the weight sits on keys to one side of q (a query past its
  // nearest keys at a narrow h: women's first row left out at h = 0.255 kept 4e-11 of the slope's
  // pivot and fell to NW). About the weights' own mean of each design column they do not: z' =
  // z - zbar, S' = sum e z' z'^T (block diagonal: S'_0c = 0), t' = sum e z' (y - yb). Then
  // f = yb + u^T beta', u = (1, -zbar), and in z's basis beta_0 = beta'_0 - zbar^T beta'_1.., the
  // equivalent weights' c_0 = c'_0 - zbar^T c'_1.. with c' = S'^-1 u. Key by key (the gathered
  // weights): only where the moments about q lost a direction.
  const std::size_t p = p_;
  std::vector<std::vector<double>> z(p);  // each design column over the window, in span order
  std::vector<double> unit(p, 0.0), e, dy;
  s.each([&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) e.push_back(w.e[i]), dy.push_back(ys[i] - yb);
  });
  double total = 0;
  for (double v : e) total += v;
  // A leave-one-out row of a merged key adds the key's other rows to S_00 alone (their weight at
  // z = 0, not in w.e): those sums stay as they are.
  if (!(total > 0) || std::abs(total - w.S[0]) > 1e-12 * w.S[0]) return false;
  for (std::size_t col = 1; col < p; ++col) {
    if (!(w.S[col * p + col] > 0)) {  // a column not in the fit (categorical): none here either
      z[col].assign(e.size(), 0.0);
      continue;
    }
    std::fill(unit.begin(), unit.end(), 0.0);
    unit[col] = 1;
    s.each([&](std::size_t lo, std::size_t hi) {
      kernel::linear(keys, lo, hi, q, s.inv_h, unit.data(), w.a);
      z[col].insert(z[col].end(), w.a + lo, w.a + hi);
    });
  }
  std::vector<double> zbar(p, 0.0);
  for (std::size_t col = 1; col < p; ++col) {
    // Keys of weight > 0 all at one x along this column: the direction is degenerate (their
    // mean would leave only rounding); else its spread is real however small the far keys'
    // weights, down to their underflow.
    bool spread = false;
    double first = 0;
    for (std::size_t i = 0, seen = 0; i < e.size(); ++i)
      if (e[i] > 0) {
        if (seen++ == 0) first = z[col][i];
        else spread = spread || z[col][i] != first;
      }
    if (!spread) {
      std::fill(z[col].begin(), z[col].end(), 0.0);
      continue;
    }
    for (std::size_t i = 0; i < e.size(); ++i) zbar[col] += e[i] * z[col][i];
    zbar[col] /= total;
    for (double& v : z[col]) v -= zbar[col];
  }
  SmallSystem sys(p);
  sys.reset();
  std::vector<double> t(p, 0.0), u(p), bp(p), cp(p);
  sys.s(0, 0) = total;
  for (std::size_t i = 0; i < e.size(); ++i) t[0] += e[i] * dy[i];
  for (std::size_t a = 1; a < p; ++a) {
    for (std::size_t b = 1; b <= a; ++b) {
      double v = 0;
      for (std::size_t i = 0; i < e.size(); ++i) v += e[i] * z[a][i] * z[b][i];
      sys.s(a, b) = sys.s(b, a) = v;
    }
    for (std::size_t i = 0; i < e.size(); ++i) t[a] += e[i] * z[a][i] * dy[i];
  }
  sys.factor();
  full = sys.full_rank();
  u[0] = 1;
  for (std::size_t a = 1; a < p; ++a) u[a] = -zbar[a];
  sys.solve(t.data(), bp.data());
  sys.solve(u.data(), cp.data());
  beta[0] = bp[0], c[0] = cp[0];
  for (std::size_t a = 1; a < p; ++a) {
    beta[a] = bp[a], c[a] = cp[a];
    beta[0] -= zbar[a] * bp[a];
    c[0] -= zbar[a] * cp[a];
  }
  return true;
}

std::optional<Estimator::OwnFit> Estimator::own_fit(const Span& s, const Work& w, double own, double others) const {
  if (!(others >= 0) || !(own > 0)) return std::nullopt;
  if (!local() || s.fallback) {
    const double s0 = others + own;
    return OwnFit{others / s0, -s.s1 / s0};
  }
  if (others == 0) return std::nullopt;
  // The weights are relative to key b's (own = 1 without sample weights), so where the row
  // nearly interpolates the others' sums lie near the smallest doubles (1e-306) and the
  // factor's products would underflow to 0 / 0. There the system and tz are scaled by 2^(2j),
  // S_o's intercept entry then near 1: exact (the factor scales by 2^j), so the same bits
  // wherever nothing underflowed; c scales by 2^(-2j), beta not at all.
  const int j = others < 1 ? -std::ilogb(others) / 2 : 0;
  const std::size_t p = p_;
  std::vector<double> lower(w.S.begin(), w.S.end()), tz(w.tz.begin(), w.tz.begin() + static_cast<std::ptrdiff_t>(p));
  lower[0] = others;
  for (double& v : lower) v = std::ldexp(v, 2 * j);
  for (double& v : tz) v = std::ldexp(v, 2 * j);
  const SmallSystem sys = SmallSystem::factored(p, lower.data());
  if (!sys.full_rank()) return std::nullopt;
  std::vector<double> e1(p, 0.0), c(p), beta(p);
  e1[0] = 1;
  sys.solve(e1.data(), c.data());
  sys.solve(tz.data(), beta.data());
  const double room = 1 / (1 + own * std::ldexp(c[0], 2 * j));
  if (!std::isfinite(room) || !std::isfinite(beta[0])) return std::nullopt;  // (the plain forms)
  return OwnFit{room, -room * beta[0]};
}

void Estimator::equivalent(const kernel::Keys& keys, const double* q, const Span& s, const double* c, Work& w) const {
  s.each([&](std::size_t lo, std::size_t hi) {
    kernel::linear(keys, lo, hi, q, s.inv_h, c, w.a);
    for (std::size_t i = lo; i < hi; ++i) w.e[i] = w.e[i] != 0 ? w.e[i] * w.a[i] : 0.0;
  });
}

}  // namespace nwreg
