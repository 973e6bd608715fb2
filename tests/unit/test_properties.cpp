// Properties that hold for every data set, checked on many random ones (fixed seeds, several
// sizes and scales).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/learn/bandwidth.h"

using namespace nwreg;
using testing::make_dataset;

namespace {

struct PropertyCase {
  Dataset data;
  double h;
  std::vector<double> queries;
};

// Random sets: sizes 2 to 2000; x uniform, clustered or tied; scales from 1e-200 to 1e200;
// bandwidths from a hundredth of the spacing to ten times the range.
std::vector<PropertyCase> cases() {
  std::vector<PropertyCase> out;
  std::mt19937_64 g(2026);
  std::uniform_real_distribution<double> u(0, 1);
  const std::size_t sizes[] = {2, 3, 10, 57, 400, 2000};
  const double scales[] = {1e-200, 1e-3, 1, 1e6, 1e200};
  int k = 0;
  for (std::size_t n : sizes) {
    for (double scale : scales) {
      std::vector<double> x(n), y(n);
      for (std::size_t i = 0; i < n; ++i) {
        double v = u(g);
        if (k % 3 == 1) v = std::floor(v * 5) / 5 + u(g) * 1e-3;  // clusters
        if (k % 3 == 2) v = std::floor(v * 7);                    // ties
        x[i] = (v - 0.3) * scale;
        y[i] = std::sin(6 * v) * (k % 2 ? 1e8 : 1) + u(g) - 0.5;
      }
      const double span = scale;
      for (double rel : {1e-4, 0.03, 0.3, 10.0}) {
        PropertyCase c{make_dataset(x, y), rel * span, {}};
        for (int j = -5; j <= 25; ++j) c.queries.push_back((j / 20.0 - 0.3) * span);
        c.queries.push_back(x[0]);
        out.push_back(std::move(c));
      }
      ++k;
    }
  }
  return out;
}

double span_of(const PropertyCase& c) {
  double lo = c.queries[0], hi = c.queries[0];
  for (double v : c.queries) lo = std::min(lo, v), hi = std::max(hi, v);
  for (double v : c.data.x) lo = std::min(lo, v), hi = std::max(hi, v);
  return hi - lo;
}

double yrange(const Dataset& d) {
  const auto [lo, hi] = std::minmax_element(d.y.begin(), d.y.end());
  return *hi - *lo;
}

std::vector<double> predict(const Dataset& d, double h, const std::vector<double>& q) {
  std::vector<double> out(q.size());
  Attention(d, {h}).predict(q.data(), q.size(), out.data());
  return out;
}

}  // namespace

TEST_CASE("property: every attention row sums to 1 and predictions lie within [min y, max y]") {
  for (const PropertyCase& c : cases()) {
    const auto [lo, hi] = std::minmax_element(c.data.y.begin(), c.data.y.end());
    const double slack = 4e-16 * std::max(std::abs(*lo), std::abs(*hi));
    CAPTURE(c.data.n);
    CAPTURE(c.h);
    CAPTURE(c.data.x[0]);
    Attention e(c.data, {c.h});
    e.weights(c.queries.data(), c.queries.size(), [&](std::size_t, const double* a) {
      const double sum = std::accumulate(a, a + c.data.n, 0.0);
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-13));
    });
    for (double f : predict(c.data, c.h, c.queries)) {
      CHECK(f >= *lo - slack);
      CHECK(f <= *hi + slack);
    }
  }
}

TEST_CASE("property: shuffling the training rows changes no prediction beyond rounding") {
  std::mt19937 g(5);
  for (const PropertyCase& c : cases()) {
    std::vector<std::size_t> p(c.data.n);
    std::iota(p.begin(), p.end(), std::size_t{0});
    std::shuffle(p.begin(), p.end(), g);
    std::vector<double> x, y;
    for (std::size_t i : p) {
      x.push_back(c.data.x[i]);
      y.push_back(c.data.y[i]);
    }
    const auto a = predict(c.data, c.h, c.queries), b = predict(make_dataset(x, y), c.h, c.queries);
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a[i] - b[i]) <= 1e-13 * yrange(c.data));
  }
}

