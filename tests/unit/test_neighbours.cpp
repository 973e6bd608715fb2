// Nearest-neighbour bandwidths (EngineOptions::knn, --bandwidth knn:K): predictions and the
// leave-one-out error against a brute-force loop, one column and two, NW and local linear.

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "unit/reference.h"
#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/engine/inspect.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/learn/fit.h"

using namespace nwreg;

namespace {

// The Gaussian NW or local linear (one column) estimate at q with h_k = base_k s, s the distance
// (L2, in units of base) to the K-th nearest training row other than `skip`.
// `out`, when given, marks further rows left out with `skip` (leave-block-out).
double brute(const Dataset& d, const std::vector<double>& base, std::size_t K, const double* q, Method method,
             std::size_t skip = static_cast<std::size_t>(-1), const std::vector<char>* out = nullptr) {
  auto left_out = [&](std::size_t i) { return i == skip || (out && (*out)[i]); };
  std::vector<double> dist;
  for (std::size_t i = 0; i < d.n; ++i) {
    if (left_out(i)) continue;
    double r = 0;
    for (std::size_t k = 0; k < d.d; ++k) r += std::pow((d.row(i)[k] - q[k]) / base[k], 2);
    dist.push_back(std::sqrt(r));
  }
  // (K rows at q itself: 2^-40 of the nearest row beyond them, as only they weigh.)
  const double s = testing::kth_distance(dist, K, {.limit = true});
  long double s0 = 0, s1 = 0, sx = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < d.n; ++i) {
    if (left_out(i)) continue;
    double r = 0;
    for (std::size_t k = 0; k < d.d; ++k) r += std::pow((d.row(i)[k] - q[k]) / (base[k] * s), 2);
    const long double w = std::exp(-0.5L * r), dx = d.row(i)[0] - q[0];
    s0 += w, s1 += w * d.y[i], sx += w * dx, sxx += w * dx * dx, sxy += w * dx * d.y[i];
  }
  const long double den = s0 * sxx - sx * sx;
  if (method == Method::nw || den == 0) return static_cast<double>(s1 / s0);  // no spread: constant
  return static_cast<double>((sxx * s1 - sx * sxy) / den);
}

}  // namespace

TEST_CASE("knn bandwidths: predictions and LOO error equal a brute-force loop") {
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");  // tied times: duplicates count as neighbours
  const Dataset boston = testing::mcycle_or_boston("boston");
  for (Method method : {Method::nw, Method::local_linear}) {
    for (const Dataset* d : {&mcycle, &boston}) {
      if (method == Method::local_linear && d->d > 1) continue;  // the brute force is one-column
      const std::vector<double> base = d->d == 1 ? std::vector<double>{1.0} : std::vector<double>{2.0, 0.4};
      for (std::size_t K : {1, 7, 40}) {
        EngineOptions o;
        o.method = method;
        o.neighbour_policy = {Neighbours::knn, K};
        const Attention e(*d, base, o);
        CAPTURE(to_string(method));
        CAPTURE(d->d);
        CAPTURE(K);
        for (std::size_t i = 0; i < d->n; i += 17) {
          const double* q = d->row(i);
          double f;
          e.predict(q, 1, &f);
          CHECK(f == doctest::Approx(brute(*d, base, K, q, method)).epsilon(1e-10));
        }
        long double sse = 0;
        for (std::size_t i = 0; i < d->n; ++i) {
          const double r = d->y[i] - brute(*d, base, K, d->row(i), method, i);
          sse += r * r;
        }
        CHECK(e.loo(false).mse == doctest::Approx(static_cast<double>(sse / d->n)).epsilon(1e-10));
      }
    }
  }
}

TEST_CASE("knn bandwidths: knn:auto picks the grid's lowest LOO error, and K is checked") {
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");
  FitPlan plan;
  plan.kind = BandwidthSpec::Kind::knn;
  plan.neighbour_policy = {Neighbours::knn, 0};  // K = 0: auto
  const Model m = fit_model(mcycle, plan, {});
  REQUIRE(m.neighbour_policy.K >= 1);
  CHECK(m.bandwidth_source == "knn");
  for (std::size_t K : {m.neighbour_policy.K + 1, m.neighbour_policy.K > 1 ? m.neighbour_policy.K - 1 : m.neighbour_policy.K + 2}) {
    EngineOptions o;
    o.neighbour_policy = {Neighbours::knn, K};
    CHECK(Attention(mcycle, {1.0}, o).loo(false).mse >= *m.loo_mse);
  }
  plan.neighbour_policy = {Neighbours::knn, mcycle.n};
  CHECK_THROWS_WITH_AS(fit_model(mcycle, plan, {}),
                       "knn:133 needs K between 1 and the training rows less one (132)", ParameterError);
}

