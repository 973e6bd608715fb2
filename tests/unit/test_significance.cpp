// nwreg test: the Bowman-Azzalini tests of no effect and of linearity against R's sm.regression
// (tests/golden/make_golden_test.R), against a brute-force computation with the matrices written
// out, and their invariances: y's units, equal sample weights, weight-0 rows, threads.

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "helpers.h"
#include "nwreg/base/distributions.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/learn/fit.h"
#include "nwreg/learn/significance.h"

using namespace nwreg;

namespace {

// The chi-square calibration (no permutations) against `null`.
TestOptions null_only(NullModel null) {
  TestOptions o;
  o.null = null;
  return o;
}

Model fixed(double h, Method method) {
  Model m;
  m.bandwidth = {h};
  m.method = method;
  return m;
}

Dataset golden_set(const std::string& set, const std::string& file, const std::string& xc, const std::string& yc) {
  if (file.rfind("data/", 0) == 0) return testing::bundled(file.substr(5), xc, yc);
  const auto sim = testing::read_golden(file);
  std::vector<double> x, y;
  for (std::size_t i = 0; i < sim.at("set").size(); ++i)
    if (sim.at("set")[i] == set) x.push_back(std::stod(sim.at("x")[i])), y.push_back(std::stod(sim.at("y")[i]));
  return testing::make_dataset(x, y);
}

}  // namespace

TEST_CASE("chi-square tails: closed forms and both tails") {
  // k = 2: P(X > x) = exp(-x/2); k = 1: erfc(sqrt(x/2)).
  for (double x : {0.01, 0.5, 2.0, 7.5, 40.0, 700.0}) {
    CHECK(testing::relative(chi_square_upper(x, 2), std::exp(-x / 2)) < 1e-13);
    CHECK(testing::relative(chi_square_upper(x, 1), std::erfc(std::sqrt(x / 2))) < 1e-12);
    CHECK(std::abs(chi_square_lower(x, 3) + chi_square_upper(x, 3) - 1) < 1e-15);
  }
  CHECK(testing::relative(chi_square_lower(1e-6, 2), -std::expm1(-0.5e-6)) < 1e-12);  // a small lower tail kept
  CHECK(chi_square_upper(0, 5) == 1);
  CHECK(chi_square_upper(-1, 5) == 1);
  CHECK(chi_square_lower(0, 5) == 0);
  // R: pchisq(3.2, 4.7, lower.tail = FALSE), pchisq(250, 180.5, lower.tail = FALSE), pchisq(0.3, 55.5)
  CHECK(testing::relative(chi_square_upper(3.2, 4.7), 0.62876946594599459) < 1e-12);
  CHECK(testing::relative(chi_square_upper(250, 180.5), 0.00047311337154643104) < 1e-10);
  CHECK(testing::relative(chi_square_lower(0.3, 55.5), 8.9692905526972224e-53) < 1e-10);
}

TEST_CASE("test: p-values equal R sm.regression's (no effect, linear, NW and local linear)") {
  const auto g = testing::read_golden("tests/golden/sm_test.csv");
  REQUIRE(g.at("set").size() >= 24);
  for (std::size_t r = 0; r < g.at("set").size(); ++r) {
    CAPTURE(g.at("set")[r]);
    CAPTURE(g.at("h")[r]);
    CAPTURE(g.at("null")[r]);
    CAPTURE(g.at("method")[r]);
    const Dataset d = golden_set(g.at("set")[r], g.at("file")[r], g.at("x")[r], g.at("y")[r]);
    const Model m = fixed(std::stod(g.at("h")[r]), parse_method(g.at("method")[r]));
    const TestResult t = test_null_model(d, m, null_only(parse_null_model(g.at("null")[r])), EngineOptions(0, nullptr));
    // Far in the tail p moves with the last digits of the cumulants (their terms cancel): 1e-2
    // of p there (ties200: 5.9e-15); 1e-8 elsewhere (sm's raw time stamps cost it 1e-9).
    const double want = std::stod(g.at("p")[r]);
    CHECK(testing::relative(t.p_value, want) < (want > 1e-10 ? 1e-8 : 1e-2));
  }
}

