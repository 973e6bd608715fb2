// The direct plug-in bandwidth (--bandwidth plugin): R KernSmooth's dpill on every bundled data
// set and on simulated ones (tests/golden/make_golden_plugin.R), its invariances, where it is
// undefined, and the canonical factors that carry it to the other kernels.

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>

#include "helpers.h"
#include "nwreg/base/errors.h"
#include "nwreg/learn/plugin.h"

using namespace nwreg;

namespace {

// The x and y of one golden row: a bundled file's columns, or a simulated set.
void golden_data(const std::string& set, const std::string& file, const std::string& xc, const std::string& yc,
                 std::vector<double>& x, std::vector<double>& y) {
  if (file.rfind("data/", 0) == 0) {
    const Dataset d = testing::bundled(file.substr(5), xc, yc);
    x = d.x, y = d.y;
    return;
  }
  const auto sim = testing::read_golden(file);
  x.clear(), y.clear();
  for (std::size_t i = 0; i < sim.at("set").size(); ++i)
    if (sim.at("set")[i] == set) x.push_back(std::stod(sim.at("x")[i])), y.push_back(std::stod(sim.at("y")[i]));
}

}  // namespace

TEST_CASE("plugin: equals KernSmooth dpill on the bundled and simulated data sets") {
  const auto g = testing::read_golden("tests/golden/plugin.csv");
  REQUIRE(g.at("set").size() == 16);
  for (std::size_t r = 0; r < g.at("set").size(); ++r) {
    CAPTURE(g.at("set")[r]);
    CAPTURE(g.at("x")[r]);
    std::vector<double> x, y;
    golden_data(g.at("set")[r], g.at("file")[r], g.at("x")[r], g.at("y")[r], x, y);
    REQUIRE(x.size() > 40);
    if (g.at("dpill")[r] == "none") {
      CHECK_THROWS_WITH_AS(plugin_bandwidth(x, y), doctest::Contains("x has a gap wider than its"), DataError);
      continue;
    }
    const double h = plugin_bandwidth(x, y).bandwidth;
    // dpill on x centred first (no digits lost to raw powers), and as given (the 1e-6).
    CHECK(testing::relative(h, std::stod(g.at("dpill_centred")[r])) < 1e-9);
    CHECK(testing::relative(h, std::stod(g.at("dpill")[r])) < 1e-6);
  }
}

TEST_CASE("plugin: moves with the scale of x, not with the scale or level of y") {
  std::vector<double> x, y;
  golden_data("mcycle", "data/mcycle.csv", "times", "accel", x, y);
  const double h = plugin_bandwidth(x, y).bandwidth;
  std::vector<double> x2 = x, y2 = y;
  for (auto& v : x2) v = 3 * v - 40;
  for (auto& v : y2) v = -0.5 * v + 7;
  CHECK(plugin_bandwidth(x2, y2).bandwidth == doctest::Approx(3 * h).epsilon(1e-9));
  // Magnitudes far from 1: a level of 1e8 over noise of 10, x at 1e100, y at 1e200.
  for (auto& v : y2) v *= 1e-200;
  CHECK(plugin_bandwidth(x2, y2).bandwidth == doctest::Approx(3 * h).epsilon(1e-9));
  std::vector<double> x3 = x, y3 = y;
  for (auto& v : x3) v *= 1e100;
  for (auto& v : y3) v += 1e8;
  CHECK(plugin_bandwidth(x3, y3).bandwidth == doctest::Approx(1e100 * h).epsilon(1e-6));
  for (auto& v : y3) v = (v - 1e8) * 1e200;
  CHECK(plugin_bandwidth(x3, y3).bandwidth == doctest::Approx(1e100 * h).epsilon(1e-9));
}

TEST_CASE("plugin: says where it is undefined") {
  CHECK_THROWS_WITH_AS(plugin_bandwidth(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{1, 2, 1, 2, 1}),
                       "the plug-in bandwidth needs at least 6 rows after trimming 1% at each end of x, got 5: use "
                       "`bandwidth` auto",
                       DataError);
  std::vector<double> x, y;
  for (int i = 0; i < 30; ++i) x.push_back(i % 4), y.push_back(i % 3);
  CHECK_THROWS_WITH_AS(plugin_bandwidth(x, y),
                       "the plug-in bandwidth fits a quartic to each of 1 blocks of x, and x values 0 to 3 hold only "
                       "4 distinct values (it needs 5): use `bandwidth` auto",
                       DataError);
  x.clear(), y.clear();
  for (int i = 0; i < 30; ++i) x.push_back(i), y.push_back(i * i * 0.5 - i);
  CHECK_THROWS_WITH_AS(plugin_bandwidth(x, y),
                       "the plug-in bandwidth is undefined: y is an exact quartic of x in each block (no noise to "
                       "balance): use `bandwidth` auto",
                       DataError);
  Dataset two = testing::make_dataset({1, 2}, {1, 2});
  two.d = 2;
  CHECK_THROWS_WITH_AS(plugin_bandwidth(two, Kernel::gaussian), "the plug-in bandwidth is for one x column, got 2",
                       DataError);
}

TEST_CASE("plugin: canonical factors from R(K) and mu2(K) integrated numerically") {
  // Simpson's rule over the support, K as nwreg writes it, normalised by its integral.
  auto integrate = [](const std::function<double(double)>& f, double lo, double hi) {
    const int n = 200000;
    const double step = (hi - lo) / n;
    double s = f(lo) + f(hi);
    for (int i = 1; i < n; ++i) s += (i % 2 ? 4 : 2) * f(lo + i * step);
    return s * step / 3;
  };
  auto delta = [&](const std::function<double(double)>& k, double reach) {
    const double mass = integrate(k, -reach, reach);
    const double r = integrate([&](double u) { return k(u) * k(u); }, -reach, reach) / (mass * mass);
    const double mu2 = integrate([&](double u) { return u * u * k(u); }, -reach, reach) / mass;
    return std::pow(r / (mu2 * mu2), 0.2);
  };
  const double gaussian = delta([](double u) { return std::exp(-u * u / 2); }, 40);
  CHECK(canonical_ratio(Kernel::gaussian) == 1);
  CHECK(canonical_ratio(Kernel::laplace) ==
        doctest::Approx(delta([](double u) { return std::exp(-std::abs(u)); }, 60) / gaussian).epsilon(1e-9));
  CHECK(canonical_ratio(Kernel::epanechnikov) ==
        doctest::Approx(delta([](double u) { return 1 - u * u; }, 1) / gaussian).epsilon(1e-9));
  CHECK(canonical_ratio(Kernel::tricube) ==
        doctest::Approx(delta([](double u) { return std::pow(1 - std::pow(std::abs(u), 3), 3); }, 1) / gaussian)
            .epsilon(1e-9));
  CHECK(canonical_ratio(Kernel::uniform) == doctest::Approx(delta([](double) { return 1.0; }, 1) / gaussian).epsilon(1e-9));
  // The textbook value: an Epanechnikov radius is 2.214 Gaussian standard deviations.
  CHECK(canonical_ratio(Kernel::epanechnikov) == doctest::Approx(2.2138).epsilon(1e-4));
}
