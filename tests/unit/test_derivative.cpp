// Slopes (--derivative): local linear's against statsmodels KernelReg(reg_type='ll')'s marginal
// effects (golden file from tests/golden/make_golden_derivative.py), NW's analytic derivative
// against a central difference of the estimator, and the slopes' squared weights against
// central differences of the attention rows.

#include <doctest/doctest.h>

#include <cmath>

#include "helpers.h"
#include "nwreg/engine/attention.h"

using namespace nwreg;

namespace {

// The estimate at q with column k moved by t.
double at(const Attention& e, std::vector<double> q, std::size_t k, double t) {
  q[k] += t;
  double f;
  e.predict(q.data(), 1, &f);
  return f;
}

}  // namespace

TEST_CASE("slopes: local linear's equal statsmodels KernelReg ll marginal effects") {
  const auto g = testing::read_golden("tests/golden/derivative.csv");
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");
  const Dataset boston = testing::mcycle_or_boston("boston");
  EngineOptions o;
  o.method = Method::local_linear;
  std::size_t checked = 0;
  for (std::size_t i = 0; i < g.at("set").size(); ++i) {
    const Dataset& d = g.at("set")[i] == "mcycle" ? mcycle : boston;
    const Attention e(d, testing::number_list(g.at("bandwidth")[i]), o);
    const auto q = testing::number_list(g.at("query")[i]);
    const auto want = testing::number_list(g.at("slope")[i]);
    double f;
    std::vector<double> slope(d.d);
    e.predict(q.data(), 1, &f);
    e.slopes(q.data(), 1, slope.data());
    CAPTURE(g.at("set")[i]);
    CAPTURE(g.at("query")[i]);
    CHECK(f == doctest::Approx(std::stod(g.at("mean")[i])).epsilon(1e-9).scale(0));
    for (std::size_t k = 0; k < d.d; ++k) CHECK(slope[k] == doctest::Approx(want[k]).epsilon(1e-9).scale(1e-12));
    ++checked;
  }
  CHECK(checked == 184);
}

TEST_CASE("slopes: NW's analytic derivative equals a central difference, for every kernel") {
  const Dataset boston = testing::mcycle_or_boston("boston");
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");  // tied times: merged keys
  for (Kernel kernel : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube}) {
    {
      const Method method = Method::nw;  // local linear's slope is its fitted line's, not the estimate's
      for (const Dataset* d : {&mcycle, &boston}) {
        EngineOptions o;
        o.kernel = kernel;
        o.method = method;
        const std::vector<double> h = d->d == 1 ? std::vector<double>{4.0} : std::vector<double>{4.0, 1.2};
        const Attention e(*d, h, o);
        const std::vector<std::vector<double>> queries =
            d->d == 1 ? std::vector<std::vector<double>>{{13.1}, {21.7}, {33.3}}
                      : std::vector<std::vector<double>>{{5.13, 6.21}, {12.37, 5.93}, {20.11, 6.47}};
        for (const auto& q : queries) {
          std::vector<double> slope(d->d);
          e.slopes(q.data(), 1, slope.data());
          for (std::size_t k = 0; k < d->d; ++k) {
            const double eps = 1e-5 * h[k];
            const double cd = (at(e, q, k, eps) - at(e, q, k, -eps)) / (2 * eps);
            CAPTURE(to_string(kernel));
            CAPTURE(to_string(method));
            CAPTURE(q[0]);
            CAPTURE(k);
            // Laplace's and the compact kernels' slopes jump where q crosses a key or a support
            // edge: the queries stay clear of them by more than eps.
            CHECK(slope[k] == doctest::Approx(cd).epsilon(1e-6).scale(1e-6));
          }
        }
      }
    }
  }
}

TEST_CASE("slopes: their weights are NW's central difference of the attention rows, local linear's a WLS fit's") {
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");
  Dataset weighted = mcycle;
  for (std::size_t i = 0; i < weighted.n; ++i) weighted.weight.push_back(1 + (i % 3));
  for (Method method : {Method::nw, Method::local_linear}) {
    for (const Dataset* d : {&mcycle, static_cast<const Dataset*>(&weighted)}) {
      EngineOptions o;
      o.method = method;
      const Attention e(*d, {3.0}, o);
      for (double q : {12.3, 25.9}) {
        double slope, norm;
        e.slopes(&q, 1, &slope, &norm);
        std::vector<double> l(d->n);  // each row's weight in the slope
        if (method == Method::nw) {
          const double eps = 1e-5;
          std::vector<double> up, dn;
          const double qu = q + eps, qd = q - eps;
          e.weights(&qu, 1, [&](std::size_t, const double* a) { up.assign(a, a + d->n); });
          e.weights(&qd, 1, [&](std::size_t, const double* a) { dn.assign(a, a + d->n); });
          for (std::size_t i = 0; i < d->n; ++i) l[i] = (up[i] - dn[i]) / (2 * eps);
        } else {
          // Weighted least squares of y on (1, x - q): the slope's row of (Z'WZ)^-1 Z'W.
          long double s0 = 0, s1 = 0, s2 = 0;
          std::vector<long double> w(d->n);
          for (std::size_t i = 0; i < d->n; ++i) {
            const long double u = (d->x[i] - q) / 3.0L;
            w[i] = std::exp(-u * u / 2) * (d->weight.empty() ? 1 : d->weight[i]);
            s0 += w[i], s1 += w[i] * (d->x[i] - q), s2 += w[i] * (d->x[i] - q) * (d->x[i] - q);
          }
          const long double det = s0 * s2 - s1 * s1;
          for (std::size_t i = 0; i < d->n; ++i) l[i] = static_cast<double>(w[i] * (s0 * (d->x[i] - q) - s1) / det);
        }
        double want = 0, fit = 0;
        for (std::size_t i = 0; i < d->n; ++i) {
          want += l[i] * l[i];
          fit += l[i] * d->y[i];
        }
        CAPTURE(to_string(method));
        CAPTURE(q);
        CHECK(fit == doctest::Approx(slope).epsilon(1e-6));
        CHECK(norm * norm == doctest::Approx(want).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("slopes: a categorical column has none, the continuous ones are the estimate's") {
  CsvReader r(testing::source_path("data/birthwt.csv"), CsvOptions{});
  ColumnChoice c;
  c.x = {"lwt", "race"};
  c.y = "bwt";
  c.unordered = {"race"};
  const Dataset d = read_dataset(r, c);
  const Attention e(d, {20.0, 0.3});
  const std::vector<double> q = {131.3, d.levels[1].find("black").value()};
  std::vector<double> slope(2, -1.0);
  e.slopes(q.data(), 1, slope.data());
  CHECK(slope[1] == 0);
  CHECK(slope[0] == doctest::Approx((at(e, q, 0, 1e-4) - at(e, q, 0, -1e-4)) / 2e-4).epsilon(1e-6));
}
