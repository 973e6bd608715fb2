// The fast Gauss transform against sums over every key in long double, and the leave-one-out
// passes that use it against the sum over every key (--tolerance 0).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/kernel/gauss_transform.h"
#include "nwreg/base/thread_pool.h"

using namespace nwreg;

namespace {

struct Keys {
  std::vector<double> x, y;
};

// n keys uniform on [offset, offset + 5], sorted, y = sin x + noise + 100 (an offset the
// transform's y0 takes out).
Keys keys(std::size_t n, double offset, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 5), noise(-0.5, 0.5);
  Keys k;
  for (std::size_t i = 0; i < n; ++i) k.x.push_back(offset + u(g));
  std::sort(k.x.begin(), k.x.end());
  for (double x : k.x) k.y.push_back(std::sin(x - offset) + noise(g) + 100);
  return k;
}

// The transform's sums at q over every key in long double, and the sums of their terms'
// magnitudes (t's terms are >= 0).
struct Exact {
  long double s0 = 0, s1 = 0, t = 0, v = 0, abs1 = 0, absv = 0;
};
Exact exact(const Keys& k, double q, double h, double y0) {
  Exact x;
  for (std::size_t i = 0; i < k.x.size(); ++i) {
    const long double d = (static_cast<long double>(k.x[i]) - q) / h, e = std::exp(-d * d / 2);
    const long double dy = k.y[i] - y0;
    x.s0 += e;
    x.s1 += e * dy;
    x.t += e * d * d;
    x.v += e * dy * d * d;
    x.abs1 += e * std::fabs(dy);
    x.absv += e * std::fabs(dy) * d * d;
  }
  return x;
}

// The keys as a one-column data set.
Dataset dataset_of(const Keys& k) {
  Dataset d;
  d.n = k.x.size();
  d.d = 1;
  d.x = k.x;
  d.y = k.y;
  d.x_names = {"x"};
  return d;
}

// The engine's options at the default tolerance with its windows summed key by key, within
// the same bound (no fast Gauss transform).
EngineOptions keywise_options(ThreadPool* pool) {
  EngineOptions o(1e-16, pool);
  o.shortcuts = o.shortcuts.without(Shortcut::gauss_transform);
  return o;
}

// `fast`'s leave-one-out error and gradient as the reference's, for a tenth of its pairs.
void check_loo(const Attention& fast, const Attention& reference) {
  const LooResult a = fast.loo(true), b = reference.loo(true);
  CHECK(a.mse == doctest::Approx(b.mse).epsilon(1e-13));
  CHECK(a.gradient[0] == doctest::Approx(b.gradient[0]).epsilon(1e-10));
  CHECK(fast.counters().pairs * 10 < reference.counters().pairs);
}

}  // namespace

TEST_CASE("fast Gauss transform: the sums over every key to the tolerance, at any offset") {
  // The boxes' series (20,000 keys), and the target-side series where queries and keys are
  // over 1024 times the boxes (200,000 keys: 12 to 177 boxes). Queries 20 to 39 lie between
  // keys and beyond them (there the boxes' series answer).
  for (const bool targets : {false, true})
  for (double offset : {0.0, 1.7e9, -3e5}) {
    for (double h : {0.02, 0.05, 0.3}) {
      CAPTURE(targets);
      CAPTURE(offset);
      CAPTURE(h);
      const Keys k = keys(targets ? 200000 : 20000, offset, 3);
      const double y0 = 100;
      GaussTransform::Shape shape;
      shape.targets = targets;
      const GaussTransform fgt(k.x.data(), k.y.data(), k.x.size(), h, 1e-16, y0, 1000000, nullptr, shape);
      REQUIRE(fgt.usable());
      CHECK(fgt.targets() == targets);
      for (int j = 0; j < 40; ++j) {
        // On keys, between them, and at the edges and beyond.
        const double q = j < 20 ? k.x[j * (k.x.size() / 20)] : offset - 0.1 + 5.2 * (j - 20) / 19.0;
        const Exact e = exact(k, q, h, y0);
        const GaussTransform::Sums s = fgt.at(q, true);
        CAPTURE(j);
        CHECK(std::abs(s.s0 - static_cast<double>(e.s0)) <= 1e-13 * static_cast<double>(e.s0));
        CHECK(std::abs(s.s1 - static_cast<double>(e.s1)) <= 1e-13 * static_cast<double>(e.abs1 + e.s0));
        CHECK(std::abs(s.t - static_cast<double>(e.t)) <= 1e-13 * static_cast<double>(e.t + e.s0));
        CHECK(std::abs(s.v - static_cast<double>(e.v)) <= 1e-13 * static_cast<double>(e.absv + e.s0));
      }
    }
  }
}

