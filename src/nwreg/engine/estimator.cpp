#include "nwreg/engine/estimator.h"

#include <algorithm>

#include "nwreg/engine/small_system.h"

namespace nwreg {

Estimator::Estimator(Method method, std::size_t degree, std::size_t d)
    : degree_(method_degree(method, degree)),
      design_(degree_ > 1 ? std::make_unique<kernel::Design>(kernel::make_design(d, degree_)) : nullptr),
      p_(design_ ? design_->p : d + 1) {}

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
  sys.solve(e1.data(), cc.data());
  sys.solve(w.tz.data(), beta.data());
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

std::optional<Estimator::OwnFit> Estimator::own_fit(const Span& s, const Work& w, double own, double others) const {
  if (!(others >= 0) || !(own > 0)) return std::nullopt;
  if (!local() || s.fallback) {
    const double s0 = others + own;
    return OwnFit{others / s0, -s.s1 / s0};
  }
  if (others == 0) return std::nullopt;
  const std::size_t p = p_;
  std::vector<double> lower(w.S.begin(), w.S.end());
  lower[0] = others;
  const SmallSystem sys = SmallSystem::factored(p, lower.data());
  if (!sys.full_rank()) return std::nullopt;
  std::vector<double> e1(p, 0.0), c(p), beta(p);
  e1[0] = 1;
  sys.solve(e1.data(), c.data());
  sys.solve(w.tz.data(), beta.data());
  const double room = 1 / (1 + own * c[0]);
  return OwnFit{room, -room * beta[0]};
}

void Estimator::equivalent(const kernel::Keys& keys, const double* q, const Span& s, const double* c, Work& w) const {
  s.each([&](std::size_t lo, std::size_t hi) {
    kernel::linear(keys, lo, hi, q, s.inv_h, c, w.a);
    for (std::size_t i = lo; i < hi; ++i) w.e[i] = w.e[i] != 0 ? w.e[i] * w.a[i] : 0.0;
  });
}

}  // namespace nwreg
