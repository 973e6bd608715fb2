// Kernels, local-linear regression, sample weights, the learned metric and standard errors:
// golden values from statsmodels KernelReg's estimators (tests/golden/make_golden_methods.py),
// hand computations, and finite-difference checks of every gradient.

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/learn/bandwidth.h"
#include "nwreg/base/errors.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/learn/metric.h"
#include "nwreg/model/model.h"

using namespace nwreg;

namespace {

double predict1(const Attention& a, double q) {
  double f = 0;
  a.predict(&q, 1, &f);
  return f;
}

std::vector<double> weights1(const Attention& a, double q) {
  std::vector<double> w;
  a.weights(&q, 1, [&](std::size_t, const double* row) { w.assign(row, row + 4); });
  return w;
}

}  // namespace

TEST_CASE("kernels and local linear: predictions and LOO error equal statsmodels' estimators") {
  const auto g = testing::read_golden("tests/golden/methods.csv");
  std::size_t checked = 0;
  for (std::size_t i = 0; i < g.at("kind").size(); ++i) {
    const std::string set = g.at("set")[i];
    const Dataset d = testing::mcycle_or_boston(set);
    const Method method = g.at("reg")[i] == "ll" ? Method::local_linear : Method::nw;
    const Kernel kernel = parse_kernel(g.at("kernel")[i]);
    const Attention a(d, testing::number_list(g.at("bandwidth")[i]), testing::engine(kernel, method));
    const double want = std::stod(g.at("value")[i]);
    CAPTURE(set);
    CAPTURE(g.at("reg")[i]);
    CAPTURE(g.at("kernel")[i]);
    CAPTURE(g.at("bandwidth")[i]);
    if (g.at("kind")[i] == "loo") {
      CHECK(a.loo(false).mse == doctest::Approx(want).epsilon(1e-9));
    } else {
      std::vector<double> q{std::stod(g.at("x1")[i])};
      if (d.d == 2) q.push_back(std::stod(g.at("x2")[i]));
      double f = 0;
      a.predict(q.data(), 1, &f);
      CAPTURE(q[0]);
      CHECK(f == doctest::Approx(want).epsilon(1e-9).scale(1e-9 * 100));
    }
    ++checked;
  }
  CHECK(checked == 734);
}

TEST_CASE("local linear learns a bandwidth whose LOO error is no worse than statsmodels cv_ls") {
  const auto g = testing::read_golden("tests/golden/methods_cv_ls.csv");
  for (std::size_t i = 0; i < g.at("set").size(); ++i) {
    const Dataset d = testing::mcycle_or_boston(g.at("set")[i]);
    FitOptions o;
    o.engine = testing::engine(Kernel::gaussian, Method::local_linear);
    const FitResult r = fit_bandwidth(d, o);
    CAPTURE(g.at("set")[i]);
    CHECK(r.loo_mse <= std::stod(g.at("loo_mse")[i]) * (1 + 1e-12));
    const auto want = testing::number_list(g.at("bandwidth")[i]);
    for (std::size_t k = 0; k < d.d; ++k) CHECK(r.bandwidth[k] == doctest::Approx(want[k]).epsilon(1e-3));
  }
}

TEST_CASE("compact kernels by hand: h is the radius, the kernel's shape weights the keys") {
  const Dataset d = testing::make_dataset({0, 1, 2, 3}, {0, 10, 20, 40});
  // uniform: the keys within h count equally, the edge included
  CHECK(predict1(Attention(d, {1.0}, testing::engine(Kernel::uniform)), 1.5) == 15);
  CHECK(predict1(Attention(d, {1.0}, testing::engine(Kernel::uniform)), 1.0) == 10);  // 0, 1, 2 at |u| <= 1
  // Epanechnikov at q = 0, h = 2: weights 1, 3/4, 0 (x = 2 is on the edge)
  CHECK(predict1(Attention(d, {2.0}, testing::engine(Kernel::epanechnikov)), 0.0) ==
        doctest::Approx(7.5 / 1.75).epsilon(1e-15));
  // tricube at q = 0, h = 2: (1 - 1/8)^3 for x = 1
  const double t = std::pow(1 - 0.125, 3);
  CHECK(predict1(Attention(d, {2.0}, testing::engine(Kernel::tricube)), 0.0) ==
        doctest::Approx(10 * t / (1 + t)).epsilon(1e-15));
  // Laplace: exp(-|u|), not compact
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), e3 = std::exp(-3.0);
  CHECK(predict1(Attention(d, {1.0}, testing::engine(Kernel::laplace)), 0.0) ==
        doctest::Approx((10 * e1 + 20 * e2 + 40 * e3) / (1 + e1 + e2 + e3)).epsilon(1e-15));
  // Laplace sums the pruned window; with tolerance 0 every key: the same to rounding
  const Dataset m = testing::mcycle_or_boston("mcycle");
  EngineOptions full = testing::engine(Kernel::laplace);
  full.tolerance = 0;
  for (double q : {2.4, 15.0, 30.5, 57.6})
    CHECK(predict1(Attention(m, {0.3}, testing::engine(Kernel::laplace)), q) ==
          doctest::Approx(predict1(Attention(m, {0.3}, full), q)).epsilon(1e-13));
}

