// nwreg against statsmodels KernelReg(reg_type='lc', Gaussian), golden files made by
// tests/golden/make_golden.py.

#include <doctest/doctest.h>

#include "helpers.h"
#include "nwreg/engine/attention.h"
#include "nwreg/learn/bandwidth.h"

using namespace nwreg;

TEST_CASE("predictions equal statsmodels KernelReg at the same bandwidth to 1e-9 relative") {
  for (const auto& set : testing::golden_sets()) {
    const Dataset d = testing::bundled(set.file, set.x, set.y);
    const auto g = testing::read_golden("tests/golden/predict_" + set.name + ".csv");
    const auto h = testing::numbers(g.at("bandwidth"));
    const auto q = testing::numbers(g.at("query"));
    const auto want = testing::numbers(g.at("prediction"));
    REQUIRE(q.size() == d.n * 3 + 41 * 3);
    std::vector<double> got(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) Attention(d, {h[i]}).predict(&q[i], 1, &got[i]);
    for (std::size_t i = 0; i < q.size(); ++i) {
      CAPTURE(set.name);
      CAPTURE(h[i]);
      CAPTURE(q[i]);
      CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-9).scale(0));
    }
  }
}

TEST_CASE("LOO error equals statsmodels cv_loo at the same bandwidth") {
  for (const auto& set : testing::golden_sets()) {
    const Dataset d = testing::bundled(set.file, set.x, set.y);
    const auto g = testing::read_golden("tests/golden/loo_" + set.name + ".csv");
    for (std::size_t i = 0; i < g.at("bandwidth").size(); ++i) {
      const double h = std::stod(g.at("bandwidth")[i]);
      CAPTURE(set.name);
      CAPTURE(h);
      CHECK(Attention(d, {h}).loo(false).mse == doctest::Approx(std::stod(g.at("loo_mse")[i])).epsilon(1e-9).scale(0));
    }
  }
}

TEST_CASE("learned bandwidth's LOO error is no worse than statsmodels cv_ls") {
  const auto g = testing::read_golden("tests/golden/cv_ls.csv");
  for (std::size_t i = 0; i < g.at("set").size(); ++i) {
    const auto& set = testing::golden_sets().at(i);
    REQUIRE(g.at("set")[i] == set.name);
    const Dataset d = testing::bundled(set.file, set.x, set.y);
    const FitResult r = fit_bandwidth(d, {});
    const double theirs = std::stod(g.at("loo_mse")[i]);
    CAPTURE(set.name);
    CAPTURE(r.bandwidth[0]);
    CHECK(r.loo_mse <= theirs);
    // and it is the same minimum: bandwidths agree to statsmodels' Nelder-Mead tolerance
    CHECK(r.bandwidth[0] == doctest::Approx(std::stod(g.at("bandwidth")[i])).epsilon(1e-3));
  }
}
