// Sums by moments for the Gaussian (a fast Gauss transform of the weights times powers of z) and
// the Laplace kernel (a recursion over the sorted keys), engine/line_sums.h, against the
// key-by-key sums they replace (without Shortcut::line_moments): predictions, the leave-one-out
// error and its gradient, the in-sample fit (GCV, AICc) and its gradients, for NW and local
// polynomials of degree 1 to 3, with ties, sample weights, x at 1.7e9 (time stamps), y far from
// 0, queries far outside the keys and bandwidths from 1e-6 to 1e6 of the range; the gradients
// against finite differences; and the same bytes for any number of threads.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "helpers.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/attention.h"

using namespace nwreg;

namespace {

struct SumsCase {
  Dataset data;
  double range = 1;  // of y
  double x0 = 0;
};

// n keys on [x0, x0 + 10], y = y0 + sin x + noise; ties (x on a grid of 1/500) and sample weights
// (with zeros) as asked.
SumsCase make_case(std::size_t n, double x0, double y0, bool ties, bool weights, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 10);
  std::normal_distribution<double> noise(0, 0.3);
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = ties ? std::round(u(rng) * 500) / 500 : u(rng);
    x[i] = x0 + v;
    y[i] = y0 + std::sin(v) + noise(rng);
  }
  SumsCase c{testing::make_dataset(x, y), 1, x0};
  if (weights)
    for (std::size_t i = 0; i < n; ++i) c.data.weight.push_back(i % 13 == 0 ? 0.0 : 0.25 + static_cast<double>(i % 7) / 3);
  const auto [lo, hi] = std::minmax_element(y.begin(), y.end());
  c.range = *hi - *lo;
  return c;
}

EngineOptions options(Kernel kernel, std::size_t degree) {
  EngineOptions o;
  o.kernel = kernel;
  o.method = degree == 0 ? Method::nw : Method::local_polynomial;
  o.degree = degree;
  return o;
}

// Checks a's predictions at q against b's within 1e-10 of the range of y; returns the largest
// difference over that range.
double same_predictions(const Attention& a, const Attention& b, const std::vector<double>& q, double range) {
  std::vector<double> fa(q.size()), fb(q.size());
  a.predict(q.data(), q.size(), fa.data());
  b.predict(q.data(), q.size(), fb.data());
  double worst = 0;
  for (std::size_t j = 0; j < q.size(); ++j) {
    CAPTURE(q[j]);
    CHECK(std::abs(fa[j] - fb[j]) <= 1e-10 * range);
    worst = std::max(worst, std::abs(fa[j] - fb[j]) / range);
  }
  return worst;
}

// Under the sanitizers (testing::sanitized): a's passes without the key-by-key reference, each
// figure finite.
void passes_alone(const Attention& a, const std::vector<double>& q, bool gradient) {
  std::vector<double> f(q.size());
  a.predict(q.data(), q.size(), f.data());
  for (std::size_t j = 0; j < q.size(); ++j) {
    CAPTURE(q[j]);
    CHECK(std::isfinite(f[j]));
  }
  const LooResult l = a.loo(true);
  CHECK(std::isfinite(l.mse));
  CHECK(std::isfinite(l.gradient[0]));
  const InSample i = a.insample(gradient);
  CHECK(std::isfinite(i.mse));
  CHECK(std::isfinite(i.trace));
}

bool close(double a, double b, double rel, double abs = 0) {
  return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)) + abs;
}

// a's predictions at q, leave-one-out error and gradient and in-sample fit (with its gradients
// if asked) against b's, which sums key by key; returns the largest difference in prediction
// over the range of y.
double same_passes(const Attention& a, const Attention& b, const std::vector<double>& q, double range, bool gradient) {
  const double worst = same_predictions(a, b, q, range);
  const LooResult la = a.loo(true), lb = b.loo(true);
  CHECK(close(la.mse, lb.mse, 1e-10));
  CHECK(close(la.gradient[0], lb.gradient[0], 1e-7, 1e-12 * lb.mse));
  const InSample ia = a.insample(gradient), ib = b.insample(gradient);
  CHECK(close(ia.mse, ib.mse, 1e-10));
  CHECK(close(ia.trace, ib.trace, 1e-10));
  if (gradient) {
    CHECK(close(ia.room, ib.room, 1e-10));
    CHECK(close(ia.d_mse[0], ib.d_mse[0], 1e-7, 1e-12 * ib.mse));
    CHECK(close(ia.d_trace[0], ib.d_trace[0], 1e-7, 1e-9));
  }
  CHECK(b.counters().moment_rows == 0);
  return worst;
}

}  // namespace

