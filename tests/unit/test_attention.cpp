#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "unit/reference.h"
#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/base/errors.h"

using namespace nwreg;
using testing::make_dataset;

namespace {

double predict_one(const Dataset& d, double h, double q) {
  double out;
  Attention(d, {h}).predict(&q, 1, &out);
  return out;
}

}  // namespace

TEST_CASE("prediction by hand: x = 0 1 2, y = 1 2 4, h = 1, q = 0.5") {
  const Dataset d = make_dataset({0, 1, 2}, {1, 2, 4});
  // scores -1/8, -1/8, -9/8: relative weights 1, 1, e^-1
  const double e1 = std::exp(-1.0);
  CHECK(predict_one(d, 1.0, 0.5) == doctest::Approx((1 + 2 + 4 * e1) / (2 + e1)).epsilon(1e-15));
  std::vector<double> row;
  const double q = 0.5;
  Attention(d, {1.0}).weights(&q, 1, [&](std::size_t i, const double* a) {
    CHECK(i == 0);
    row.assign(a, a + 3);
  });
  CHECK(row[0] == doctest::Approx(1 / (2 + e1)).epsilon(1e-15));
  CHECK(row[1] == doctest::Approx(1 / (2 + e1)).epsilon(1e-15));
  CHECK(row[2] == doctest::Approx(e1 / (2 + e1)).epsilon(1e-15));
}

TEST_CASE("every attention row is non-negative and sums to 1") {
  const Dataset d = testing::bundled("mcycle.csv", "times", "accel");
  const std::vector<double> q = {-100, 0, 2.4, 17.3, 30, 57.6, 1e6};
  for (double h : {1e-6, 0.05, 1.0, 40.0, 1e9}) {
    Attention(d, {h}).weights(q.data(), q.size(), [&](std::size_t, const double* a) {
      double sum = 0;
      for (std::size_t i = 0; i < d.n; ++i) {
        CHECK(a[i] >= 0);
        sum += a[i];
      }
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-14));
    });
  }
}

TEST_CASE("tiny h gives the nearest key y, huge h gives the mean") {
  const Dataset d = make_dataset({3, 0, 1, 2}, {5, -1, 2, 4});
  CHECK(predict_one(d, 1e-8, 0.9) == 2);
  CHECK(predict_one(d, 1e-300, 2.2) == 4);
  CHECK(predict_one(d, 1e-8, -50) == -1);  // far outside: still the nearest key
  CHECK(predict_one(d, 1e-8, 1e200) == 5);
  CHECK(predict_one(d, 1e300, 1.5) == doctest::Approx(2.5).epsilon(1e-15));
}

TEST_CASE("ties in x share the weight") {
  const Dataset d = make_dataset({1, 1, 2}, {1, 3, 10});
  CHECK(predict_one(d, 1e-6, 1.0) == 2);
  CHECK(predict_one(d, 1e-6, 1.2) == 2);
}

TEST_CASE("unsorted input gives the same predictions as sorted") {
  const Dataset d = testing::bundled("synthetic.csv", "x", "y");
  std::vector<std::size_t> perm(d.n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(7));
  std::vector<double> x, y;
  for (auto i : perm) {
    x.push_back(d.x[i]);
    y.push_back(d.y[i]);
  }
  const Dataset s = make_dataset(x, y);
  for (double q : {-1.0, 0.3, 2.5, 4.9, 9.0})
    CHECK(predict_one(s, 0.3, q) == doctest::Approx(predict_one(d, 0.3, q)).epsilon(1e-14));
}

TEST_CASE("scale invariance from 1e-300 to 1e300, no overflow in (q-x)^2") {
  const Dataset base = make_dataset({-1, 0, 0.5, 2, 3}, {1, -2, 3, 0.5, 7});
  for (double s : {1e-300, 1e-150, 1e150, 1e300}) {
    CAPTURE(s);
    std::vector<double> x;
    for (double v : base.x) x.push_back(v * s);
    const Dataset d = make_dataset(x, base.y);
    for (double q : {-2.0, 0.25, 1.0, 4.0})
      CHECK(predict_one(d, 0.7 * s, q * s) == doctest::Approx(predict_one(base, 0.7, q)).epsilon(1e-13));
  }
  // Keys 1e300 apart at h = 1e-300: every score overflows; the nearest key still wins.
  const Dataset far = make_dataset({-1e300, 1e300}, {1, 2});
  CHECK(predict_one(far, 1e-300, 0.9e300) == 2);
  CHECK(predict_one(far, 1e-300, -1.7e308) == 1);
}

TEST_CASE("huge y values do not overflow the weighted sums") {
  const Dataset d = make_dataset({0, 1, 2}, {1.5e308, 1.6e308, 1.7e308});
  CHECK(predict_one(d, 1e9, 1) == doctest::Approx(1.6e308).epsilon(1e-14));
  CHECK(predict_one(d, 1e-9, 2) == 1.7e308);
}

TEST_CASE("negative values") {
  const Dataset d = make_dataset({-3, -2, -1}, {-10, -20, -30});
  CHECK(predict_one(d, 1e-9, -2.1) == -20);
  CHECK(predict_one(d, 1e9, -2) == doctest::Approx(-20).epsilon(1e-15));
}

