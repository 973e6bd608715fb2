// Categorical x columns (levels.h): reading labels into levels, the Aitchison-Aitken and
// Wang-van Ryzin kernels against statsmodels KernelReg (golden files from
// tests/golden/make_golden_categorical.py), Li-Racine against a brute-force loop, the LOO
// gradient in log lambda, and learning.

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/learn/bandwidth.h"
#include "nwreg/base/errors.h"

using namespace nwreg;

namespace {

struct CategoricalSet {
  std::string name;
  std::vector<std::string> x, unordered, ordered;
};

const std::vector<CategoricalSet>& categorical_sets() {
  static const std::vector<CategoricalSet> sets = {
      {"lwt_race", {"lwt", "race"}, {"race"}, {}},
      {"mixed", {"age", "lwt", "race", "smoke", "ftv"}, {"race", "smoke"}, {"ftv"}},
      {"levels_only", {"race", "ftv"}, {"race"}, {"ftv"}},
  };
  return sets;
}

Dataset load(const CategoricalSet& s) {
  CsvReader r(testing::source_path("data/birthwt.csv"), CsvOptions{});
  ColumnChoice c;
  c.x = s.x;
  c.y = "bwt";
  c.unordered = s.unordered;
  c.ordered = s.ordered;
  return read_dataset(r, c);
}

// A golden file's query point, "182.0 black": numbers, and labels read as their levels' values.
std::vector<double> query_point(const Dataset& d, const std::string& text) {
  std::istringstream in(text);
  std::vector<double> q;
  std::string w;
  for (std::size_t k = 0; k < d.d && in >> w; ++k)
    q.push_back(is_categorical(d.kind(k)) ? d.levels[k].find(w).value() : std::stod(w));
  return q;
}

Dataset from_csv(const std::string& text, ColumnChoice c) {
  std::istringstream in(text);
  CsvReader r(in, "test", CsvOptions{});
  return read_dataset(r, c);
}

}  // namespace

TEST_CASE("categorical columns: labels become levels in order, ordered numbers keep their values") {
  ColumnChoice c;
  c.x = {"g", "n", "size"};
  c.y = "y";
  c.unordered = {"g"};
  c.ordered = {"n", "size"};
  c.levels = {{"size", {"small", "medium", "large"}}};
  const Dataset d = from_csv("g,n,size,y\nb,4,large,1\na,8,small,2\nc,4.0,medium,3\n10,6,small,4\n", c);
  REQUIRE(d.levels.size() == 3);
  CHECK(d.kind(0) == ColumnKind::unordered);
  CHECK(d.kind(1) == ColumnKind::ordered);
  // Unordered: numbers by value before text, text sorted; values are positions.
  CHECK(d.levels[0].labels == std::vector<std::string>{"10", "a", "b", "c"});
  CHECK(d.levels[0].values == std::vector<double>{0, 1, 2, 3});
  // Ordered numbers: their own values ("4.0" is level "4").
  CHECK(d.levels[1].numeric);
  CHECK(d.levels[1].labels == std::vector<std::string>{"4", "6", "8"});
  CHECK(d.levels[1].values == std::vector<double>{4, 6, 8});
  // Text in the order --levels gives.
  CHECK(d.levels[2].labels == std::vector<std::string>{"small", "medium", "large"});
  const std::vector<double> want = {2, 4, 2, 1, 8, 0, 3, 4, 1, 0, 6, 0};
  CHECK(d.x == want);

  // Queries: only known levels; a number by value in an ordered column of numbers.
  std::istringstream qs("g,n,size\nc,8.0,medium\n");
  CsvReader qr(qs, "queries.csv", CsvOptions{});
  CHECK(read_queries(qr, d) == std::vector<double>{3, 8, 1});
  std::istringstream bad("g,n,size\nd,8,medium\n");
  CsvReader br(bad, "queries.csv", CsvOptions{});
  CHECK_THROWS_WITH_AS(read_queries(br, d),
                       "queries.csv:2: column \"g\": level \"d\" was not seen in training (its levels: \"10\", "
                       "\"a\", \"b\", \"c\")",
                       InputError);
  c.levels = {{"size", {"small", "large"}}};
  CHECK_THROWS_WITH_AS(from_csv("g,n,size,y\nb,4,large,1\na,8,medium,2\n", c),
                       "column \"size\" holds \"medium\", which is not among the levels listed", ParameterError);
  c.levels = {{"y", {"a"}}};
  CHECK_THROWS_WITH_AS(from_csv("g,n,size,y\nb,4,large,1\n", c), "`levels`: column \"y\" is not an x column (-x)",
                       UsageError);
}

