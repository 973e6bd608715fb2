// Issue 25, "Scales": what nwreg chooses does not depend on the units of y, and what it reports
// scales with them, from y times 1e-300 to y times 1e300 (learned h, AICc, knn:auto, standard
// errors), and a band's level may come within 1e-16 of 1.

#include <doctest/doctest.h>

#include <cmath>

#include "helpers.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/learn/fit.h"

using namespace nwreg;

namespace {

Dataset times(Dataset d, double c) {
  for (double& y : d.y) y *= c;
  return d;
}

}  // namespace

TEST_CASE("scale: the learned bandwidth, K and span never depend on the units of y") {
  const Dataset d = testing::bundled("mcycle.csv", "times", "accel");
  for (Criterion c : {Criterion::loo, Criterion::aicc, Criterion::gcv}) {
    FitPlan plan;
    plan.fit.criterion = c;
    const Model base = fit_model(d, plan, EngineOptions{});
    for (double s : {1e-300, 1e-160, 1e160, 1e300}) {
      CAPTURE(to_string(c));
      CAPTURE(s);
      const Model m = fit_model(times(d, s), plan, EngineOptions{});
      CHECK(m.bandwidth[0] == doctest::Approx(base.bandwidth[0]).epsilon(1e-9));
      CHECK(m.loo_r2.value() == doctest::Approx(base.loo_r2.value()).epsilon(1e-9));
      // The errors in y's units: s^2 times, where a double holds them.
      const double loo = *base.loo_mse * s * s;
      if (std::isfinite(loo) && loo > 1e-300) {
        CHECK(m.loo_mse.value() == doctest::Approx(loo).epsilon(1e-9));
      } else if (!std::isfinite(loo)) {
        CHECK(!m.loo_mse);
        CHECK(m.warnings.back().find("beyond a double's range") != std::string::npos);
      }
      if (c == Criterion::aicc)  // log(RSS / n) moves by 2 log s
        CHECK(m.criterion_value.value() == doctest::Approx(*base.criterion_value + 2 * std::log(s)).epsilon(1e-9));
    }
  }
  FitPlan knn;
  knn.kind = BandwidthSpec::Kind::knn;
  knn.neighbour_policy = {Neighbours::knn, 0, 0};
  const std::size_t K = fit_model(d, knn, EngineOptions{}).neighbour_policy.K;
  CHECK(fit_model(times(d, 1e200), knn, EngineOptions{}).neighbour_policy.K == K);
  CHECK(fit_model(times(d, 1e-200), knn, EngineOptions{}).neighbour_policy.K == K);
}

TEST_CASE("scale: standard errors scale with y, and a level near 1 gives a finite band") {
  const Dataset d = testing::bundled("synthetic.csv", "x", "y");
  FitPlan plan;
  plan.kind = BandwidthSpec::Kind::fixed;
  plan.fixed = {0.3};
  const Model m = fit_model(d, plan, EngineOptions{});
  const double q[] = {0.5, 2.5, 4.9};
  auto band = [&](const Dataset& data, double level) {
    const Fitted f(data, m, EngineOptions{});
    double out[3];
    return f.predict_band(q, 3, level, f.loo_residuals(), out);
  };
  const Band base = band(d, 0.95);
  for (double s : {1e-300, 1e300}) {
    const Band b = band(times(d, s), 0.95);
    for (std::size_t j = 0; j < 3; ++j) CHECK(b.se[j] / s == doctest::Approx(base.se[j]).epsilon(1e-12));
  }
  const Band near = band(d, 0.9999999999999999);
  for (std::size_t j = 0; j < 3; ++j) {
    CHECK(std::isfinite(near.lower[j]));
    CHECK(std::isfinite(near.upper[j]));
  }
  // z for 1 - 1.1e-16: the upper tail 5.55e-17 of the standard normal (Python statistics.NormalDist).
  CHECK(band_quantile(0.9999999999999999) == doctest::Approx(8.292361075813595).epsilon(1e-12));
  CHECK(band_quantile(0.95) == doctest::Approx(1.9599639845400536).epsilon(1e-15));
}