TEST_CASE("a query out of reach of a compact kernel: an error naming it, or the nearest key") {
  const Dataset d = testing::make_dataset({0, 1, 10, 11}, {1, 3, 5, 7});
  const Attention a(d, {2.0}, testing::engine(Kernel::epanechnikov));
  const std::vector<double> q{0.5, 5.0, 10.5};
  std::vector<double> out(3);
  CHECK_THROWS_WITH_AS(a.predict(q.data(), 3, out.data()),
                       "query 2 (x = 5) has no training point within reach of the epanechnikov kernel "
                       "(bandwidth 2): widen `bandwidth` or give `out_of_reach` nearest",
                       DataError);
  CHECK_THROWS_AS(a.weights(q.data(), 3, [](std::size_t, const double*) {}), DataError);
  const Attention n(d, {2.0}, testing::engine(Kernel::epanechnikov, Method::nw, OutOfReach::nearest));
  n.predict(q.data(), 3, out.data());
  CHECK(out == std::vector<double>{2, 3, 6});  // x = 5 is nearest to 1 (ties go left)
  CHECK(weights1(n, 5.0) == std::vector<double>{0, 1, 0, 0});
  // The leave-one-out error: +inf with a count under error, defined under nearest.
  const Dataset far = testing::make_dataset({0, 1, 10}, {1, 3, 5});
  const LooResult r = Attention(far, {2.0}, testing::engine(Kernel::uniform)).loo(false);
  CHECK(r.out_of_reach == 1);
  CHECK(r.first_out_of_reach == 2);
  CHECK(std::isinf(r.mse));
  CHECK_THROWS_WITH_AS(Attention(far, {2.0}, testing::engine(Kernel::uniform)).loo_detail(),
                       "training row 3 (x = 10) has no other training point within reach of the uniform kernel "
                       "(bandwidth 2): widen `bandwidth` or give `out_of_reach` nearest",
                       DataError);
  // A pass that found every row in reach at one bandwidth says nothing of another: the
  // effective neighbours over one sampled row still look for a row out of reach after h moves.
  Attention wide(far, {20.0}, testing::engine(Kernel::uniform));
  CHECK(wide.loo(false).out_of_reach == 0);
  CHECK_NOTHROW(wide.loo_detail(1, false));
  wide.set_bandwidth({2.0});
  CHECK_THROWS_AS(wide.loo_detail(1, false), DataError);
  // nearest: row 3 predicts 3 (key x = 1); rows 1 and 2 see each other
  CHECK(Attention(far, {2.0}, testing::engine(Kernel::uniform, Method::nw, OutOfReach::nearest)).loo(false).mse ==
        doctest::Approx((4.0 + 4.0 + 4.0) / 3).epsilon(1e-15));
}

TEST_CASE("learning a compact kernel's bandwidth skips radii that leave a row alone") {
  const Dataset d = testing::mcycle_or_boston("mcycle");
  for (Kernel k : {Kernel::epanechnikov, Kernel::tricube, Kernel::uniform}) {
    FitOptions o;
    o.engine = testing::engine(k);
    const FitResult r = fit_bandwidth(d, o);
    CAPTURE(to_string(k));
    CHECK(std::isfinite(r.loo_mse));
    // No worse than any point of a fine scan around it (compact kernels' LOO error has kinks).
    for (double f = 0.8; f <= 1.25; f += 0.01) {
      const LooResult s = Attention(d, {r.bandwidth[0] * f}, o.engine).loo(false);
      if (!s.out_of_reach) CHECK(r.loo_mse <= s.mse * (1 + 1e-9));
    }
  }
}

