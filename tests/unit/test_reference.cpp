// Every path of the engine against a plain scalar reference written from the definitions
// (attention.h), in long double with every key: every kernel, both methods, 1 to 4 columns,
// with and without sample weights, ties, far-away queries, tiny and huge bandwidths.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "nwreg/engine/attention.h"
#include "nwreg/engine/inspect.h"
#include "nwreg/base/thread_pool.h"

using namespace nwreg;

namespace {

using Real = long double;

Real kernel_value(Kernel k, Real u) {
  const Real a = std::fabs(u);
  switch (k) {
    case Kernel::epanechnikov: return a < 1 ? 1 - a * a : 0;
    case Kernel::tricube: return a < 1 ? (1 - a * a * a) * (1 - a * a * a) * (1 - a * a * a) : 0;
    case Kernel::uniform: return a <= 1 ? 1 : 0;
    default: return 0;
  }
}

// Unnormalised weights of every key at q, leaving out key `skip` (n: none). Exponential
// kernels relative to the nearest key, their exponents as exact differences (the reference
// must hold at q = 1e6 with h = 0.01, where squares would lose every digit).
std::vector<Real> weights_at(const Dataset& data, const std::vector<double>& h, Kernel k, const double* q,
                             std::size_t skip) {
  const std::size_t n = data.n, d = data.d;
  std::vector<Real> e(n, 0);
  auto keep = [&](std::size_t i) { return i != skip && (data.weight.empty() || data.weight[i] > 0); };
  if (is_compact(k)) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!keep(i)) continue;
      Real v = data.weight.empty() ? 1 : data.weight[i];
      for (std::size_t c = 0; c < d; ++c) v *= kernel_value(k, (Real(data.x[i * d + c]) - q[c]) / h[c]);
      e[i] = v;
    }
    return e;
  }
  // log weight relative to key b: -(r_i - r_b) with r = sum (u^2/2) or sum |u|, as differences.
  auto rel = [&](std::size_t i, std::size_t b) {
    Real s = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const Real xi = data.x[i * d + c], xb = data.x[b * d + c], qc = q[c], hc = h[c];
      s += k == Kernel::gaussian ? (xi - xb) * ((xi - qc) + (xb - qc)) / (2 * hc * hc)
                                 : (std::fabs(xi - qc) - std::fabs(xb - qc)) / hc;
    }
    return s;
  };
  std::size_t b = n;
  for (std::size_t i = 0; i < n; ++i)
    if (keep(i) && (b == n || rel(i, b) < 0)) b = i;
  for (std::size_t i = 0; i < n; ++i)
    if (keep(i)) e[i] = (data.weight.empty() ? 1 : data.weight[i]) * std::exp(-rel(i, b));
  return e;
}

// NW or local linear at q from the weights (normal equations by Gaussian elimination).
Real fit_at(const Dataset& data, const std::vector<double>& h, Method m, const double* q, const std::vector<Real>& e) {
  const std::size_t n = data.n, d = data.d;
  if (m == Method::nw) {
    Real s0 = 0, s1 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      s0 += e[i];
      s1 += e[i] * data.y[i];
    }
    return s1 / s0;
  }
  const std::size_t p = d + 1;
  std::vector<Real> a(p * (p + 1), 0);  // [S | t]
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<Real> z(p, 1);
    for (std::size_t c = 0; c < d; ++c) z[c + 1] = (Real(data.x[i * d + c]) - q[c]) / h[c];
    for (std::size_t r = 0; r < p; ++r) {
      for (std::size_t c = 0; c < p; ++c) a[r * (p + 1) + c] += e[i] * z[r] * z[c];
      a[r * (p + 1) + p] += e[i] * z[r] * data.y[i];
    }
  }
  for (std::size_t c = 0; c < p; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < p; ++r)
      if (std::fabs(a[r * (p + 1) + c]) > std::fabs(a[piv * (p + 1) + c])) piv = r;
    for (std::size_t j = 0; j <= p; ++j) std::swap(a[c * (p + 1) + j], a[piv * (p + 1) + j]);
    for (std::size_t r = 0; r < p; ++r) {
      if (r == c) continue;
      const Real f = a[r * (p + 1) + c] / a[c * (p + 1) + c];
      for (std::size_t j = c; j <= p; ++j) a[r * (p + 1) + j] -= f * a[c * (p + 1) + j];
    }
  }
  return a[p] / a[0];
}