TEST_CASE("fast Gauss transform: boxes merged from the keys' bins give the sums over every key") {
  // 200,000 keys in 2000 bins (width 0.0025): few queries (each box's series at the query) and
  // many (the cells' series), at any offset; at h = 0.001 the boxes (width 0.0014) are narrower
  // than the bins and the keys' own sums serve.
  const std::size_t n = 200000;
  for (double offset : {0.0, 1.7e9}) {
    const Keys k = keys(n, offset, 6);
    const double y0 = 100;
    const std::size_t terms = GaussTransform::target_terms(n, 1e-16);
    REQUIRE(terms == 38);
    const GaussBins bins(k.x.data(), k.y.data(), n, y0, 2000, terms, nullptr);
    for (double h : {0.001, 0.004, 0.05, 0.3})
      for (std::size_t queries : {std::size_t{1000}, std::size_t{1000000}}) {
        CAPTURE(offset);
        CAPTURE(h);
        CAPTURE(queries);
        GaussTransform::Shape shape;
        shape.targets = true;
        shape.bins = &bins;
        const GaussTransform fgt(k.x.data(), k.y.data(), n, h, 1e-16, y0, queries, nullptr, shape);
        CHECK(fgt.from_bins() == (h > 0.001));
        CHECK(fgt.targets() == (h >= 0.05 && queries == 1000000));  // 1024 keys a box from h = 0.025
        if (!fgt.usable()) continue;
        for (int j = 0; j < 16; ++j) {
          const double q = j < 8 ? k.x[j * (n / 8) + 7] : offset - 0.1 + 5.2 * (j - 8) / 7.0;
          const Exact e = exact(k, q, h, y0);
          const GaussTransform::Sums s = fgt.at(q, true);
          CAPTURE(j);
          // Within 1e-13 where the weights sum to 1/e or more (the nearest key within sqrt(2) h,
          // where the engine uses a transform); elsewhere within the keys' bound in all.
          const double s0 = static_cast<double>(e.s0);
          const double slack = 1e-13 * s0 + (s0 < 1 / 2.718281828459045 ? fgt.weight_error() * 2 * n : 0);
          CHECK(std::abs(s.s0 - s0) <= slack);
          CHECK(std::abs(s.s1 - static_cast<double>(e.s1)) <= 1e-13 * static_cast<double>(e.abs1) + slack);
          CHECK(std::abs(s.t - static_cast<double>(e.t)) <= 1e-13 * static_cast<double>(e.t) + slack);
          CHECK(std::abs(s.v - static_cast<double>(e.v)) <= 1e-13 * static_cast<double>(e.absv) + slack);
        }
      }
  }
}