namespace {

// Adaptive: key i weighs exp(-r_i^2 / (2 s_i^2)) / s_i^d, s_i the distance from row i to its K-th
// nearest other row (the nearest positive one where K rows lie at x_i), in units of base.
// (Each key's own scale s_i counts every other row, whatever rows `skip` and `out` leave out.)
double brute_adaptive(const Dataset& d, const std::vector<double>& base, std::size_t K, const double* q,
                      Kernel kernel, std::size_t skip = static_cast<std::size_t>(-1),
                      const std::vector<char>* out = nullptr) {
  auto dist = [&](const double* a, const double* b) {
    double r = 0;
    for (std::size_t k = 0; k < d.d; ++k)
      r += kernel == Kernel::laplace ? std::abs((a[k] - b[k]) / base[k]) : std::pow((a[k] - b[k]) / base[k], 2);
    return kernel == Kernel::laplace ? r : std::sqrt(r);
  };
  testing::Reference r = testing::gaussian(base);
  r.kernel = kernel, r.normalise = true;
  for (std::size_t i = 0; i < d.n; ++i) {
    std::vector<double> others;
    for (std::size_t j = 0; j < d.n; ++j)
      if (j != i) others.push_back(dist(d.row(i), d.row(j)));
    r.scale.push_back(testing::kth_distance(others, K, {}));
  }
  r.out = [&](std::size_t i) { return i == skip || (out && (*out)[i]); };
  return testing::reference_nw(d, r, q);
}

}  // namespace

TEST_CASE("adaptive bandwidths: predictions and LOO error equal a brute-force loop") {
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");
  const Dataset boston = testing::mcycle_or_boston("boston");
  for (Kernel kernel : {Kernel::gaussian, Kernel::laplace}) {
    for (const Dataset* d : {&mcycle, &boston}) {
      const std::vector<double> base = d->d == 1 ? std::vector<double>{1.0} : std::vector<double>{2.0, 0.4};
      for (std::size_t K : {1, 9}) {
        EngineOptions o;
        o.kernel = kernel;
        o.neighbour_policy = {Neighbours::adaptive, K};
        const Attention e(*d, base, o);
        CAPTURE(to_string(kernel));
        CAPTURE(d->d);
        CAPTURE(K);
        for (std::size_t i = 0; i < d->n; i += 23) {
          const double q[2] = {d->row(i)[0] + 0.37, d->d > 1 ? d->row(i)[1] - 0.05 : 0.0};
          double f;
          e.predict(q, 1, &f);
          CHECK(f == doctest::Approx(brute_adaptive(*d, base, K, q, kernel)).epsilon(1e-10));
        }
        if (d->n > 200) continue;  // the brute-force LOO is cubic
        long double sse = 0;
        for (std::size_t i = 0; i < d->n; ++i) {
          const double r = d->y[i] - brute_adaptive(*d, base, K, d->row(i), kernel, i);
          sse += r * r;
        }
        CHECK(e.loo(false).mse == doctest::Approx(static_cast<double>(sse / d->n)).epsilon(1e-10));
      }
    }
  }
}

TEST_CASE("leave-block-out: knn and adaptive LOO errors equal a brute-force loop without each row's block") {
  // Lake Huron's years: x distinct and sorted, so row j's block is rows j - L .. j + L.
  CsvReader r(testing::source_path("data/lakehuron.csv"), CsvOptions{});
  const Dataset d = read_dataset(r, ColumnChoice{});
  const std::size_t L = 3;
  for (Neighbours kind : {Neighbours::knn, Neighbours::adaptive}) {
    for (std::size_t K : {1, 6, 20}) {
      EngineOptions o;
      o.neighbour_policy = {kind, K};
      o.leave_out = L;
      CAPTURE(to_string(kind));
      CAPTURE(K);
      long double sse = 0;
      for (std::size_t j = 0; j < d.n; ++j) {
        std::vector<char> out(d.n, 0);
        for (std::size_t i = j - std::min(j, L); i <= std::min(d.n - 1, j + L); ++i) out[i] = 1;
        const double f = kind == Neighbours::knn ? brute(d, {1.0}, K, d.row(j), Method::nw, j, &out)
                                                 : brute_adaptive(d, {1.0}, K, d.row(j), Kernel::gaussian, j, &out);
        sse += (d.y[j] - f) * (d.y[j] - f);
      }
      CHECK(Attention(d, {1.0}, o).loo(false).mse == doctest::Approx(static_cast<double>(sse / d.n)).epsilon(1e-10));
    }
  }
  // knn:auto with --leave-out: K at most n - 1 - 2L, and its choice no longer interpolates the series.
  FitPlan plan;
  plan.kind = BandwidthSpec::Kind::knn;
  plan.neighbour_policy = {Neighbours::knn, 0};
  EngineOptions e;
  e.leave_out = 4;
  const Model m = fit_model(d, plan, e);
  CHECK(m.leave_out == 4);
  CHECK(m.neighbour_policy.K > 2);
  plan.neighbour_policy = {Neighbours::knn, d.n - 1 - 7};
  CHECK_THROWS_AS(fit_model(d, plan, e), ParameterError);
}

