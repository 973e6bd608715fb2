// nwreg test through the real binary: the report (text and JSON), the calibration chosen by
// where the bandwidth comes from, the permutations' reproducibility, and what it refuses.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"

using namespace clitest;
using Json = nlohmann::json;

TEST_CASE("test cli: a fixed bandwidth gets sm.regression's chi-square p-value, text and JSON") {
  // tests/golden/sm_test.csv: sm.regression(speed, dist, h = 4, model = "linear") = 0.24654210148671629.
  Result r = run_nwreg({"test", data("cars.csv"), "--null", "linear", "--method", "local-linear", "-b", "4"});
  REQUIRE(r.exit_code == 0);
  const auto l = lines(r.out);
  CHECK(l.at(0) == "test: linearity");
  CHECK(l.at(1) == "null: linear");
  CHECK(l.at(3).rfind("p_value: 0.246542101486", 0) == 0);
  CHECK(l.at(4) == "calibration: chi-square at a fixed bandwidth");
  CHECK(r.err.empty());

  Result j = run_nwreg({"test", data("cars.csv"), "--method", "nw", "-b", "4", "--format", "json"});
  REQUIRE(j.exit_code == 0);
  const Json t = Json::parse(j.out);
  CHECK(t["test"] == "no effect");
  CHECK(t["null"] == "constant");
  CHECK(t["p_value"].get<double>() == doctest::Approx(7.4165456251051864e-05).epsilon(1e-8));
  CHECK(t["permutations"] == 0);
  CHECK(t["calibration"] == "chi-square at a fixed bandwidth");
  CHECK(t["bandwidth"][0] == 4.0);
  CHECK(t["n"] == 50);
  // The form's skew is negative there: the approximation says it errs to the safe side.
  CHECK(t["approximation"].get<std::string>().find("conservative here") != std::string::npos);
}

TEST_CASE("test cli: a learned bandwidth is calibrated by permutations, the same for any threads") {
  const std::vector<std::string> base = {"test", data("birthwt.csv"), "-x", "age", "-y", "bwt", "--format", "json",
                                         "--seed", "7", "-b", "auto"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_nwreg(a);
  };
  Result one = with({"--threads", "1"}), two = with({"--threads", "2"});
  REQUIRE(one.exit_code == 0);
  CHECK(one.out == two.out);
  const Json t = Json::parse(one.out);
  CHECK(t["source"] == "learned");
  CHECK(t["calibration"].get<std::string>().rfind("permutation (", 0) == 0);
  const double b = t["permutations"].get<double>(), p = t["p_value"].get<double>();
  CHECK(b >= 10);
  CHECK(b <= 199);
  // Either stopped at the 10th F* >= F (p = 10 / B) or ran all 199 (p = (1 + #) / 200).
  CHECK((b < 199 ? p == doctest::Approx(10 / b) : p * 200 == doctest::Approx(std::round(p * 200))));
  CHECK(t["p_value_fixed_bandwidth"].is_number());
  // Another seed draws other permutations; --permutations 0 gives the chi-square p at the learned h.
  Result zero = with({"--permutations", "0"});
  REQUIRE(zero.exit_code == 0);
  const Json z = Json::parse(zero.out);
  CHECK(z["permutations"] == 0);
  CHECK(z["p_value"] == t["p_value_fixed_bandwidth"]);
}

TEST_CASE("test cli: the default bandwidth is sm.regression's, 6 degrees of freedom") {
  // R: sm.regression(cars$speed, cars$dist, model = "no effect")$p = 0.0001882299 at h.select's
  // h = 1.840623 (optimise's tolerance; nwreg solves tr(H) = 6 to 1e-12: h = 1.8405893).
  Result r = run_nwreg({"test", data("cars.csv"), "--method", "local-linear", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json t = Json::parse(r.out);
  CHECK(t["source"] == "df");
  CHECK(t["df"].get<double>() == doctest::Approx(6).epsilon(1e-9));
  CHECK(t["bandwidth"][0].get<double>() == doctest::Approx(1.840623386).epsilon(1e-4));
  CHECK(t["p_value"].get<double>() == doctest::Approx(0.0001882299).epsilon(1e-4));
  CHECK(t["calibration"] == "chi-square at a fixed bandwidth");
  // Two columns: 12, as sm's default for two.
  r = run_nwreg({"test", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "--format", "json", "--null", "linear"});
  REQUIRE(r.exit_code == 0);
  CHECK(Json::parse(r.out)["df"].get<double>() == doctest::Approx(12).epsilon(1e-9));
}

TEST_CASE("test cli: a batch writes a row per file, a failing file on its own row") {
  Result r = run_nwreg({"test", data("cars.csv"), data("no_such.csv"), data("mcycle.csv"), "--null", "linear"});
  CHECK(r.exit_code == 1);
  const auto l = lines(r.out);
  REQUIRE(l.size() == 4);
  CHECK(l[0] == "file,n,null,statistic,p_value,calibration,permutations,p_value_fixed_bandwidth,bandwidth,df,warning,error");
  CHECK(l[1].rfind(data("cars.csv") + ",50,linear,", 0) == 0);
  CHECK(l[1].find(",chi-square at a fixed bandwidth,0,") != std::string::npos);
  CHECK(l[2].rfind(data("no_such.csv") + ",,,,,,,,,,,", 0) == 0);
  CHECK(l[3].rfind(data("mcycle.csv") + ",133,linear,", 0) == 0);
  CHECK(r.err.find("no_such.csv: cannot open") != std::string::npos);
  // The same p-value as the file alone; JSON: an array of the single reports with "file" and "error".
  Result one = run_nwreg({"test", data("cars.csv"), "--null", "linear", "--format", "json"});
  Result batch = run_nwreg({"test", data("cars.csv"), data("mcycle.csv"), "--null", "linear", "--format", "json"});
  REQUIRE(one.exit_code == 0);
  REQUIRE(batch.exit_code == 0);
  const Json a = Json::parse(batch.out), single = Json::parse(one.out);
  REQUIRE(a.size() == 2);
  CHECK(a[0]["file"] == data("cars.csv"));
  CHECK(a[0]["p_value"] == single["p_value"]);
  CHECK(a[0]["error"].is_null());
  // An option error is said once, before any file.
  r = run_nwreg({"test", data("cars.csv"), data("mcycle.csv"), "--null", "cubic"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
}

TEST_CASE("test cli: refusals") {
  Result r = run_nwreg({"test", data("cars.csv"), "--null", "quadratic"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "nwreg: error: --null: unknown null model \"quadratic\" (known: constant, linear)\n");
  r = run_nwreg({"test", data("cars.csv"), "--robust", "3"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--robust: the test needs a smooth linear in y") != std::string::npos);
  r = run_nwreg({"test", data("cars.csv"), "--permutations", "many"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "nwreg: error: --permutations: expected auto or a whole number from 0 to 1000000, got \"many\"\n");
  r = run_nwreg({"test", data("cars.csv"), "--format", "tsv"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "nwreg: error: --format: unknown format \"tsv\" (known: text, json, csv)\n");
  r = run_nwreg({"test", data("cars.csv"), "--frob"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "nwreg: error: The following argument was not expected: --frob (see nwreg test --help)\n");
  r = run_nwreg({"help", "test"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--null") != std::string::npos);
}