TEST_CASE("fast Gauss transform: a local polynomial's moments from the target-side series, with weights") {
  // M_m = sum w E z^m (m < 7) and My_m = sum w E z^m (y - y0) (m < 5), z = (x - q) / h, as a
  // local quadratic's gradient asks: from the cells (many queries) and from each box's series
  // (a query beyond the keys), against long double sums over every key.
  const std::size_t n = 200000;
  const Keys k = keys(n, 1.7e9, 11);
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = i % 7 == 3 ? 0.0 : 0.5 + std::abs(std::sin(0.1 * static_cast<double>(i)));
  const double y0 = 100, h = 0.05;
  GaussTransform::Shape shape;
  shape.weights = w.data();
  shape.order0 = 7;
  shape.order1 = 5;
  shape.powers = true;
  shape.targets = true;
  const GaussTransform fgt(k.x.data(), k.y.data(), n, h, 1e-16, y0, 1000000, nullptr, shape);
  REQUIRE(fgt.targets());
  for (int j = 0; j < 12; ++j) {
    const double q = j < 10 ? k.x[j * (n / 10) + 5] : j == 10 ? k.x.front() - 0.05 : k.x.back() + 0.05;
    long double M[7] = {}, My[5] = {}, absM[7] = {}, absMy[5] = {};
    for (std::size_t i = 0; i < n; ++i) {
      const long double z = (static_cast<long double>(k.x[i]) - q) / h, e = w[i] * std::exp(-z * z / 2);
      long double zm = 1;
      for (int m = 0; m < 7; ++m, zm *= z) {
        M[m] += e * zm;
        absM[m] += e * std::fabs(zm);
        if (m < 5) {
          My[m] += e * zm * (k.y[i] - y0);
          absMy[m] += e * std::fabs(zm * (k.y[i] - y0));
        }
      }
    }
    double got[7], goty[5];
    fgt.moments(q, got, goty, 7, 5);
    CAPTURE(j);
    // Within 1e-13 of each sum's terms' magnitude, and of M_0 (a key's bound is against the
    // row's weight).
    for (int m = 0; m < 7; ++m) {
      CAPTURE(m);
      CHECK(std::abs(got[m] - static_cast<double>(M[m])) <= 1e-13 * static_cast<double>(absM[m] + M[0]));
      if (m < 5) CHECK(std::abs(goty[m] - static_cast<double>(My[m])) <= 1e-13 * static_cast<double>(absMy[m] + M[0]));
    }
  }
}

TEST_CASE("fast Gauss transform: keys spanning fewer than 8 boxes take the target-side series for E alone") {
  // h = 1: the keys span 3.5 boxes. The gradient's E z^2 would come from Hermite functions
  // whose terms cancel near the query: the boxes' series serve it; E's sums alone take the cells.
  const std::size_t n = 200000;
  const Keys k = keys(n, 1.7e9, 12);
  for (const bool gradient : {false, true}) {
    CAPTURE(gradient);
    GaussTransform::Shape shape;
    shape.targets = true;
    shape.gradient = gradient;
    const GaussTransform fgt(k.x.data(), k.y.data(), n, 1.0, 1e-16, 100, 1000000, nullptr, shape);
    REQUIRE(fgt.usable());
    CHECK(fgt.targets() == !gradient);
    for (int j = 0; j < 6; ++j) {
      const double q = k.x[j * (n / 6) + 3];
      const Exact e = exact(k, q, 1.0, 100);
      const GaussTransform::Sums s = fgt.at(q, gradient);
      CHECK(std::abs(s.s0 - static_cast<double>(e.s0)) <= 1e-13 * static_cast<double>(e.s0));
      CHECK(std::abs(s.s1 - static_cast<double>(e.s1)) <= 1e-13 * static_cast<double>(e.abs1 + e.s0));
    }
  }
}

TEST_CASE("fast Gauss transform: not used where boxes hold few keys, queries are few or the tolerance is 0") {
  const Keys k = keys(20000, 0, 4);
  CHECK_FALSE(GaussTransform(k.x.data(), k.y.data(), k.x.size(), 1e-3, 1e-16, 0, 1000000, nullptr).usable());
  CHECK_FALSE(GaussTransform(k.x.data(), k.y.data(), k.x.size(), 0.05, 0, 0, 1000000, nullptr).usable());
  CHECK(GaussTransform(k.x.data(), k.y.data(), k.x.size(), 0.05, 1e-16, 0, 1000000, nullptr).usable());
  CHECK_FALSE(GaussTransform(k.x.data(), k.y.data(), k.x.size(), 0.05, 1e-16, 0, 10, nullptr).usable());
}