TEST_CASE("knn: K keys at the query give their mean, as just beside them (no jump at a tie)") {
  // Issue 25: three keys at 0, knn:2 (Gaussian): f(0) was 3.64 (the scale jumped to the next
  // key's distance), f(+-1e-9) 1.
  const Dataset d = testing::make_dataset({0, 0, 0, 1, 2, 3, 4, 5}, {1, 1, 1, 5, 6, 7, 8, 9});
  for (Kernel kernel : {Kernel::gaussian, Kernel::laplace, Kernel::tricube}) {
    EngineOptions o;
    o.kernel = kernel;
    o.neighbour_policy = {Neighbours::knn, 2};
    const Attention e(d, {1.0}, o);
    const double q[] = {0, 1e-9, -1e-9};
    double f[3];
    e.predict(q, 3, f);
    CAPTURE(to_string(kernel));
    for (double v : f) CHECK(v == doctest::Approx(1.0).epsilon(1e-12));
  }
}

// The cases in which the adaptive tests compare the pruned sums with those over every key: no
// sample weights and weights with zeros, Gaussian and Laplace, NW and local linear (K = 20).
template <class F>
void each_adaptive_case(Dataset& d, const F& check) {
  for (bool weighted : {false, true}) {
    d.weight.clear();
    if (weighted)
      for (std::size_t i = 0; i < d.n; ++i) d.weight.push_back(i % 11 == 0 ? 0.0 : 0.5 + static_cast<double>(i % 5));
    for (Kernel kernel : {Kernel::gaussian, Kernel::laplace})
      for (Method method : {Method::nw, Method::local_linear}) {
        EngineOptions on;
        on.kernel = kernel;
        on.method = method;
        on.neighbour_policy = {Neighbours::adaptive, 20};
        EngineOptions every = on;
        every.tolerance = 0;  // no pruning: every key
        CAPTURE(weighted);
        CAPTURE(to_string(kernel));
        CAPTURE(to_string(method));
        check(method, on, every);
      }
  }
}

// Two x columns of n rows: row i's (a, b) from draw(i), every tie-th row (i % tie == tie - 1)
// a copy of the row before, y from value(a, b).
template <class Draw, class Value>
Dataset two_columns(int n, int tie, const Draw& draw, const Value& value) {
  Dataset d;
  d.d = 2;
  d.x_names = {"a", "b"};
  for (int i = 0; i < n; ++i) {
    auto [a, b] = draw(i);
    if (i % tie == tie - 1) a = d.x[d.x.size() - 2], b = d.x.back();
    d.x.insert(d.x.end(), {a, b});
    d.y.push_back(value(a, b));
  }
  d.n = d.y.size();
  return d;
}

// Adaptive bandwidths with compact kernels (Epanechnikov, tricube; K = 15) sum exactly the keys
// whose own support holds the query. Brute force, key i weighing prod_k K(u_k) / s_i^d, u_k =
// (x_ik - q_k) / (h_k s_i), s_i its K-th nearest other key's distance (the largest coordinate,
// in bandwidths) widened to the next distance beyond it: predictions at `queries` and the LOO
// error.
void check_compact_adaptive(const Dataset& d, const std::vector<double>& h, const std::vector<std::vector<double>>& queries) {
  const std::size_t K = 15;
  std::vector<double> s(d.n);
  for (std::size_t i = 0; i < d.n; ++i) {
    std::vector<double> r;
    for (std::size_t j = 0; j < d.n; ++j) {
      if (j == i) continue;
      double top = 0;
      for (std::size_t k = 0; k < d.d; ++k) top = std::max(top, std::abs(d.row(j)[k] - d.row(i)[k]) / h[k]);
      r.push_back(top);
    }
    s[i] = testing::kth_distance(r, K, {.widen = true});
  }
  auto brute = [&](Kernel kernel, const double* qv, std::size_t skip) {
    testing::Reference r = testing::gaussian(h);
    r.kernel = kernel, r.scale = s, r.normalise = true;  // adaptive: each key at its own scale s_i
    r.out = [&](std::size_t i) { return i == skip; };
    return testing::reference_nw(d, r, qv);
  };
  for (Kernel kernel : {Kernel::epanechnikov, Kernel::tricube}) {
    EngineOptions o;
    o.kernel = kernel;
    o.neighbour_policy = {Neighbours::adaptive, K};
    const Attention a(d, h, o);
    CAPTURE(to_string(kernel));
    for (const auto& qv : queries) {
      double f;
      a.predict(qv.data(), 1, &f);
      CHECK(f == doctest::Approx(brute(kernel, qv.data(), static_cast<std::size_t>(-1))).epsilon(1e-12));
    }
    long double sse = 0;
    for (std::size_t i = 0; i < d.n; ++i) sse += std::pow(d.y[i] - brute(kernel, d.row(i), i), 2);
    CHECK(a.loo(false).mse == doctest::Approx(static_cast<double>(sse / d.n)).epsilon(1e-10));
  }
}

