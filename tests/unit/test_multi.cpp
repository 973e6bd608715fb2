// Several x columns: one bandwidth per column, against statsmodels KernelReg's product Gaussian
// kernel (golden files from tests/golden/make_golden_multi.py).

#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "helpers.h"
#include "nwreg/base/errors.h"
#include "nwreg/engine/attention.h"
#include "nwreg/learn/bandwidth.h"

using namespace nwreg;

namespace {

struct MultiSet {
  std::string name, file;
  std::vector<std::string> x;
  std::string y;
};

const std::vector<MultiSet>& multi_sets() {
  static const std::vector<MultiSet> sets = {{"boston", "boston.csv", {"lstat", "rm"}, "medv"},
                                             {"airquality", "airquality.csv", {"Solar.R", "Wind", "Temp"}, "Ozone"}};
  return sets;
}

Dataset load(const MultiSet& s) {
  CsvReader r(testing::source_path("data/" + s.file), CsvOptions{});
  ColumnChoice c;
  c.x = s.x;
  c.y = s.y;
  return read_dataset(r, c);
}

// n rows of x uniform on [0, 10]^d (d = 2 or 3), y = sin x1 + cos x2 (+ 0.2 x3) + N(0, 0.5^2),
// as bench/paths.py makes them.
Dataset uniform_columns(int n, std::size_t d) {
  std::mt19937_64 rng(20261128);
  std::uniform_real_distribution<double> u(0, 10);
  std::normal_distribution<double> noise(0, 0.5);
  Dataset out = testing::make_dataset({0.0}, {0.0});
  out.d = d;
  out.x.clear(), out.y.clear();
  out.x_names = {"x1", "x2", "x3"};
  out.x_names.resize(d);
  for (int i = 0; i < n; ++i) {
    double x[3] = {u(rng), u(rng), u(rng)};
    out.x.insert(out.x.end(), x, x + d);
    out.y.push_back(std::sin(x[0]) + std::cos(x[1]) + (d > 2 ? 0.2 * x[2] : 0.0) + noise(rng));
  }
  out.n = out.y.size();
  return out;
}

}  // namespace

TEST_CASE("several x columns: predictions and LOO error equal statsmodels at the same bandwidths") {
  for (const auto& set : multi_sets()) {
    const Dataset d = load(set);
    REQUIRE(d.d == set.x.size());
    const auto g = testing::read_golden("tests/golden/multi_" + set.name + ".csv");
    std::size_t predictions = 0, loos = 0;
    for (std::size_t i = 0; i < g.at("kind").size(); ++i) {
      const auto h = testing::number_list(g.at("bandwidth")[i]);
      const double want = std::stod(g.at("value")[i]);
      Attention e(d, h);
      CAPTURE(set.name);
      CAPTURE(g.at("bandwidth")[i]);
      if (g.at("kind")[i] == "loo") {
        CHECK(e.loo(false).mse == doctest::Approx(want).epsilon(1e-9).scale(0));
        ++loos;
        continue;
      }
      std::vector<double> q;
      for (const auto& c : set.x) q.push_back(std::stod(g.at(c)[i]));
      double f;
      e.predict(q.data(), 1, &f);
      CHECK(f == doctest::Approx(want).epsilon(1e-9).scale(0));
      ++predictions;
    }
    CHECK(loos == 2);
    CHECK(predictions > 30);
  }
}

TEST_CASE("several x columns: the learned bandwidths' LOO error is no worse than statsmodels cv_ls") {
  const auto g = testing::read_golden("tests/golden/multi_cv_ls.csv");
  for (std::size_t i = 0; i < g.at("set").size(); ++i) {
    const auto& set = multi_sets().at(i);
    REQUIRE(g.at("set")[i] == set.name);
    const FitResult r = fit_bandwidth(load(set), {});
    CAPTURE(set.name);
    CHECK(r.bandwidth.size() == set.x.size());
    CHECK(r.loo_mse <= std::stod(g.at("loo_mse")[i]) * (1 + 1e-12));
  }
}

TEST_CASE("several x columns: the LOO gradient matches finite differences in each log h_k") {
  const Dataset d = load(multi_sets()[1]);
  const std::vector<double> h = {60.0, 2.0, 4.0};
  const LooResult r = Attention(d, h).loo(true);
  REQUIRE(r.gradient.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    const double eps = 1e-5;
    auto at = [&](double t) {
      std::vector<double> hh = h;
      hh[k] *= std::exp(t);
      return Attention(d, hh).loo(false).mse;
    };
    CAPTURE(k);
    CHECK(r.gradient[k] == doctest::Approx((at(eps) - at(-eps)) / (2 * eps)).epsilon(1e-5).scale(1e-8 * r.mse));
  }
}