TEST_CASE("leave-one-out and in-sample passes through the transform: as every key, for fewer pairs") {
  for (double offset : {0.0, 1.7e9}) {
    CAPTURE(offset);
    const Keys k = keys(12000, offset, 5);
    Dataset d = dataset_of(k);
    std::shuffle(d.x.begin(), d.x.end(), std::mt19937_64(9));  // input order is not x order
    for (std::size_t i = 0; i < d.n; ++i) d.y[i] = std::sin(d.x[i] - offset) + 0.1 * std::cos(37.0 * i) + 100;
    ThreadPool pool(2);
    std::vector<double> q(2000), v(d.n);  // queries, some beyond the keys, and values to smooth
    for (std::size_t j = 0; j < q.size(); ++j) q[j] = offset - 0.2 + 5.4 * static_cast<double>(j) / 1999;
    for (std::size_t i = 0; i < d.n; ++i) v[i] = std::cos(0.37 * static_cast<double>(i));
    std::vector<double> f1(q.size()), f2(q.size()), f0(q.size()), w1(q.size()), w2(q.size()), s1(q.size()),
        s2(q.size());
    for (double h : {0.05, 0.2}) {
      CAPTURE(h);
      const Attention fast(d, {h}, EngineOptions(1e-16, &pool));
      const std::vector<std::size_t> rows = fast.spread_rows(2000);
      if (testing::sanitized) {  // the passes without the references
        CHECK(std::isfinite(fast.loo(true).gradient[0]));
        CHECK(std::isfinite(fast.loo(true, &rows).mse));
        CHECK(std::isfinite(fast.insample(true).trace));
        fast.predict_detail(q.data(), q.size(), v, f1.data(), w1.data(), s1.data());
        fast.predict(q.data(), q.size(), f0.data());
        CHECK(f1 == f0);  // as predict() makes it
        const LooDetail r = fast.loo_residuals();
        CHECK(std::all_of(r.residual.begin(), r.residual.end(), [](double e) { return std::isfinite(e); }));
        continue;
      }
      const Attention every(d, {h}, EngineOptions(0.0, &pool));
      const Attention keywise(d, {h}, keywise_options(&pool));
      check_loo(fast, every);
      check_loo(fast, keywise);  // the windows key by key, within the same bound
      // A sample of rows as the learner asks for them.
      const LooResult c = fast.loo(true, &rows), e = every.loo(true, &rows);
      CHECK(c.mse == doctest::Approx(e.mse).epsilon(1e-13));
      CHECK(c.gradient[0] == doctest::Approx(e.gradient[0]).epsilon(1e-10));
      // The in-sample fit (AICc, GCV) and every row's residual (standard errors).
      const InSample i1 = fast.insample(true), i2 = every.insample(true);
      CHECK(i1.mse == doctest::Approx(i2.mse).epsilon(1e-13));
      CHECK(i1.trace == doctest::Approx(i2.trace).epsilon(1e-13));
      CHECK(i1.d_mse[0] == doctest::Approx(i2.d_mse[0]).epsilon(1e-10));
      CHECK(i1.d_trace[0] == doctest::Approx(i2.d_trace[0]).epsilon(1e-10));
      // Predictions with standard errors' sums at the queries.
      fast.predict_detail(q.data(), q.size(), v, f1.data(), w1.data(), s1.data());
      keywise.predict_detail(q.data(), q.size(), v, f2.data(), w2.data(), s2.data());
      fast.predict(q.data(), q.size(), f0.data());
      for (std::size_t j = 0; j < q.size(); ++j) {
        CAPTURE(j);
        CHECK(f1[j] == f0[j]);  // as predict() makes it
        CHECK(std::abs(f1[j] - f2[j]) <= 1e-13);
        CHECK(w1[j] == doctest::Approx(w2[j]).epsilon(1e-12));
        CHECK(std::abs(s1[j] - s2[j]) <= 1e-13);
      }
      const LooDetail r1 = fast.loo_residuals(), r2 = every.loo_residuals();
      double worst = 0;
      for (std::size_t i = 0; i < d.n; ++i) worst = std::max(worst, std::abs(r1.residual[i] - r2.residual[i]));
      CHECK(worst <= 1e-12);
    }
  }
}