TEST_CASE("adaptive bandwidths in one column: the blocks kept give the sums over every key") {
  // Density that varies a thousandfold: 2000 keys on [0, 1], 900 on [1, 10], 100 on [50, 60],
  // so the scales s_i do too; sample weights with zeros.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x, y;
  for (int i = 0; i < 3000; ++i) {
    const double v = i < 2000 ? u(rng) : i < 2900 ? 1 + 9 * u(rng) : 50 + 10 * u(rng);
    x.push_back(v);
    y.push_back(std::sin(v) + 0.2 * (u(rng) - 0.5));
  }
  Dataset d = testing::make_dataset(x, y);
  std::vector<double> q;
  for (int j = 0; j <= 80; ++j) q.push_back(-5 + 70.0 * j / 80);
  each_adaptive_case(d, [&](Method method, const EngineOptions& on, const EngineOptions& every) {
    const Attention a(d, {1.5}, on);
    std::vector<double> fa(q.size()), fb(q.size());
    a.predict(q.data(), q.size(), fa.data());
    if (testing::sanitized) {  // without the reference
      CHECK(std::isfinite(a.loo(true).gradient[0]));
      return;
    }
    const Attention b(d, {1.5}, every);
    b.predict(q.data(), q.size(), fb.data());
    // (A local line extrapolated across the gap between 10 and 50, or beyond the ends, solves
    // a system as ill-conditioned as (distance / spread)^2: any two ways of summing differ.)
    for (std::size_t j = 0; j < q.size(); ++j) {
      CAPTURE(q[j]);
      const bool inside = (q[j] >= 0 && q[j] <= 10) || (q[j] >= 50 && q[j] <= 60);
      if (method == Method::nw || inside) CHECK(fa[j] == doctest::Approx(fb[j]).epsilon(1e-12));
    }
    const LooResult la = a.loo(true), lb = b.loo(true);
    CHECK(la.mse == doctest::Approx(lb.mse).epsilon(1e-12));
    CHECK(la.gradient[0] == doctest::Approx(lb.gradient[0]).epsilon(1e-9));
    CHECK(a.counters().pairs * 2 < b.counters().pairs);  // the blocks kept hold under half the keys
  });
  // Compact kernels: exactly the keys whose own support holds the query (brute force).
  d.weight.clear();
  check_compact_adaptive(d, {1.0}, {{0.3}, {0.97}, {2.5}, {7.77}, {52.0}});
}

