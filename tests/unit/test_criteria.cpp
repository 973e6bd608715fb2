// The bandwidth selection criteria AICc and GCV: the in-sample fit and tr(H) by hand, against a
// brute-force smoother matrix and statsmodels (tests/golden/make_golden_criteria.py), their
// gradients against finite differences, and learning with them.

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "helpers.h"
#include "nwreg/attention.h"
#include "nwreg/bandwidth.h"
#include "nwreg/errors.h"

using namespace nwreg;

namespace {

EngineOptions engine(Kernel k, Method m) {
  EngineOptions e;
  e.kernel = k;
  e.method = m;
  return e;
}

Dataset load(const std::string& set) {
  const bool mc = set == "mcycle";
  CsvReader r(testing::source_path(mc ? "data/mcycle.csv" : "data/boston.csv"), CsvOptions{});
  ColumnChoice c;
  c.x = mc ? std::vector<std::string>{"times"} : std::vector<std::string>{"lstat", "rm"};
  c.y = mc ? "accel" : "medv";
  return read_dataset(r, c);
}

}  // namespace

TEST_CASE("criteria: tr(H) and the in-sample fit by hand on three points") {
  const Dataset d = testing::make_dataset({0, 1, 2}, {1, 2, 4});
  const double a = std::exp(-0.5), b = std::exp(-2.0);
  // NW, h = 1: row 0 weighs (1, a, b), row 1 (a, 1, a), row 2 (b, a, 1).
  const double f0 = (1 + 2 * a + 4 * b) / (1 + a + b), f1 = (a + 2 + 4 * a) / (1 + 2 * a),
               f2 = (b + 2 * a + 4) / (1 + a + b);
  const InSample nw = Attention(d, {1.0}, engine(Kernel::gaussian, Method::nw)).insample(false);
  CHECK(nw.trace == doctest::Approx(2 / (1 + a + b) + 1 / (1 + 2 * a)).epsilon(1e-14));
  CHECK(nw.mse == doctest::Approx(((1 - f0) * (1 - f0) + (2 - f1) * (2 - f1) + (4 - f2) * (4 - f2)) / 3).epsilon(1e-13));
  // Local linear at x_j: l_jj = [S^-1]_00 = S11 / (S00 S11 - S01^2), S = sum_i e_i z_i z_i^T.
  auto own = [&](double q) {
    double s00 = 0, s01 = 0, s11 = 0;
    for (double x : {0.0, 1.0, 2.0}) {
      const double e = std::exp(-0.5 * (x - q) * (x - q)), z = x - q;
      s00 += e, s01 += e * z, s11 += e * z * z;
    }
    return s11 / (s00 * s11 - s01 * s01);
  };
  const InSample ll = Attention(d, {1.0}, engine(Kernel::gaussian, Method::local_linear)).insample(false);
  CHECK(ll.trace == doctest::Approx(own(0) + own(1) + own(2)).epsilon(1e-13));
  // The criteria from them.
  const LooResult aicc = criterion_value(Criterion::aicc, nw, 3, false);
  CHECK(std::isinf(aicc.mse));  // tr(H) + 2 >= n: undefined
  const LooResult gcv = criterion_value(Criterion::gcv, nw, 3, false);
  CHECK(gcv.mse == doctest::Approx(9 * nw.mse / ((3 - nw.trace) * (3 - nw.trace))).epsilon(1e-15));
}

TEST_CASE("criteria: RSS, tr(H), AICc and GCV equal a brute-force smoother matrix and statsmodels") {
  const auto g = testing::read_golden("tests/golden/criteria.csv");
  const std::size_t rows = g.at("set").size();
  REQUIRE(rows >= 20);
  std::size_t statsmodels = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::string set = g.at("set")[i], reg = g.at("reg")[i], kernel = g.at("kernel")[i];
    CAPTURE(set);
    CAPTURE(reg);
    CAPTURE(kernel);
    CAPTURE(g.at("bandwidth")[i]);
    const Dataset d = load(set);
    std::vector<double> h;
    std::istringstream hs(g.at("bandwidth")[i]);
    for (double v; hs >> v;) h.push_back(v);
    const Attention a(d, h, engine(parse_kernel(kernel), reg == "ll" ? Method::local_linear : Method::nw));
    const InSample fit = a.insample(false);
    CHECK(fit.mse == doctest::Approx(std::stod(g.at("rss_mean")[i])).epsilon(1e-10));
    CHECK(fit.trace == doctest::Approx(std::stod(g.at("trace")[i])).epsilon(1e-10));
    const double n = static_cast<double>(d.n);
    CHECK(criterion_value(Criterion::aicc, fit, n, false).mse == doctest::Approx(std::stod(g.at("aicc")[i])).epsilon(1e-10));
    CHECK(criterion_value(Criterion::gcv, fit, n, false).mse == doctest::Approx(std::stod(g.at("gcv")[i])).epsilon(1e-10));
    if (g.at("statsmodels_aicc")[i] != "none") {
      ++statsmodels;
      CHECK(criterion_value(Criterion::aicc, fit, n, false).mse ==
            doctest::Approx(std::stod(g.at("statsmodels_aicc")[i])).epsilon(1e-10));
    }
  }
  CHECK(statsmodels == 4);
}

