// Kernels, local linear, sample weights, missing values, the learned metric and standard errors
// through the real binary: options, model files, output columns, stderr.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"

using namespace clitest;
using Json = nlohmann::json;

TEST_CASE("methods cli: a model file keeps kernel, method and statistics, predict --model uses them") {
  Scratch s;
  const std::string model = (s / "m.json").string();
  Result fit = run_nwreg({"fit", data("mcycle.csv"), "--kernel", "tricube", "--method", "local-linear", "-o", model});
  REQUIRE(fit.exit_code == 0);
  const auto l = lines(fit.out);
  CHECK(l[6] == "kernel: tricube");
  CHECK(l[7] == "method: local-linear");
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

TEST_CASE("methods cli: --se adds se, lower and upper, the plain band is f -+ z se, --plot draws it") {
  Scratch s;
  const std::string svg = (s / "f.svg").string();
  Result r = run_nwreg({"predict", data("mcycle.csv"), "--grid", "10:50:10", "--se", "--level", "0.9", "--interval", "plain",
                        "--plot", svg});
  REQUIRE(r.exit_code == 0);
  const auto l = lines(r.out);
  REQUIRE(l.size() == 5);
  CHECK(l[0] == "times,prediction,se,lower,upper");
  for (std::size_t i = 1; i < l.size(); ++i) {
    const auto f = split(l[i]);
    const double pred = std::stod(f[1]), se = std::stod(f[2]);
    CHECK(se > 0);
    CHECK(std::stod(f[3]) == doctest::Approx(pred - 1.6448536269514722 * se).epsilon(1e-14));
    CHECK(std::stod(f[4]) == doctest::Approx(pred + 1.6448536269514722 * se).epsilon(1e-14));
  }
  CHECK(slurp(svg).find("<polygon class=\"band\"") != std::string::npos);
  // The same columns in JSON Lines, and streamed from stdin.
  Result j = run_nwreg({"predict", data("mcycle.csv"), "--query", "-", "--se", "--interval", "plain", "--format", "jsonl"},
                       "times\n20\n");
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
  CHECK(lines(r.out)[5] == "n: 3");
  CHECK(lines(r.out)[8] == "sample_weight: w");
  // Weight 2 on x = 4 is the row twice: the same predictions as the data with it copied.
  spit(s / "c.csv", "x,y\n0,1\n2,5\n4,9\n4,9\n");
  Result w = run_nwreg({"predict", (s / "t.csv").string(), "--na", "skip", "--sample-weight", "w", "-b", "1.5",
                        "--grid", "0:5:1"});
  Result c = run_nwreg({"predict", (s / "c.csv").string(), "-b", "1.5", "--grid", "0:5:1"});
  const auto wl = lines(w.out), cl = lines(c.out);
  REQUIRE(wl.size() == cl.size());
  for (std::size_t i = 1; i < wl.size(); ++i)
    CHECK(std::stod(split(wl[i])[1]) == doctest::Approx(std::stod(split(cl[i])[1])).epsilon(1e-14));
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
  const double f = std::stod(split(lines(p.out)[1])[2]);
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
  const auto row = split(lines(slurp(w))[1]);
  double sum = 0, lowest = 0;
  for (std::size_t i = 1; i < row.size(); ++i) {
    sum += std::stod(row[i]);
    lowest = std::min(lowest, std::stod(row[i]));
  }
  CHECK(sum == doctest::Approx(1).epsilon(1e-12));
  CHECK(lowest < 0);
}

TEST_CASE("methods cli: categorical columns read labels, write them back, and travel in the model file") {
  Scratch s;
  const std::string model = (s / "m.json").string();
  const std::vector<std::string> cols{"-x", "lwt,race,ftv", "-y", "bwt", "--categorical", "race", "--ordered", "ftv"};
  std::vector<std::string> args{"fit", data("birthwt.csv")};
  args.insert(args.end(), cols.begin(), cols.end());
  args.insert(args.end(), {"-b", "20,0.3,0.5", "-o", model});
  Result fit = run_nwreg(args);
  REQUIRE(fit.exit_code == 0);
  CHECK(lines(fit.out)[1] == "x_kinds: number unordered ordered");
  CHECK(lines(fit.out)[2] == "categorical_kernel: aitchison-aitken");
  const Json m = Json::parse(slurp(model));
  CHECK(m["x_kinds"] == Json::parse(R"(["number","unordered","ordered"])"));
  CHECK(m["levels"] == Json::parse(R"([null,["black","other","white"],[0,1,2,3,4,6]])"));
  // Queries by label, answered the same from the model as from the options, labels written back
  // (a JSON string; a CSV field quoted where it must be).
  const std::string q = (s / "q.csv").string();
  spit(q, "lwt,race,ftv\n120,white,0\n150,\"black\",2.0\n");
  Result a = run_nwreg({"predict", data("birthwt.csv"), "--model", model, "--query", q});
  std::vector<std::string> b_args{"predict", data("birthwt.csv")};
  b_args.insert(b_args.end(), cols.begin(), cols.end());
  b_args.insert(b_args.end(), {"-b", "20,0.3,0.5", "--query", q});
  Result b = run_nwreg(b_args);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  const auto l = lines(a.out);
  REQUIRE(l.size() == 3);
  CHECK(l[0] == "lwt,race,ftv,prediction");
  CHECK(split(l[1])[1] == "white");
  CHECK(split(l[2])[1] == "black");
  CHECK(split(l[2])[2] == "2");
  Result j = run_nwreg({"predict", data("birthwt.csv"), "--model", model, "--query", q, "--format", "jsonl"});
  CHECK(Json::parse(lines(j.out)[0])["race"] == "white");
  CHECK(Json::parse(lines(j.out)[1])["ftv"] == 2);
  // A level never seen in training names the file, line, column and the levels there are.
  spit(q, "lwt,race,ftv\n120,asian,0\n");
  Result bad = run_nwreg({"predict", data("birthwt.csv"), "--model", model, "--query", q});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "nwreg: error: " + q + ":2: column \"race\": level \"asian\" was not seen in training (its levels: "
                                          "\"black\", \"other\", \"white\")\n");
  // --levels fixes the order (and so the codes) of text levels; the model keeps it.
  const std::string lm = (s / "l.json").string();
  REQUIRE(run_nwreg({"fit", data("birthwt.csv"), "-x", "race", "-y", "bwt", "--ordered", "race", "--levels",
                     "race=white,other,black,asian", "-b", "0.4", "-o", lm})
              .exit_code == 0);
  CHECK(Json::parse(slurp(lm))["levels"] == Json::parse(R"([["white","other","black","asian"]])"));
  CHECK(run_nwreg({"predict", data("birthwt.csv"), "--model", lm}).exit_code == 0);
}