TEST_CASE("several x columns: start points descended at a looser tolerance learn what every key's sums learn") {
  // The start points' trial passes prune at a looser tolerance (Objective::allow); the winner's
  // descent and every reported figure are at the options' tolerance. Against --tolerance 0
  // (every key, never loosened): the same bandwidths to 1e-6 relative, the same LOO error to
  // 1e-12. 3 columns, 1500 rows: y = sin x1 + cos x2 + 0.2 x3 + N(0, 0.5^2), Gaussian and
  // Laplace.
  const Dataset d = uniform_columns(1500, 3);
  // (Under the sanitizers the Gaussian alone, without the reference: testing::sanitized.)
  const auto kernels = testing::sanitized ? std::vector<Kernel>{Kernel::gaussian}
                                          : std::vector<Kernel>{Kernel::gaussian, Kernel::laplace};
  for (Kernel k : kernels) {
    CAPTURE(to_string(k));
    FitOptions fast, every;
    fast.engine.kernel = every.engine.kernel = k;
    every.engine.tolerance = 0;
    const FitResult a = fit_bandwidth(d, fast);
    REQUIRE(a.bandwidth.size() == 3);
    CHECK(a.stop_reason == "tolerance");
    if (testing::sanitized) continue;
    const FitResult b = fit_bandwidth(d, every);
    for (std::size_t j = 0; j < 3; ++j) CHECK(a.bandwidth[j] == doctest::Approx(b.bandwidth[j]).epsilon(1e-6));
    CHECK(a.loo_mse == doctest::Approx(b.loo_mse).epsilon(1e-12));
  }
}

TEST_CASE("several x columns: the leave-one-out pass over every row makes NW's tr(H) as the in-sample pass does") {
  // l_pp = w_p / (w_p + S0 K_b / K_p) from each row's leave-one-out sums, against the in-sample
  // pass's own weights: Gaussian and Laplace, with and without sample weights (one row of
  // weight 0), 2 and 3 columns. (Under the sanitizers half the cases, each value of each twice.)
  for (std::size_t d : {std::size_t{2}, std::size_t{3}})
    for (Kernel k : {Kernel::gaussian, Kernel::laplace})
      for (bool weighted : {false, true}) {
        if (testing::sanitized && ((d == 3) != (k == Kernel::laplace)) != weighted) continue;
        CAPTURE(d);
        CAPTURE(to_string(k));
        CAPTURE(weighted);
        Dataset data = uniform_columns(3000, d);
        if (weighted) {
          for (std::size_t i = 0; i < data.n; ++i) data.weight.push_back(0.5 + static_cast<double>(i % 7) / 4);
          data.weight[17] = 0;
        }
        EngineOptions o;
        o.kernel = k;
        const Attention a(data, std::vector<double>(d, 0.3), o);
        const LooResult loo = a.loo(false);
        REQUIRE(std::isfinite(loo.trace));
        CHECK(loo.trace == doctest::Approx(a.insample(false).trace).epsilon(1e-12));
        CHECK(loo.trace > 1);
        const std::vector<std::size_t> some = {0, 5, 9};
        CHECK(std::isnan(a.loo(false, &some).trace));  // not every row
      }
  // The learner's last pass over every row (its descent on a sample) hands its trace on.
  const Dataset data = uniform_columns(3000, 2);
  FitOptions sampled;
  sampled.descent_rows = 1000;
  const FitResult r = fit_bandwidth(data, sampled);
  REQUIRE(std::isfinite(r.trace));
  CHECK(r.trace == doctest::Approx(Attention(data, r.bandwidth).insample(false).trace).epsilon(1e-12));
  CHECK(std::isnan(fit_bandwidth(data, FitOptions{}).trace));  // (its descent on every row: the report's pass makes it)
  // Not made where a row's key holds other rows (a repeated x), nor for local linear, nor in one
  // column: those keep the in-sample pass.
  Dataset twice = uniform_columns(500, 2);
  twice.x.insert(twice.x.end(), twice.x.begin(), twice.x.begin() + 2);
  twice.y.push_back(twice.y[0] + 1);
  twice.n += 1;
  CHECK(std::isnan(Attention(twice, {0.3, 0.3}).loo(false).trace));
  EngineOptions ll;
  ll.method = Method::local_linear;
  CHECK(std::isnan(Attention(uniform_columns(500, 2), {0.3, 0.3}, ll).loo(false).trace));
  const Dataset one = testing::make_dataset({0, 1, 2, 3, 5}, {1, 0, 2, 1, 3});
  CHECK(std::isnan(Attention(one, {1.0}).loo(false).trace));
}