namespace {

// The test written out with n x n matrices, as sm.regression's code forms them (weighted:
// S = I - X (X'DX)^-1 X'D, A = D - (1 + F)(I - L)'D(I - L), B = A S D^-1, k_j from tr(B^j)).
struct Brute {
  double statistic, p;
};
Brute brute_force(const Dataset& d, const Model& m, bool linear) {
  const std::size_t n = d.n;
  using Mat = std::vector<std::vector<double>>;
  auto mul = [n](const Mat& a, const Mat& b) {
    Mat c(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < n; ++j) c[i][j] += a[i][k] * b[k][j];
    return c;
  };
  auto trace = [n](const Mat& a) {
    double t = 0;
    for (std::size_t i = 0; i < n; ++i) t += a[i][i];
    return t;
  };
  Mat L(n, std::vector<double>(n));
  const Fitted f(d, m, EngineOptions(0, nullptr));
  f.weights(d.x.data(), n, [&](std::size_t i, const double* w) { L[i].assign(w, w + n); });
  const auto& w = d.weight;
  // X'DX and the hat matrix H = X (X'DX)^-1 X'D for X = [1] or [1, x] (2 x 2 inverse by hand).
  double s0 = 0, s1 = 0, s2 = 0;
  for (std::size_t i = 0; i < n; ++i) s0 += w[i], s1 += w[i] * d.x[i], s2 += w[i] * d.x[i] * d.x[i];
  Mat S(n, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double h = 1 / s0;
      if (linear) h = (s2 - s1 * (d.x[i] + d.x[j]) + s0 * d.x[i] * d.x[j]) / (s0 * s2 - s1 * s1);
      S[i][j] = (i == j) - h * w[j];
    }
  std::vector<double> e(n, 0.0), r(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) e[i] += S[i][j] * d.y[j];
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = e[i];
    for (std::size_t j = 0; j < n; ++j) r[i] -= L[i][j] * e[j];
  }
  double r0 = 0, r1 = 0;
  for (std::size_t i = 0; i < n; ++i) r0 += w[i] * e[i] * e[i], r1 += w[i] * r[i] * r[i];
  const double t = (r0 - r1) / r1;
  Mat A(n, std::vector<double>(n)), SD(n, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double rdr = 0;  // ((I - L)' D (I - L))_ij
      for (std::size_t k = 0; k < n; ++k) rdr += ((k == i) - L[k][i]) * w[k] * ((k == j) - L[k][j]);
      A[i][j] = (i == j) * w[i] - (1 + t) * rdr;
      SD[i][j] = S[i][j] / w[j];
    }
  const Mat B = mul(A, SD), B2 = mul(B, B), B3 = mul(B2, B);
  const double k1 = trace(B), k2 = 2 * trace(B2), k3 = 8 * trace(B3);
  const double a = std::abs(k3 / (4 * k2)), b = 8 * k2 * k2 * k2 / (k3 * k3), c = k1 - a * b;
  return {t, chi_square_upper(-c / a, b)};
}

}  // namespace

TEST_CASE("test: sample weights as precisions, against the matrices written out") {
  std::vector<double> x, y, w;
  for (int i = 0; i < 40; ++i) {
    x.push_back(0.25 * i + 0.1 * std::sin(3.0 * i));
    y.push_back(0.3 * std::sin(x.back()) + std::cos(7.1 * i));  // a deterministic "noise"
    w.push_back(1 + (i * 7) % 5 * 0.5);
  }
  Dataset d = testing::make_dataset(x, y);
  d.weight = w;
  for (Method method : {Method::nw, Method::local_linear})
    for (bool linear : {false, true}) {
      CAPTURE(to_string(method));
      CAPTURE(linear);
      const Model m = fixed(1.3, method);
      const TestResult t = test_null_model(d, m, null_only(linear ? NullModel::linear : NullModel::constant), EngineOptions(0, nullptr));
      const Brute b = brute_force(d, m, linear);
      CHECK(testing::relative(t.statistic, b.statistic) < 1e-11);
      CHECK(testing::relative(t.p_value, b.p) < 1e-9);
      CHECK(t.p_value > 1e-4);
      CHECK(t.null_terms == (linear ? 2 : 1));
    }
}

TEST_CASE("test: invariant to y's units, equal weights, weight-0 rows and threads") {
  const Dataset cars = testing::bundled("cars.csv", "speed", "dist");
  const Model m = fixed(3, Method::local_linear);
  const EngineOptions one(0, nullptr);
  const TestResult base = test_null_model(cars, m, null_only(NullModel::linear), one);
  REQUIRE(base.p_value > 0.01);
  REQUIRE(base.p_value < 0.9);

  Dataset scaled = cars;
  for (double& v : scaled.y) v = v * 0x1p400 + 3e122;
  const TestResult s = test_null_model(scaled, m, null_only(NullModel::linear), one);
  CHECK(testing::relative(s.statistic, base.statistic) < 1e-9);
  CHECK(testing::relative(s.p_value, base.p_value) < 1e-9);
  CHECK(testing::relative(s.rss_null, std::ldexp(base.rss_null, 800)) < 1e-9);
  // Far beyond a double's range for the squares: F and p hold, the sums are said to be out of range.
  for (int e : {-1000, 900, 1015}) {  // 2^1015: the projection's sums would overflow unscaled
    Dataset far = cars;
    for (double& v : far.y) v = std::ldexp(v, e);
    const TestResult t = test_null_model(far, m, null_only(NullModel::linear), one);
    CHECK(testing::relative(t.p_value, base.p_value) < 1e-9);
    REQUIRE(t.warnings.size() == 1);
    CHECK(t.warnings[0].find(e < 0 ? "too small for a double" : "too large for a double") != std::string::npos);
  }

  Dataset equal = cars;
  equal.weight.assign(cars.n, 3.0);
  const TestResult e = test_null_model(equal, m, null_only(NullModel::linear), one);
  CHECK(testing::relative(e.p_value, base.p_value) < 1e-12);
  CHECK(testing::relative(e.rss_null, 3 * base.rss_null) < 1e-12);

  // A row of weight 0 takes no part: as if it were not there.
  Dataset extra = cars;
  extra.x.push_back(12.5), extra.y.push_back(1e6), extra.n += 1;
  extra.weight.assign(extra.n, 1.0);
  extra.weight.back() = 0;
  const TestResult z = test_null_model(extra, m, null_only(NullModel::linear), one);
  CHECK(z.rows == cars.n);
  CHECK(testing::relative(z.p_value, base.p_value) < 1e-12);

  ThreadPool pool(2);
  const TestResult p = test_null_model(cars, m, null_only(NullModel::linear), EngineOptions(0, &pool));
  CHECK(p.p_value == base.p_value);
  CHECK(p.statistic == base.statistic);
}