TEST_CASE("LOO error equals the definition, computed independently") {
  const Dataset d = testing::bundled("synthetic.csv", "x", "y");
  for (double h : {0.01, 0.1, 0.3, 1.0, 10.0}) {
    CAPTURE(h);
    CHECK(Attention(d, {h}).loo(false).mse == doctest::Approx(testing::reference_loo(d, testing::gaussian({h}))).epsilon(1e-13));
  }
  // By hand: n = 2, each row sees only the other point.
  CHECK(Attention(make_dataset({0, 1}, {1, 4}), {0.5}).loo(false).mse == 9.0);
}

TEST_CASE("LOO leaves out the row itself, not equal keys") {
  // x = 1 1 5: row 1 sees row 2 at distance 0, so at small h f_-1 = y_2.
  const Dataset d = make_dataset({1, 1, 5}, {0, 2, 10});
  // f_-0 = 2, f_-1 = 0, f_-2 = mean(0, 2) = 1: errors 4, 4, 81.
  CHECK(Attention(d, {1e-3}).loo(false).mse == doctest::Approx((4.0 + 4.0 + 81.0) / 3).epsilon(1e-15));
}

TEST_CASE("LOO gradient matches central finite differences in log h") {
  for (const auto& set : testing::golden_sets()) {
    const Dataset d = testing::bundled(set.file, set.x, set.y);
    const double sd = column_stats(d, 0).sd;
    for (double c : {0.05, 0.2, 1.0}) {
      CAPTURE(set.name);
      CAPTURE(c);
      const double h = c * sd, eps = 1e-5;
      const double g = Attention(d, {h}).loo(true).gradient.at(0);
      const double up = Attention(d, {h * std::exp(eps)}).loo(false).mse;
      const double down = Attention(d, {h * std::exp(-eps)}).loo(false).mse;
      const double fd = (up - down) / (2 * eps);
      CHECK(g == doctest::Approx(fd).epsilon(1e-6).scale(1e-9 * Attention(d, {h}).loo(false).mse));
    }
  }
}

TEST_CASE("LOO needs two rows, and bad bandwidths are refused") {
  CHECK_THROWS_WITH_AS(Attention(make_dataset({1}, {2}), {1.0}).loo(false),
                       "leave-one-out needs at least 2 training rows, got 1", DataError);
  const Dataset d = make_dataset({0, 1}, {1, 2});
  CHECK_THROWS_WITH_AS(Attention(d, {0.0}), "`bandwidth`: must be > 0, got 0", UsageError);
  CHECK_THROWS_WITH_AS(Attention(d, {-1.0}), "`bandwidth`: must be > 0, got -1", UsageError);
  CHECK_THROWS_AS(Attention(d, {INFINITY}), UsageError);
  CHECK_THROWS_AS(Attention(d, {1e-320}), UsageError);  // 1/h overflows
  CHECK_THROWS_WITH_AS(Attention(d, {1.0, 2.0}),
                       "`bandwidth`: needs 1 value (one per x column), got 2", UsageError);
}

TEST_CASE("kernel names") {
  CHECK(parse_kernel("gaussian") == Kernel::gaussian);
  CHECK(to_string(Kernel::gaussian) == "gaussian");
  CHECK_THROWS_WITH_AS(parse_kernel("box"), "unknown kernel \"box\" (known: gaussian, laplace, epanechnikov, tricube, uniform)", UsageError);
  try {
    parse_kernel("box");
  } catch (const ParameterError& e) {
    CHECK(e.parameter() == "kernel");  // the CLI names the option: --kernel
  }
}

TEST_CASE("keys near 1e-200 with h = 1e-204 still find their nearest key") {
  // Found by the property tests: comparing the two neighbours by a product of their
  // differences underflowed to a tie and chose the farther key, whose neighbour's weight then
  // overflowed to NaN.
  const Dataset d = make_dataset({-3e-201, 7e-201}, {1, 2});
  CHECK(predict_one(d, 1e-204, 0.0) == 1);
  CHECK(predict_one(d, 1e-204, 1e-201) == 1);
  CHECK(predict_one(d, 1e-204, 2.5e-201) == 2);
}

// The one-column Gaussian NW path computes them in the vectorised kernel, loo_detail (which
// counts neighbours from every row's weights) in the scalar one: equal to 1e-12 relative.
TEST_CASE("loo_residuals: the residuals of loo_detail, without the neighbour count") {
  const Dataset d = testing::bundled("mcycle.csv", "times", "accel");
  for (Kernel k : {Kernel::gaussian, Kernel::epanechnikov})
    for (Method m : {Method::nw, Method::local_linear}) {
      EngineOptions o;
      o.kernel = k;
      o.method = m;
      Attention a(d, o);
      a.set_bandwidth({2.5});
      const LooDetail full = a.loo_detail(), alone = a.loo_residuals();
      REQUIRE(alone.residual.size() == full.residual.size());
      for (std::size_t i = 0; i < full.residual.size(); ++i)
        CHECK(alone.residual[i] == doctest::Approx(full.residual[i]).epsilon(1e-12).scale(1e-9));
      CHECK(alone.neighbours == 0);
      CHECK(full.neighbours > 1);
    }
}