TEST_CASE("adaptive bandwidths in one column: repeated x merged into keys give what every row its own key gives") {
  // 400 rows on 9 values repeated 1 to 150 times, and 40 distinct ones: K below, between and
  // above the repeats, so that a key's K nearest other rows lie at its own x, across the next
  // values, or both. Merged keys count each row (a key of m rows holds m - 1 others at distance
  // 0); every row its own key is the reference (the merge_keys shortcut left out).
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const double values[9] = {0, 0.5, 1, 1.5, 2.5, 4, 4.25, 7, 9};
  const int repeats[9] = {1, 2, 5, 30, 150, 3, 60, 100, 9};
  std::vector<double> x, y;
  for (int v = 0; v < 9; ++v)
    for (int r = 0; r < repeats[v]; ++r) x.push_back(values[v]);
  for (int i = 0; i < 40; ++i) x.push_back(10 * u(rng));
  std::shuffle(x.begin(), x.end(), rng);
  for (double v : x) y.push_back(std::sin(v) + u(rng) - 0.5);
  Dataset d = testing::make_dataset(x, y);
  std::vector<double> q = {-3, 0, 0.2, 1.5, 2.5, 3.3, 4.1, 4.25, 8, 9, 12};
  for (bool weighted : {false, true}) {
    d.weight.clear();
    if (weighted)  // every weight positive: still merged
      for (std::size_t i = 0; i < d.n; ++i) d.weight.push_back(0.5 + static_cast<double>(i % 5));
    for (Kernel kernel : {Kernel::gaussian, Kernel::laplace})
      for (Method method : {Method::nw, Method::local_linear})
        for (std::size_t K : {1, 4, 29, 100, 200}) {
          EngineOptions on;
          on.kernel = kernel;
          on.method = method;
          on.neighbour_policy = {Neighbours::adaptive, K};
          on.out_of_reach = OutOfReach::nearest;
          EngineOptions apart = on;
          apart.shortcuts = apart.shortcuts.without(Shortcut::merge_keys);
          CAPTURE(weighted);
          CAPTURE(to_string(kernel));
          CAPTURE(to_string(method));
          CAPTURE(K);
          const Attention a(d, {0.8}, on), b(d, {0.8}, apart);
          std::vector<double> fa(q.size()), fb(q.size());
          a.predict(q.data(), q.size(), fa.data());
          b.predict(q.data(), q.size(), fb.data());
          for (std::size_t j = 0; j < q.size(); ++j) {
            CAPTURE(q[j]);
            CHECK(fa[j] == doctest::Approx(fb[j]).epsilon(1e-11));
          }
          const std::uint64_t pa = a.counters().pairs, pb = b.counters().pairs;
          const LooResult la = a.loo(true), lb = b.loo(true);
          CHECK(la.mse == doctest::Approx(lb.mse).epsilon(1e-11));
          CHECK(la.gradient[0] == doctest::Approx(lb.gradient[0]).epsilon(1e-9));
          CHECK(a.counters().pairs - pa < b.counters().pairs - pb);  // the repeats summed once
          const InSample ia = a.insample(false), ib = b.insample(false);
          CHECK(ia.trace == doctest::Approx(ib.trace).epsilon(1e-11));
          const LooDetail da = a.loo_detail(), db = b.loo_detail();
          CHECK(da.neighbours == doctest::Approx(db.neighbours).epsilon(1e-11));
          CHECK(reach(a, 7) == reach(b, 7));  // sampled over the rows: the same rows' scales
        }
  }
  // Compact kernels keep every row its own key: exactly the keys whose own support holds q.
  d.weight.clear();
  check_compact_adaptive(d, {0.8}, {{0.2}, {4.1}, {1.5}});
  // Gaussian NW against the brute force, which counts every other row (K = 29: a key of 30 rows
  // holds exactly 29 others at its own x).
  d.weight.clear();
  EngineOptions o;
  o.neighbour_policy = {Neighbours::adaptive, 29};
  const Attention e(d, {1.0}, o);
  long double sse = 0;
  for (std::size_t i = 0; i < d.n; ++i) {
    const double r = d.y[i] - brute_adaptive(d, {1.0}, 29, d.row(i), Kernel::gaussian, i);
    sse += r * r;
  }
  CHECK(e.loo(false).mse == doctest::Approx(static_cast<double>(sse / d.n)).epsilon(1e-10));
}

TEST_CASE("adaptive bandwidths in several columns: the k-d tree's nodes kept give the sums over every key") {
  // Two columns, a density that varies a thousandfold (1500 keys in [0, 1]^2, 400 in
  // [1, 10]^2, 100 in [50, 60] x [0, 10]), so the scales s_i do too; ties (every tenth key
  // repeats the one before); sample weights with zeros.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  Dataset d = two_columns(
      2000, 10,
      [&](int i) {
        const double a = i < 1500 ? u(rng) : i < 1900 ? 1 + 9 * u(rng) : 50 + 10 * u(rng);
        return std::array<double, 2>{a, i < 1500 ? u(rng) : 10 * u(rng)};
      },
      [&](double a, double b) { return std::sin(a) + std::cos(b) + 0.2 * (u(rng) - 0.5); });
  std::vector<double> q;  // a lattice over the data, its gap and beyond
  for (int j = 0; j <= 12; ++j)
    for (int k = 0; k <= 4; ++k) q.insert(q.end(), {-5 + 70.0 * j / 12, -2 + 14.0 * k / 4});
  const std::size_t m = q.size() / 2;
  each_adaptive_case(d, [&](Method method, const EngineOptions& on, const EngineOptions& every) {
    const Attention a(d, {1.5, 0.8}, on);
    std::vector<double> fa(m), fb(m);
    a.predict(q.data(), m, fa.data());
    if (testing::sanitized) {  // without the reference
      CHECK(std::isfinite(a.loo(true).gradient[1]));
      return;
    }
    const Attention b(d, {1.5, 0.8}, every);
    b.predict(q.data(), m, fb.data());
    for (std::size_t j = 0; j < m; ++j) {
      CAPTURE(j);
      const double qa = q[2 * j], qb = q[2 * j + 1];
      const bool inside = qb >= 0 && qb <= 10 && ((qa >= 0 && qa <= 10) || (qa >= 50 && qa <= 60));
      if (method == Method::nw || inside) CHECK(fa[j] == doctest::Approx(fb[j]).epsilon(1e-12));
    }
    // The nodes kept for the lattice hold under half the keys (most of it far from the
    // data, where only the nearest keys' widest scales reach); for the LOO rows, fewer than
    // every key (at 2000 keys a Gaussian's 1e-16 reach spans most of the dense parts).
    const auto pa = a.counters().pairs, pb = b.counters().pairs;
    CHECK(pa * 2 < pb);
    const LooResult la = a.loo(true), lb = b.loo(true);
    CHECK(a.counters().pairs - pa < b.counters().pairs - pb);
    CHECK(la.mse == doctest::Approx(lb.mse).epsilon(1e-12));
    for (std::size_t k = 0; k < 2; ++k) CHECK(la.gradient[k] == doctest::Approx(lb.gradient[k]).epsilon(1e-9));
  });
  // Compact kernels: exactly the keys whose own support holds the query (brute force).
  d.weight.clear();
  check_compact_adaptive(d, {1.0, 2.0}, {{0.3, 0.6}, {0.97, 0.02}, {2.5, 7.0}, {7.77, 3.3}, {52.0, 9.0}});
}