TEST_CASE("leave-one-out passes over 2^17 keys (binned, cells): as the windows key by key") {
  // From 2^17 keys the engine bins the keys' power sums once; at h = 0.004 a pass sums each
  // box's series (148 keys a box), at h = 0.05 the cells' (1850 keys a box). Local linear's
  // moments come from cells too (keys' own power sums, no bins).
  const Keys k = keys(std::size_t{1} << 17, 0, 10);
  const Dataset d = dataset_of(k);
  ThreadPool pool(2);
  // (Under the sanitizers without the key-by-key references, whose cells' pass costs 3.5e9
  // pairs at 20 times the Release time: testing::sanitized.)
  for (double h : {0.004, 0.05}) {
    CAPTURE(h);
    const Attention fast(d, {h}, EngineOptions(1e-16, &pool));
    std::vector<double> q(2000), f1(q.size()), f2(q.size());
    for (std::size_t j = 0; j < q.size(); ++j) q[j] = -0.2 + 5.4 * static_cast<double>(j) / 1999;
    if (testing::sanitized) {
      CHECK(std::isfinite(fast.loo(true).gradient[0]));
      fast.predict(q.data(), q.size(), f1.data());
      CHECK(std::all_of(f1.begin(), f1.end(), [](double f) { return std::isfinite(f); }));
      continue;
    }
    const Attention keywise(d, {h}, keywise_options(&pool));
    check_loo(fast, keywise);
    fast.predict(q.data(), q.size(), f1.data());
    keywise.predict(q.data(), q.size(), f2.data());
    for (std::size_t j = 0; j < q.size(); ++j) CHECK(std::abs(f1[j] - f2[j]) <= 1e-13);
  }
  // Local linear's moments through the cells (1850 keys a box), against its windows key by key.
  EngineOptions o(1e-16, &pool);
  o.method = Method::local_linear;
  const Attention fast(d, {0.05}, o);
  const LooResult a = fast.loo(true);
  CHECK(fast.counters().moment_rows == d.n);  // every row by moments
  if (testing::sanitized) return;
  o.shortcuts = o.shortcuts.without(Shortcut::line_moments);
  const Attention keywise(d, {0.05}, o);
  const LooResult b = keywise.loo(true);
  CHECK(a.mse == doctest::Approx(b.mse).epsilon(1e-12));
  CHECK(a.gradient[0] == doctest::Approx(b.gradient[0]).epsilon(1e-9));
  CHECK(keywise.counters().moment_rows == 0);
}

TEST_CASE("the transform's smooth of values >= 0 spanning 18 orders: each local mean to 1e-12") {
  // Squared residuals 1e-12 below x = 5 and 1e6 above (standard errors of very uneven noise):
  // measured from the middle of their range, the local means below 5 cancelled to nothing.
  const Keys k = keys(20000, 0, 8);
  Dataset d = dataset_of(k);
  std::vector<double> v(d.n);
  for (std::size_t i = 0; i < d.n; ++i) v[i] = d.x[i] < 2.5 ? 1e-12 * (1.5 + std::sin(7.0 * i)) : 1e6;
  std::vector<double> q(2000);
  for (std::size_t j = 0; j < q.size(); ++j) q[j] = 5.0 * static_cast<double>(j) / 1999;
  const Attention fast(d, {0.05}, EngineOptions(1e-16, nullptr));
  const Attention keywise(d, {0.05}, keywise_options(nullptr));
  std::vector<double> f1(q.size()), f2(q.size()), w1(q.size()), w2(q.size()), s1(q.size()), s2(q.size());
  fast.predict_detail(q.data(), q.size(), v, f1.data(), w1.data(), s1.data());
  keywise.predict_detail(q.data(), q.size(), v, f2.data(), w2.data(), s2.data());
  for (std::size_t j = 0; j < q.size(); ++j) {
    CAPTURE(j);
    CHECK(s1[j] >= 0);
    CHECK(s1[j] == doctest::Approx(s2[j]).epsilon(1e-12));
  }
}
