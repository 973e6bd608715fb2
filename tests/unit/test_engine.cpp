// The fast engine: vectorised exp, pruning windows, threads.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "unit/reference.h"
#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/base/errors.h"
#include "nwreg/kernel/kernel1d.h"
#include "nwreg/kernel/kernel_nd.h"
#include "nwreg/base/thread_pool.h"

using namespace nwreg;
using testing::make_dataset;

namespace {

// Data sets that stress the window: uniform, clustered with gaps, heavy ties, wide offsets.
std::vector<Dataset> shapes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 5);
  std::normal_distribution<double> noise(0, 0.5);
  std::vector<Dataset> out;
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = u(g);
    y[i] = 2 * std::sin(x[i]) + std::pow(x[i], 0.8) + noise(g);
  }
  out.push_back(make_dataset(x, y));
  for (std::size_t i = 0; i < n; ++i) x[i] = (i % 3) * 100.0 + u(g) * 0.01;  // three tight clusters
  out.push_back(make_dataset(x, y));
  for (std::size_t i = 0; i < n; ++i) x[i] = std::floor(u(g) * 4);  // only 20 distinct values
  out.push_back(make_dataset(x, y));
  for (std::size_t i = 0; i < n; ++i) x[i] = 1.7e9 + u(g) * 1000;  // timestamps
  out.push_back(make_dataset(x, y));
  return out;
}

double range_of(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end());
}

}  // namespace

TEST_CASE("the vectorised dot products of weights, dlog and factors equal a loop over the keys") {
  // Each clone of dot and dlog_dot (x86-64-v4, v3, baseline: the host's) against long-double
  // sums of kernel::dlog key by key: every kernel, no factor, one, two; ranges that leave 0 to 7
  // keys past the last whole lanes (the compiler's leftover loops); a third of the weights 0, and
  // an infinite factor at some of those, which must be dropped. GCC 12's v3 clone summed the
  // conditional term wrongly (20-60% off on AVX2 hosts before it was made for every key and then
  // selected).
  const std::size_t n = 1000;
  std::vector<double> x(2 * n), e(n), a(n), b(n);
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = u(g), x[n + i] = u(g);
    e[i] = u(g) < 0.3 ? 0.0 : u(g);
    a[i] = u(g), b[i] = u(g);
    if (e[i] == 0 && i % 3 == 0) a[i] = std::numeric_limits<double>::infinity();
  }
  kernel::Keys keys;
  keys.x = x.data(), keys.stride = n, keys.d = 2, keys.moderate = true;
  const double q[2] = {0.5, 0.25}, xb[2] = {0.49, 0.26}, inv_h[2] = {3.0, 7.0};
  for (const Kernel k : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube, Kernel::uniform})
    for (int factors = 0; factors < 3; ++factors)
      for (std::size_t c = 0; c < 2; ++c)
        for (const auto& range : {std::pair<std::size_t, std::size_t>{0, 1000}, {3, 997}, {0, 9}, {5, 16}, {7, 8},
                                  {2, 14}, {0, 13}, {1, 15}, {1, 1000}, {0, 6}}) {
          const std::size_t lo = range.first, hi = range.second;  // (clang 14: no bindings in CAPTURE)
          CAPTURE(to_string(k));
          CAPTURE(factors);
          CAPTURE(lo);
          CAPTURE(hi);
          const kernel::Factor fa = factors >= 1 ? kernel::Factor{a.data(), 0.1, 2} : kernel::Factor{};
          const kernel::Factor fb = factors >= 2 ? kernel::Factor{b.data(), 0.2, -1} : kernel::Factor{};
          long double dot = 0, dlog_dot = 0;
          for (std::size_t i = lo; i < hi; ++i) {
            if (e[i] == 0) continue;
            const long double t = static_cast<long double>(e[i]) * (fa.v ? (a[i] - 0.1) * 2 : 1.0) *
                                  (fb.v ? (b[i] - 0.2) * -1 : 1.0);
            dot += t;
            dlog_dot += t * kernel::dlog(k, keys, c, i, q, xb, inv_h);
          }
          const double got_dot = kernel::dot(lo, hi, e.data(), fa, fb);
          const double got_dlog = kernel::dlog_dot(k, keys, c, lo, hi, q, xb, inv_h, e.data(), fa, fb);
          CHECK(std::abs(got_dot - static_cast<double>(dot)) <= 1e-13 * std::abs(static_cast<double>(dot)) + 1e-300);
          CHECK(std::abs(got_dlog - static_cast<double>(dlog_dot)) <=
                1e-13 * std::abs(static_cast<double>(dlog_dot)) + 1e-300);
        }
}

