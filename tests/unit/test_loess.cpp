// -b span:F and --robust N against R: loess(surface = "direct") for degrees 0 to 2, families
// gaussian and symmetric (--robust 3), one and two x columns (normalized or not), sample weights
// with zeros, spans above 1; and lowess(delta = 0). Golden values from tests/golden/make_golden_loess.R.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>

#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/learn/fit.h"
#include "nwreg/learn/robust.h"

using namespace nwreg;

namespace {

Dataset golden_set(const std::string& set) {
  struct Source {
    const char* file;
    std::vector<std::string> x;
    const char* y;
  };
  static const std::map<std::string, Source> sources = {
      {"cars", {"cars.csv", {"speed"}, "dist"}},
      {"lakehuron", {"lakehuron.csv", {"year"}, "level"}},
      {"mcycle", {"mcycle.csv", {"times"}, "accel"}},
      {"mcycle_w", {"mcycle.csv", {"times"}, "accel"}},
      {"boston", {"boston.csv", {"lstat", "rm"}, "medv"}},
      {"airquality", {"airquality.csv", {"Wind", "Temp"}, "Ozone"}},
  };
  const Source& s = sources.at(set);
  CsvReader r(testing::source_path(std::string("data/") + s.file), CsvOptions{});
  ColumnChoice c;
  c.x = s.x;
  c.y = s.y;
  Dataset d = read_dataset(r, c);
  if (set == "mcycle_w")  // as the R script weighs them
    for (std::size_t i = 1; i <= d.n; ++i) d.weight.push_back(i % 17 == 0 ? 0.0 : static_cast<double>((i - 1) % 3 + 1) / 2);
  return d;
}

// The model of `nwreg predict -b span:F --kernel tricube --method ... [--robust N]`.
Model span_model(const Dataset& d, double span, std::size_t degree, std::size_t robust, EngineOptions& e,
                 std::vector<double> scales = {}) {
  e.kernel = Kernel::tricube;
  e.method = degree == 0 ? Method::nw : degree == 1 ? Method::local_linear : Method::local_polynomial;
  e.degree = degree;
  FitPlan plan;
  plan.kind = BandwidthSpec::Kind::knn;
  plan.neighbour_policy = {Neighbours::span, 0, span};
  plan.robust = robust;
  plan.fixed = std::move(scales);
  plan.loo_statistics = false;
  return fit_model(d, plan, e);
}

}  // namespace

TEST_CASE("span and --robust: R's loess (surface direct) and lowess (--like lowess's window) to 1e-9 of the range of y") {
  const auto g = testing::read_golden("tests/golden/loess.csv");
  // The golden rows by fit: set, call, degree, robust, span.
  std::map<std::tuple<std::string, std::string, std::size_t, std::size_t, double>, std::vector<std::size_t>> fits;
  for (std::size_t i = 0; i < g.at("set").size(); ++i)
    fits[{g.at("set")[i], g.at("call")[i], std::stoul(g.at("degree")[i]), std::stoul(g.at("robust")[i]),
          std::stod(g.at("span")[i])}]
        .push_back(i);
  std::map<std::string, std::size_t> checked;
  std::map<std::string, double> worst;
  for (const auto& [key, rows] : fits) {
    const std::string& set = std::get<0>(key);
    const std::string& call = std::get<1>(key);
    const std::size_t degree = std::get<2>(key), robust = std::get<3>(key);
    const double span = std::get<4>(key);
    const Dataset d = golden_set(set);
    EngineOptions e;
    e.lowess_window = call == "lowess";
    const Model m = span_model(d, span, degree, robust, e,
                               call == "loess_unnormalized" ? std::vector<double>{1.0} : std::vector<double>{});
    const Fitted f(d, m, e);
    const auto [lo, hi] = std::minmax_element(d.y.begin(), d.y.end());
    const double range = *hi - *lo, tol = 1e-9 * range;
    CAPTURE(set);
    CAPTURE(call);
    CAPTURE(degree);
    CAPTURE(robust);
    CAPTURE(span);
    for (std::size_t i : rows) {
      const auto q = testing::number_list(g.at("x")[i]);
      REQUIRE(q.size() == d.d);
      double got;
      f.predict(q.data(), 1, &got);
      const double want = std::stod(g.at("value")[i]);
      CAPTURE(g.at("x")[i]);
      CHECK(std::abs(got - want) <= tol);
      worst[call] = std::max(worst[call], std::abs(got - want) / range);
      ++checked[call];
    }
  }
  MESSAGE("largest differences over the range of y: loess " << worst["loess"] << ", predict " << worst["loess_predict"]
                                                            << ", lowess " << worst["lowess"]);
  CHECK(checked["loess"] == 7638);
  CHECK(checked["loess_predict"] == 576);
  CHECK(checked["lowess"] == 1124);
  CHECK(checked["loess_unnormalized"] == 2 * (102 + 111));
}