TEST_CASE("line sums: Gaussian and Laplace moments agree with the key-by-key sums") {
  std::size_t compared = 0, by_moments = 0;
  double worst = 0;
  int trial = 0;
  // (Under the sanitizers without the key-by-key reference, whose widest bandwidths cost n^2 at
  // 20 times the Release time: testing::sanitized.)
  const std::vector<double> ratios = {1e-6, 2e-3, 0.02, 0.1, 1e3, 1e6};
  for (const Kernel kernel : {Kernel::gaussian, Kernel::laplace})
    for (std::size_t degree = 0; degree <= 3; ++degree)
      for (const double hr : ratios) {
        ++trial;
        const bool ties = trial % 3 == 0, weights = trial % 2 == 1 || (kernel == Kernel::gaussian && degree == 0);
        const double x0 = trial % 4 == 0 ? 1.7e9 : 0, y0 = trial % 5 == 0 ? 1e6 : 0;
        const SumsCase c = make_case(4000, x0, y0, ties, weights, 1000 + trial);
        EngineOptions on = options(kernel, degree), off = on;
        off.shortcuts = off.shortcuts.without(Shortcut::line_moments);
        const std::vector<double> h = {10 * hr};
        const Attention a(c.data, h, on);
        CAPTURE(to_string(kernel));
        CAPTURE(degree);
        CAPTURE(hr);
        CAPTURE(x0);
        CAPTURE(ties);
        CAPTURE(weights);
        // On keys and between them; for NW also beyond the edges and far away. (A local
        // polynomial extrapolated many bandwidths out solves a system as ill-conditioned as
        // (distance / spread)^2P: any two ways of summing its moments differ there.)
        std::vector<double> q;
        for (int j = 0; j < 120; ++j) q.push_back(x0 + 10 * j / 119.0);
        for (double far : {-1e3, -30.0, -0.5, 10.5, 25.0, 1e4}) q.push_back(x0 + (degree == 0 ? far : 5.0));
        compared += q.size();
        if (testing::sanitized)
          passes_alone(a, q, true);
        else
          worst = std::max(worst, same_passes(a, Attention(c.data, h, off), q, c.range, true));
        if (a.counters().moment_rows > 0) ++by_moments;
      }
  MESSAGE("largest difference over the range of y: " << worst);
  CHECK(compared == 8 * ratios.size() * 126);
  // The others: windows too narrow (h of 1e-6 of the range), boxes of too few keys for the
  // transform to pay (Gaussian, 2e-3), or fewer than Attention::line_min_keys distinct keys.
  CHECK(by_moments >= 4 * ratios.size());
}

TEST_CASE("line sums: the gradients in log h match finite differences of the criteria") {
  for (const Kernel kernel : {Kernel::gaussian, Kernel::laplace})
    for (std::size_t degree : {0, 1, 2}) {
      const SumsCase c = make_case(5000, 1.7e9, 50, false, true, 77 + degree);
      const EngineOptions o = options(kernel, degree);
      const double h = 0.08, eps = 1e-4;
      const Attention a(c.data, {h}, o), up(c.data, {h * std::exp(eps)}, o), down(c.data, {h * std::exp(-eps)}, o);
      CAPTURE(to_string(kernel));
      CAPTURE(degree);
      const double fd = (up.loo(false).mse - down.loo(false).mse) / (2 * eps);
      CHECK(close(a.loo(true).gradient[0], fd, 1e-5));
      const InSample i = a.insample(true), iu = up.insample(false), id = down.insample(false);
      CHECK(close(i.d_mse[0], (iu.mse - id.mse) / (2 * eps), 1e-5));
      CHECK(close(i.d_trace[0], (iu.trace - id.trace) / (2 * eps), 1e-5));
    }
}

TEST_CASE("line sums: the same bytes for any number of threads") {
  ThreadPool two(2), four(4);
  for (const Kernel kernel : {Kernel::gaussian, Kernel::laplace, Kernel::tricube}) {
    const SumsCase c = make_case(20000, 0, 0, true, true, 5);
    EngineOptions one = options(kernel, 1), many = one, more = one;
    many.pool = &two;
    more.pool = &four;
    const Attention a(c.data, {0.3}, one), b(c.data, {0.3}, many), d(c.data, {0.3}, more);
    CAPTURE(to_string(kernel));
    const LooResult la = a.loo(true), lb = b.loo(true), ld = d.loo(true);
    CHECK(la.mse == lb.mse);
    CHECK(la.mse == ld.mse);
    CHECK(la.gradient == lb.gradient);
    CHECK(la.gradient == ld.gradient);
    std::vector<double> q(3000), fa(q.size()), fb(q.size());
    for (std::size_t j = 0; j < q.size(); ++j) q[j] = 10.0 * static_cast<double>(j) / q.size();
    a.predict(q.data(), q.size(), fa.data());
    d.predict(q.data(), q.size(), fb.data());
    CHECK(fa == fb);
    CHECK(a.counters().moment_rows > 0);
  }
}