TEST_CASE("methods cli: a factor alone is learned, and its lambda reported") {
  Result r = run_nwreg({"fit", data("birthwt.csv"), "-x", "race", "-y", "bwt", "--categorical", "race"});
  REQUIRE(r.exit_code == 0);
  const auto l = lines(r.out);
  const double lambda = std::stod(l[0].substr(11));
  CHECK(lambda > 0);
  CHECK(lambda <= 2.0 / 3);
  CHECK(l[1] == "x_kinds: unordered");
}

TEST_CASE("methods cli: knn bandwidths travel in the model file and give the same predictions") {
  Scratch s;
  const std::string model = (s / "k.json").string();
  Result fit = run_nwreg({"fit", data("mcycle.csv"), "-b", "knn:9", "--method", "local-linear", "-o", model});
  REQUIRE(fit.exit_code == 0);
  CHECK(lines(fit.out)[1] == "knn: 9");
  const Json m = Json::parse(slurp(model));
  CHECK(m["knn"] == 9);
  CHECK(m["bandwidth_source"] == "knn");
  Result a = run_nwreg({"predict", data("mcycle.csv"), "--model", model, "--grid", "5:55:10", "--se", "--derivative"});
  Result b = run_nwreg({"predict", data("mcycle.csv"), "-b", "knn:9", "--method", "local-linear", "--grid", "5:55:10",
                        "--se", "--derivative"});
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(lines(a.out)[0] == "times,prediction,se,lower,upper,d_times,d_times_se");
}