TEST_CASE("lowess's window: keys past 0.999 h weigh 0, by moments as key by key") {
  // 3000 rows, span 0.3 (windows of 900 keys: by moments), tricube local linear: with the window
  // cut (--like lowess) each fitted value and its squared weights equal the key-by-key sums
  // over the keys within 0.999 h; without it (loess) some differ, by the keys just inside h.
  std::vector<double> x, y;
  std::uint64_t s = 99;
  for (int i = 0; i < 3000; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x.push_back(static_cast<double>(s >> 11) * 0x1p-53 * 10);
    y.push_back(std::sin(x.back()) + std::cos(7 * x.back()));
  }
  const Dataset d = testing::make_dataset(x, y);
  std::vector<double> q;
  for (int j = 0; j <= 200; ++j) q.push_back(0.05 * j);
  auto fit = [&](bool lowess, bool moments, std::vector<double>& w2) {
    EngineOptions e;
    e.lowess_window = lowess;
    if (!moments) e.shortcuts = e.shortcuts.without(Shortcut::line_moments);
    const Model m = span_model(d, 0.3, 1, 0, e);
    e.neighbour_policy = m.neighbour_policy;
    std::vector<double> out(q.size());
    w2.assign(q.size(), 0.0);
    Attention(d, m.bandwidth, e).predict_detail(q.data(), q.size(), {}, out.data(), w2.data(), nullptr);
    return out;
  };
  std::vector<double> w_mom, w_key, w_loess;
  const auto mom = fit(true, true, w_mom), key = fit(true, false, w_key), loess = fit(false, true, w_loess);
  std::size_t differ = 0;
  for (std::size_t j = 0; j < q.size(); ++j) {
    CAPTURE(q[j]);
    CHECK(mom[j] == doctest::Approx(key[j]).epsilon(1e-11));
    CHECK(w_mom[j] == doctest::Approx(w_key[j]).epsilon(1e-11));
    differ += std::abs(loess[j] - key[j]) > 1e-12;
  }
  CHECK(differ > 20);
}

TEST_CASE("span: the count is R's floor(n F + 1e-5)") {
  CHECK(span_count(0.29, 100) == 29);  // 100 x 0.29 = 28.999...: R's loess takes 29
  CHECK(span_count(0.2899, 100) == 28);
  CHECK(span_count(0.75, 50) == 37);
  CHECK(span_count(1.5, 50) == 50);
  CHECK(span_count(1e-9, 50) == 1);
}

TEST_CASE("robustness weights: bisquare of r / (6 median |r|) with loess's thresholds") {
  // |r| = 0, 0.1, 1, 2, 10: median 1 (odd count), s = 6.
  const std::vector<double> w = robustness_weights({0, -0.1, 1, 2, -10});
  REQUIRE(w.size() == 5);
  CHECK(w[0] == 1);
  CHECK(w[1] == doctest::Approx(std::pow(1 - (0.1 / 6) * (0.1 / 6), 2)).epsilon(1e-15));
  CHECK(w[2] == doctest::Approx(std::pow(1 - 1.0 / 36, 2)).epsilon(1e-15));
  CHECK(w[3] == doctest::Approx(std::pow(1 - 4.0 / 36, 2)).epsilon(1e-15));
  CHECK(w[4] == 0);
  // An even count: the mean of the middle two, |r| 1 and 3, s = 12; within 0.001 s weighs 1,
  // beyond 0.999 s weighs 0.
  const std::vector<double> v = robustness_weights({0.011, 1, 3, 11.995});
  CHECK(v[0] == 1);
  CHECK(v[1] == doctest::Approx(std::pow(1 - 1.0 / 144, 2)).epsilon(1e-15));
  CHECK(v[3] == 0);
  // More than half the residuals (nearly) 0: s below 1e-7 mean |r|, no weights (as lowess stops).
  CHECK(robustness_weights({0, 0, 0, 5}).empty());
  CHECK(robustness_weights({1e-12, -1e-12, 1e-12, 5, 7}).empty());
  CHECK(robustness_weights({1e-6, -1e-6, 1e-6, 5, 7}).size() == 5);
}

TEST_CASE("span: GCV and AICc at a given span equal R's from loess's residuals and trace of the hat matrix") {
  // R: f <- loess(dist ~ speed, cars, span = 0.75, degree = 2, surface = "direct");
  // n RSS / (n - tr)^2 and log(RSS / n) + (1 + tr / n) / (1 - (tr + 2) / n), tr = f$trace.hat.
  const Dataset cars = golden_set("cars");
  for (const auto& [criterion, want] : {std::pair{Criterion::gcv, 259.48386065955202}, {Criterion::aicc, 6.629684513539944}}) {
    EngineOptions e;
    e.kernel = Kernel::tricube;
    e.method = Method::local_polynomial;
    e.degree = 2;
    FitPlan plan;
    plan.kind = BandwidthSpec::Kind::knn;
    plan.neighbour_policy = {Neighbours::span, 0, 0.75};
    plan.fit.criterion = criterion;
    const Model m = fit_model(cars, plan, e);
    REQUIRE(m.criterion_value);
    CHECK(*m.criterion_value == doctest::Approx(want).epsilon(1e-12));
  }
}