TEST_CASE("categorical columns: predictions and LOO error equal statsmodels KernelReg (lc) and a WLS fit (ll)") {
  const auto g = testing::read_golden("tests/golden/categorical.csv");
  std::size_t predictions = 0, loos = 0;
  for (const auto& set : categorical_sets()) {
    const Dataset d = load(set);
    for (std::size_t i = 0; i < g.at("set").size(); ++i) {
      if (g.at("set")[i] != set.name) continue;
      EngineOptions o;
      o.method = parse_method(g.at("method")[i]);
      Attention e(d, testing::number_list(g.at("bandwidth")[i]), o);
      const double want = std::stod(g.at("value")[i]);
      CAPTURE(set.name);
      CAPTURE(g.at("method")[i]);
      CAPTURE(g.at("bandwidth")[i]);
      if (g.at("kind")[i] == "loo") {
        CHECK(e.loo(false).mse == doctest::Approx(want).epsilon(1e-9).scale(0));
        ++loos;
        continue;
      }
      const std::vector<double> q = query_point(d, g.at("query")[i]);
      CAPTURE(g.at("query")[i]);
      double f;
      e.predict(q.data(), 1, &f);
      CHECK(f == doctest::Approx(want).epsilon(1e-9).scale(0));
      ++predictions;
    }
  }
  CHECK(loos == 12);
  CHECK(predictions == 12 * 27);
}

TEST_CASE("categorical columns: with their level values in the local line, local linear equals statsmodels ll") {
  const auto g = testing::read_golden("tests/golden/categorical.csv");
  std::size_t checked = 0;
  for (const auto& set : categorical_sets()) {
    const Dataset d = load(set);
    for (std::size_t i = 0; i < g.at("set").size(); ++i) {
      if (g.at("set")[i] != set.name || g.at("method")[i] != "local-linear" || g.at("kind")[i] != "predict") continue;
      EngineOptions o;
      o.method = Method::local_linear;
      o.categorical_in_fit = true;  // statsmodels' codes: race black 0, other 1, white 2, as nwreg's levels
      const Attention e(d, testing::number_list(g.at("bandwidth")[i]), o);
      const std::vector<double> q = query_point(d, g.at("query")[i]);
      double f;
      e.predict(q.data(), 1, &f);
      CAPTURE(set.name);
      CAPTURE(g.at("bandwidth")[i]);
      CAPTURE(g.at("query")[i]);
      CHECK(f == doctest::Approx(std::stod(g.at("sm_ll")[i])).epsilon(1e-9).scale(0));
      ++checked;
    }
  }
  CHECK(checked == 6 * 27);
}