TEST_CASE("local linear: exact on lines, weights sum to 1 and turn negative at the edges") {
  std::vector<double> x, y;
  for (int i = 0; i < 12; ++i) {
    x.push_back(i * 0.7 + 0.1 * (i % 3));
    y.push_back(3 - 2 * x.back());
  }
  const Dataset d = testing::make_dataset(x, y);
  for (Kernel k : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube, Kernel::uniform}) {
    const Attention a(d, {2.5}, testing::engine(k, Method::local_linear));
    CAPTURE(to_string(k));
    for (double q : {0.0, 3.3, 7.9}) CHECK(predict1(a, q) == doctest::Approx(3 - 2 * q).epsilon(1e-12));
    CHECK(a.loo(false).mse == doctest::Approx(0).scale(1e-20));
  }
  const Dataset four = testing::make_dataset({0, 1, 2, 3}, {0, 1, 4, 9});
  const Attention ll(four, {1.0}, testing::engine(Kernel::gaussian, Method::local_linear));
  const auto w = weights1(ll, 0.0);
  double sum = 0;
  for (double v : w) sum += v;
  CHECK(sum == doctest::Approx(1).epsilon(1e-14));
  CHECK(*std::min_element(w.begin(), w.end()) < 0);  // the equivalent kernel dips below zero
  double f = 0;
  for (std::size_t i = 0; i < 4; ++i) f += w[i] * four.y[i];
  CHECK(f == doctest::Approx(predict1(ll, 0.0)).epsilon(1e-13));
  // One key in reach: the slope is undetermined, and the fit falls back to that key's value.
  CHECK(predict1(Attention(four, {0.5}, testing::engine(Kernel::epanechnikov, Method::local_linear)), 2.2) == 4);
}

TEST_CASE("sample weights: an integer weight is that many copies, 0 removes the row") {
  const Dataset plain = testing::make_dataset({0, 0.5, 1.3, 2, 2.2}, {1, 4, 2, 8, 5});
  Dataset w = plain;
  w.weight = {1, 3, 0, 2, 1};
  Dataset copies = testing::make_dataset({0, 0.5, 0.5, 0.5, 2, 2, 2.2}, {1, 4, 4, 4, 8, 8, 5});
  Dataset without = testing::make_dataset({0, 0.5, 2, 2.2}, {1, 4, 8, 5});
  for (Kernel k : {Kernel::gaussian, Kernel::laplace, Kernel::tricube}) {
    for (Method m : {Method::nw, Method::local_linear}) {
      CAPTURE(to_string(k));
      CAPTURE(to_string(m));
      const Attention a(w, {0.8}, testing::engine(k, m)), b(copies, {0.8}, testing::engine(k, m));
      for (double q : {-0.3, 0.7, 1.3, 2.1}) CHECK(predict1(a, q) == doctest::Approx(predict1(b, q)).epsilon(1e-13));
      // LOO: weight 0 drops the row from the keys and the mean; others weigh their error.
      Dataset unit = w;
      unit.weight = {1, 1, 0, 1, 1};
      CHECK(Attention(unit, {0.8}, testing::engine(k, m)).loo(false).mse ==
            doctest::Approx(Attention(without, {0.8}, testing::engine(k, m)).loo(false).mse).epsilon(1e-13));
    }
  }
  // Weighted LOO error by hand, uniform kernel with h = 10 (every key in reach):
  // row j's prediction is the weighted mean of the others, its error counts s_j times.
  const Dataset h = [] {
    Dataset d = testing::make_dataset({0, 1, 2}, {0, 6, 3});
    d.weight = {1, 2, 1};
    return d;
  }();
  const double f0 = (2 * 6 + 3) / 3.0, f1 = 1.5, f2 = (2 * 6) / 3.0;
  const double want = (1 * f0 * f0 + 2 * (6 - f1) * (6 - f1) + 1 * (3 - f2) * (3 - f2)) / 4;
  CHECK(Attention(h, {10.0}, testing::engine(Kernel::uniform)).loo(false).mse == doctest::Approx(want).epsilon(1e-15));
  Dataset zero = h;
  zero.weight = {0, 0, 0};
  CHECK_THROWS_WITH_AS(Attention(zero, {1.0}), "every sample weight is 0: there is nothing to attend to", DataError);
}

