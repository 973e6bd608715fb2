// Bandwidth selection through the binary: criteria, leave-block-out, --min-neighbours, and the
// warnings a suspect bandwidth gets (stderr, model file, JSON).

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "nwreg/base/numbers.h"

using namespace clitest;
using Json = nlohmann::json;

namespace {

// sin(2 pi x) plus AR(1) noise (rho 0.8) on 400 evenly spaced x: a series with correlated errors.
std::string ar1_csv() {
  std::string text = "t,y\n";
  std::uint64_t state = 20261122;
  double e = 0;
  for (int i = 0; i < 400; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    e = 0.8 * e + (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5);
    const double x = i / 400.0;
    text += nwreg::format_double(x) + "," + nwreg::format_double(std::sin(2 * M_PI * x) + e) + "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("selection cli: a series with correlated errors is flagged, leave-block-out fixes it") {
  Scratch s;
  spit(s / "ar.csv", ar1_csv());
  const std::string train = (s / "ar.csv").string(), model = (s / "m.json").string();
  // By default (--leave-out auto) the series is recognised and leave-block-out is used.
  Result r = run_nwreg({"fit", train, "-o", model});
  REQUIRE(r.exit_code == 0);
  const std::string note = "nwreg: " + train +
                           ": x is evenly spaced and the residuals are correlated (lag-1 correlation 0.824): "
                           "leave-block-out cross-validation, 16 keys out on each side (--leave-out 0 turns it off)\n";
  CHECK(r.err == note);
  const Json ma = Json::parse(slurp(model));
  CHECK(ma["leave_out"] == 16);  // the AR(1) coefficient is 0.8: 0.8^16 = 0.03
  CHECK(ma["bandwidth"][0].get<double>() > 0.05);
  CHECK(!ma.contains("warnings"));
  // predict learns the same way.
  Result pa = run_nwreg({"predict", train, "--grid-n", "2", "--format", "json"});
  CHECK(pa.err == note);
  CHECK(Json::parse(pa.out)["bandwidth"] == ma["bandwidth"]);

  // Leave-one-out interpolates, and says so.
  r = run_nwreg({"fit", train, "--leave-out", "0", "-o", model});
  REQUIRE(r.exit_code == 0);
  const std::string warning =
      "the fit nearly interpolates (2 effective neighbours; h = 0.000625 is below the typical spacing of \"t\", "
      "0.0025): the curve steps from point to point. Try --criterion aicc, --bandwidth plugin, --leave-out K for a "
      "series with correlated errors, or --min-neighbours 5";
  CHECK(r.err == "nwreg: warning: " + train + ": " + warning + "\n");
  const Json m = Json::parse(slurp(model));
  CHECK(m["warnings"] == Json::array({warning}));
  CHECK(!m.contains("leave_out"));
  CHECK(m["criterion"] == "loo");
  CHECK(m["criterion_value"] == m["loo_mse"]);
  // predict says so too when it learns; with --model the warnings travel in the file.
  Result p = run_nwreg({"predict", train, "--leave-out", "0", "--grid-n", "2", "--format", "json"});
  CHECK(p.err == "nwreg: warning: " + train + ": " + warning.substr(0, 29) + "h = 0.000625" +
                     warning.substr(warning.find(" is below")) + "\n");
  CHECK(Json::parse(p.out)["warnings"].size() == 1);

  Result lbo = run_nwreg({"fit", train, "--leave-out", "10", "-o", model});
  CHECK(lbo.exit_code == 0);
  CHECK(lbo.err.empty());
  const Json ml = Json::parse(slurp(model));
  CHECK(ml["leave_out"] == 10);
  CHECK(ml["bandwidth"][0].get<double>() > 0.05);
  CHECK(!ml.contains("warnings"));
  // The model's leave-out reaches predict --model: the --se residuals are leave-block-out too.
  Result se = run_nwreg({"predict", train, "--model", model, "--grid", "0.5:0.6:1", "--se"});
  Result se_plain = run_nwreg({"predict", train, "-b", ml["bandwidth"][0].dump(), "--grid", "0.5:0.6:1", "--se"});
  REQUIRE(se.exit_code == 0);
  CHECK(lines(se.out)[1] != lines(se_plain.out)[1]);
  CHECK(lines(se.out)[1].substr(0, 25) == lines(se_plain.out)[1].substr(0, 25));  // same prediction

  Result mn = run_nwreg({"fit", train, "--leave-out", "0", "--min-neighbours", "8", "--format", "json"});
  CHECK(mn.exit_code == 0);
  CHECK(Json::parse(mn.out)["neighbours"].get<double>() >= 8);
  CHECK(mn.err.empty());
}

TEST_CASE("selection cli: AICc and GCV are reported beside the LOO error") {
  Result r = run_nwreg({"fit", data("mcycle.csv"), "--criterion", "aicc"});
  REQUIRE(r.exit_code == 0);
  const auto l = lines(r.out);
  REQUIRE(l.size() == 11);
  CHECK(std::stod(l[0].substr(11)) == doctest::Approx(1.2175215120641747).epsilon(1e-12));
  CHECK(l[1].rfind("loo_mse: 606.95", 0) == 0);
  CHECK(l[10].rfind("criterion: aicc 7.5251500034", 0) == 0);
  Result j = run_nwreg({"fit", data("mcycle.csv"), "--criterion", "gcv", "--method", "local-linear", "--format", "json"});
  const Json m = Json::parse(j.out);
  CHECK(m["criterion"] == "gcv");
  CHECK(m["criterion_value"].get<double>() == doctest::Approx(599.6705132122).epsilon(1e-9));
  CHECK(m["loo_mse"].get<double>() == doctest::Approx(562.23927367).epsilon(1e-9));
}

TEST_CASE("selection cli: --bandwidth plugin is KernSmooth's dpill, carried to other kernels") {
  // dpill(mcycle$times, mcycle$accel) = 1.4452583655703251 (tests/golden/plugin.csv).
  Result r = run_nwreg({"fit", data("mcycle.csv"), "-b", "plugin", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  Json j = Json::parse(r.out);
  CHECK(j["bandwidth"][0].get<double>() == doctest::Approx(1.4452583655703251).epsilon(1e-9));
  CHECK(j["bandwidth_source"] == "plugin");
  CHECK(r.err.empty());
  // Epanechnikov: times (3 / 5 / (1 / 5)^2)^(1/5) / (1 / (2 sqrt pi))^(1/5) = 2.2138.
  r = run_nwreg({"fit", data("mcycle.csv"), "-b", "plugin", "--kernel", "epanechnikov", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  j = Json::parse(r.out);
  CHECK(j["bandwidth"][0].get<double>() ==
        doctest::Approx(1.4452583655703251 * std::pow(15 * 2 * std::sqrt(M_PI), 0.2)).epsilon(1e-9));
  // --init plugin starts the descent there: epoch 0 of the history is the plug-in.
  r = run_nwreg({"fit", data("mcycle.csv"), "--init", "plugin", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  j = Json::parse(r.out);
  CHECK(j["history"][0]["bandwidth"][0].get<double>() == doctest::Approx(1.4452583655703251).epsilon(1e-9));
  CHECK(j["bandwidth_source"] == "learned");
}

TEST_CASE("selection cli: fit --curve writes LOO, GCV, AICc and df over the grid, each as fit -b reports it") {
  // Issue 27: no way to see the criterion as a function of h (locfit's gcvplot).
  Scratch s;
  const std::string curve = (s / "c.csv").string(), plot = (s / "c.svg").string();
  const Result r = run_nwreg({"fit", data("mcycle.csv"), "--curve", curve, "--plot", plot});
  REQUIRE(r.exit_code == 0);
  const auto rows = lines(slurp(curve));
  REQUIRE(rows.size() > 20);
  CHECK(rows[0] == "h,loo,gcv,aicc,df");
  for (std::size_t i : {std::size_t{5}, rows.size() / 2, rows.size() - 3}) {
    const auto f = split(rows[i], ',');
    REQUIRE(f.size() == 5);
    CAPTURE(rows[i]);
    // The same figures as a fit at that h, criterion by criterion.
    for (const auto& [criterion, column] : {std::pair{"loo", 1}, std::pair{"gcv", 2}, std::pair{"aicc", 3}}) {
      const Json m = Json::parse(run_nwreg({"fit", data("mcycle.csv"), "-b", f[0], "--criterion", criterion,
                                            "--format", "json"}).out);
      CHECK(m["criterion"] == criterion);
      CHECK(m["criterion_value"].get<double>() == doctest::Approx(std::stod(f[column])).epsilon(1e-12));
      CHECK(m["df"].get<double>() == doctest::Approx(std::stod(f[4])).epsilon(1e-12));
    }
  }
  const std::string svg = slurp(plot);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find(">LOO</text>") != std::string::npos);
  CHECK(svg.find(">GCV</text>") != std::string::npos);
  CHECK(svg.find(">AICc</text>") != std::string::npos);
  CHECK(svg.find("class=\"chosen\"") != std::string::npos);
  // A nearest-neighbour policy: the curve is over K.
  REQUIRE(run_nwreg({"fit", data("mcycle.csv"), "-b", "knn:auto", "--curve", curve}).exit_code == 0);
  const auto k = lines(slurp(curve));
  CHECK(k[0] == "K,loo,gcv,aicc,df");
  CHECK(k[1].rfind("1,", 0) == 0);
  // Two columns: a bandwidth per column.
  REQUIRE(run_nwreg({"fit", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", "2,0.5", "--curve", curve}).exit_code == 0);
  CHECK(lines(slurp(curve))[0] == "h_lstat,h_rm,loo,gcv,aicc,df");
  // After robustness iterations the curve is the reweighted rows' (it was the first pass's).
  REQUIRE(run_nwreg({"fit", data("mcycle.csv"), "--robust", "2", "--curve", curve}).exit_code == 0);
  CHECK(lines(slurp(curve))[5] != rows[5]);
  // A criterion undefined at a given bandwidth is said to be so.
  CHECK(lines(run_nwreg({"fit", "-", "-b", "0.1", "--criterion", "aicc"}, "x,y\n1,2\n2,3\n4,1\n").out).back() ==
        "criterion: aicc none");
  // y so small that its squared errors underflow: none, with the warning, not 0.
  std::string tiny = "x,y\n";
  for (int i = 0; i < 30; ++i) tiny += std::to_string(i) + "," + std::to_string((i * 7) % 5 + 1) + "e-300\n";
  const Result t = run_nwreg({"fit", "-", "--curve", curve}, tiny);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("loo_mse: none\n") != std::string::npos);
  CHECK(t.err.find("beyond a double's range") != std::string::npos);
  CHECK(split(lines(slurp(curve))[3])[1].empty());
  // What it cannot do.
  CHECK(run_nwreg({"fit", data("mcycle.csv"), data("cars.csv"), "--curve", curve}).err ==
        "nwreg: error: --curve: one training file's criteria; a batch writes a summary row per file\n");
  CHECK(run_nwreg({"fit", data("mcycle.csv"), "--score", "dot", "--curve", curve}).err ==
        "nwreg: error: --curve: the criteria over bandwidths; not with --score dot\n");
  CHECK(run_nwreg({"fit", data("mcycle.csv"), "--plot", (s / "c.png").string()}).err ==
        "nwreg: error: --plot: writes SVG; give a file name ending in .svg (or - for stdout), got \"" +
            (s / "c.png").string() + "\"\n");
}
