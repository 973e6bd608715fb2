// Sums by moments (engine/moment_line.h) against the key-by-key sums they replace: predictions
// leave-one-out errors and in-sample fits (GCV, AICc) for every compact kernel, degrees 0 to 3, fixed, knn and span
// bandwidths, sample weights with zeros, ties, and x and y far from 0.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "helpers.h"
#include "nwreg/engine/attention.h"

using namespace nwreg;

TEST_CASE("moment line: wide windows summed by moments agree with the key-by-key sums") {
  std::mt19937_64 rng(20261125);
  std::size_t compared = 0;
  double worst = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const std::size_t n = 1500 + rng() % 1500;
    const double x0 = trial % 3 == 0 ? 1e6 : 0, y0 = trial % 4 == 1 ? 1e8 : 0;
    std::vector<double> x(n), y(n);
    std::uniform_real_distribution<double> u(0, 10);
    std::normal_distribution<double> noise(0, 0.3);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = x0 + (trial % 5 == 2 ? std::round(u(rng) * 4) / 4 : u(rng));  // ties in every fifth trial
      y[i] = y0 + std::sin(x[i] - x0) + noise(rng);
    }
    Dataset d = testing::make_dataset(x, y);
    if (trial % 2)
      for (std::size_t i = 0; i < n; ++i) d.weight.push_back(i % 11 == 0 ? 0.0 : 0.5 + static_cast<double>(i % 7) / 4);
    EngineOptions on;
    on.kernel = trial % 3 == 0 ? Kernel::tricube : trial % 3 == 1 ? Kernel::epanechnikov : Kernel::uniform;
    const std::size_t degree = static_cast<std::size_t>(trial / 3) % 4;
    on.method = degree == 0 ? Method::nw : Method::local_polynomial;
    on.degree = degree;
    const int policy = trial % 4;  // fixed, knn, span, span above 1
    if (policy == 1) on.neighbour_policy = {Neighbours::knn, n / 5, 0};
    if (policy == 2) on.neighbour_policy = {Neighbours::span, 0, 0.3};
    if (policy == 3) on.neighbour_policy = {Neighbours::span, 0, 1.4};
    EngineOptions off = on;
    off.shortcuts = off.shortcuts.without(Shortcut::line_moments);
    const std::vector<double> h = {policy == 0 ? 1.5 : 1.0};
    const Attention a(d, h, on);
    std::vector<double> q(200);
    for (std::size_t j = 0; j < q.size(); ++j) q[j] = x0 - 0.5 + 11 * static_cast<double>(j) / q.size();
    std::vector<double> fa(q.size()), fb(q.size());
    CAPTURE(trial);
    a.predict(q.data(), q.size(), fa.data());
    if (testing::sanitized) {  // without the key-by-key reference
      for (double f : fa) CHECK(std::isfinite(f));
      compared += q.size();
      CHECK(std::isfinite(a.loo(false).mse));
      CHECK(std::isfinite(a.insample(false).trace));
      continue;
    }
    const Attention b(d, h, off);
    b.predict(q.data(), q.size(), fb.data());
    const auto [lo, hi] = std::minmax_element(y.begin(), y.end());
    const double range = *hi - *lo;
    for (std::size_t j = 0; j < q.size(); ++j) {
      CHECK(std::abs(fa[j] - fb[j]) <= 1e-10 * range);
      worst = std::max(worst, std::abs(fa[j] - fb[j]) / range);
      ++compared;
    }
    const double la = a.loo(false).mse, lb = b.loo(false).mse;
    CHECK(la == doctest::Approx(lb).epsilon(1e-10));
    const InSample ia = a.insample(false), ib = b.insample(false);  // GCV's and AICc's sums
    CHECK(ia.mse == doctest::Approx(ib.mse).epsilon(1e-10));
    CHECK(ia.trace == doctest::Approx(ib.trace).epsilon(1e-10));
    CHECK(a.counters().pairs + a.counters().moment_rows > 0);  // (a row by moments weighs no pair)
  }
  MESSAGE("largest difference over the range of y: " << worst);
  CHECK(compared == 24 * 200);
}

TEST_CASE("moment line: where the kernel's terms would cancel (weight near the support's edge) the keys are summed one by one") {
  // 300 keys crowded at 0, 300 spread over [5, 8]: queries just inside the support's edge of the
  // crowd; and queries far outside the keys (every key near the edge of a span's support).
  std::vector<double> x, y;
  for (int i = 0; i < 300; ++i) x.push_back(0.003 * i / 300), y.push_back(std::sin(i * 0.7));
  for (int i = 0; i < 300; ++i) x.push_back(5 + 3.0 * i / 300), y.push_back(10 + std::cos(i * 0.3));
  const Dataset d = testing::make_dataset(x, y);
  for (const bool span : {false, true}) {
    EngineOptions on;
    on.kernel = Kernel::tricube;
    on.method = Method::local_linear;
    if (span) on.neighbour_policy = {Neighbours::span, 0, 0.3};
    EngineOptions off = on;
    off.shortcuts = off.shortcuts.without(Shortcut::line_moments);
    const Attention a(d, {1.0}, on), b(d, {1.0}, off);
    const std::vector<double> q = span ? std::vector<double>{-1000, -1e5, 1000, 1e5} : std::vector<double>{0.99, 0.999, 0.9999};
    std::vector<double> fa(q.size()), fb(q.size());
    a.predict(q.data(), q.size(), fa.data());
    b.predict(q.data(), q.size(), fb.data());
    CAPTURE(span);
    for (std::size_t j = 0; j < q.size(); ++j) {
      CAPTURE(q[j]);
      CHECK(std::abs(fa[j] - fb[j]) <= 1e-10 * std::max(1.0, std::abs(fb[j])));
    }
  }
}