TEST_CASE("categorical columns: Li-Racine kernels and every kernel equal a brute-force product of weights") {
  // Keys at levels 0..3 of an ordered column and 0..2 of an unordered one, one continuous column.
  Dataset d;
  d.d = 3;
  d.x_names = {"x", "o", "u"};
  d.x_kind = {ColumnKind::number, ColumnKind::ordered, ColumnKind::unordered};
  d.levels.resize(3);
  d.levels[1] = {{"a", "b", "c", "d"}, {0, 1, 2, 3}, false};
  d.levels[2] = {{"p", "q", "r"}, {0, 1, 2}, false};
  for (int i = 0; i < 40; ++i) {
    const double x = std::sin(i * 1.3) * 2, o = i % 4, u = (i * 7) % 3;
    d.x.insert(d.x.end(), {x, o, u});
    d.y.push_back(x * x + o - 2 * u + std::cos(i));
  }
  d.n = d.y.size();
  const std::vector<double> h = {0.7, 0.4, 0.3};
  for (CategoricalKernel ck : {CategoricalKernel::aitchison_aitken, CategoricalKernel::li_racine}) {
    for (Kernel kernel : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov}) {
      EngineOptions opt;
      opt.categorical = ck;
      opt.kernel = kernel;
      opt.out_of_reach = OutOfReach::nearest;
      Attention e(d, h, opt);
      const double q[3] = {0.3, 2, 1};
      auto weight = [&](std::size_t i) {
        const double* x = d.row(i);
        const double u = (x[0] - q[0]) / h[0];
        double w = kernel == Kernel::gaussian ? std::exp(-u * u / 2)
                   : kernel == Kernel::laplace ? std::exp(-std::abs(u))
                                               : std::max(0.0, 1 - u * u);
        const double dord = std::abs(x[1] - q[1]);
        if (ck == CategoricalKernel::li_racine) {
          w *= std::pow(h[1], dord) * (x[2] == q[2] ? 1 : h[2]);
        } else {
          w *= dord == 0 ? 1 - h[1] : 0.5 * (1 - h[1]) * std::pow(h[1], dord);
          w *= x[2] == q[2] ? 1 - h[2] : h[2] / 2;
        }
        return w;
      };
      double s0 = 0, s1 = 0;
      for (std::size_t i = 0; i < d.n; ++i) s0 += weight(i), s1 += weight(i) * d.y[i];
      double f;
      e.predict(q, 1, &f);
      CAPTURE(to_string(ck));
      CAPTURE(to_string(kernel));
      CHECK(f == doctest::Approx(s1 / s0).epsilon(1e-12));
      std::vector<double> row;
      e.weights(q, 1, [&](std::size_t, const double* a) { row.assign(a, a + d.n); });
      for (std::size_t i = 0; i < d.n; ++i) CHECK(row[i] == doctest::Approx(weight(i) / s0).epsilon(1e-12).scale(1e-300));
    }
  }
}

TEST_CASE("categorical columns: the k-d tree over the continuous columns prunes within the tolerance") {
  // 4000 rows: two continuous columns, an unordered factor of 5 levels and an ordered one of 4.
  Dataset d;
  d.d = 4;
  d.x_names = {"a", "b", "u", "o"};
  d.x_kind = {ColumnKind::number, ColumnKind::number, ColumnKind::unordered, ColumnKind::ordered};
  d.levels.resize(4);
  d.levels[2] = {{"p", "q", "r", "s", "t"}, {0, 1, 2, 3, 4}, false};
  d.levels[3] = {{"1", "2", "3", "4"}, {1, 2, 3, 4}, true};
  for (int i = 0; i < 4000; ++i) {
    const double a = std::fmod(i * 0.6180339887, 1.0) * 10, b = std::fmod(i * 0.4142135623, 1.0) * 10;
    const double u = (i * 7) % 5, o = 1 + (i * 3) % 4;
    d.x.insert(d.x.end(), {a, b, u, o});
    d.y.push_back(std::sin(a) + std::cos(b) + u - o + 0.1 * std::sin(i * 1.7));
  }
  d.n = d.y.size();
  for (Kernel kernel : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov}) {
    for (Method method : {Method::nw, Method::local_linear}) {
      EngineOptions pruned, every;
      pruned.kernel = every.kernel = kernel;
      pruned.method = every.method = method;
      pruned.out_of_reach = every.out_of_reach = OutOfReach::nearest;
      every.tolerance = 0;
      const std::vector<double> h = {0.15, 0.2, 0.3, 0.4};
      const Attention p(d, h, pruned);
      CAPTURE(to_string(kernel));
      CAPTURE(to_string(method));
      const double q[4] = {3.3, 7.1, 2, 3};
      double fp, fe;
      p.predict(q, 1, &fp);
      if (testing::sanitized) {  // without the reference
        CHECK(std::isfinite(p.loo(false).mse));
      } else {
        const Attention e(d, h, every);
        CHECK(p.loo(false).mse == doctest::Approx(e.loo(false).mse).epsilon(1e-12));
        e.predict(q, 1, &fe);
        CHECK(fp == doctest::Approx(fe).epsilon(1e-13).scale(1e-13));
      }
      const std::uint64_t before = p.counters().pairs;
      p.predict(q, 1, &fp);
      if (kernel != Kernel::laplace) CHECK(p.counters().pairs - before < d.n / 4);  // the tree pruned
    }
  }
}