TEST_CASE("the vectorised exp2 is within 2 ulp of std::exp2 and clamps far below") {
  double worst = 0;
  for (double u = -1021; u <= 0.5; u += 0.00037) {
    worst = std::max(worst, std::abs(kernel::exp2_clamped(u) / std::exp2(u) - 1));
  }
  CHECK(worst <= 4.5e-16);
  CHECK(kernel::exp2_clamped(0) == 1.0);
  CHECK(kernel::exp2_clamped(-1) == 0.5);
  CHECK(kernel::exp2_clamped(-5000) == std::exp2(-1021.0));
  CHECK(kernel::exp2_clamped(-INFINITY) == std::exp2(-1021.0));
}

TEST_CASE("pruned predictions equal the sum over every key to 1e-12 of the y range") {
  for (const Dataset& d : shapes(3000, 11)) {
    const double span = range_of(d.x), yr = range_of(d.y);
    std::vector<double> q;
    const double lo = *std::min_element(d.x.begin(), d.x.end());
    for (int i = -20; i <= 120; ++i) q.push_back(lo + span * i / 100.0);  // inside and outside
    q.push_back(lo - 1e6 * span);
    q.push_back(lo + 1e9 * span);
    for (double rel : {1e-6, 1e-3, 0.02, 0.3, 5.0}) {
      const double h = rel * span;
      Attention pruned(d, {h}), direct(d, {h}, EngineOptions(0.0, nullptr));
      std::vector<double> a(q.size()), b(q.size());
      pruned.predict(q.data(), q.size(), a.data());
      direct.predict(q.data(), q.size(), b.data());
      for (std::size_t i = 0; i < q.size(); ++i) {
        CAPTURE(rel);
        CAPTURE(q[i]);
        CHECK(std::abs(a[i] - b[i]) <= 1e-12 * yr);
      }
      if (rel >= 1e-3 && rel <= 0.3) CHECK(pruned.counters().pairs < direct.counters().pairs);
    }
  }
}

TEST_CASE("predictions match a long double reference, also for timestamps near 1.7e9") {
  for (const Dataset& d : shapes(500, 5)) {
    const double span = range_of(d.x), yr = range_of(d.y);
    for (double rel : {1e-3, 0.05, 0.5}) {
      Attention e(d, {rel * span});
      for (int i = 0; i < 50; ++i) {
        const double q = d.x[static_cast<std::size_t>(i) * 7] + span * 0.003 * i;
        double f;
        e.predict(&q, 1, &f);
        CAPTURE(rel);
        CHECK(std::abs(f - testing::reference_nw(d, testing::gaussian({rel * span}), &q)) <= 1e-13 * yr);
      }
    }
  }
}

TEST_CASE("pruned LOO loss and gradient equal the full sums") {
  for (const Dataset& d : shapes(2000, 3)) {
    const double span = range_of(d.x);
    for (double rel : {1e-4, 0.01, 0.1, 1.0}) {
      const LooResult a = Attention(d, {rel * span}).loo(true);
      const LooResult b = Attention(d, {rel * span}, EngineOptions(0.0, nullptr)).loo(true);
      CAPTURE(rel);
      CHECK(a.mse == doctest::Approx(b.mse).epsilon(1e-12));
      CHECK(a.gradient[0] == doctest::Approx(b.gradient[0]).epsilon(1e-9).scale(1e-12 * b.mse));
    }
  }
}

TEST_CASE("results are bit for bit the same whatever the number of threads") {
  const Dataset d = shapes(5000, 9)[0];
  std::vector<double> q;
  for (int i = 0; i < 1000; ++i) q.push_back(-1 + 7.0 * i / 999);
  auto bits = [](const std::vector<double>& v) {
    std::vector<std::uint64_t> b(v.size());
    std::memcpy(b.data(), v.data(), v.size() * sizeof(double));
    return b;
  };
  std::vector<double> p1(q.size());
  Attention one(d, {0.05});
  one.predict(q.data(), q.size(), p1.data());
  const LooResult l1 = one.loo(true);
  std::vector<double> w1;
  one.weights(q.data(), 40, [&](std::size_t, const double* a) { w1.insert(w1.end(), a, a + d.n); });
  for (unsigned threads : {2u, 3u, 8u}) {
    ThreadPool pool(threads);
    Attention many(d, {0.05}, EngineOptions(default_tolerance, &pool));
    std::vector<double> p(q.size());
    many.predict(q.data(), q.size(), p.data());
    CHECK(bits(p) == bits(p1));
    const LooResult l = many.loo(true);
    CHECK(l.mse == l1.mse);
    CHECK(l.gradient == l1.gradient);
    std::vector<double> w;
    many.weights(q.data(), 40, [&](std::size_t, const double* a) { w.insert(w.end(), a, a + d.n); });
    CHECK(bits(w) == bits(w1));
  }
}