TEST_CASE("several x columns: a pass over every row takes the rows the last listed pass made at the same bandwidths") {
  // The learner's report after its last descent on a sample: the sampled rows' terms are taken
  // as made, and the pass gives the bytes of a fresh engine's (the sums in the same row order),
  // for fewer pairs. Not across a new bandwidth or tolerance. Gaussian and Laplace, sample
  // weights with a 0, a repeated row (a key of two rows), 2 and 3 columns.
  for (std::size_t d : {std::size_t{2}, std::size_t{3}})
    for (Kernel k : {Kernel::gaussian, Kernel::laplace}) {
      CAPTURE(d);
      CAPTURE(to_string(k));
      Dataset data = uniform_columns(2000, d);
      for (std::size_t i = 0; i < data.n; ++i) data.weight.push_back(0.5 + static_cast<double>(i % 7) / 4);
      data.weight[17] = 0;
      data.x.insert(data.x.end(), data.x.begin() + 3 * d, data.x.begin() + 4 * d);  // row 3 again
      data.y.push_back(data.y[3] + 0.5), data.weight.push_back(1), data.n += 1;
      EngineOptions o;
      o.kernel = k;
      const std::vector<double> h(d, 0.4), h2(d, 0.5);
      std::vector<std::size_t> some;
      for (std::size_t i = 0; i < data.n; i += 3) some.push_back(i);
      const Attention fresh(data, h, o);
      const LooResult whole = fresh.loo(false);
      Attention a(data, h, o);
      const LooResult part = a.loo(true, &some);
      const std::uint64_t before = a.counters().pairs;
      const LooResult after = a.loo(false);
      CHECK(after.mse == whole.mse);
      CHECK(std::isnan(after.trace) == std::isnan(whole.trace));
      if (!std::isnan(whole.trace)) CHECK(after.trace == whole.trace);
      CHECK(a.counters().pairs - before < fresh.counters().pairs * 3 / 4);  // a third of the rows taken
      CHECK(part.mse == Attention(data, h, o).loo(false, &some).mse);
      // With gradient: made afresh (the memo holds no gradient terms).
      const LooResult fresh_g = Attention(data, h, o).loo(true);
      a.loo(false, &some);
      const LooResult again = a.loo(true);
      CHECK(again.mse == fresh_g.mse);
      for (std::size_t c = 0; c < d; ++c) CHECK(again.gradient[c] == fresh_g.gradient[c]);
      // A new bandwidth, or tolerance: made afresh.
      a.loo(false, &some);
      a.set_bandwidth(h2);
      CHECK(a.loo(false).mse == Attention(data, h2, o).loo(false).mse);
      a.loo(false, &some);
      a.set_tolerance(1e-6);
      EngineOptions loose = o;
      loose.tolerance = 1e-6;
      CHECK(a.loo(false).mse == Attention(data, h2, loose).loo(false).mse);
    }
}

TEST_CASE("several x columns: set_tolerance gives the passes of an engine made at that tolerance") {
  // 4000 rows over [0, 10]^2 at h = 0.2: the k-d tree's leaves prune, so the tolerance moves
  // the predictions (in their last digits).
  const Dataset d = uniform_columns(4000, 2);
  const std::vector<double> h = {0.2, 0.2};
  EngineOptions every;
  every.tolerance = 0;
  Attention a(d, h), zero(d, h, every), loose_made(d, h, EngineOptions(1e-6, nullptr));
  const std::size_t m = 500;
  std::vector<double> out(m), want(m), exact(m);
  a.set_tolerance(0);
  a.predict(d.x.data(), m, out.data());
  zero.predict(d.x.data(), m, exact.data());
  CHECK(out == exact);
  a.set_tolerance(1e-6);
  a.predict(d.x.data(), m, out.data());
  loose_made.predict(d.x.data(), m, want.data());
  CHECK(out == want);
  CHECK(out != exact);
  CHECK(a.loo(false).mse == loose_made.loo(false).mse);
  CHECK_THROWS_AS(a.set_tolerance(1), ParameterError);
}

TEST_CASE("several x columns: the start points' descents stop early, the best one goes on to the tolerance") {
  // Boston: the winner's epochs run on from its looser stop, numbered without a repeat, and it
  // reaches the tolerance a single full descent reaches (from the same start: --init).
  const Dataset boston = load(multi_sets().at(0));
  FitOptions o;
  int zeros = 0;
  const FitResult r = fit_bandwidth(boston, o, [&](const Epoch& e) { zeros += e.epoch == 0; });
  CHECK(zeros == 3);  // each start point's epoch 0, none for the polish
  CHECK(r.stop_reason == "tolerance");
  for (std::size_t i = 1; i < r.history.size(); ++i) CHECK(r.history[i].epoch > r.history[i - 1].epoch);
  FitOptions one;
  one.init = r.bandwidth;
  const FitResult again = fit_bandwidth(boston, one);
  CHECK(again.history.back().epoch <= 2);  // already at the minimum
  CHECK(again.loo_mse >= r.loo_mse * (1 - 1e-12));
  // y constant (the loss 0 everywhere): no search, one history row, and the reason said.
  std::vector<double> x, y;
  for (int i = 0; i < 40; ++i) x.push_back(std::sin(i * 1.3)), x.push_back(std::cos(i * 0.7)), y.push_back(2.5);
  Dataset flat = testing::make_dataset(y, y);
  flat.d = 2;
  flat.x = x;
  flat.x_names = {"a", "b"};
  const FitResult f = fit_bandwidth(flat, o);
  CHECK(f.history.size() == 1);
  CHECK(f.stop_reason == "y is constant");
  CHECK(f.constant_y == 2.5);
}