TEST_CASE("categorical columns: the LOO gradient in log lambda matches finite differences") {
  const Dataset d = load(categorical_sets()[1]);
  const std::vector<double> h = {3.0, 20.0, 0.3, 0.2, 0.5};
  for (int c = 0; c < 3; ++c) {  // NW, local linear, local linear with the levels in its line
    const Method method = c == 0 ? Method::nw : Method::local_linear;
    EngineOptions o;
    o.method = method;
    o.categorical_in_fit = c == 2;
    CAPTURE(c);
    const LooResult r = Attention(d, h, o).loo(true);
    REQUIRE(r.gradient.size() == 5);
    for (std::size_t k = 0; k < 5; ++k) {
      const double eps = 1e-5;
      auto at = [&](double t) {
        std::vector<double> hh = h;
        hh[k] *= std::exp(t);
        return Attention(d, hh, o).loo(false).mse;
      };
      CAPTURE(to_string(method));
      CAPTURE(k);
      CHECK(r.gradient[k] == doctest::Approx((at(eps) - at(-eps)) / (2 * eps)).epsilon(1e-5).scale(1e-8 * r.mse));
    }
  }
}

TEST_CASE("categorical columns: the in-sample criteria's gradients in log lambda match finite differences") {
  const Dataset d = load(categorical_sets()[1]);
  const std::vector<double> h = {3.0, 20.0, 0.3, 0.2, 0.5};
  for (Method method : {Method::nw, Method::local_linear}) {
    EngineOptions o;
    o.method = method;
    const InSample s = Attention(d, h, o).insample(true);
    for (std::size_t k = 2; k < 5; ++k) {
      const double eps = 1e-5;
      auto at = [&](double t) {
        std::vector<double> hh = h;
        hh[k] *= std::exp(t);
        return Attention(d, hh, o).insample(false);
      };
      const InSample up = at(eps), dn = at(-eps);
      CAPTURE(to_string(method));
      CAPTURE(k);
      CHECK(s.d_mse[k] == doctest::Approx((up.mse - dn.mse) / (2 * eps)).epsilon(1e-5).scale(1e-8 * s.mse));
      CHECK(s.d_trace[k] == doctest::Approx((up.trace - dn.trace) / (2 * eps)).epsilon(1e-5).scale(1e-8 * s.trace));
    }
  }
  FitOptions f;
  f.criterion = Criterion::aicc;
  const FitResult r = fit_bandwidth(d, f);  // learned by AICc: lambdas within their ranges
  for (std::size_t k = 2; k < 5; ++k)
    CHECK(r.bandwidth[k] <= lambda_max(CategoricalKernel::aitchison_aitken, d.kind(k), d.levels[k].size()));
}