TEST_CASE("passes over more rows than one chunk (2^16): the sums in row order, the first row out of reach") {
  // 70,000 rows on [0, 1], then three far apart at 10, 20, 30 that no Epanechnikov key reaches
  // (h = 0.001): input rows 70000-70002 (0-based), in engine order (sorted by x) the last
  // three, past the first chunk of 65,536.
  std::vector<double> x, y;
  for (int i = 0; i < 70000; ++i) {
    x.push_back(i / 70000.0);
    y.push_back(std::sin(7.0 * i / 70000) + 0.1 * std::sin(1e3 * i));
  }
  for (double far : {30.0, 10.0, 20.0}) x.push_back(far), y.push_back(1);
  const Dataset d = make_dataset(x, y);
  EngineOptions o;
  o.kernel = Kernel::epanechnikov;
  const LooResult out = Attention(d, {0.001}, o).loo(true);
  CHECK(out.out_of_reach == 3);
  CHECK(out.first_out_of_reach == 70000);  // the first in input order (30), though the pass meets 10 first
  // Without the far rows: the mean of the rows' squared LOO errors, each row's prediction by
  // hand from the 69 neighbours on each side within h (spacing 1 / 70000, h = 0.001: weights
  // 1 - (k / 70)^2); the sums by moments agree within 1e-10 (docs/numerics.md).
  const Dataset near = make_dataset(std::vector<double>(x.begin(), x.begin() + 70000),
                                    std::vector<double>(y.begin(), y.begin() + 70000));
  long double sse = 0;
  for (int i = 0; i < 70000; ++i) {
    long double s0 = 0, s1 = 0;
    for (int j = std::max(0, i - 70); j <= std::min(69999, i + 70); ++j) {
      if (j == i) continue;
      const long double u = (j - i) / 70.0L, w = 1 - u * u;
      if (w <= 0) continue;
      s0 += w;
      s1 += w * y[j];
    }
    sse += (y[i] - s1 / s0) * (y[i] - s1 / s0);
  }
  ThreadPool pool(3);
  EngineOptions threaded = o;
  threaded.pool = &pool;
  const LooResult one = Attention(near, {0.001}, o).loo(true);
  const LooResult three = Attention(near, {0.001}, threaded).loo(true);
  CHECK(one.mse == doctest::Approx(static_cast<double>(sse / 70000)).epsilon(1e-10));
  CHECK(three.mse == one.mse);
  CHECK(three.gradient == one.gradient);
}

TEST_CASE("pruned weight rows: input order, zeros outside the window, sums of 1") {
  const Dataset d = make_dataset({5, 0, 4, 1, 3, 2}, {1, 2, 3, 4, 5, 6});
  const double q = 0.2;
  std::vector<double> row, full;
  Attention(d, {0.1}).weights(&q, 1, [&](std::size_t, const double* a) { row.assign(a, a + 6); });
  Attention(d, {0.1}, EngineOptions(0.0, nullptr)).weights(&q, 1, [&](std::size_t, const double* a) { full.assign(a, a + 6); });
  // Relative to the nearest key x = 0 (input row 2), x = 1 weighs exp(-(0.8^2 - 0.2^2)/(2 h^2))
  // = e^-30; x = 2 weighs e^-160 and lies outside the window (T = ln(6/1e-16) = 38.6).
  const double e30 = std::exp(-30.0);
  CHECK(row[1] == doctest::Approx(1 / (1 + e30)).epsilon(1e-15));
  CHECK(row[3] == doctest::Approx(e30 / (1 + e30)).epsilon(1e-13));
  CHECK(row[5] == 0.0);
  CHECK(row[0] == 0.0);
  CHECK(full[0] < 1e-300);
  for (std::size_t i = 0; i < 6; ++i) CHECK(std::abs(row[i] - full[i]) <= 1e-16);
}

TEST_CASE("LOO over a subset of rows averages those rows") {
  const Dataset d = shapes(300, 2)[0];
  Attention e(d, {0.2});
  std::vector<std::size_t> rows = {3, 17, 250};
  double sum = 0;
  for (std::size_t r : rows) {
    const std::vector<std::size_t> one = {r};
    sum += e.loo(false, &one).mse;
  }
  CHECK(e.loo(false, &rows).mse == doctest::Approx(sum / 3).epsilon(1e-14));
  std::vector<std::size_t> all(d.n);
  for (std::size_t i = 0; i < d.n; ++i) all[i] = i;
  CHECK(e.loo(true, &all).mse == doctest::Approx(e.loo(true).mse).epsilon(1e-15));
}