TEST_CASE("neighbour bandwidths in several columns: keys near 1e9, and the same bits on 1 and 3 threads") {
  // 3000 keys in two columns, the first near 1.7e9 (spacing 1e-3 of its range around it), ties;
  // knn, span (tricube) and adaptive. Pruned against every key, and the per-thread bounds on
  // the K-th distance (KthHint) against one thread: every bit the same.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  const Dataset d = two_columns(
      3000, 9,
      [&](int i) {
        const double a = 1.7e9 + 1000 * u(rng);
        return std::array<double, 2>{a, i < 2000 ? u(rng) : 5 + 5 * u(rng)};
      },
      [&](double a, double b) { return std::sin(a / 100) + b + 0.1 * (u(rng) - 0.5); });
  const double q[6] = {1.7e9 + 10, 0.5, 1.7e9 + 990, 7, 1.7e9 - 500, 20};
  ThreadPool pool(3);
  struct Case {
    Neighbours kind;
    std::size_t K;
    double F;
    Kernel kernel;
  };
  for (const Case c : {Case{Neighbours::knn, 30, 0, Kernel::gaussian}, Case{Neighbours::span, 0, 0.05, Kernel::tricube},
                       Case{Neighbours::adaptive, 30, 0, Kernel::gaussian}}) {
    EngineOptions one;
    one.kernel = c.kernel;
    one.neighbour_policy = {c.kind, c.K};
    one.neighbour_policy.F = c.F;
    EngineOptions every = one, three = one;
    every.tolerance = 0;
    three.pool = &pool;
    CAPTURE(to_string(c.kind));
    const std::vector<double> h{50, 0.3};
    const Attention a(d, h, one), b(d, h, every), t(d, h, three);
    double fa[3], fb[3], ft[3];
    a.predict(q, 3, fa);
    b.predict(q, 3, fb);
    t.predict(q, 3, ft);
    for (int j = 0; j < 3; ++j) {
      CHECK(fa[j] == doctest::Approx(fb[j]).epsilon(1e-12));
      CHECK(ft[j] == fa[j]);
    }
    const LooResult la = a.loo(true), lb = b.loo(true), lt = t.loo(true);
    CHECK(la.mse == doctest::Approx(lb.mse).epsilon(1e-12));
    CHECK(lt.mse == la.mse);
    CHECK(lt.gradient == la.gradient);
  }
}

TEST_CASE("adaptive bandwidths in one column: out of every support, the nearest key by its own scale answers") {
  // A block is kept where its widest scale reaches q, though none of its keys may: at q = 21
  // the key at 60 (scaled distance 39 / 29.97 = 1.30, its block kept) is not the nearest; the
  // key at 10 is (11 / 9.97 = 1.10, its block left out).
  std::vector<double> x;
  for (int i = 0; i <= 30; ++i) x.push_back(i * 0.001);
  x.push_back(10);
  for (int i = 0; i <= 30; ++i) x.push_back(30 + i * 0.001);
  x.push_back(60);
  const Dataset d = testing::make_dataset(x, x);  // y = x: the answer names the key
  EngineOptions o;
  o.kernel = Kernel::uniform;
  o.neighbour_policy = {Neighbours::adaptive, 1};
  o.out_of_reach = OutOfReach::nearest;
  const Attention a(d, {1.0}, o);
  const double q = 21;
  double f;
  a.predict(&q, 1, &f);
  CHECK(f == 10.0);
}