struct ReferenceCase {
  Dataset data;
  std::vector<double> queries;  // m x d
};

constexpr Kernel all_kernels[] = {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube,
                                  Kernel::uniform};

// n points in d columns on [0, 5]: each column from `levels` evenly spaced values (heavy ties),
// or with levels = 0 uniform, every other column rounded to halves (some ties); y noisy.
Dataset sample_data(std::size_t n, std::size_t d, bool weighted, std::uint64_t seed, int levels = 0) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 5), w(0.2, 3);
  std::uniform_int_distribution<int> pick(0, std::max(levels - 1, 0));
  Dataset data;
  data.n = n;
  data.d = d;
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const double v = levels ? 5.0 * pick(g) / (levels - 1) : k % 2 ? std::round(u(g) * 2) / 2 : u(g);
      data.x.push_back(v);
      s += std::sin(v * (k + 1));
    }
    data.y.push_back(3 * s + u(g) - 2.5);
    if (weighted) data.weight.push_back(i % 7 == 3 ? 0.0 : w(g));
  }
  for (std::size_t k = 0; k < d; ++k) data.x_names.push_back("x" + std::to_string(k + 1));
  return data;
}

// One x column from its values, y and sample weights (none: unweighted).
Dataset one_column(std::vector<double> x, std::vector<double> y, std::vector<double> w = {}) {
  Dataset d;
  d.n = x.size();
  d.d = 1;
  d.x = std::move(x);
  d.y = std::move(y);
  d.weight = std::move(w);
  d.x_names = {"x"};
  return d;
}

// sample_data with queries inside, at the edges, and (far) 1e6 away.
ReferenceCase make_case(std::size_t n, std::size_t d, bool weighted, bool far, std::uint64_t seed) {
  ReferenceCase c{sample_data(n, d, weighted, seed), {}};
  for (int j = 0; j < 12; ++j)
    for (std::size_t k = 0; k < d; ++k) c.queries.push_back(-0.5 + 6.0 * ((j * 7 + k * 3) % 12) / 11);
  if (far)
    for (std::size_t k = 0; k < d; ++k) c.queries.push_back(1e6 + 0.37 * k);
  return c;
}

}  // namespace

TEST_CASE("every kernel, method and column count equals the scalar reference to 1e-12") {
  for (std::size_t d = 1; d <= 4; ++d) {
    for (bool weighted : {false, true}) {
      for (Kernel k : all_kernels) {
        const bool compact = is_compact(k);
        // Far queries only where every key is in reach: exponential kernels.
        const ReferenceCase c = make_case(150 + 40 * d, d, weighted, !compact, 17 * d + weighted);  // >= 128: a k-d tree
        const std::size_t m = c.queries.size() / d;
        double yspan = 0;
        for (double v : c.data.y) yspan = std::max(yspan, std::abs(v));
        // Tiny (exponential kernels: the nearest keys decide), moderate and huge bandwidths.
        std::vector<double> scales = {0.8, 1e5};
        if (!compact) scales.insert(scales.end(), {0.15, 1e-3});  // 0.15: the pruning bound decides
        for (double scale : scales) {
          for (Method method : {Method::nw, Method::local_linear}) {
            // Local linear at a tiny h extrapolates a line through keys whose weights differ by
            // e^-100, and at 0.15 in several columns it fits planes to a handful of keys: no
            // well-conditioned truth to compare with (the same with every key summed).
            if (method == Method::local_linear && (scale < 1e-2 || (scale < 0.5 && d > 1))) continue;
            CAPTURE(d);
            CAPTURE(weighted);
            CAPTURE(to_string(k));
            CAPTURE(to_string(method));
            CAPTURE(scale);
            std::vector<double> h;
            for (std::size_t j = 0; j < d; ++j) h.push_back(scale * (1 + 0.3 * j) * (compact ? 2.5 : 1));
            EngineOptions o;
            o.kernel = k;
            o.method = method;
            o.out_of_reach = OutOfReach::nearest;
            const Attention a(c.data, h, o);
            std::vector<double> f(m);
            a.predict(c.queries.data(), m, f.data());
            for (std::size_t j = 0; j < m; ++j) {
              const double* q = c.queries.data() + j * d;
              const std::vector<Real> e = weights_at(c.data, h, k, q, c.data.n);
              Real s0 = 0;
              for (Real v : e) s0 += v;
              if (s0 == 0) continue;  // out of reach: the nearest-key fallback, tested elsewhere
              // Far away a line through the one key that holds the weight is not determined.
              if (q[0] > 1e5 && method == Method::local_linear) continue;
              const double ref = static_cast<double>(fit_at(c.data, h, method, q, e));
              CAPTURE(j);
              CHECK(std::abs(f[j] - ref) <= 1e-12 * yspan);
            }
            if (scale < 1e-2) continue;  // leave-one-out at a tiny h: rows out of reach
            // The leave-one-out error: every row against every other key.
            Real sse = 0, total = 0;
            for (std::size_t i = 0; i < c.data.n; ++i) {
              const Real sw = c.data.weight.empty() ? 1 : c.data.weight[i];
              if (sw == 0) continue;
              const double* q = c.data.x.data() + i * d;
              const std::vector<Real> e = weights_at(c.data, h, k, q, i);
              const Real r = c.data.y[i] - fit_at(c.data, h, method, q, e);
              sse += sw * r * r;
              total += sw;
            }
            CHECK(a.loo(false).mse == doctest::Approx(static_cast<double>(sse / total)).epsilon(1e-12));
          }
        }
      }
    }
  }
}