TEST_CASE("categorical columns: lambda out of its kernel's range is refused, naming the column") {
  const Dataset d = load(categorical_sets()[0]);
  CHECK_THROWS_WITH_AS(Attention(d, {20.0, 0.7}),
                       "column \"race\" is categorical: its lambda must be <= 0.6666666666666666 (aitchison-aitken "
                       "kernel), got 0.7",
                       ParameterError);
  EngineOptions o;
  o.categorical = CategoricalKernel::li_racine;
  CHECK_NOTHROW(Attention(d, {20.0, 1.0}, o));
  // lambda at the top of Aitchison-Aitken's range weighs every level alike: the column is ignored.
  Dataset lwt = d;
  lwt.d = 1;
  lwt.x.clear();
  for (std::size_t i = 0; i < d.n; ++i) lwt.x.push_back(d.row(i)[0]);
  lwt.x_kind = {ColumnKind::number};
  lwt.levels.clear();
  CHECK(Attention(d, {20.0, 2.0 / 3}).loo(false).mse == doctest::Approx(Attention(lwt, {20.0}).loo(false).mse).epsilon(1e-12));
}

TEST_CASE("categorical columns: the learned LOO error is no worse than statsmodels cv_ls where its lambdas are valid") {
  const auto g = testing::read_golden("tests/golden/categorical_cv_ls.csv");
  for (std::size_t i = 0; i < g.at("set").size(); ++i) {
    const auto& set = categorical_sets().at(i);
    REQUIRE(g.at("set")[i] == set.name);
    const Dataset d = load(set);
    const auto sm = testing::number_list(g.at("bandwidth")[i]);
    bool valid = true;  // statsmodels' optimiser is unbounded: it may leave lambda's range
    for (std::size_t k = 0; k < d.d; ++k)
      if (is_categorical(d.kind(k)))
        valid = valid && sm[k] > 0 && sm[k] <= lambda_max(CategoricalKernel::aitchison_aitken, d.kind(k), d.levels[k].size());
    const FitResult r = fit_bandwidth(d, {});
    CAPTURE(set.name);
    for (std::size_t k = 0; k < d.d; ++k)
      if (is_categorical(d.kind(k)))
        CHECK(r.bandwidth[k] <= lambda_max(CategoricalKernel::aitchison_aitken, d.kind(k), d.levels[k].size()));
    if (valid) CHECK(r.loo_mse <= std::stod(g.at("loo_mse")[i]) * (1 + 1e-9));
  }
}

TEST_CASE("categorical columns: a column that separates the rows learns lambda at its floor in a few epochs") {
  // Three groups 5 apart with a smooth curve in x: the best lambda is at or near 0. In log
  // lambda the slope vanishes there and the descent used to halve lambda every epoch up to the
  // epoch cap (16 s for 2,000 rows); in lambda, with a projected quasi-Newton step, it lands.
  std::string text = "x,g,y\n";
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < 300; ++i) {
    const double x = std::fmod(i * 0.61803398875, 1.0) * 10;
    const double noise = 0.3 * std::sin(i * 12.9898 + 0.5) * std::sin(i * 3.7);
    text += std::to_string(x) + "," + names[i % 3] + "," + std::to_string(std::sin(x) + 5 * (i % 3) + noise) + "\n";
  }
  ColumnChoice c;
  c.x = {"x", "g"};
  c.y = "y";
  c.unordered = {"g"};
  const Dataset d = from_csv(text, c);
  const double top = lambda_max(CategoricalKernel::aitchison_aitken, ColumnKind::unordered, 3);
  for (Method method : {Method::nw, Method::local_linear}) {
    CAPTURE(to_string(method));
    FitOptions o;
    o.engine.method = method;
    const FitResult r = fit_bandwidth(d, o);
    CHECK(r.converged);
    CHECK(r.stop_reason != "epoch cap");
    CHECK(r.history.back().epoch <= 30);
    CHECK(r.bandwidth[1] >= top * 0x1p-30);
    // A minimum: no lambda between the floor and 1e-2 does better at the learned h.
    EngineOptions e;
    e.method = method;
    for (double lambda : {top * 0x1p-30, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2})
      CHECK(r.loo_mse <= Attention(d, {r.bandwidth[0], lambda}, e).loo(false).mse * (1 + 1e-9));
  }
}