TEST_CASE("set_neighbours: another K on the same keys gives what a new engine gives") {
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");
  for (Neighbours kind : {Neighbours::knn, Neighbours::adaptive, Neighbours::span}) {
    EngineOptions o;
    o.kernel = kind == Neighbours::span ? Kernel::tricube : Kernel::gaussian;
    o.neighbour_policy = kind == Neighbours::span ? NeighbourBandwidth{kind, 0, 0.2} : NeighbourBandwidth{kind, 3};
    Attention a(mcycle, {1.0}, o);
    CAPTURE(to_string(kind));
    for (const NeighbourBandwidth nb : kind == Neighbours::span
                                           ? std::vector<NeighbourBandwidth>{{kind, 0, 0.5}, {kind, 0, 0.1}}
                                           : std::vector<NeighbourBandwidth>{{kind, 20}, {kind, 2}}) {
      a.set_neighbours(nb);
      EngineOptions fresh = o;
      fresh.neighbour_policy = nb;
      CHECK(a.loo(false).mse == Attention(mcycle, {1.0}, fresh).loo(false).mse);
    }
  }
  EngineOptions o;
  o.neighbour_policy = {Neighbours::knn, 3};
  Attention a(mcycle, {1.0}, o);
  CHECK_THROWS_WITH_AS(a.set_neighbours({Neighbours::adaptive, 3}),
                       "set_neighbours keeps the policy: knn, got adaptive", ParameterError);
  // A span that holds no key: refused, the engine left as it was.
  EngineOptions sp;
  sp.kernel = Kernel::tricube;
  sp.neighbour_policy = {Neighbours::span, 0, 0.3};
  Attention s(mcycle, {1.0}, sp);
  const double before = s.loo(false).mse;
  CHECK_THROWS_AS(s.set_neighbours({Neighbours::span, 0, 1e-4}), DataError);
  CHECK(s.loo(false).mse == before);
}

TEST_CASE("span in several columns: in-sample rows after a leave-one-out pass are those of a fresh engine") {
  // A leave-one-out row's search keeps its key's in-sample scale (the (K-1)-th of the others)
  // for the in-sample pass: every bit as that pass's own search gives it. 400 keys in two
  // columns, a fifth of them repeated (an in-sample K-th of 0, left to its own search); spans
  // from K = 2 to past every key, local linear and NW.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const Dataset d = two_columns(
      400, 9, [&](int i) { return i % 5 == 0 ? std::array<double, 2>{0.5, 0.25} : std::array<double, 2>{u(rng), u(rng)}; },
      [&](double a, double b) { return std::sin(6 * a) + b + 0.1 * (u(rng) - 0.5); });
  for (const Method method : {Method::nw, Method::local_linear})
    for (const double F : {2.0 / 400, 0.05, 0.5, 1.0, 1.5}) {
      EngineOptions o;
      o.kernel = Kernel::tricube;
      o.method = method;
      o.neighbour_policy = {Neighbours::span, 0, F};
      CAPTURE(F);
      const Attention fresh(d, {1.0, 1.0}, o), after(d, {1.0, 1.0}, o);
      (void)after.loo(false);
      const InSample a = fresh.insample(false), b = after.insample(false);
      CHECK(b.trace == a.trace);
      CHECK(b.mse == a.mse);
      CHECK(b.room == a.room);
    }
}