TEST_CASE("every kernel's and method's LOO gradient matches finite differences") {
  // Epanechnikov's LOO error has a kink wherever a key enters a support (K'(1) != 0): a small
  // set whose pair distances stay clear of the bandwidths checked. Boston for the smooth ones.
  const Dataset small = testing::kink_free_set();
  Dataset boston = testing::mcycle_or_boston("boston");
  for (std::size_t i = 0; i < boston.n; ++i) boston.weight.push_back(1 + (i % 4));
  for (Kernel k : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov, Kernel::tricube}) {
    for (Method m : {Method::nw, Method::local_linear}) {
      CAPTURE(to_string(k));
      CAPTURE(to_string(m));
      const Dataset& d = k == Kernel::epanechnikov ? small : boston;
      const std::vector<double> h = k == Kernel::epanechnikov ? std::vector<double>{2.37, 2.93} : std::vector<double>{6.0, 1.5};
      const LooResult r = Attention(d, h, testing::engine(k, m)).loo(true);
      for (std::size_t c = 0; c < 2; ++c) {
        // A five-point stencil (error O(eps^4)): a step wide enough that the rounding of
        // local-linear fits with few keys in reach (about 1e-12 of the error) stays below it.
        const double eps = 1e-4;
        auto at = [&](double t) {
          auto hh = h;
          hh[c] *= std::exp(t);
          return Attention(d, hh, testing::engine(k, m)).loo(false).mse;
        };
        const double fd = (8 * (at(eps) - at(-eps)) - (at(2 * eps) - at(-2 * eps))) / (12 * eps);
        CHECK(r.gradient[c] == doctest::Approx(fd).epsilon(1e-5).scale(1e-6));
      }
    }
  }
}

TEST_CASE("metric: A = diag(1/h) is the diagonal model, the gradient matches finite differences") {
  const Dataset d = testing::mcycle_or_boston("boston");
  const std::vector<double> h{2.0, 0.5};
  const Metric diag{2, {1 / h[0], 0, 0, 1 / h[1]}};
  const MetricMap map(diag, d);
  const Attention plain(d, h), mapped(map.data(), {1.0, 1.0});
  const std::vector<double> q{5.0, 6.2, 20.0, 4.5};
  std::vector<double> a(2), b(2);
  plain.predict(q.data(), 2, a.data());
  mapped.predict(map.queries(q.data(), 2).data(), 2, b.data());
  CHECK(a[0] == doctest::Approx(b[0]).epsilon(1e-12));
  CHECK(a[1] == doctest::Approx(b[1]).epsilon(1e-12));
  CHECK(plain.loo(false).mse == doctest::Approx(mapped.loo(false).mse).epsilon(1e-12));

  // fit_metric with no steps reports the loss and gradient at its start: check the gradient
  // there against finite differences of the LOO error in A.
  FitOptions o;
  o.epochs = 0;
  const MetricFit start = fit_metric(d, o, h, 2);
  CHECK(start.loo_mse == doctest::Approx(plain.loo(false).mse).epsilon(1e-12));
  FitOptions o2;
  o2.epochs = 30;
  const MetricFit fit = fit_metric(d, o2, h, 2);
  CHECK(fit.loo_mse < start.loo_mse);
  CHECK(fit.history.size() >= 2);
  for (std::size_t e = 1; e < fit.history.size(); ++e) CHECK(fit.history[e].loss <= fit.history[e - 1].loss);
  const Attention learned(MetricMap(fit.metric, d).data(), {1.0, 1.0});
  CHECK(learned.loo(false).mse == doctest::Approx(fit.loo_mse).epsilon(1e-12));
  // rank 1: a projection onto one direction
  const MetricFit one = fit_metric(d, o2, h, 1);
  CHECK(one.metric.rank == 1);
  CHECK(one.metric.a.size() == 2);
  CHECK(std::isfinite(one.loo_mse));
  CHECK_THROWS_WITH_AS(fit_metric(d, o2, h, 3), "must be between 1 and the number of x columns (2), got 3",
                       UsageError);
}