TEST_CASE("tolerance must be at least 0 and below 1") {
  const Dataset d = make_dataset({0, 1}, {0, 1});
  CHECK_THROWS_WITH_AS(Attention(d, {1.0}, EngineOptions(1.0, nullptr)), "must be >= 0 and < 1, got 1",
                       UsageError);
  CHECK_THROWS_AS(Attention(d, {1.0}, EngineOptions(-1e-3, nullptr)), UsageError);
  CHECK_THROWS_AS(Attention(d, {1.0}, EngineOptions(NAN, nullptr)), UsageError);
}

TEST_CASE("the thread pool visits every index once and passes exceptions on") {
  ThreadPool pool(4);
  CHECK(pool.size() == 4);
  for (std::size_t count : {0, 1, 7, 1000, 12345}) {
    std::vector<std::atomic<int>> seen(count);
    pool.parallel_for(count, 13, [&](std::size_t a, std::size_t z) {
      for (std::size_t i = a; i < z; ++i) seen[i]++;
    });
    for (auto& s : seen) CHECK(s.load() == 1);
  }
  CHECK_THROWS_WITH_AS(pool.parallel_for(100, 1, [](std::size_t a, std::size_t) {
    if (a == 50) throw std::runtime_error("boom");
  }), "boom", std::runtime_error);
  int calls = 0;  // still usable afterwards
  pool.parallel_for(10, 10, [&](std::size_t, std::size_t) { ++calls; });
  CHECK(calls == 1);
}

TEST_CASE("kernel::sums_detail: s0 and s1 bit for bit those of sums, w2 and sv as plain loops") {
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> u(0, 5);
  std::vector<double> x(103), y(103), v(103);
  for (auto& a : x) a = u(g);
  std::sort(x.begin(), x.end());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::sin(x[i]) + u(g), v[i] = u(g) * u(g);
  const double h = 0.4, K2 = -1.4426950408889634 / (2 * h * h);
  for (double q : {0.0, 1.37, 2.5, 4.99}) {
    for (const auto& range : {std::pair<std::size_t, std::size_t>{0, 103}, {5, 12}, {40, 41}, {7, 7}}) {
      const std::size_t lo = range.first, hi = range.second;
      CAPTURE(q);
      CAPTURE(lo);
      const std::size_t b = lo < hi ? lo : 0;
      const double xb = x[b], yb = y[b];
      const kernel::Sums s = kernel::sums(x.data(), y.data(), lo, hi, xb, q, xb - q, K2, yb);
      const kernel::Sums d = kernel::sums_detail(x.data(), y.data(), v.data(), lo, hi, xb, q, xb - q, K2, yb);
      CHECK(d.s0 == s.s0);
      CHECK(d.s1 == s.s1);
      std::vector<double> e(103);
      kernel::weights(x.data(), lo, hi, xb, q, xb - q, K2, e.data());
      double w2 = 0, sv = 0;
      for (std::size_t i = lo; i < hi; ++i) w2 += e[i] * e[i], sv += e[i] * v[i];
      CHECK(d.w2 == doctest::Approx(w2).epsilon(1e-13));
      CHECK(d.sv == doctest::Approx(sv).epsilon(1e-13));
    }
  }
}

TEST_CASE("a pass over listed rows: the same sums in any order of the list, after another list, and a row listed twice counts twice") {
  std::vector<double> x, y;
  for (int i = 0; i < 300; ++i) {
    x.push_back(std::fmod(i * 0.618033988749895, 1.0));
    y.push_back(std::sin(6 * x.back()) + 0.2 * std::cos(97.0 * i));
  }
  const Dataset d = make_dataset(x, y);
  const std::vector<std::size_t> a{5, 17, 42, 99, 250}, b{250, 42, 5, 99, 17}, other{0, 1, 2};
  const Attention e(d, {0.05});
  const LooResult first = Attention(d, {0.05}).loo(true, &a);
  CHECK(e.loo(true, &other).mse == Attention(d, {0.05}).loo(true, &other).mse);
  CHECK(e.loo(true, &b).mse == first.mse);  // the list in another order, after another list
  CHECK(e.loo(true, &b).gradient == first.gradient);
  CHECK(e.loo(true, &a).mse == first.mse);
  // Row 42 listed twice weighs twice: the mean over six rows, by hand from the one-row errors.
  const std::vector<std::size_t> twice{5, 17, 42, 42, 99, 250};
  double sse = 0;
  for (std::size_t r : twice) {
    const std::vector<std::size_t> one{r};
    sse += Attention(d, {0.05}).loo(false, &one).mse;
  }
  CHECK(e.loo(false, &twice).mse == doctest::Approx(sse / 6).epsilon(1e-14));
}