TEST_CASE("neighbour bandwidths with sample weights of 0: a row whose nearest key weighs 0 still sums only the keys in reach") {
  // Every third row weighs 0 (kept as a neighbour, weighing nothing): a row's nearest other key
  // often weighs 0, and its reach was measured from that key's weight, 0, so it summed every
  // key (n^2 a pass). It is measured from the nearest key that weighs something: the LOO error,
  // its gradient and the predictions equal the sums over every key (--tolerance 0), with far
  // fewer pairs.
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(0, 10);
  for (std::size_t d : {1, 2}) {
    const std::size_t n = 3000;
    std::vector<double> x, y, w;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < d; ++k) x.push_back(u(rng));
      y.push_back(std::sin(x[i * d]) + u(rng) / 10);
      w.push_back(i % 3 == 0 ? 0.0 : 1.0 + static_cast<double>(i % 2));
    }
    Dataset data = testing::make_dataset(x, y);
    data.n = n;
    data.d = d;
    data.x_names = d == 1 ? std::vector<std::string>{"a"} : std::vector<std::string>{"a", "b"};
    data.weight = w;
    const std::vector<double> h(d, 0.5);
    std::vector<double> q;
    for (std::size_t j = 0; j < 20 * d; ++j) q.push_back(u(rng));
    for (const Neighbours how : {Neighbours::knn, Neighbours::adaptive})
      for (const Kernel kernel : {Kernel::gaussian, Kernel::laplace}) {
        EngineOptions pruned;
        pruned.kernel = kernel;
        pruned.neighbour_policy = {how, 30};
        EngineOptions every = pruned;
        every.tolerance = 0;
        CAPTURE(d);
        CAPTURE(to_string(kernel));
        CAPTURE(how == Neighbours::knn);
        const Attention a(data, h, pruned), b(data, h, every);
        const LooResult la = a.loo(true), lb = b.loo(true);
        CHECK(la.mse == doctest::Approx(lb.mse).epsilon(1e-12));
        for (std::size_t k = 0; k < d; ++k) CHECK(la.gradient[k] == doctest::Approx(lb.gradient[k]).epsilon(1e-9));
        // About as few pairs as where those rows weigh something (before: a third of the rows
        // summed every key, 2.4 and 2.9 times as many with the Gaussian kernel in one column;
        // elsewhere at these 3000 rows the reach spans most keys either way).
        Dataset weighed = data;
        for (double& v : weighed.weight) v = v > 0 ? v : 1.0;
        const Attention c(weighed, h, pruned);
        c.loo(true);
        CHECK(a.counters().pairs < 1.25 * static_cast<double>(c.counters().pairs));
        std::vector<double> fa(q.size() / d), fb(q.size() / d);
        a.predict(q.data(), fa.size(), fa.data());
        b.predict(q.data(), fb.size(), fb.data());
        for (std::size_t j = 0; j < fa.size(); ++j) CHECK(fa[j] == doctest::Approx(fb[j]).epsilon(1e-12));
      }
  }
}

TEST_CASE("neighbour bandwidths with sample weights of 0: weights are measured from a key that weighs something") {
  // Exponential kernels weigh every key relative to one key b. Where b, the nearest, weighs 0
  // and every weighed key lies more than 2^-1021 of its weight away, each was clamped to that
  // floor alike and the fit was their plain mean (2.5 here at --tolerance 0, 1.5 below at the
  // default): it is the exact kernel mean of the weighed keys.
  Dataset one = testing::make_dataset({0, 1, 2, 3, 4}, {100, 1, 2, 3, 4});
  one.weight = {0, 1, 1, 1, 1};
  const double q = 0.001;  // knn:1: h = 0.001, the distance to the row of weight 0
  for (const double tolerance : {1e-16, 0.0}) {
    EngineOptions o(tolerance, nullptr);
    o.neighbour_policy = {Neighbours::knn, 1};
    double f = 0;
    Attention(one, {1.0}, o).predict(&q, 1, &f);
    CHECK(f == 1);  // key 1 outweighs key 2 by e^1.5e6
  }
  Dataset close = testing::make_dataset({0, 1, 1.00001, 3, 4}, {100, 1, 2, 3, 4});
  close.weight = {0, 1, 1, 1, 1};
  EngineOptions gauss, laplace;
  gauss.neighbour_policy = laplace.neighbour_policy = {Neighbours::knn, 1};
  laplace.kernel = Kernel::laplace;
  double g = 0, l = 0;
  Attention(close, {1.0}, gauss).predict(&q, 1, &g);
  Attention(close, {1.0}, laplace).predict(&q, 1, &l);
  // Gaussian: key 1.00001 weighs exp(-(0.99901^2 - 0.999^2) / 2e-6) of key 1's; Laplace e^-0.01.
  const double eg = std::exp(-(0.99901 * 0.99901 - 0.999 * 0.999) / 2e-6), el = std::exp(-0.01);
  CHECK(g == doctest::Approx((1 + 2 * eg) / (1 + eg)).epsilon(1e-9));
  CHECK(l == doctest::Approx((1 + 2 * el) / (1 + el)).epsilon(1e-9));
  // Adaptive far past the data: the weighed key of widest scale dominates (x = 3, its 1st
  // nearest 2.9 away; x = 20 weighs 0), as it does with the row of weight 0 left out.
  Dataset far = testing::make_dataset({0, 0.1, 3, 20}, {0, 1, 3, 100});
  far.weight = {1, 1, 1, 0};
  EngineOptions adaptive;
  adaptive.neighbour_policy = {Neighbours::adaptive, 1};
  const double at = 1000;
  double a = 0;
  Attention(far, {1.0}, adaptive).predict(&at, 1, &a);
  CHECK(a == doctest::Approx(3).epsilon(1e-12));
}