TEST_CASE("metric gradient: the descent's first step follows -dL/dA") {
  // L(A) along the gradient direction decreases at the rate |g|^2 (first order).
  const Dataset d = testing::mcycle_or_boston("boston");
  const std::vector<double> h{2.0, 0.5};
  auto loss = [&](const std::vector<double>& a) {
    return Attention(MetricMap(Metric{2, a}, d).data(), {1.0, 1.0}).loo(false).mse;
  };
  // Finite differences of L in B = A diag(h) around B = I.
  std::vector<double> b{1, 0, 0, 1}, fd(4);
  auto to_a = [&](std::vector<double> bb) {
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t c = 0; c < 2; ++c) bb[r * 2 + c] /= h[c];
    return bb;
  };
  for (std::size_t k = 0; k < 4; ++k) {
    const double eps = 1e-6;
    auto up = b, down = b;
    up[k] += eps;
    down[k] -= eps;
    fd[k] = (loss(to_a(up)) - loss(to_a(down))) / (2 * eps);
  }
  // One step of length s along -fd must match the descent's first accepted point direction:
  // fit with a single epoch and compare the move B1 - I to -step * fd (a common factor).
  FitOptions o;
  o.epochs = 1;
  const MetricFit one = fit_metric(d, o, h, 2);
  std::vector<double> move(4);
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t c = 0; c < 2; ++c) move[r * 2 + c] = one.metric.a[r * 2 + c] * h[c] - b[r * 2 + c];
  double ratio = 0;
  for (std::size_t k = 0; k < 4; ++k)
    if (std::abs(fd[k]) > std::abs(fd[0]) * 1e-3 || k == 0) {
      if (ratio == 0) ratio = move[k] / -fd[k];
      CHECK(move[k] / -fd[k] == doctest::Approx(ratio).epsilon(1e-4));
    }
  CHECK(ratio > 0);
}

TEST_CASE("standard errors: the normal quantile, the formula by hand, and its coverage") {
  CHECK(normal_quantile(0.975) == doctest::Approx(1.959963984540054).epsilon(1e-15));
  CHECK(normal_quantile(0.5) == 0);
  CHECK(normal_quantile(0.05) == doctest::Approx(-1.6448536269514729).epsilon(1e-15));
  CHECK(normal_quantile(1e-10) == doctest::Approx(-6.361340902404056).epsilon(1e-13));
  CHECK(normal_quantile(1 - 1e-10) == doctest::Approx(6.361340889697422).epsilon(1e-9));
  CHECK_THROWS_WITH_AS(check_level(1.0), "must be > 0 and < 1, got 1", UsageError);

  // Uniform kernel, h = 10: every weight 1/3 at any query near the data; LOO residuals by hand.
  const Dataset d = testing::make_dataset({0, 1, 2}, {0, 6, 3});
  Model m;
  m.kernel = Kernel::uniform;
  m.bandwidth = {10};
  const Fitted f(d, m, EngineOptions{});
  const LooDetail loo = f.loo_detail();
  CHECK(loo.residual == std::vector<double>{-4.5, 4.5, -0});
  CHECK(loo.neighbours == 2);  // two others, equal weights
  double q = 1, pred = 0;
  const Band band = f.predict_band(&q, 1, 0.95, loo, &pred);
  const double sigma2 = (4.5 * 4.5 + 4.5 * 4.5 + 0) / 3, sum_a2 = 3.0 / 9;
  CHECK(pred == 3);
  CHECK(band.se[0] == doctest::Approx(std::sqrt(sigma2 * sum_a2)).epsilon(1e-15));
  CHECK(band.lower[0] == doctest::Approx(3 - 1.959963984540054 * band.se[0]).epsilon(1e-15));
  CHECK(band.upper[0] == doctest::Approx(3 + 1.959963984540054 * band.se[0]).epsilon(1e-15));

  // Coverage: y = sin(2 pi x) + N(0, 0.3^2), n = 400 on [0, 1], bandwidth learned on each of 100
  // data sets; the 95% band at interior points (0.2..0.8) covers the true curve about 95% of
  // the time. The band ignores bias, so a learned (MSE-optimal) bandwidth undercovers a little.
  std::mt19937_64 gen(42);
  std::normal_distribution<double> noise(0, 0.3);
  std::uniform_real_distribution<double> unif(0, 1);
  std::vector<double> qs;
  for (double x = 0.2; x <= 0.8 + 1e-9; x += 0.05) qs.push_back(x);
  std::size_t covered = 0, total = 0;
  // (Under the sanitizers the first 3 of the same data sets, without the rate: testing::sanitized.)
  const int reps = testing::sanitized ? 3 : 100;
  for (int rep = 0; rep < reps; ++rep) {
    std::vector<double> x(400), y(400);
    for (std::size_t i = 0; i < 400; ++i) {
      x[i] = unif(gen);
      y[i] = std::sin(2 * M_PI * x[i]) + noise(gen);
    }
    const Dataset data = testing::make_dataset(x, y);
    Model fit;
    for (Method method : {Method::nw, Method::local_linear}) {
      FitOptions o;
      o.engine.method = method;
      fit.method = method;
      fit.bandwidth = fit_bandwidth(data, o).bandwidth;
      const Fitted fitted(data, fit, EngineOptions{});
      std::vector<double> p(qs.size());
      const Band b = fitted.predict_band(qs.data(), qs.size(), 0.95, fitted.loo_detail(), p.data());
      for (std::size_t j = 0; j < qs.size(); ++j) {
        const double truth = std::sin(2 * M_PI * qs[j]);
        covered += b.lower[j] <= truth && truth <= b.upper[j];
        ++total;
      }
    }
  }
  const double rate = static_cast<double>(covered) / static_cast<double>(total);
  MESSAGE("coverage of the 95% band: " << rate << " over " << total << " intervals");
  if (testing::sanitized) return;
  CHECK(rate >= 0.88);
  CHECK(rate <= 0.98);
}