TEST_CASE("line sums: standard errors' squared weights, smooths and slopes agree with the key-by-key sums") {
  int trial = 0;
  for (const Kernel kernel : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube, Kernel::uniform})
    for (std::size_t degree = 0; degree <= 2; ++degree) {
      ++trial;
      const bool ties = trial % 2 == 0, weights = trial % 3 != 0;
      const double x0 = trial % 4 == 1 ? 1.7e9 : 0;
      const SumsCase c = make_case(6000, x0, 0, ties, weights, 300 + trial);
      EngineOptions on = options(kernel, degree), off = on;
      off.shortcuts = off.shortcuts.without(Shortcut::line_moments);
      const Attention a(c.data, {0.4}, on), b(c.data, {0.4}, off);
      CAPTURE(to_string(kernel));
      CAPTURE(degree);
      CAPTURE(ties);
      CAPTURE(weights);
      std::vector<double> q(300), v(c.data.n);
      for (std::size_t j = 0; j < q.size(); ++j) q[j] = x0 + 0.5 + 9.0 * static_cast<double>(j) / q.size();
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.1 + std::fmod(static_cast<double>(i) * 0.37, 1.0);
      std::vector<double> fa(q.size()), fb(q.size()), wa(q.size()), wb(q.size()), sa(q.size()), sb(q.size());
      a.predict_detail(q.data(), q.size(), v, fa.data(), wa.data(), sa.data());
      b.predict_detail(q.data(), q.size(), v, fb.data(), wb.data(), sb.data());
      for (std::size_t j = 0; j < q.size(); ++j) {
        CAPTURE(q[j]);
        CHECK(std::abs(fa[j] - fb[j]) <= 1e-10 * c.range);
        CHECK(close(wa[j], wb[j], 1e-10));
        CHECK(close(sa[j], sb[j], 1e-10));
      }
      CHECK(a.counters().moment_rows > 0);
      if (degree == 0) continue;  // NW's slope is summed key by key
      std::vector<double> da(q.size()), db(q.size()), la(q.size()), lb(q.size());
      a.slopes(q.data(), q.size(), da.data(), la.data());
      b.slopes(q.data(), q.size(), db.data(), lb.data());
      for (std::size_t j = 0; j < q.size(); ++j) {
        CAPTURE(q[j]);
        CHECK(close(da[j], db[j], 1e-9, 1e-10 * c.range));
        CHECK(close(la[j], lb[j], 1e-10));
      }
    }
}

TEST_CASE("line sums: a merged key's rows gathered where moments fail keep their own window") {
  // 3000 distinct x and one x held by 2000 rows (a merged key whose rest outweighs its
  // neighbours: its rows' sums by moments fail, Gaussian's left-out key carrying most of the
  // weight, and are gathered); the rows after the first reuse the key's gathered window. (A try
  // by moments for those rows would rewrite the window the cached row points at: its margin's
  // weights are stale, here near the right ones, in general from another query or unwritten.)
  std::vector<double> x, y;
  for (int i = 0; i < 3000; ++i) x.push_back(i * 0.001), y.push_back(std::sin(i * 0.001) + 0.01 * (i % 7));
  for (int k = 0; k < 2000; ++k) x.push_back(1.5), y.push_back(0.3 * std::sin(k * 1.3));
  const Dataset d = testing::make_dataset(x, y);
  for (const Kernel kernel : {Kernel::gaussian, Kernel::laplace}) {
    EngineOptions on = options(kernel, 1), off = on;
    off.shortcuts = off.shortcuts.without(Shortcut::line_moments);
    const Attention a(d, {0.06}, on), b(d, {0.06}, off);
    CAPTURE(to_string(kernel));
    const LooResult la = a.loo(true), lb = b.loo(true);
    CHECK(a.counters().moment_rows > 0);
    CHECK(close(la.mse, lb.mse, 1e-10));
    CHECK(close(la.gradient[0], lb.gradient[0], 1e-8));
  }
}

TEST_CASE("line sums: the Gaussian at each row's own bandwidth (knn, span) agrees with the key-by-key sums") {
  std::size_t by_moments = 0;
  int trial = 0;
  // (Under the sanitizers without the key-by-key reference, 26 s a trial there; the moments
  // need windows of 5,000 keys: testing::sanitized.)
  for (const NeighbourBandwidth policy :
       {NeighbourBandwidth{Neighbours::knn, 700}, NeighbourBandwidth{Neighbours::knn, 1500},
        NeighbourBandwidth{Neighbours::span, 0, 0.3}})
    for (std::size_t degree = 0; degree <= 3; ++degree) {
      ++trial;
      const double x0 = trial % 2 ? 0 : 1.7e9;
      const SumsCase c = make_case(8000, x0, trial % 3 ? 0 : 1e6, trial % 4 == 0, trial % 3 != 1, 500 + trial);
      EngineOptions on = options(Kernel::gaussian, degree), off = on;
      on.neighbour_policy = off.neighbour_policy = policy;
      off.shortcuts = off.shortcuts.without(Shortcut::line_moments);
      const Attention a(c.data, {1.0}, on);
      CAPTURE(to_string(policy));
      CAPTURE(degree);
      CAPTURE(x0);
      std::vector<double> q;
      for (int j = 0; j < 400; ++j) q.push_back(x0 + 10 * j / 399.0);
      if (degree == 0)
        for (double far : {-30.0, -0.5, 10.5, 25.0}) q.push_back(x0 + far);
      if (testing::sanitized)
        passes_alone(a, q, false);
      else
        same_passes(a, Attention(c.data, {1.0}, off), q, c.range, false);
      if (a.counters().moment_rows > 0) ++by_moments;
    }
  CHECK(by_moments == 3 * 4);
}
