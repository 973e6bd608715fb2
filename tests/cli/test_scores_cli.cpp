// --score through the real binary: the fit report, the model file and predict --model, the
// attention rows and pictures, verbose losses, thread invariance and batches.

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_helpers.h"

using namespace clitest;
using Json = nlohmann::json;

namespace {

// The value of a "name: value" line of a fit report ("" when absent).
std::string report(const std::string& out, const std::string& name) {
  for (const auto& l : lines(out))
    if (l.rfind(name + ": ", 0) == 0) return l.substr(name.size() + 2);
  return "";
}

}  // namespace

TEST_CASE("scores cli: the fit report of a score has its parameters, LOO error and df, no bandwidth") {
  const Result dot = run_nwreg({"fit", data("synthetic.csv"), "--score", "dot"});
  REQUIRE(dot.exit_code == 0);
  CHECK(lines(dot.out)[0] == "score: dot");
  // PyTorch: 2.058947168497955 (tests/golden/scores.json, case dot_synthetic)
  CHECK(std::stod(report(dot.out, "loo_mse")) == doctest::Approx(2.058947168497955).epsilon(1e-13));
  CHECK(std::stod(report(dot.out, "df")) == doctest::Approx(1.14195657400964).epsilon(1e-12));
  CHECK(report(dot.out, "criterion") == report(dot.out, "loo_mse").insert(0, "loo "));
  CHECK(report(dot.out, "bandwidth").empty());
  CHECK(report(dot.out, "kernel").empty());
  CHECK(report(dot.out, "source") == "fixed");

  const Result add = run_nwreg({"fit", data("synthetic.csv"), "--score", "additive", "--hidden", "2", "--epochs", "5"});
  REQUIRE(add.exit_code == 0);
  const auto l = lines(add.out);
  CHECK(l[0] == "score: additive");
  CHECK(l[1] == "hidden: 2");
  CHECK(l[2].rfind("w_v: ", 0) == 0);
  CHECK(l[3].rfind("W_q: ", 0) == 0);
  CHECK(l[5].rfind("W_k: ", 0) == 0);
  CHECK(l[7].rfind("b: ", 0) == 0);
  CHECK(report(add.out, "epochs") == "5 (epochs done)");
  CHECK(report(add.out, "source") == "learned");
  // --no-bias: the texts' form, no b.
  const Result nob = run_nwreg({"fit", data("synthetic.csv"), "--score", "additive", "--no-bias", "--epochs", "2"});
  CHECK(report(nob.out, "b").empty());
  CHECK(!report(nob.out, "w_v").empty());
}

TEST_CASE("scores cli: predict --model reproduces the learned score byte for byte, for any --threads") {
  Scratch s;
  const std::string model = (s / "m.json").string();
  const std::vector<std::string> learn = {"--score", "additive", "--hidden", "3", "--seed", "5", "--epochs", "40"};
  std::vector<std::string> fit = {"fit", data("synthetic.csv"), "-o", model};
  fit.insert(fit.end(), learn.begin(), learn.end());
  REQUIRE(run_nwreg(fit).exit_code == 0);
  const Json m = Json::parse(slurp(model));
  CHECK(m["score"] == "additive");
  CHECK(m["hidden"] == 3);
  CHECK(!m.contains("bandwidth"));
  CHECK(!m.contains("kernel"));
  CHECK(m["parameters"]["w_v"].size() == 3);
  CHECK(m["parameters"]["W_q"].size() == 3);
  CHECK(m["parameters"]["b"].size() == 3);
  CHECK(m["df"].get<double>() > 1);
  CHECK(m["history"].size() == 41);
  CHECK(!m["history"][0].contains("bandwidth"));

  const Result a = run_nwreg({"predict", data("synthetic.csv"), "--model", model, "--grid", "0:5:0.25", "--se", "--derivative"});
  std::vector<std::string> direct = {"predict", data("synthetic.csv"), "--grid", "0:5:0.25", "--se", "--derivative", "--threads", "1"};
  direct.insert(direct.end(), learn.begin(), learn.end());
  const Result b = run_nwreg(direct);
  direct[7] = "3";
  const Result c = run_nwreg(direct);
  REQUIRE(a.exit_code == 0);
  CHECK(lines(a.out)[0] == "x,prediction,se,lower,upper,d_x,d_x_se");
  CHECK(a.out == b.out);
  CHECK(b.out == c.out);
  // Another seed, another start.
  direct[direct.size() - 3] = "6";
  CHECK(run_nwreg(direct).out != b.out);
}

TEST_CASE("scores cli: attention rows sum to 1, the pictures name the score, batches say score:NAME") {
  Scratch s;
  const std::string w = (s / "w.csv").string(), heat = (s / "h.svg").string(), plot = (s / "p.svg").string();
  const Result r = run_nwreg({"predict", data("synthetic.csv"), "--score", "scaled-dot", "--grid", "0:5:1", "--weights", w,
                              "--heatmap", heat, "--plot", plot});
  REQUIRE(r.exit_code == 0);
  const auto rows = lines(slurp(w));
  REQUIRE(rows.size() == 6);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::stringstream ss(rows[i]);
    std::string f;
    std::getline(ss, f, ',');  // the query's x
    double total = 0;
    while (std::getline(ss, f, ',')) total += std::stod(f);
    CHECK(total == doctest::Approx(1).epsilon(1e-12));
  }
  CHECK(slurp(heat).find("scaled-dot score (fixed)") != std::string::npos);
  CHECK(slurp(plot).find("scaled-dot score (fixed)") != std::string::npos);

  const Result batch = run_nwreg({"fit", data("synthetic.csv"), data("cars.csv"), "-x", "1", "-y", "2", "--score", "dot"});
  REQUIRE(batch.exit_code == 0);
  const auto b = lines(batch.out);
  CHECK(b[1].find(",50,score:dot,") != std::string::npos);
  const Result json = run_nwreg({"fit", data("synthetic.csv"), data("cars.csv"), "-x", "1", "-y", "2", "--score", "dot",
                                 "--format", "json"});
  const Json j = Json::parse(json.out);
  CHECK(j[0]["score"] == "dot");
  CHECK(j[0]["bandwidth"].is_null());
}

TEST_CASE("scores cli: --verbose shows the loss after each step, the line search never rises") {
  const Result r = run_nwreg({"fit", data("synthetic.csv"), "--score", "general", "--epochs", "3", "--verbose"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("nwreg: epoch 0  loss 2.05894716849795") != std::string::npos);
  CHECK(r.err.find("nwreg: epoch 3  loss ") != std::string::npos);
  CHECK(r.err.find("stopped after 3 epochs (epochs done)") != std::string::npos);
  const Result ls = run_nwreg({"fit", data("synthetic.csv"), "--score", "additive", "--optimizer", "line-search",
                               "--epochs", "10", "--format", "json"});
  REQUIRE(ls.exit_code == 0);
  const Json m = Json::parse(ls.out);
  double last = 1e300;
  for (const auto& e : m["history"]) {
    CHECK(e["loss"].get<double>() <= last);
    last = e["loss"].get<double>();
  }
}

TEST_CASE("scores cli: the robust iterations and sample weights work with a score") {
  const Result r = run_nwreg({"fit", data("outliers.csv"), "--score", "dot", "--robust", "2"});
  REQUIRE(r.exit_code == 0);
  CHECK(report(r.out, "robust") == "2");
  const Result plain = run_nwreg({"fit", data("outliers.csv"), "--score", "dot"});
  CHECK(report(r.out, "loo_mse") != report(plain.out, "loo_mse"));
}