TEST_CASE("methods cli: a number spelled two ways is one level, and the model keeps the categorical kernel") {
  Scratch s;
  const std::string train = (s / "t.csv").string(), model = (s / "m.json").string();
  spit(train, "x,g,y\n1,2,1\n2,2.0,2\n3,3,3\n4,3.00,5\n5,2,4\n");
  REQUIRE(run_nwreg({"fit", train, "-x", "x,g", "-y", "y", "--categorical", "g", "--categorical-kernel", "li-racine",
                     "-b", "1.5,0.8", "-o", model})
              .exit_code == 0);
  const Json m = Json::parse(slurp(model));
  CHECK(m["levels"] == Json::parse(R"([null,["2","3"]])"));
  CHECK(m["categorical_kernel"] == "li-racine");
  // lambda 0.8 is beyond Aitchison-Aitken's 0.5 for two levels: the model's kernel is used.
  Result a = run_nwreg({"predict", train, "--model", model});
  Result b = run_nwreg({"predict", train, "-x", "x,g", "-y", "y", "--categorical", "g", "--categorical-kernel",
                        "li-racine", "-b", "1.5,0.8"});
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
}

TEST_CASE("methods cli: span and --robust in fit, predict and the model file, the model reproduces the curve") {
  Scratch s;
  const std::string model = (s / "span.json").string();
  const std::vector<std::string> how = {"-b", "span:0.3", "--kernel", "tricube", "--method", "local-linear", "--robust", "3"};
  std::vector<std::string> fit = {"fit", data("cars.csv"), "-o", model};
  fit.insert(fit.end(), how.begin(), how.end());
  const Result f = run_nwreg(fit);
  REQUIRE(f.exit_code == 0);
  CHECK(f.out.find("span: 0.3\nrobust: 3\n") != std::string::npos);
  const Json m = Json::parse(slurp(model));
  CHECK(m["span"] == 0.3);
  CHECK(m["robust"] == 3);
  REQUIRE(m["robustness"].size() == 50);
  // R: loess(dist ~ speed, cars, span = 0.3, degree = 1, family = "symmetric", surface = "direct")
  // at speed 4 (tests/golden/loess.csv), through predict with the options and with the model.
  std::vector<std::string> direct = {"predict", data("cars.csv"), "--grid", "4:5:2"};
  direct.insert(direct.end(), how.begin(), how.end());
  const Result a = run_nwreg(direct);
  const Result b = run_nwreg({"predict", data("cars.csv"), "--model", model, "--grid", "4:5:2"});
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(std::abs(std::stod(split(lines(a.out)[1])[1]) - 5.6996787928457504) < 1e-11);
  // cars' 23rd row (speed 14, dist 80) lies far above the curve: it weighs little.
  CHECK(m["robustness"][22] < 0.05);
  // Two columns: loess's trimmed scales, or the scales given (normalize = FALSE is 1,1).
  const Result trimmed = run_nwreg({"fit", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", "span:0.5"});
  CHECK(lines(trimmed.out)[0] == "bandwidth: 4.735393910663941 0.3786088172277144");  // R: loess's divisor
  const Result given = run_nwreg({"fit", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", "span:0.5:1,1"});
  CHECK(lines(given.out)[0] == "bandwidth: 1 1");
  CHECK(lines(given.out)[1] == "span: 0.5");
}

TEST_CASE("methods cli: --robust puts no weight on an outlier, and the line comes back") {
  Scratch s;
  std::string csv = "x,y\n";
  for (int i = 1; i <= 40; ++i) csv += std::to_string(i) + "," + std::to_string(i == 10 ? 40 : 2 * i + 2 * (i % 2) - 1) + "\n";  // y = 2x -+ 1, and one outlier
  spit(s / "line.csv", csv);
  const std::string weights = (s / "w.csv").string();
  const Result r = run_nwreg({"predict", (s / "line.csv").string(), "-b", "span:0.5", "--kernel", "tricube", "--method",
                              "local-linear", "--robust", "2", "--grid", "10:11:1", "--weights", weights});
  REQUIRE(r.exit_code == 0);
  CHECK(std::abs(std::stod(split(lines(r.out)[1])[1]) - 20) < 0.2);
  const auto w = split(lines(slurp(weights))[1]);  // query 10: x, then one weight per key in x order
  REQUIRE(w.size() == 41);
  CHECK(w[10] == "0");
  CHECK(w[9] != "0");
  // Without --robust the outlier pulls the line up.
  const Result plain = run_nwreg({"predict", (s / "line.csv").string(), "-b", "span:0.5", "--kernel", "tricube",
                                  "--method", "local-linear", "--grid", "10:11:1"});
  CHECK(std::stod(split(lines(plain.out)[1])[1]) > 21.5);
}

TEST_CASE("methods cli: --robust with a row that no other key reaches, and the nearest key that weighs something") {
  Scratch s;
  // x = 10 is alone within the tricube's reach (h = 1.5) of no other row: once its robustness
  // weight is 0 its own residual comes from the nearest row that weighs something.
  spit(s / "iso.csv", "x,y\n1,1\n2,2\n3,3\n4,4\n10,100\n11,5\n12,6\n13,7\n");
  const Result r = run_nwreg({"fit", (s / "iso.csv").string(), "-b", "1.5", "--kernel", "tricube", "--robust", "2"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  // Under a neighbour bandwidth rows of weight 0 are kept as neighbours: the nearest-key
  // fallback takes the nearest row of weight > 0 (x = 3, y = 7), not the row of weight 0 at 2.
  spit(s / "w.csv", "x,y,w\n0,1,1\n2,5,0\n3,7,1\n9,2,1\n");
  const Result f = run_nwreg({"predict", (s / "w.csv").string(), "--sample-weight", "w", "-b", "knn:1", "--kernel",
                              "tricube", "--grid", "2:2.5:1", "--out-of-reach", "nearest"});
  REQUIRE(f.exit_code == 0);
  CHECK(lines(f.out)[1] == "2,7");
}

TEST_CASE("methods cli: --levels on an ordered column of numbers keeps the numbers' differences") {
  // Issue 25: --levels o=0,1,100 used to turn the distances 1 and 99 into positions 1 and 1.
  Scratch s;
  std::string text = "x,o,y\n";
  for (int i = 0; i < 30; ++i)
    text += std::to_string(i % 7) + "," + std::string(i % 3 == 0 ? "0" : i % 3 == 1 ? "1" : "100") + "," +
            std::to_string((i * 37) % 11) + "\n";
  const std::string train = (s / "o.csv").string();
  spit(train, text);
  const std::vector<std::string> base = {"predict", train, "-x", "x,o", "-y", "y", "--ordered", "o", "-b", "2,0.5"};
  const Result plain = run_nwreg(base);
  std::vector<std::string> listed = base;
  listed.insert(listed.end(), {"--levels", "o=0,1,100"});
  const Result same = run_nwreg(listed);
  REQUIRE(plain.exit_code == 0);
  CHECK(same.out == plain.out);
  listed.back() = "o=0,1,50,100";  // a level no row holds changes nothing either
  CHECK(run_nwreg(listed).out == plain.out);
  listed.back() = "o=1,0,100";
  check_error(run_nwreg(listed), 2,
              "--levels: column \"o\" is ordered numbers, ordered by value (distances are their differences): list its "
              "levels ascending, or leave --levels out; \"0\" follows \"1\"");
}

TEST_CASE("methods cli: --se bands are robust bias-corrected by default, plain on asking, simultaneous on asking") {
  // Issue 27: the plain band (prediction -+ z se) ignores bias and covered 0.91 of the time.
  const std::vector<std::string> base = {"predict", data("mcycle.csv"), "-b", "2.5", "--grid", "10:40:10", "--se"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_nwreg(a);
  };
  const Result rbc = with({}), explicit_rbc = with({"--interval", "rbc"}), plain = with({"--interval", "plain"});
  REQUIRE(rbc.exit_code == 0);
  CHECK(rbc.out == explicit_rbc.out);
  CHECK(rbc.err.empty());
  const auto r = lines(rbc.out), p = lines(plain.out);
  // The prediction and se are the estimate's; the rbc band is centred on the local quadratic
  // at the same h (its prediction with --interval plain gives the centre's se with its own
  // residuals, so only the centre is compared here).
  const auto lq = lines(run_nwreg({"predict", data("mcycle.csv"), "-b", "2.5", "--grid", "10:40:10", "--method",
                                   "local-polynomial", "--degree", "2"}).out);
  for (std::size_t i = 1; i < r.size(); ++i) {
    const auto a = split(r[i]), b = split(p[i]), c = split(lq[i]);
    CHECK(a[1] == b[1]);
    CHECK(a[2] == b[2]);
    CHECK((std::stod(a[3]) + std::stod(a[4])) / 2 == doctest::Approx(std::stod(c[1])).epsilon(1e-12));
    CHECK(std::stod(b[3]) == doctest::Approx(std::stod(b[1]) - 1.959963984540054 * std::stod(b[2])).epsilon(1e-12));
  }
  // A query far beyond the data, where the local quadratic's powers overflow: the band about the
  // estimate, as NW still answers there.
  const Result far =
      run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--query", "-", "--se", "--out-of-reach", "extrapolate"}, "times\n1e200\n");
  REQUIRE(far.exit_code == 0);
  const auto fl = split(lines(far.out)[1]);
  CHECK((std::stod(fl[3]) + std::stod(fl[4])) / 2 == doctest::Approx(std::stod(fl[1])).epsilon(1e-12));
  // Degree 3 has no correction: auto gives the plain band; rbc asked for is an error.
  const std::vector<std::string> cubic = {"--method", "local-polynomial", "--degree", "3"};
  std::vector<std::string> auto3 = cubic, plain3 = cubic;
  plain3.insert(plain3.end(), {"--interval", "plain"});
  CHECK(with(auto3).out == with(plain3).out);
  std::vector<std::string> rbc3 = cubic;
  rbc3.insert(rbc3.end(), {"--interval", "rbc"});
  const Result refused = with(rbc3);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err == "nwreg: error: --interval rbc: degree 3's bias correction needs degree 4, beyond nwreg's local "
                       "polynomials; give --interval plain\n");
  // Simultaneous: wider by the tube formula's critical value, said on stderr.
  const Result sim = with({"--simultaneous"});
  REQUIRE(sim.exit_code == 0);
  CHECK(sim.err.rfind("nwreg: simultaneous 0.95 band over 3 queries: critical value ", 0) == 0);
  const auto s = lines(sim.out);
  for (std::size_t i = 1; i < s.size(); ++i) {
    const auto a = split(s[i]), b = split(r[i]);
    CHECK(std::stod(a[4]) - std::stod(a[3]) > std::stod(b[4]) - std::stod(b[3]));
    CHECK((std::stod(a[3]) + std::stod(a[4])) / 2 == doctest::Approx((std::stod(b[3]) + std::stod(b[4])) / 2).epsilon(1e-12));
  }
  CHECK(run_nwreg({"predict", data("mcycle.csv"), "-b", "2.5", "--query", "-", "--se", "--simultaneous"}, "times\n1\n").err ==
        "nwreg: error: --simultaneous: a band over every query needs them all first; not with --query - (give a file)\n");
  CHECK(run_nwreg({"predict", data("mcycle.csv"), "--grid-n", "3", "--simultaneous"}).err ==
        "nwreg: error: --simultaneous requires --se (see nwreg predict --help)\n");
}