TEST_CASE("test: what it refuses, and a smooth that is the null fit") {
  const Dataset cars = testing::bundled("cars.csv", "speed", "dist");
  const EngineOptions one(0, nullptr);
  // h far below the spacing of x: the smooth interpolates the distinct x (ties keep some noise).
  std::vector<double> x, y;
  for (int i = 0; i < 30; ++i) x.push_back(i), y.push_back(std::sin(1.7 * i));
  CHECK_THROWS_WITH_AS(test_null_model(testing::make_dataset(x, y), fixed(0.01, Method::nw), null_only(NullModel::constant), one),
                       doctest::Contains("the smooth interpolates the data"), DataError);
  Model robust = fixed(3, Method::nw);
  robust.robustness.assign(cars.n, 1.0);
  CHECK_THROWS_WITH_AS(test_null_model(cars, robust, null_only(NullModel::constant), one),
                       doctest::Contains("robustness weights depend on y"), UsageError);
  x.assign(test_max_rows + 1, 0.0), y.assign(test_max_rows + 1, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i), y[i] = std::sin(0.1 * i);
  CHECK_THROWS_WITH_AS(test_null_model(testing::make_dataset(x, y), fixed(3, Method::nw), null_only(NullModel::constant), one),
                       doctest::Contains("at most 5000 rows, got 5001"), DataError);
  CHECK_THROWS_WITH_AS(test_null_model(testing::make_dataset({1, 2, 3}, {1, 5, 2}), fixed(3, Method::nw),
                                       null_only(NullModel::linear), one),
                       doctest::Contains("at least 4 rows"), DataError);
  // NW with h a million times the range is the mean: nothing beyond the constant null.
  const TestResult flat = test_null_model(cars, fixed(1e8, Method::nw), null_only(NullModel::constant), one);
  CHECK(flat.p_value == 1);
  CHECK(flat.statistic == 0);
  REQUIRE(flat.warnings.size() == 1);
  CHECK(flat.warnings[0].find("the smooth is the null model's own fit") != std::string::npos);
  // Local linear at a huge h is the line: against the linear null, the same.
  CHECK(test_null_model(cars, fixed(1e8, Method::local_linear), null_only(NullModel::linear), one).p_value == 1);
  // Constant y (and one whose residuals are rounding noise about 0.1): nothing to test.
  for (double level : {2.0, 0.1}) {
    const TestResult c = test_null_model(testing::make_dataset({1, 2, 3, 4, 5}, {level, level, level, level, level}),
                                         fixed(1, Method::nw), null_only(NullModel::constant), one);
    CHECK(c.p_value == 1);
    REQUIRE(c.warnings.size() == 1);
    CHECK(c.warnings[0] == "y has no variation about the constant null model's fit: nothing to test");
  }
}

TEST_CASE("df:K: the bandwidth whose fit has K degrees of freedom") {
  const Dataset cars = testing::bundled("cars.csv", "speed", "dist");
  for (Method method : {Method::nw, Method::local_linear})
    for (double k : {2.5, 6.0, 12.0}) {
      CAPTURE(to_string(method));
      CAPTURE(k);
      FitPlan plan;
      plan.kind = BandwidthSpec::Kind::df;
      plan.fixed = {k};
      EngineOptions engine(0, nullptr);
      engine.method = method;
      const Model m = fit_model(cars, plan, engine);
      CHECK(m.bandwidth_source == "df");
      CHECK(Attention(cars, m.bandwidth, engine).insample(false).trace == doctest::Approx(k).epsilon(1e-10));
      REQUIRE(m.df);
      CHECK(*m.df == doctest::Approx(k).epsilon(1e-10));
    }
  // Two columns share one scale c: h_k = c sd_k.
  CsvReader r(testing::source_path("data/boston.csv"), CsvOptions{});
  ColumnChoice c;
  c.x = {"lstat", "rm"};
  c.y = "medv";
  const Dataset boston = read_dataset(r, c);
  FitPlan plan;
  plan.kind = BandwidthSpec::Kind::df;
  plan.fixed = {12};
  const Model m = fit_model(boston, plan, EngineOptions(0, nullptr));
  const auto sl = column_stats(boston, 0), sr = column_stats(boston, 1);
  CHECK(m.bandwidth[0] / sl.sd == doctest::Approx(m.bandwidth[1] / sr.sd).epsilon(1e-12));
  CHECK(*m.df == doctest::Approx(12).epsilon(1e-10));
}