TEST_CASE("x and h near the ends of the double range: the same predictions as at scale 1") {
  // At 1e150 the Gaussian's factored terms run unguarded (1/h^2 still a normal number); at
  // 1e299 1/h^2 underflows and at 2e307 the keys exceed 4e307: the guarded terms.
  const ReferenceCase c = make_case(300, 2, true, false, 23);
  const std::size_t m = c.queries.size() / 2;
  for (double scale : {1e150, 1e299, 2e307}) {
    ReferenceCase big = c;
    for (double& v : big.data.x) v *= scale / 5;
    for (double& v : big.queries) v *= scale / 5;
    for (Kernel k : {Kernel::gaussian, Kernel::laplace, Kernel::tricube}) {
      for (Method method : {Method::nw, Method::local_linear}) {
        CAPTURE(scale);
        CAPTURE(to_string(k));
        CAPTURE(to_string(method));
        EngineOptions o;
        o.kernel = k;
        o.method = method;
        o.out_of_reach = OutOfReach::nearest;
        const double f = is_compact(k) ? 2.0 : 0.8;
        const Attention at1(c.data, {f, 1.3 * f}, o), big1(big.data, {f * scale / 5, 1.3 * f * scale / 5}, o);
        std::vector<double> p1(m), p2(m);
        at1.predict(c.queries.data(), m, p1.data());
        big1.predict(big.queries.data(), m, p2.data());
        for (std::size_t j = 0; j < m; ++j) CHECK(p2[j] == doctest::Approx(p1[j]).epsilon(1e-12).scale(1e-12));
        CHECK(big1.loo(false).mse == doctest::Approx(at1.loo(false).mse).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("Laplace keys up to 1.3e308 apart, and a nearest key at h = 1e-160") {
  // The Laplace term is scaled before log2(e) multiplies it: |x - q| / h near DBL_MAX / 1.44
  // kept its key (it got weight 0). Weights 1 and e^-1.26: the exact 0.2209738922201878.
  Dataset far;
  far.n = 2;
  far.d = 1;
  far.x = {-6.3e307, 6.3e307};
  far.y = {0, 1};
  far.x_names = {"x"};
  EngineOptions o;
  o.kernel = Kernel::laplace;
  const double q = -6.3e307;
  double f = 0;
  Attention(far, {1e308}, o).predict(&q, 1, &f);
  CHECK(f == doctest::Approx(std::exp(-1.26) / (1 + std::exp(-1.26))).epsilon(1e-14));
  // Squared scaled distances overflow at h = 1e-160: the nearest key by exact comparison.
  Dataset two;
  two.n = 2;
  two.d = 2;
  two.x = {0.13436424411240122, 0.8474337369372327, 0.22059974802267657, 0.9755945178178834};
  two.y = {0, 79};
  two.x_names = {"a", "b"};
  o.kernel = Kernel::uniform;
  o.out_of_reach = OutOfReach::nearest;
  const double q2[2] = {0.15069130975199263, 1.2432430148471103};
  Attention(two, {1e-160, 1e-160}, o).predict(q2, 1, &f);
  CHECK(f == 79);
}

TEST_CASE("the nearest-key fallback: identical nearest keys share it, of others at the same distance the first") {
  // 128 rows (a k-d tree): 64 at (0, 0) with y = 0..63, 64 at (10, 0) with y = 64..127; queries
  // out of reach beside each, and one halfway between.
  Dataset d;
  d.n = 128;
  d.d = 2;
  for (int i = 0; i < 128; ++i) {
    d.x.insert(d.x.end(), {i < 64 ? 0.0 : 10.0, 0.0});
    d.y.push_back(i);
  }
  d.x_names = {"a", "b"};
  EngineOptions o;
  o.kernel = Kernel::epanechnikov;
  o.out_of_reach = OutOfReach::nearest;
  const double q[6] = {-5, 0, 15, 0, 5, 0};
  for (bool merge : {true, false}) {
    CAPTURE(merge);
    if (!merge) o.shortcuts = o.shortcuts.without(Shortcut::merge_keys);
    double f[3];
    Attention(d, {1, 1}, o).predict(q, 3, f);
    // The mean of the identical nearest keys, merged or not; halfway, the first as given.
    CHECK(f[0] == 31.5);
    CHECK(f[1] == 95.5);
    CHECK(f[2] == 31.5);
  }
  // One column, not merged (--leave-out): identical keys are neighbours and share it by weight.
  const Dataset one = one_column({0, 10, 0, 10, 0, 10}, {1, 7, 2, 9, 6, 11}, {1, 1, 1, 1, 2, 1});
  o.leave_out = 1;
  const double q1[2] = {-5, 16};
  double f1[2];
  Attention(one, {1}, o).predict(q1, 2, f1);
  CHECK(f1[0] == doctest::Approx(3.75).epsilon(1e-15));  // (1 + 2 + 2 * 6) / 4
  CHECK(f1[1] == doctest::Approx(9).epsilon(1e-15));
}

TEST_CASE("identical keys merged: every result as with every row its own key, for fewer pairs") {
  for (std::size_t d = 1; d <= 3; ++d) {
    for (bool weighted : {false, true}) {
      // 5 values a column in one and three columns, 20 in two: a k-d tree over the merged keys.
      const Dataset data = sample_data(d == 2 ? 600 : 300, d, weighted, 31 * d + weighted, d == 2 ? 20 : 5);
      const std::size_t n = data.n;
      double yspan = 0;
      for (double v : data.y) yspan = std::max(yspan, std::abs(v));
      std::vector<double> queries;  // on the keys, between them, and far (exponential kernels)
      for (int j = 0; j < 9; ++j)
        for (std::size_t k = 0; k < d; ++k) queries.push_back(j % 3 == 0 ? data.x[j * d + k] : 0.37 * j + 0.11 * k);
      std::vector<double> v(n);  // values to smooth (standard errors), per row
      for (std::size_t i = 0; i < n; ++i) v[i] = std::cos(3.0 * i);
      std::vector<double> xh(data.x);  // the columns loo_moments weighs (the metric's)
      std::set<std::vector<double>> distinct;
      for (std::size_t i = 0; i < n; ++i)
        if (data.weight.empty() || data.weight[i] > 0) distinct.emplace(&data.x[i * d], &data.x[i * d] + d);
      const std::uint64_t keys = distinct.size();
      for (Kernel k : all_kernels) {
        for (Method method : {Method::nw, Method::local_linear}) {
          for (double scale : {0.7, 3.0}) {
            CAPTURE(d);
            CAPTURE(weighted);
            CAPTURE(to_string(k));
            CAPTURE(to_string(method));
            CAPTURE(scale);
            std::vector<double> h;
            for (std::size_t j = 0; j < d; ++j) h.push_back(scale * (1 + 0.3 * j));
            EngineOptions o;
            o.kernel = k;
            o.method = method;
            o.out_of_reach = OutOfReach::nearest;
            const Attention merged(data, h, o);
            o.shortcuts = o.shortcuts.without(Shortcut::merge_keys);
            const Attention apart(data, h, o);
            const std::size_t m = queries.size() / d;
            std::vector<double> f1(m), f2(m), w1(m), w2(m), s1(m), s2(m);
            merged.predict_detail(queries.data(), m, v, f1.data(), w1.data(), s1.data());
            apart.predict_detail(queries.data(), m, v, f2.data(), w2.data(), s2.data());
            for (std::size_t j = 0; j < m; ++j) {
              CAPTURE(j);
              CHECK(std::abs(f1[j] - f2[j]) <= 1e-12 * yspan);
              CHECK(w1[j] == doctest::Approx(w2[j]).epsilon(1e-12));
              CHECK(std::abs(s1[j] - s2[j]) <= 1e-12);
            }
            std::vector<std::vector<double>> rows1, rows2;
            merged.weights(queries.data(), 3, [&](std::size_t, const double* a) { rows1.emplace_back(a, a + n); });
            apart.weights(queries.data(), 3, [&](std::size_t, const double* a) { rows2.emplace_back(a, a + n); });
            for (std::size_t j = 0; j < 3; ++j)
              for (std::size_t i = 0; i < n; ++i) CHECK(std::abs(rows1[j][i] - rows2[j][i]) <= 1e-13);

            const Counters before = merged.counters(), before_apart = apart.counters();
            const LooResult l1 = merged.loo(true), l2 = apart.loo(true);
            // Ties cost one evaluation: each key's rows gathered once, over at most every key;
            // fewer pairs than every row apart weighs, where it weighs its rows key by key (its
            // rows by moments weigh none).
            const Counters after = merged.counters(), after_apart = apart.counters();
            CHECK(after.pairs - before.pairs <= keys * keys);
            if (after_apart.moment_rows == before_apart.moment_rows)
              CHECK(after.pairs - before.pairs < after_apart.pairs - before_apart.pairs);
            CHECK(l1.mse == doctest::Approx(l2.mse).epsilon(1e-11));
            for (std::size_t c = 0; c < d; ++c)
              CHECK(std::abs(l1.gradient[c] - l2.gradient[c]) <= 1e-10 * (std::abs(l2.gradient[c]) + l2.mse));
            const std::vector<std::size_t> some = {17, 3, 40, 3, 251, 0};
            CHECK(merged.loo(false, &some).mse == doctest::Approx(apart.loo(false, &some).mse).epsilon(1e-11));
            const InSample i1 = merged.insample(true), i2 = apart.insample(true);
            CHECK(i1.mse == doctest::Approx(i2.mse).epsilon(1e-11));
            CHECK(i1.trace == doctest::Approx(i2.trace).epsilon(1e-11));
            for (std::size_t c = 0; c < d; ++c) {
              CHECK(std::abs(i1.d_mse[c] - i2.d_mse[c]) <= 1e-10 * (std::abs(i2.d_mse[c]) + i2.mse));
              CHECK(std::abs(i1.d_trace[c] - i2.d_trace[c]) <= 1e-10 * (std::abs(i2.d_trace[c]) + i2.trace));
            }
            const LooDetail d1 = merged.loo_detail(), d2 = apart.loo_detail();
            CHECK(d1.neighbours == doctest::Approx(d2.neighbours).epsilon(1e-11));
            for (std::size_t i = 0; i < n; ++i) CHECK(std::abs(d1.residual[i] - d2.residual[i]) <= 1e-11 * yspan);
            if (method == Method::nw && k == Kernel::gaussian) {  // what the learned metric uses
              const LooMoments u1(merged, xh.data(), d), u2(apart, xh.data(), d);
              for (std::size_t j : {std::size_t{0}, std::size_t{5}, std::size_t{6}}) {
                double g1 = 0, g2 = 0;
                std::vector<double> M1(d * d), M2(d * d);
                CHECK(u1.at(j, g1, M1.data()) == u2.at(j, g2, M2.data()));
                CHECK(std::abs(g1 - g2) <= 1e-12 * yspan);
                for (std::size_t c = 0; c < d * d; ++c) CHECK(std::abs(M1[c] - M2[c]) <= 1e-10 * yspan);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("several columns: bit for bit the same whatever the number of threads") {
  const ReferenceCase c = make_case(3000, 3, true, true, 5);
  const std::size_t m = c.queries.size() / 3;
  auto bits = [](const std::vector<double>& v) {
    std::vector<std::uint64_t> b(v.size());
    std::memcpy(b.data(), v.data(), v.size() * sizeof(double));
    return b;
  };
  for (Kernel k : {Kernel::gaussian, Kernel::tricube}) {
    for (Method method : {Method::nw, Method::local_linear}) {
      EngineOptions o;
      o.kernel = k;
      o.method = method;
      o.out_of_reach = OutOfReach::nearest;
      const std::vector<double> h = {0.9, 1.2, 1.4};
      const Attention one(c.data, h, o);
      std::vector<double> p1(m);
      one.predict(c.queries.data(), m, p1.data());
      const LooResult l1 = one.loo(true);
      ThreadPool pool(3);
      o.pool = &pool;
      const Attention many(c.data, h, o);
      std::vector<double> p(m);
      many.predict(c.queries.data(), m, p.data());
      CHECK(bits(p) == bits(p1));
      const LooResult l = many.loo(true);
      CHECK(l.mse == l1.mse);
      CHECK(l.gradient == l1.gradient);
    }
  }
}

TEST_CASE("identical keys merged: sample weights 1e-200 apart, and equal values kept exact") {
  // Rows (0, 1) and (0, 2) weigh 1; at x = 3, one row weighs 1 and the other 1e-200: each
  // row's leave-one-out weights are finite, and the effective neighbours as with every row apart.
  const Dataset d = one_column({0, 0, 3, 3}, {1, 2, 9, 4}, {1, 1, 1, 1e-200});
  for (Kernel k : {Kernel::epanechnikov, Kernel::gaussian}) {
    CAPTURE(to_string(k));
    EngineOptions o;
    o.kernel = k;
    const std::vector<double> h = {k == Kernel::gaussian ? 0.05 : 0.5};
    const LooDetail merged = Attention(d, h, o).loo_detail();
    o.shortcuts = o.shortcuts.without(Shortcut::merge_keys);
    const LooDetail apart = Attention(d, h, o).loo_detail();
    CHECK(std::isfinite(merged.neighbours));
    CHECK(merged.neighbours == doctest::Approx(apart.neighbours).epsilon(1e-12));
    CHECK(merged.neighbours == doctest::Approx(1).epsilon(1e-12));
  }
  // A key whose rows all hold 0.1 predicts exactly 0.1 (the weighted mean of equal values).
  const Dataset e = one_column({0, 0, 0, 1, 1, 1}, {0.1, 0.1, 0.1, 0.7, 0.7, 0.7}, {1, 3, 7, 1, 1, 1});
  const double q[2] = {0, 1};
  double f[2];
  Attention(e, {0.01}, EngineOptions()).predict(q, 2, f);
  CHECK(f[0] == 0.1);
  CHECK(f[1] == 0.7);
}

TEST_CASE("several columns: the k-d tree where it prunes, every key where it would not") {
  // 400 keys in 10 columns, queries beside 20 of them: at a small bandwidth the leaves within
  // reach hold a few keys a query; at a wide one they would hold all, and every key is summed.
  // The reference's predictions either way.
  const Dataset data = sample_data(400, 10, false, 77);
  std::vector<double> q;
  for (std::size_t j = 0; j < 20; ++j)
    for (std::size_t k = 0; k < 10; ++k) q.push_back(data.x[j * 10 + k] + 0.01);
  double yspan = 0;
  for (double v : data.y) yspan = std::max(yspan, std::abs(v));
  for (double scale : {1.0, 50.0}) {
    CAPTURE(scale);
    const std::vector<double> h(10, scale);
    EngineOptions o;
    o.kernel = Kernel::tricube;
    const Attention a(data, h, o);
    std::vector<double> f(20);
    a.predict(q.data(), 20, f.data());
    for (std::size_t j = 0; j < 20; ++j) {
      const std::vector<Real> e = weights_at(data, h, Kernel::tricube, &q[j * 10], data.n);
      CHECK(std::abs(f[j] - static_cast<double>(fit_at(data, h, Method::nw, &q[j * 10], e))) <= 1e-12 * yspan);
    }
    if (scale < 2)
      CHECK(a.counters().pairs < 20 * 400 / 2);  // the tree: fewer than half the keys a query
    else
      CHECK(a.counters().pairs == 20 * 400);  // every key, in one range
  }
}