TEST_CASE("scale: slopes and their standard errors scale with 1/x, from x times 1e-160 to 1e200") {
  // Issue 25: d_x_se was "not finite" at x times 1e-160 (true value about 9e159), 0 at 1e200.
  const Dataset d = testing::bundled("synthetic.csv", "x", "y");
  for (Method method : {Method::nw, Method::local_linear}) {
    FitPlan plan;
    plan.kind = BandwidthSpec::Kind::fixed;
    plan.fixed = {0.3};
    EngineOptions o;
    o.method = method;
    const Model m = fit_model(d, plan, o);
    const double q[] = {0.5, 2.5, 4.5};
    const Fitted base(d, m, o);
    const LooDetail loo = base.loo_residuals();
    const Fitted::Slopes want = base.slopes(q, 3, &loo);
    for (double s : {1e-160, 1e200}) {
      CAPTURE(s);
      Dataset x = d;
      for (double& v : x.x) v *= s;
      Model ms = m;
      ms.bandwidth = {0.3 * s};
      const double qs[] = {0.5 * s, 2.5 * s, 4.5 * s};
      const Fitted f(x, ms, o);
      const LooDetail l = f.loo_residuals();
      const Fitted::Slopes got = f.slopes(qs, 3, &l);
      for (std::size_t j = 0; j < 3; ++j) {
        CHECK(got.slope[j] * s == doctest::Approx(want.slope[j]).epsilon(1e-9));
        CHECK(std::isfinite(got.se[j]));
        CHECK(got.se[j] * s == doctest::Approx(want.se[j]).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("sample weights: a weight of 2 gives the curve of the row twice, as the docs say") {
  // Issue 25: docs/methods.md, "Sample weights" says exactly what the equivalence covers.
  const Dataset d = testing::bundled("mcycle.csv", "times", "accel");
  Dataset weighted = d, doubled = d;
  for (std::size_t i = 0; i < d.n; ++i) weighted.weight.push_back(i % 4 == 0 ? 2.0 : 1.0);
  for (std::size_t i = 0; i < d.n; i += 4) {
    doubled.x.push_back(d.x[i]);
    doubled.y.push_back(d.y[i]);
  }
  doubled.n = doubled.y.size();
  for (Method method : {Method::nw, Method::local_linear}) {
    EngineOptions o;
    o.method = method;
    const Attention a(weighted, {2.5}, o), b(doubled, {2.5}, o);
    const double q[] = {5, 15.3, 25, 41, 55};
    double fa[5], fb[5], sa[5], sb[5];
    a.predict(q, 5, fa);
    b.predict(q, 5, fb);
    a.slopes(q, 5, sa);
    b.slopes(q, 5, sb);
    for (int j = 0; j < 5; ++j) {
      CHECK(fa[j] == doctest::Approx(fb[j]).epsilon(1e-12));
      CHECK(sa[j] == doctest::Approx(sb[j]).epsilon(1e-10));
    }
    // Not the leave-one-out error: the weighted row leaves out whole.
    CHECK(std::abs(a.loo(false).mse - b.loo(false).mse) > 1e-3 * b.loo(false).mse);
  }
}

TEST_CASE("scale: two columns' predictions do not depend on the units of x, from 1e-300 to 1e300") {
  // x near 1e200 at h = 1e190 (distances of 1e9 bandwidths): the nearest key's exact search
  // multiplied two offsets of 1e199 (inf, and one column's inf met another's -inf), and the
  // Gaussian's factored terms overflowed past 4e153: key 17, nearest in lstat alone, answered.
  // A model file's metric of 1e200 took the same path. Boston's lstat and rm, Gaussian and
  // Laplace, h = (2, 0.3) and 1e-10 of it (then every answer is the nearest key's y).
  const Dataset d = testing::mcycle_or_boston("boston");
  const double q[] = {5.1, 6.2, 12.7, 5.9, 30.0, 4.2, 1.0, 9.0};
  for (Kernel kernel : {Kernel::gaussian, Kernel::laplace})
    for (double narrow : {1.0, 1e-10}) {
      FitPlan plan;
      plan.kind = BandwidthSpec::Kind::fixed;
      plan.fixed = {2 * narrow, 0.3 * narrow};
      EngineOptions o;
      o.kernel = kernel;
      const Model m = fit_model(d, plan, o);
      std::vector<double> want(4);
      Fitted(d, m, o).predict(q, 4, want.data());
      if (narrow < 1)  // the nearest key's y, by a brute-force scan of the scaled distances
        for (std::size_t j = 0; j < 4; ++j) {
          double best = INFINITY, y = 0;
          for (std::size_t i = 0; i < d.n; ++i) {
            const double a = (d.x[2 * i] - q[2 * j]) / 2, b = (d.x[2 * i + 1] - q[2 * j + 1]) / 0.3;
            const double r = kernel == Kernel::laplace ? std::abs(a) + std::abs(b) : a * a + b * b;
            if (r < best) best = r, y = d.y[i];
          }
          CHECK(want[j] == y);
        }
      for (double s : {1e-300, 1e-160, 1e160, 1e200, 1e300}) {
        if (0.3 * narrow * s < 1e-300) continue;  // (h below a double's normal range: refused)
        CAPTURE(to_string(kernel));
        CAPTURE(narrow);
        CAPTURE(s);
        Dataset x = d;
        for (double& v : x.x) v *= s;
        Model ms = m;
        ms.bandwidth = {2 * narrow * s, 0.3 * narrow * s};
        double qs[8];
        for (int k = 0; k < 8; ++k) qs[k] = q[k] * s;
        std::vector<double> got(4);
        Fitted(x, ms, o).predict(qs, 4, got.data());
        for (std::size_t j = 0; j < 4; ++j) CHECK(got[j] == doctest::Approx(want[j]).epsilon(1e-9));
      }
    }
}