TEST_CASE("property: x -> a x + b, h -> |a| h, y -> c y + d gives c f + d") {
  const double params[][4] = {{2, 1, 3, -7}, {-0.5, 10, -1, 0.25}, {1e-3, -4, 1e3, 1}, {-8, 0, 0.5, 1e6}};
  constexpr double ulp = 2.2204460492503131e-16;
  for (const PropertyCase& c : cases()) {
    if (std::abs(c.data.x[0]) > 1e100 || std::abs(c.data.x[0]) < 1e-100) continue;  // a x + b would round away x
    const auto f = predict(c.data, c.h, c.queries);
    double xmax = 0;
    for (double v : c.data.x) xmax = std::max(xmax, std::abs(v));
    for (const auto& p : params) {
      std::vector<double> x, y, q;
      for (double v : c.data.x) x.push_back(p[0] * v + p[1]);
      for (double v : c.data.y) y.push_back(p[2] * v + p[3]);
      for (double v : c.queries) q.push_back(p[0] * v + p[1]);
      const auto g = predict(make_dataset(x, y), std::abs(p[0]) * c.h, q);
      // Rounding a x + b moves each x (and q) by up to delta = ulp(|a| max|x| + |b|) / |a| in
      // the original units. A score -((q - x)/h)^2 / 2 then moves by up to
      // 2 delta |q - x| / h^2, and the keys that matter lie within span + 9 h of q, so each
      // weight moves by a relative du at most, and f by at most range(y) du.
      const double delta = 2 * ulp * (std::abs(p[0]) * xmax + std::abs(p[1])) / std::abs(p[0]);
      const double du = 2 * delta * (span_of(c) + 9 * c.h) / (c.h * c.h);
      const double tol = std::abs(p[2]) * yrange(c.data) * (1e-12 + 2 * du) + 1e-12 * std::abs(p[3]);
      for (std::size_t i = 0; i < f.size(); ++i) CHECK(std::abs(g[i] - (p[2] * f[i] + p[3])) <= tol);
    }
  }
}

TEST_CASE("property: the LOO gradient matches central differences") {
  for (const PropertyCase& c : cases()) {
    if (c.data.n < 10 || c.h > c.data.n) continue;
    Attention e(c.data, {c.h});
    const LooResult r = e.loo(true);
    // Fourth-order central difference in log h.
    const double eps = 1e-4;
    auto at = [&](double t) { return Attention(c.data, {c.h * std::exp(t)}).loo(false).mse; };
    const double fd = (8 * (at(eps) - at(-eps)) - (at(2 * eps) - at(-2 * eps))) / (12 * eps);
    CAPTURE(c.data.n);
    CAPTURE(c.h);
    CAPTURE(c.data.x[0]);
    CAPTURE(r.mse);
    CHECK(r.gradient[0] == doctest::Approx(fd).epsilon(1e-5).scale(1e-8 * r.mse));
  }
}

TEST_CASE("property: learning from any start in a wide range lands on the same bandwidth") {
  std::mt19937_64 g(8);
  std::uniform_real_distribution<double> u(0, 5);
  std::normal_distribution<double> noise(0, 0.5);
  for (int set = 0; set < 4; ++set) {
    std::vector<double> x, y;
    for (int i = 0; i < 300; ++i) {
      x.push_back(u(g));
      y.push_back(2 * std::sin(x.back()) + std::pow(x.back(), 0.8) + noise(g));
    }
    const Dataset d = make_dataset(x, y);
    const FitResult best = fit_bandwidth(d, {});
    for (double factor : {0.3, 0.5, 2.0, 4.0}) {
      FitOptions o;
      o.init = std::vector<double>{best.bandwidth[0] * factor};
      const FitResult r = fit_bandwidth(d, o);
      CAPTURE(set);
      CAPTURE(factor);
      CHECK(r.bandwidth[0] == doctest::Approx(best.bandwidth[0]).epsilon(1e-5));
    }
  }
}