TEST_CASE("robust bias correction: the band is the degree max(p + 1, 2) fit's at the same bandwidth, with its se") {
  Model m;
  m.bandwidth = {3};
  for (auto [method, degree, want] : {std::tuple{Method::nw, std::size_t{2}, std::size_t{2}},
                                      std::tuple{Method::local_linear, std::size_t{2}, std::size_t{2}},
                                      std::tuple{Method::local_polynomial, std::size_t{2}, std::size_t{3}}}) {
    m.method = method;
    m.degree = degree;
    const auto c = bias_corrected(m);
    REQUIRE(c);
    CHECK(c->method == Method::local_polynomial);
    CHECK(c->degree == want);
    CHECK(c->bandwidth == m.bandwidth);
  }
  m.method = Method::local_polynomial;
  m.degree = 3;
  CHECK(!bias_corrected(m));  // degree 4 is beyond nwreg
  m.method = Method::nw;
  m.score.score = Score::dot;
  CHECK(!bias_corrected(m));  // no local polynomial to correct a score with

  // The band: centred on the corrected fit, its se from the same residuals, the multiplier
  // Student's t with 1 / sum a_i^2 degrees of freedom (NW's weights at q); se stays the plain one.
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");
  Model nw;
  nw.bandwidth = {2.5};
  const Fitted plain(mcycle, nw, {}), corrected(mcycle, *bias_corrected(nw), {});
  const LooDetail loo = plain.loo_residuals();
  const std::vector<double> q = {5, 15, 20.5, 33, 50};
  std::vector<double> f(q.size()), fc(q.size()), f0(q.size());
  const Band rbc = plain.predict_band(q.data(), q.size(), 0.9, loo, f.data(), &corrected, std::nullopt);
  const Band centre = corrected.predict_band(q.data(), q.size(), 0.9, loo, fc.data());
  const Band flat = plain.predict_band(q.data(), q.size(), 0.9, loo, f0.data());
  const Band fixed = plain.predict_band(q.data(), q.size(), 0.9, loo, f.data(), &corrected, 2.5);
  for (std::size_t j = 0; j < q.size(); ++j) {
    CAPTURE(q[j]);
    long double s1 = 0, s2 = 0;
    for (double x : mcycle.x) {
      const long double e = std::exp(-0.5L * std::pow((x - q[j]) / 2.5L, 2));
      s1 += e, s2 += e * e;
    }
    const double nu = static_cast<double>(s1 * s1 / s2), t = band_quantile(0.9, nu);
    CHECK(t > band_quantile(0.9));
    CHECK(f[j] == f0[j]);
    CHECK(rbc.se[j] == flat.se[j]);
    CHECK(rbc.lower[j] == doctest::Approx(fc[j] - t * centre.se[j]).epsilon(1e-10));
    CHECK(rbc.upper[j] == doctest::Approx(fc[j] + t * centre.se[j]).epsilon(1e-10));
    CHECK(fixed.lower[j] == doctest::Approx(fc[j] - 2.5 * centre.se[j]).epsilon(1e-13));
  }
  // Past the data (mcycle ends at 57.6) fewer than 4 residuals inform sigma^2(q): topped up to
  // (nu / 4) sigma^2(q) + (1 - nu / 4) s^2, whose degrees of freedom are Satterthwaite's,
  // 1 / ((nu / 4)^2 / nu + (1 - nu / 4)^2 / n). The band's width at two levels has the ratio
  // of t's quantiles at those degrees of freedom (the centre and its se do not depend on the level).
  const double far = 61;
  long double s1 = 0, s2 = 0;
  for (double x : mcycle.x) {
    const long double e = std::exp(-0.5L * std::pow((x - far) / 2.5L, 2));
    s1 += e, s2 += e * e;
  }
  const double nu = static_cast<double>(s1 * s1 / s2), n = static_cast<double>(mcycle.n);
  REQUIRE(nu < 4);
  const double df = 1 / ((nu / 4) * (nu / 4) / nu + (1 - nu / 4) * (1 - nu / 4) / n);
  double ff;
  const Band wide = plain.predict_band(&far, 1, 0.95, loo, &ff, &corrected, std::nullopt);
  const Band narrow = plain.predict_band(&far, 1, 0.5, loo, &ff, &corrected, std::nullopt);
  const double ratio = (wide.upper[0] - wide.lower[0]) / (narrow.upper[0] - narrow.lower[0]);
  CAPTURE(nu);
  CHECK(ratio == doctest::Approx(band_quantile(0.95, df) / band_quantile(0.5, df)).epsilon(1e-10));
  CHECK(ratio < 0.999 * band_quantile(0.95, 4) / band_quantile(0.5, 4));  // not t at 4 df
  // Student's t by its known values (R's qt), and the normal beyond.
  CHECK(band_quantile(0.95, 1) == doctest::Approx(12.706204736174707).epsilon(1e-10));
  CHECK(band_quantile(0.95, 5) == doctest::Approx(2.5705818356363146).epsilon(1e-10));
  CHECK(band_quantile(0.9, 2.5) == doctest::Approx(2.5582186141359453).epsilon(1e-10));
  CHECK(band_quantile(0.95, 1e8) == band_quantile(0.95));
  CHECK(student_upper(2, 1) == doctest::Approx(0.5 - std::atan(2.0) / M_PI).epsilon(1e-12));
}

