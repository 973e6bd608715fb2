// The rows of a pass through the plan its chooser made (backends.h): the one place where a row
// tries the plan's backends in order, the fused line, then sums by moments, before it is
// gathered key by key (gather.cpp) and reduced.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "nwreg/engine/engine.h"
#include "nwreg/engine/small_system.h"

namespace nwreg {

Row Engine::row(const Plan& plan, const double* q, std::size_t exclude, Work& w, Span& s, double* grad, double* c) const {
  if (plan.fused) {
    // NW summed whole: c = (1 / s0), key b at distance 0 weighs 1, and sum_i e_i dlog_i =
    // -2 ln 2 t (dlog_i = d log e_i / d log h = -2 ln 2 u_i, u_i = log2 e_i).
    const Row r = plan.fused->row(plan.fused_pass, q[0], exclude, grad != nullptr);
    s = Span{};
    s.moments = true;
    s.s0 = r.s0;
    if (grad) grad[0] = r.dfdtheta, w.t[0] = w.G[0] = -2 * ln2 * r.t;
    if (c) c[0] = 1 / r.s0;
    return r;
  }
  if (!moment_row(plan, q, exclude, w, s, grad != nullptr)) s = gather(q, exclude, w, grad != nullptr);
  return reduce(q, s, w, grad, c);
}

bool Engine::moment_row(const Plan& plan, const double* q, std::size_t exclude, Work& w, Span& s, bool gradient) const {
  if (plan.boxes) return box_row(plan, q, exclude, w, s, gradient);
  if (!plan.line) return false;
  s = locate(q, exclude, w, 0);
  if (w.ranges.empty()) return false;
  auto [lo, hi] = w.ranges[0];
  if (plan.kept) std::tie(lo, hi) = plan.kept->support(q[0], s.inv_h[0], lo, hi);
  if (hi - lo < MomentLine::min_window) return false;  // a narrow window: key by key is cheaper
  LineMoments m;
  // Out of reach (the key-by-key path says so, or falls back), or the line's bound fails.
  if (!plan.line->sums(q[0], s.inv_h[0], exclude, gradient, m) || !(m.M[0] > 0)) return false;
  w.ranges.assign(1, {lo, hi});
  // Moments of y about y_mid, as gather's sums of y - y_b need them.
  const std::size_t P = estimator_.degree();
  const double shift = ks_.y_mid - ks_.ys[s.b];
  s.s0 = m.M[0];
  s.s1 = m.My[0] + shift * m.M[0];
  s.moments = true;
  s.unit = m.unit;
  if (estimator_.local()) {
    const std::size_t p = P + 1;
    for (std::size_t c = 0; c < p; ++c) {
      for (std::size_t r = 0; r <= c; ++r) w.S[c * p + r] = m.M[c + r];
      w.tz[c] = m.My[c] + shift * m.M[c];
    }
  }
  if (gradient) {
    for (std::size_t c = 0; c <= 2 * P; ++c) w.G[c] = m.G[c];
    for (std::size_t c = 0; c <= P; ++c) w.Gy[c] = m.Gy[c] + shift * m.G[c];
    w.t[0] = w.G[0];  // NW's: t = sum e dlog, v = sum e (y - y_b) dlog
    w.v[0] = w.Gy[0];
  }
  moment_rows_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool Engine::box_row(const Plan& plan, const double* q, std::size_t exclude, Work& w, Span& s, bool gradient) const {
  // Every key's sums less key `exclude`'s own term (at distance 0 it weighs its sample weight
  // and its gradient weight is 0), measured from it: f = y_b + s1 / s0 with s1 = sum e (y - y_b),
  // and NW's gradient sums t and v (Work) likewise.
  double s0, s1;
  if (!plan.boxes->sums(q, s0, s1, gradient ? w.t.data() : nullptr, gradient ? w.v.data() : nullptr)) return false;
  std::size_t b = 0;
  if (exclude != no_key) {
    const double we = ks_.weight(exclude);
    s0 -= we;
    s1 -= we * (ks_.ys[exclude] - ks_.y_mid);
    b = exclude;
  }
  if (!(s0 > 0) || !plan.boxes->within(s0)) return false;
  w.ranges.clear();
  s = Span{};
  s.ranges = &w.ranges;
  s.inv_h = inv_h_.data();
  s.b = b;
  s.s0 = s0;
  s.s1 = s1 + (ks_.y_mid - ks_.ys[b]) * s0;
  if (gradient)
    for (std::size_t k = 0; k < ks_.d; ++k) w.v[k] += (ks_.y_mid - ks_.ys[b]) * w.t[k];
  s.moments = true;
  s.unit = 1;
  moment_rows_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Engine::add_rest(Span& s, Work& w, const Slot& at) const {
  // At distance 0, in the row's units, its values less y_b: a row by moments is measured from
  // the nearest other key (gathered with its rest, b is the key itself).
  const double rw = ks_.rest_w[at.slot] * s.unit;
  const double rdy = (ks_.rest_dy[at.slot] + ks_.rest_w[at.slot] * (ks_.ys[at.key] - ks_.ys[s.b])) * s.unit;
  s.s0 += rw;
  s.s1 += rdy;
  if (estimator_.local()) {  // z = (1, 0, ..., 0) at distance 0
    w.S[0] += rw;
    w.tz[0] += rdy;
  }
}

Row Engine::loo_row(const Plan& plan, const Slot& at, Work& w, Rest& cache, Span& s, double* grad, double* c) const {
  // (c: the row's weights are wanted, for its equivalent weights: gathered.)
  const double* q = ks_.key(at.key);
  if (!ks_.merged || ks_.rest_w[at.slot] == 0) {  // no other row at this key
    cache.key = no_key;
    if (!c) return row(plan, q, at.key, w, s, grad, c);
    s = gather(q, at.key, w, grad != nullptr);
    return reduce(q, s, w, grad, c);
  }
  // The key left out, then its rest; not where this key's rows were gathered (cache): a failed
  // try would rewrite w.ranges, which the cached span's ranges are.
  if (!c && cache.key != at.key && moment_row(plan, q, at.key, w, s, grad != nullptr)) {
    add_rest(s, w, at);
    return reduce(q, s, w, grad, c);
  }
  if (cache.key != at.key) {
    // One window for every row of the key: measured from the least rest among them (kept per
    // key: a key of m rows would cost m a row, m^2 a pass, where each chunk of rows misses the cache).
    cache.span = gather(q, at.key, w, grad != nullptr, ks_.least_rest[at.key]);
    cache.S = w.S;
    cache.tz = w.tz;
    cache.key = at.key;
  }
  s = cache.span;
  std::copy(cache.S.begin(), cache.S.end(), w.S.begin());
  std::copy(cache.tz.begin(), cache.tz.end(), w.tz.begin());
  add_rest(s, w, at);
  return reduce(q, s, w, grad, c);
}

bool Engine::detail_row(const Plan& plan, const double* q, const std::vector<double>& ve, Work& w, Detail out) const {
  const bool squares = out.sum_w2 || out.kernel_w2;
  const bool detail = squares || out.smooth;
  double f, w2 = 0;
  // The fused line is NW's: its weights are the kernel's.
  if (plan.fused && (detail ? plan.fused->detail(plan.fused_pass, q[0], ve.data(), f, squares ? &w2 : nullptr, out.smooth)
                            : (f = plan.fused->row(plan.fused_pass, q[0], no_key, false).f, true))) {
    *out.f = f * ks_.y_scale;
    for (double* v : {out.sum_w2, out.kernel_w2})
      if (v) *v = w2;
    return true;
  }
  Span s;
  std::vector<double> c(estimator_.p());
  // By moments, with what standard errors need from the same plan; else gathered.
  if (!(squares && !plan.squares) && !(out.smooth && !plan.values) && moment_row(plan, q, no_key, w, s, false)) {
    const Row r = reduce(q, s, w, nullptr, detail ? c.data() : nullptr);
    LineMoments sq, sv;
    if ((!squares || plan.squares->sums(q[0], s.inv_h[0], no_key, false, sq)) &&
        (!out.smooth || (plan.values->sums(q[0], s.inv_h[0], no_key, false, sv) && sv.M[0] > 0))) {
      *out.f = r.f * ks_.y_scale;
      if (out.sum_w2) *out.sum_w2 = squared_weights(c.data(), sq);
      if (out.kernel_w2) *out.kernel_w2 = sq.M[0] / (s.s0 * s.s0);
      if (out.smooth) *out.smooth = sv.My[0] / sv.M[0];
      if (r.dropped) dropped_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
  s = gather(q, no_key, w);
  const Row r = reduce(q, s, w, nullptr, detail ? c.data() : nullptr);
  if (r.reached && r.dropped && !s.fallback) dropped_.fetch_add(1, std::memory_order_relaxed);
  if (!r.reached) {
    if (options_.out_of_reach != OutOfReach::empty) return false;
    for (double* v : {out.f, out.sum_w2, out.smooth, out.kernel_w2})
      if (v) *v = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  *out.f = r.f * ks_.y_scale;
  if (out.smooth)  // NW weights e_i / s0
    *out.smooth = s.sum([&](std::size_t lo, std::size_t hi) { return kernel::dot(lo, hi, w.e, {ve.data()}); }) / s.s0;
  if (!squares) return true;
  auto sum_w2 = [&] { return s.sum([&](std::size_t lo, std::size_t hi) { return sum_squares(lo, hi, w.e); }); };
  // NW's weights are e_i / s0 (c = (1/s0, 0..0)): no pass for the equivalent weights.
  const double kernel_w2 = sum_w2() / (s.s0 * s.s0);
  if (out.kernel_w2) *out.kernel_w2 = kernel_w2;
  if (!out.sum_w2) return true;
  if (estimator_.local() && !s.fallback) {
    equivalent(q, s, c.data(), w);
    *out.sum_w2 = sum_w2();
  } else {
    *out.sum_w2 = kernel_w2;
  }
  return true;
}

bool Engine::slope_by_moments(const Plan& plan, const double* q, Work& w, double* slope, double* l2) const {
  // beta_1 / h, and sum_i l_i^2 from the squared weights' moments, c_1 = S^-1 e_2.
  Span s;
  if ((l2 && !plan.squares) || !moment_row(plan, q, no_key, w, s, false)) return false;
  const std::size_t p = estimator_.p();
  const SmallSystem sys = SmallSystem::factored(p, w.S.data());
  std::vector<double> beta(p), c1(p), unit(p, 0.0);
  unit[1] = 1;
  sys.solve(w.tz.data(), beta.data());
  sys.solve(unit.data(), c1.data());
  LineMoments sq;
  if (l2 && !plan.squares->sums(q[0], s.inv_h[0], no_key, false, sq)) return false;
  const double zs = s.inv_h[0];
  slope[0] = beta[1] * zs * ks_.y_scale;
  if (l2) l2[0] = std::sqrt(std::max(0.0, squared_weights(c1.data(), sq))) * zs;
  return true;
}

Row Engine::weights_row(const Plan& plan, const double* q, Work& w, Span& s, double* c) const {
  if (plan.fused) {
    w.ready();
    std::size_t lo, hi;
    plan.fused->weights(q[0], w.e, lo, hi);
    w.ranges.assign(1, {lo, hi});
    s = Span{};
    s.ranges = &w.ranges;
    return Row{};
  }
  s = gather(q, no_key, w);
  const Row r = reduce(q, s, w, nullptr, c);
  if (r.reached) equivalent(q, s, c, w);
  return r;
}

Row Engine::weights_row(const Slot& at, Work& w, Span& s, double* c) const {
  Rest uncached;
  const Row r = loo_row(Plan{}, at, w, uncached, s, nullptr, c);
  if (r.reached) equivalent(ks_.key(at.key), s, c, w);
  return r;
}

double Engine::squared_weights(const double* c, const LineMoments& sq) const {
  const std::size_t P = estimator_.degree();
  double v = 0;
  for (std::size_t a = 0; a <= P; ++a)
    for (std::size_t b = 0; b <= P; ++b) v += c[a] * c[b] * sq.M[a + b];
  return v;
}

}  // namespace nwreg
