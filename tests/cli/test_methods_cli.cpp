// Kernels, local linear, sample weights, missing values, the learned metric and standard errors
// through the real binary: options, model files, output columns, stderr.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"

using namespace clitest;
using Json = nlohmann::json;

namespace {

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace

TEST_CASE("methods cli: a model file keeps kernel, method and statistics, predict --model uses them") {
  Scratch s;
  const std::string model = (s / "m.json").string();
  Result fit = run_nwreg({"fit", data("mcycle.csv"), "--kernel", "tricube", "--method", "local-linear", "-o", model});
  REQUIRE(fit.exit_code == 0);
  const auto l = lines(fit.out);
  CHECK(l[5] == "kernel: tricube");
  CHECK(l[6] == "method: local-linear");
  const Json m = Json::parse(slurp(model));
  CHECK(m["kernel"] == "tricube");
  CHECK(m["method"] == "local-linear");
  CHECK(m["loo_r2"].get<double>() == doctest::Approx(1 - m["loo_mse"].get<double>() / 2317.463986658376).epsilon(1e-12));
  CHECK(m["neighbours"].get<double>() > 1);
  CHECK(std::to_string(m["neighbours"].get<double>()).substr(0, 6) == l[3].substr(12, 6));
  // The same predictions from the model as from the options.
  const std::vector<std::string> grid{"--grid", "5:55:10"};
  Result a = run_nwreg({"predict", data("mcycle.csv"), "--model", model, "--grid", "5:55:10"});
  Result b = run_nwreg({"predict", data("mcycle.csv"), "--kernel", "tricube", "--method", "local-linear", "-b",
                        m["bandwidth"][0].dump(), "--grid", "5:55:10"});
  CHECK(a.exit_code == 0);
  CHECK(a.out == b.out);
  // --kernel and --model cannot both be given.
  CHECK(run_nwreg({"predict", data("mcycle.csv"), "--model", model, "--kernel", "gaussian"}).exit_code == 2);
}

TEST_CASE("methods cli: --se adds se, lower and upper, the band is f -+ z se, --plot draws it") {
  Scratch s;
  const std::string svg = (s / "f.svg").string();
  Result r = run_nwreg({"predict", data("mcycle.csv"), "--grid", "10:50:10", "--se", "--level", "0.9", "--plot", svg});
  REQUIRE(r.exit_code == 0);
  const auto l = lines(r.out);
  REQUIRE(l.size() == 5);
  CHECK(l[0] == "times,prediction,se,lower,upper");
  for (std::size_t i = 1; i < l.size(); ++i) {
    const auto f = fields(l[i]);
    const double pred = std::stod(f[1]), se = std::stod(f[2]);
    CHECK(se > 0);
    CHECK(std::stod(f[3]) == doctest::Approx(pred - 1.6448536269514722 * se).epsilon(1e-14));
    CHECK(std::stod(f[4]) == doctest::Approx(pred + 1.6448536269514722 * se).epsilon(1e-14));
  }
  CHECK(slurp(svg).find("<polygon class=\"band\"") != std::string::npos);
  // The same columns in JSON Lines, and streamed from stdin.
  Result j = run_nwreg({"predict", data("mcycle.csv"), "--query", "-", "--se", "--format", "jsonl"}, "times\n20\n");
  REQUIRE(j.exit_code == 0);
  const Json rec = Json::parse(j.out);
  CHECK(rec["times"] == 20);
  CHECK(rec["upper"].get<double>() - rec["prediction"].get<double>() ==
        doctest::Approx(1.959963984540054 * rec["se"].get<double>()).epsilon(1e-12));
}

TEST_CASE("methods cli: --na skip drops rows and says so, sample weights go into the model") {
  Scratch s;
  spit(s / "t.csv", "x,y,w\n0,1,1\n1,NA,2\n2,5,1\n3,,1\n4,9,2\n");
  Result r = run_nwreg({"fit", (s / "t.csv").string(), "--na", "skip", "--sample-weight", "w", "-b", "1"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err == "nwreg: dropped 2 training rows with missing values from " + (s / "t.csv").string() +
                     " (first: line 3)\n");
  CHECK(lines(r.out)[4] == "n: 3");
  CHECK(lines(r.out)[7] == "sample_weight: w");
  // Weight 2 on x = 4 is the row twice: the same predictions as the data with it copied.
  spit(s / "c.csv", "x,y\n0,1\n2,5\n4,9\n4,9\n");
  Result w = run_nwreg({"predict", (s / "t.csv").string(), "--na", "skip", "--sample-weight", "w", "-b", "1.5",
                        "--grid", "0:5:1"});
  Result c = run_nwreg({"predict", (s / "c.csv").string(), "-b", "1.5", "--grid", "0:5:1"});
  const auto wl = lines(w.out), cl = lines(c.out);
  REQUIRE(wl.size() == cl.size());
  for (std::size_t i = 1; i < wl.size(); ++i)
    CHECK(std::stod(fields(wl[i])[1]) == doctest::Approx(std::stod(fields(cl[i])[1])).epsilon(1e-14));
}

TEST_CASE("methods cli: --metric full learns A, reports it, and predict --model applies it") {
  Scratch s;
  const std::string model = (s / "m.json").string();
  Result r = run_nwreg({"fit", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "--metric", "full", "-o", model});
  REQUIRE(r.exit_code == 0);
  const auto l = lines(r.out);
  CHECK(l[1].rfind("metric: ", 0) == 0);
  CHECK(l[2].rfind("metric: ", 0) == 0);
  const double loo = std::stod(l[3].substr(9));
  const auto g = testing::read_golden("tests/golden/multi_cv_ls.csv");
  CHECK(loo < std::stod(g.at("loo_mse")[0]));  // below statsmodels' diagonal cv_ls
  const Json m = Json::parse(slurp(model));
  REQUIRE(m["metric"].size() == 2);
  CHECK(m["history"].back().contains("metric"));
  Result p = run_nwreg({"predict", data("boston.csv"), "--model", model, "--query", "-"}, "lstat,rm\n5,6.5\n");
  REQUIRE(p.exit_code == 0);
  CHECK(lines(p.out)[0] == "lstat,rm,prediction");
  const double f = std::stod(fields(lines(p.out)[1])[2]);
  CHECK(f > 20);
  CHECK(f < 40);
}

TEST_CASE("methods cli: out of reach is an error or the nearest key, local-linear weights can be negative") {
  Result e = run_nwreg({"predict", data("synthetic.csv"), "--kernel", "epanechnikov", "-b", "0.2", "--grid", "7:8:1"});
  CHECK(e.exit_code == 1);
  Result n = run_nwreg({"predict", "-", "--kernel", "epanechnikov", "-b", "0.2", "--out-of-reach", "nearest",
                        "--grid", "7:8:1"},
                       "x,y\n1,10\n4,40\n");
  CHECK(n.out == "x,prediction\n7,40\n");
  Scratch s;
  const std::string w = (s / "w.csv").string();
  REQUIRE(run_nwreg({"predict", data("mcycle.csv"), "--method", "local-linear", "-b", "3", "--grid", "2:3:1",
                     "--weights", w})
              .exit_code == 0);
  const auto row = fields(lines(slurp(w))[1]);
  double sum = 0, lowest = 0;
  for (std::size_t i = 1; i < row.size(); ++i) {
    sum += std::stod(row[i]);
    lowest = std::min(lowest, std::stod(row[i]));
  }
  CHECK(sum == doctest::Approx(1).epsilon(1e-12));
  CHECK(lowest < 0);
}