TEST_CASE("bands: a local polynomial's t takes sigma^2's degrees of freedom, 1 / sum a_i^2 over its kernel weights") {
  // sum a_i^2, a the normalised kernel weights, from every path (the moment line in one column
  // at 3000 rows, the gathered keys on mcycle and in two columns) equals NW's sum w_i^2.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 10);
  std::vector<double> x1, y1, x2;
  for (int i = 0; i < 3000; ++i) x1.push_back(u(rng)), y1.push_back(std::sin(x1.back()) + 0.1 * u(rng));
  for (int i = 0; i < 400; ++i) x2.push_back(u(rng)), x2.push_back(u(rng));
  Dataset two = testing::make_dataset(x2, std::vector<double>(400, 0.0));
  two.d = 2, two.n = 400;
  for (int i = 0; i < 400; ++i) two.y[i] = std::sin(x2[2 * i]) + x2[2 * i + 1];
  const Dataset mcycle = testing::mcycle_or_boston("mcycle");
  struct Case {
    const Dataset* data;
    std::vector<double> h, q;
  };
  const Dataset line = testing::make_dataset(x1, y1);
  for (const Case& c : {Case{&line, {0.3}, {0.5, 5, 9.9, 12}}, Case{&mcycle, {2.5}, {5, 20.5, 57, 61}},
                        Case{&two, {1.5, 2}, {1, 1, 5, 5, 9, 2}}}) {
    for (Kernel k : {Kernel::gaussian, Kernel::tricube, Kernel::epanechnikov}) {
      EngineOptions o;
      o.kernel = k;
      o.out_of_reach = OutOfReach::empty;
      const std::size_t m = c.q.size() / c.data->d;
      std::vector<double> f(m), nw_w2(m);
      Attention(*c.data, c.h, o).predict_detail(c.q.data(), m, {}, f.data(), nw_w2.data(), nullptr);
      for (std::size_t degree : {1, 2}) {
        CAPTURE(c.data->n);
        CAPTURE(to_string(k));
        CAPTURE(degree);
        o.method = degree == 1 ? Method::local_linear : Method::local_polynomial;
        o.degree = degree;
        std::vector<double> w2(m), a2(m);
        Attention(*c.data, c.h, o).predict_detail(c.q.data(), m, {}, f.data(), w2.data(), nullptr, a2.data());
        for (std::size_t j = 0; j < m; ++j) {
          CAPTURE(j);
          if (std::isnan(nw_w2[j])) {
            CHECK(std::isnan(a2[j]));
            continue;
          }
          CHECK(a2[j] == doctest::Approx(nw_w2[j]).epsilon(1e-12));
          CHECK(w2[j] != a2[j]);
        }
      }
    }
  }
  // Local linear's band on mcycle at 3, near its start (nu >= 4): its width at two levels has
  // the ratio of t's quantiles at nu = 1 / sum a_i^2 (8.05), not at the estimate's 1 / sum w_i^2
  // (4.93).
  Model ll;
  ll.bandwidth = {2.5};
  ll.method = Method::local_linear;
  const Fitted plain(mcycle, ll, {}), corrected(mcycle, *bias_corrected(ll), {});
  const LooDetail loo = plain.loo_residuals();
  const double q = 3;
  long double s1 = 0, s2 = 0;
  for (double x : mcycle.x) {
    const long double e = std::exp(-0.5L * std::pow((x - q) / 2.5L, 2));
    s1 += e, s2 += e * e;
  }
  const double nu = static_cast<double>(s1 * s1 / s2);
  double f, w2;
  EngineOptions o;
  o.method = Method::local_linear;
  Attention(mcycle, {2.5}, o).predict_detail(&q, 1, {}, &f, &w2, nullptr);
  REQUIRE(nu >= 4);
  REQUIRE(1 / w2 < 0.9 * nu);
  const Band wide = plain.predict_band(&q, 1, 0.95, loo, &f, &corrected, std::nullopt);
  const Band narrow = plain.predict_band(&q, 1, 0.5, loo, &f, &corrected, std::nullopt);
  const double ratio = (wide.upper[0] - wide.lower[0]) / (narrow.upper[0] - narrow.lower[0]);
  CHECK(ratio == doctest::Approx(band_quantile(0.95, nu) / band_quantile(0.5, nu)).epsilon(1e-10));
  CHECK(ratio < 0.9999 * band_quantile(0.95, 1 / w2) / band_quantile(0.5, 1 / w2));
}