TEST_CASE("criteria: gradients of RSS, tr(H), AICc and GCV match finite differences") {
  // As for the LOO gradient: Epanechnikov has kinks where a key enters a support, so a small set
  // whose pair distances stay clear of the bandwidths; Boston with sample weights for the rest.
  Dataset small;
  small.n = 9;
  small.d = 2;
  small.x = {0.1, 0.3, 0.9, 1.7, 1.4, 0.2, 2.2, 2.9, 0.5, 1.1, 3.1, 2.4, 2.6, 0.4, 1.9, 1.3, 0.8, 2.0};
  small.y = {1, 3, 2, 5, 4, 7, 6, 2, 3};
  small.weight = {1, 2, 1, 3, 1, 1, 2, 1, 1};
  small.x_names = {"a", "b"};
  Dataset boston = load("boston");
  for (std::size_t i = 0; i < boston.n; ++i) boston.weight.push_back(1 + (i % 4));
  const Dataset mcycle = load("mcycle");
  for (Kernel k : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube}) {
    for (Method m : {Method::nw, Method::local_linear}) {
      for (bool one_column : {false, true}) {
        if (one_column && k == Kernel::epanechnikov) continue;
        CAPTURE(to_string(k));
        CAPTURE(to_string(m));
        CAPTURE(one_column);
        const Dataset& d = one_column ? mcycle : k == Kernel::epanechnikov ? small : boston;
        const std::vector<double> h = one_column ? std::vector<double>{3.7}
                                      : k == Kernel::epanechnikov ? std::vector<double>{2.37, 2.93}
                                                                  : std::vector<double>{6.0, 1.5};
        const double n = static_cast<double>(d.n);
        const InSample fit = Attention(d, h, engine(k, m)).insample(true);
        for (std::size_t c = 0; c < h.size(); ++c) {
          const double eps = 1e-5;
          auto at = [&](double t) {
            auto hh = h;
            hh[c] *= std::exp(t);
            return Attention(d, hh, engine(k, m)).insample(false);
          };
          const InSample up = at(eps), down = at(-eps);
          CHECK(fit.d_mse[c] == doctest::Approx((up.mse - down.mse) / (2 * eps)).epsilon(1e-5).scale(1e-6));
          CHECK(fit.d_trace[c] == doctest::Approx((up.trace - down.trace) / (2 * eps)).epsilon(1e-5).scale(1e-7));
          for (Criterion cr : {Criterion::aicc, Criterion::gcv}) {
            CAPTURE(to_string(cr));
            const double fd = (criterion_value(cr, up, n, false).mse - criterion_value(cr, down, n, false).mse) / (2 * eps);
            CHECK(criterion_value(cr, fit, n, true).gradient[c] == doctest::Approx(fd).epsilon(1e-5).scale(1e-7));
          }
        }
      }
    }
  }
}

TEST_CASE("criteria: learning reaches the minimum of AICc and GCV, and reports the LOO error there") {
  const Dataset d = load("mcycle");
  for (Criterion cr : {Criterion::aicc, Criterion::gcv}) {
    for (Method m : {Method::nw, Method::local_linear}) {
      CAPTURE(to_string(cr));
      CAPTURE(to_string(m));
      FitOptions o;
      o.criterion = cr;
      o.engine = engine(Kernel::gaussian, m);
      const FitResult r = fit_bandwidth(d, o);
      CHECK(r.stop_reason == "tolerance");
      auto value = [&](double h) {
        return criterion_value(cr, Attention(d, {h}, o.engine).insample(false), static_cast<double>(d.n), false).mse;
      };
      CHECK(r.criterion == doctest::Approx(value(r.bandwidth[0])).epsilon(1e-12));
      // A minimum: 1% either side is no lower.
      CHECK(value(r.bandwidth[0] * 1.01) >= r.criterion);
      CHECK(value(r.bandwidth[0] / 1.01) >= r.criterion);
      CHECK(r.loo_mse == doctest::Approx(Attention(d, r.bandwidth, o.engine).loo(false).mse).epsilon(1e-14));
    }
  }
}

TEST_CASE("criteria: names, and the options they cannot go with") {
  CHECK(parse_criterion("aicc") == Criterion::aicc);
  CHECK(to_string(Criterion::gcv) == "gcv");
  CHECK_THROWS_WITH_AS(parse_criterion("aic"), "--criterion: unknown criterion \"aic\" (known: loo, aicc, gcv)",
                       UsageError);
  FitOptions o;
  o.criterion = Criterion::gcv;
  o.optimizer = Optimizer::sgd;
  CHECK_THROWS_WITH_AS(check_fit_options(o),
                       "--criterion gcv: only with --optimizer auto and --loss mean (the d2l run minimises the LOO error)",
                       UsageError);
}