TEST_CASE("simultaneous bands: the tube formula's kappa0 and critical value against a brute force") {
  // Gaussian NW on mcycle at h = 2: the weight vectors a(q) by hand, kappa0 the sum of the
  // angles between neighbouring normalised ones, c from 2 (1 - Phi(c)) + kappa0/pi e^(-c^2/2)
  // = 1 - level by bisection.
  const Dataset d = testing::mcycle_or_boston("mcycle");
  Model m;
  m.bandwidth = {2};
  const Fitted f(d, m, {});
  std::vector<double> q;
  for (double x = 3; x <= 57; x += 0.75) q.push_back(x);
  std::vector<double> shuffled(q.rbegin(), q.rend());  // any order: sorted inside
  const Simultaneous s = f.simultaneous(shuffled.data(), shuffled.size(), 0.95);
  long double kappa = 0;
  std::vector<long double> prev;
  for (double x : q) {
    std::vector<long double> t(d.n);
    long double norm = 0;
    for (std::size_t i = 0; i < d.n; ++i) {
      t[i] = std::exp(-0.5L * std::pow((d.x[i] - x) / 2.0L, 2));
      norm += t[i] * t[i];
    }
    for (auto& v : t) v /= std::sqrt(norm);
    if (!prev.empty()) {
      long double dot = 0;
      for (std::size_t i = 0; i < d.n; ++i) dot += t[i] * prev[i];
      kappa += std::acos(std::min(1.0L, dot));
    }
    prev = t;
  }
  CHECK(s.kappa0 == doctest::Approx(static_cast<double>(kappa)).epsilon(1e-6));
  double lo = 1.96, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double c = (lo + hi) / 2;
    (std::erfc(c / std::sqrt(2.0)) + s.kappa0 / M_PI * std::exp(-c * c / 2) > 0.05 ? lo : hi) = c;
  }
  CHECK(s.critical == doctest::Approx(hi).epsilon(1e-10));
  CHECK(s.critical > band_quantile(0.95));
  // One query: no path, the pointwise value.
  CHECK(f.simultaneous(q.data(), 1, 0.95).critical == doctest::Approx(band_quantile(0.95)).epsilon(1e-10));
  const Dataset two = testing::mcycle_or_boston("boston");
  Model b;
  b.bandwidth = {2, 0.5};
  CHECK_THROWS_AS(Fitted(two, b, {}).simultaneous(two.x.data(), 3, 0.95), UsageError);
}
