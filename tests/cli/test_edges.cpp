// Where the data thin out, end or have holes: bands in gaps and past the data, queries past the
// training range (--out-of-reach), and query rows with missing values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.h"

using namespace clitest;
using Json = nlohmann::json;

namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// 200 rows, x uniform on [0, 4] and [6, 10] (a gap between), y = sin x + noise of sd about 0.3,
// from a fixed linear congruential generator.
std::string gap_data() {
  std::uint64_t s = 20261127;
  auto uniform = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) / 9007199254740992.0;
  };
  std::string csv = "x,y\n";
  for (int i = 0; i < 200; ++i) {
    const double x = i < 100 ? 4 * uniform() : 6 + 4 * uniform();
    double noise = 0;
    for (int k = 0; k < 12; ++k) noise += uniform();
    csv += num(x) + "," + num(std::sin(x) + 0.3 * (noise - 6)) + "\n";
  }
  return csv;
}

}  // namespace

TEST_CASE("edges: a band in a gap is at most 10 times as wide as where the data are dense") {
  Scratch s;
  spit(s / "gap.csv", gap_data());
  std::string queries = "x\n";
  for (int i = 0; i <= 40; ++i) queries += num(0.5 + 0.225 * i) + "\n";  // 0.5 to 9.5
  spit(s / "q.csv", queries);
  for (std::string method : {"nw", "local-linear"}) {
    CAPTURE(method);
    const Result r = run_nwreg({"predict", (s / "gap.csv").string(), "--method", method, "--query", (s / "q.csv").string(), "--se"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("past the training x range (") == std::string::npos);  // every query inside the training range
    std::vector<double> dense, gap;
    for (const auto& line : lines(r.out)) {
      if (line.rfind("x,", 0) == 0) continue;
      const auto f = split(line);
      const double x = std::stod(f[0]), width = std::stod(f[4]) - std::stod(f[3]);
      (x > 4 && x < 6 ? gap : dense).push_back(width);
    }
    REQUIRE(gap.size() == 9);
    std::sort(dense.begin(), dense.end());
    const double median = dense[dense.size() / 2], widest = *std::max_element(gap.begin(), gap.end());
    CAPTURE(median);
    CAPTURE(widest);
    CHECK(widest > median);  // wider where the data are thin,
    CHECK(widest <= 10 * median);  // never absurd (at 1f9acce: hundreds of times)
  }
}

TEST_CASE("edges: past the data the band stays bounded when extrapolated, its t never below 4 df") {
  // faithful's waiting ends at 96; local linear's band at 104 was +-1.25e25 (t with nu < 1).
  const Result r = run_nwreg({"predict", data("faithful.csv"), "-x", "waiting", "-y", "eruptions", "--method", "local-linear",
                              "--se", "--grid", "92:106:4", "--out-of-reach", "extrapolate"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err ==
        "nwreg: note: 2 of 4 queries lie past the training x range (farthest: 8 past [43, 96] of \"waiting\", 0.151 of "
        "its range); they are extrapolated, bands included\n");
  for (const auto& line : lines(r.out)) {
    if (line.rfind("waiting", 0) == 0) continue;
    const auto f = split(line);
    CAPTURE(line);
    const double prediction = std::stod(f[1]), se = std::stod(f[2]), lower = std::stod(f[3]), upper = std::stod(f[4]);
    CHECK(lower < prediction);
    CHECK(upper > prediction);
    // Within t(4 df)'s 2.78 times (1 + rbc_ratio = 3) of the estimate's own se (topped up): a few se, not 1e25.
    CHECK(upper - lower < 2 * 2.78 * 3 * std::max(se, 1.0));
  }
}

TEST_CASE("edges: --out-of-reach says, leaves empty, or refuses queries past the training range") {
  const std::vector<std::string> base = {"predict", data("mcycle.csv"), "-b", "2", "--grid", "55:61:2", "--se"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = base;
    a.insert(a.end(), more.begin(), more.end());
    return run_nwreg(a);
  };
  // auto (the default): predictions extrapolated, band cells empty, said once.
  const Result a = with({});
  REQUIRE(a.exit_code == 0);
  auto out = lines(a.out);
  REQUIRE(out.size() == 4);
  CHECK(out[0] == "times,prediction,se,lower,upper");
  CHECK(split(out[1]).size() == 5);
  CHECK(!split(out[1])[3].empty());  // 55: inside
  for (int i : {2, 3}) {  // 57 inside, 59 past 57.6
    const auto f = split(out[i]);
    CHECK(!f[1].empty());
    CHECK((f[2].empty() && f[3].empty() && f[4].empty()) == (i == 3));
  }
  CHECK(a.err ==
        "nwreg: note: 1 of 3 queries lie past the training x range (farthest: 1.4 past [2.4, 57.6] of \"times\", 0.0254 "
        "of its range); their predictions are extrapolated and their band cells left empty (--out-of-reach extrapolate "
        "fills them, empty leaves every cell empty, error refuses)\n");
  // extrapolate: every cell.
  const Result e = with({"--out-of-reach", "extrapolate"});
  REQUIRE(e.exit_code == 0);
  CHECK(lines(e.out)[1] == out[1]);
  const auto last = split(lines(e.out)[3]);
  CHECK(last[1] == split(out[3])[1]);
  CHECK(!last[4].empty());
  // nearest is extrapolate's former name.
  CHECK(with({"--out-of-reach", "nearest"}).out == e.out);
  // empty: the row stays, every value cell empty (null in JSON).
  const Result m = with({"--out-of-reach", "empty"});
  REQUIRE(m.exit_code == 0);
  CHECK(lines(m.out)[3] == "59,,,,");
  const Result j = with({"--out-of-reach", "empty", "--format", "jsonl"});
  CHECK(lines(j.out)[2] == R"({"times":59,"prediction":null,"se":null,"lower":null,"upper":null})");
  // error: refused, nothing written.
  const Result x = with({"--out-of-reach", "error"});
  CHECK(x.exit_code == 1);
  CHECK(x.out.empty());
  CHECK(x.err ==
        "nwreg: error: query 3 lies past the training range [2.4, 57.6] of x column \"times\"; give --out-of-reach "
        "extrapolate (or empty) to answer it\n");
  // A stream: each line answered as it comes, the note once at the end.
  const Result st = run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--query", "-", "--out-of-reach", "empty"},
                              "times\n1\n30\n70\n");
  REQUIRE(st.exit_code == 0);
  CHECK(st.out == "times,prediction\n1,\n30," + split(lines(run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--grid", "30:31:1"}).out)[1])[1] + "\n70,\n");
  CHECK(st.err ==
        "nwreg: note: 2 of 3 queries lie past the training x range (farthest: 12.4 past [2.4, 57.6] of \"times\", 0.225 "
        "of its range); their cells are left empty\n");
}

TEST_CASE("edges: a compact kernel's query out of reach is left empty under --out-of-reach empty") {
  const Result r = run_nwreg({"predict", "-", "--kernel", "epanechnikov", "-b", "0.5", "--grid", "0:4:1", "--out-of-reach",
                              "empty", "--se"},
                             "x,y\n0,1\n0.2,2\n0.4,1.5\n3,4\n3.3,5\n3.6,4.5\n");
  REQUIRE(r.exit_code == 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == 5);
  CHECK(out[2] == "1,,,,");  // no key within 0.5 of 1 or of 2
  CHECK(out[3] == "2,,,,");
  CHECK(!split(out[1])[1].empty());
  CHECK(!split(out[4])[1].empty());
}

TEST_CASE("edges: --na skip keeps a query row with a missing x in its place, its cells empty") {
  Scratch s;
  spit(s / "d.csv", "id,x,y\na,1,2\nb,2,3\nc,NA,4\nd,3,5\ne,,6\n");
  const std::string d = (s / "d.csv").string();
  const Result r = run_nwreg({"predict", d, "-x", "x", "-y", "y", "-b", "1", "--na", "skip", "--query", d, "--keep", "id", "--se"});
  REQUIRE(r.exit_code == 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == 6);  // a header and all five rows, in order
  CHECK(out[0] == "id,x,prediction,se,lower,upper");
  CHECK(out[3] == "c,,,,,");
  CHECK(out[5] == "e,,,,,");
  CHECK(split(out[4])[0] == "d");
  // The rows that have an x get what they get without the others.
  const Result alone = run_nwreg({"predict", d, "-x", "x", "-y", "y", "-b", "1", "--na", "skip", "--grid", "1:4:1", "--se"});
  const auto a = lines(alone.out);
  CHECK(out[1] == "a," + a[1]);
  CHECK(out[4] == "d," + a[3]);
  CHECK(r.err == "nwreg: dropped 2 training rows with missing values from " + d + " (first: line 4)\n");
  // JSON: null; a stream likewise.
  const Result j = run_nwreg({"predict", d, "-x", "x", "-y", "y", "-b", "1", "--na", "skip", "--query", d, "--keep", "id",
                              "--format", "jsonl"});
  CHECK(lines(j.out)[2] == R"({"id":"c","x":null,"prediction":null})");
  const Result st = run_nwreg({"predict", d, "-x", "x", "-y", "y", "-b", "1", "--na", "skip", "--query", "-"}, "x\n1\nNA\n3\n");
  REQUIRE(st.exit_code == 0);
  CHECK(lines(st.out).size() == 4);
  CHECK(lines(st.out)[2] == ",");
  // Without --na skip a missing query value is still an error naming its line.
  spit(s / "t.csv", "x,y\n1,2\n2,3\n3,5\n");
  const Result f = run_nwreg({"predict", (s / "t.csv").string(), "-b", "1", "--query", "-"}, "x\n1\nNA\n");
  CHECK(f.exit_code == 1);
  CHECK(f.err == "nwreg: error: <stdin>:3: column \"x\": missing value \"NA\"; give --na skip to drop rows with missing values\n");
}

TEST_CASE("edges: --plot breaks the curve and band where cells are empty") {
  Scratch s;
  const Result r = run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--grid", "0:70:1", "--se", "--out-of-reach", "empty",
                              "--plot", (s / "p.svg").string(), "-o", (s / "o.csv").string()});
  REQUIRE(r.exit_code == 0);
  const std::string svg = slurp(s / "p.svg");
  CHECK(svg.find("nan") == std::string::npos);
  std::size_t curves = 0, bands = 0;
  for (std::size_t at = 0; (at = svg.find("class=\"curve\"", at)) != std::string::npos; ++at) ++curves;
  for (std::size_t at = 0; (at = svg.find("class=\"band\"", at)) != std::string::npos; ++at) ++bands;
  CHECK(curves == 1);  // 3 to 57: one run
  CHECK(bands == 1);
}

namespace {
// The value of `key: value` in fit's text report.
double reported(const std::string& text, const std::string& key) {
  const auto at = text.find("\n" + key + ": ");
  REQUIRE(at != std::string::npos);
  return std::stod(text.substr(at + key.size() + 3));
}
}  // namespace

TEST_CASE("edges: --robust with a given K, span or adaptive K reports the robust fit's error, as a fixed h does") {
  // At 1f9acce loo_mse was the plain fit's (4.21 for knn:10) and loo_r2 -4.8.
  for (const std::string b : {"knn:10", "span:0.3", "adaptive:10"}) {
    CAPTURE(b);
    const Result plain = run_nwreg({"fit", data("outliers.csv"), "-b", b});
    const Result robust = run_nwreg({"fit", data("outliers.csv"), "-b", b, "--robust", "3"});
    REQUIRE(plain.exit_code == 0);
    REQUIRE(robust.exit_code == 0);
    const double mse = reported(robust.out, "loo_mse"), r2 = reported(robust.out, "loo_r2");
    CHECK(mse < reported(plain.out, "loo_mse") / 3);  // the outliers weigh little
    CHECK(r2 > 0.5);
    CHECK(r2 < 1);
    const auto at = robust.out.find("\ncriterion: loo ");
    REQUIRE(at != std::string::npos);
    CHECK(std::stod(robust.out.substr(at + 16)) == mse);
  }
  const Result k = run_nwreg({"fit", data("outliers.csv"), "-b", "knn:10", "--robust", "3"});
  // (To rounding: rows of robustness weight 0 are neighbours that weigh nothing, and the
  // weights are measured from a key that weighs something.)
  CHECK(reported(k.out, "loo_mse") == doctest::Approx(0.155298778536059).epsilon(1e-13));
}

TEST_CASE("edges: test with every parameter of a nearest-neighbour bandwidth given is calibrated by chi-square") {
  const Result r = run_nwreg({"test", data("cars.csv"), "-b", "knn:7"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());  // no "depends on y" warning
  CHECK(r.out.find("calibration: chi-square at a fixed bandwidth\n") != std::string::npos);
  const Result s = run_nwreg({"test", data("cars.csv"), "-b", "span:0.5", "--permutations", "0"});
  CHECK(s.err.empty());
  // K chosen by the criterion depends on y: permutations.
  const Result a = run_nwreg({"test", data("cars.csv"), "-b", "knn:auto", "--permutations", "19"});
  CHECK(a.out.find("calibration: permutation (19 data sets under the null, the bandwidth chosen afresh on each)") !=
        std::string::npos);
  // Several columns whose scales are learned: permutations too.
  const Result m = run_nwreg({"test", data("airquality.csv"), "-x", "Solar.R,Wind", "-y", "Ozone", "-b", "knn:7",
                              "--permutations", "0"});
  CHECK(m.err.find("depends on y") != std::string::npos);
}

TEST_CASE("edges: the permutation p-value does not depend on the order of the rows") {
  // At 1f9acce the same rows in another order drew other permutations: 0.091 and 0.145.
  Scratch s;
  const auto rows = lines(slurp(data("cars.csv")));
  std::string reversed = rows[0] + "\n";
  for (std::size_t i = rows.size() - 1; i >= 1; --i) reversed += rows[i] + "\n";
  spit(s / "reversed.csv", reversed);
  const std::vector<std::string> args = {"-b", "auto", "--permutations", "99", "--seed", "7", "--format", "json", "-q"};
  std::vector<std::string> a = {"test", data("cars.csv")}, b = {"test", (s / "reversed.csv").string()};
  a.insert(a.end(), args.begin(), args.end());
  b.insert(b.end(), args.begin(), args.end());
  const Result ra = run_nwreg(a), rb = run_nwreg(b);
  REQUIRE(ra.exit_code == 0);
  REQUIRE(rb.exit_code == 0);
  const Json ja = Json::parse(ra.out), jb = Json::parse(rb.out);
  CHECK(ja["p_value"] == jb["p_value"]);
  CHECK(ja["permutations"] == jb["permutations"]);
  CHECK(ja["statistic"].get<double>() == doctest::Approx(jb["statistic"].get<double>()).epsilon(1e-12));
}

TEST_CASE("edges: the descent learns on every row of one column, and --verbose says which rows each loss is over") {
  // 3000 rows: the scan estimates from 1000, the descent (--loo-rows auto) from every row.
  std::string csv = "x,y\n";
  for (int i = 0; i < 3000; ++i) {
    const double x = i / 3000.0;
    csv += num(x) + "," + num(std::sin(6 * x) + 0.3 * std::sin(1e4 * x * x)) + "\n";
  }
  const Result a = run_nwreg({"fit", "-", "--verbose"}, csv);
  REQUIRE(a.exit_code == 0);
  CHECK(a.err.find("(the LOO error of 1000 of 3000 rows spread over x)\n") != std::string::npos);
  CHECK(a.err.find("leave-one-out passes; the epochs' losses are the LOO error of every row\n") != std::string::npos);
  // The same as --loo-rows 0; a sample is still there to ask for, and said.
  const Result all = run_nwreg({"fit", "-", "--loo-rows", "0"}, csv), auto_ = run_nwreg({"fit", "-"}, csv);
  CHECK(all.out == auto_.out);
  const Result some = run_nwreg({"fit", "-", "--loo-rows", "500", "--verbose"}, csv);
  CHECK(some.err.find("the epochs' losses are the LOO error of 500 of 3000 rows spread over x\n") != std::string::npos);
  // Several columns keep the sample (their passes are not O(n) yet).
  std::string two = "a,b,y\n";
  for (int i = 0; i < 200; ++i) two += num(i / 200.0) + "," + num((i * 37 % 200) / 200.0) + "," + num(std::sin(5.0 * i / 200)) + "\n";
  const Result t = run_nwreg({"fit", "-", "-x", "a,b", "-y", "y", "--verbose"}, two);
  CHECK(t.err.find("the epochs' losses are the LOO error of every row\n") != std::string::npos);  // 200 < 50000
  // Past 5000 rows the start points descend on 5000 of them, and only the best goes on on all.
  std::string big = "a,b,y\n";
  for (int i = 0; i < 6000; ++i)
    big += num(i / 6000.0) + "," + num((i * 37 % 6000) / 6000.0) + "," + num(std::sin(5.0 * i / 6000) + 0.2 * std::sin(7.0 * i)) + "\n";
  const Result g = run_nwreg({"fit", "-", "-x", "a,b", "-y", "y", "--verbose"}, big);
  REQUIRE(g.exit_code == 0);
  CHECK(g.err.find("the epochs' losses are the LOO error of every row (the start points' descents: of 5000 of 6000 "
                   "rows spread over x)\n") != std::string::npos);
}

TEST_CASE("edges: a local polynomial at a huge bandwidth is the global polynomial of its degree") {
  // Least squares over mcycle, centred at 30 (numpy lstsq): value and slope of degrees 1-3. At
  // 1f9acce local cubic gave the global quadratic at h = 1e60, the line at 1e100, the mean at 1e200.
  const double want[3][2] = {{-20.287661718500058, 1.0906752829686477},
                             {-31.040482325962056, 1.2532552033481035},
                             {-23.157788463542037, 4.020427817147357}};
  for (int degree = 1; degree <= 3; ++degree)
    for (const std::string h : {"1e60", "1e100", "1e200", "1e300"}) {
      CAPTURE(degree);
      CAPTURE(h);
      const Result r = run_nwreg({"predict", data("mcycle.csv"), "--method", "local-polynomial", "--degree",
                                  std::to_string(degree), "-b", h, "--grid", "30:31:1", "--derivative"});
      REQUIRE(r.exit_code == 0);
      const auto f = split(lines(r.out)[1]);
      CHECK(std::stod(f[1]) == doctest::Approx(want[degree - 1][0]).epsilon(1e-10));
      CHECK(std::stod(f[2]) == doctest::Approx(want[degree - 1][1]).epsilon(1e-10));
    }
}

TEST_CASE("edges: NW on a trend is told of local linear's error, with both figures") {
  // R's women: 15 rows, nearly a line. At 1f9acce the default fit said nothing of its LOO 2.02.
  const std::string women = "height,weight\n58,115\n59,117\n60,120\n61,123\n62,126\n63,129\n64,132\n65,135\n66,139\n"
                            "67,142\n68,146\n69,150\n70,154\n71,159\n72,164\n";
  const Result r = run_nwreg({"fit", "-"}, women);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("nwreg: warning: <stdin>: local linear's leave-one-out error is 0.15, under half of NW's 2.02: NW "
                   "bends toward the mean where a trend meets the ends of the data. Try --method local-linear\n") !=
        std::string::npos);
  // Asked for local linear, or data without a trend: no such warning.
  CHECK(run_nwreg({"fit", "-", "--method", "local-linear"}, women).err.find("local linear's") == std::string::npos);
  CHECK(run_nwreg({"fit", data("mcycle.csv")}).err.empty());
}

TEST_CASE("edges: in two columns a straight-line column is smoothed out by local linear, and NW is told so") {
  // y = 30 x1 + sin x2 + noise, 300 rows: along x1 y is a line. Local linear's best bandwidth in
  // x1 is infinite (one slope everywhere): it is set at 1e6 times the range of x1 and said so as
  // a line, not as a column that carries nothing. NW on the same data is told of local linear's
  // error (learned from NW's bandwidths: its own scan and grid of starts cost 10 times NW's learn).
  std::string csv = "x1,x2,y\n";
  std::uint64_t s = 12345;
  auto uniform = [&] {  // (a fixed LCG: the same rows on every platform)
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) * 0x1p-53;
  };
  for (int i = 0; i < 300; ++i) {
    const double a = uniform(), b = 10 * uniform(), e = 0.6 * (uniform() + uniform() + uniform() - 1.5);
    csv += num(a) + "," + num(b) + "," + num(30 * a + std::sin(b) + e) + "\n";
  }
  const Result ll = run_nwreg({"fit", "-", "-x", "x1,x2", "-y", "y", "--method", "local-linear"}, csv);
  REQUIRE(ll.exit_code == 0);
  CHECK(ll.err.find("nwreg: warning: <stdin>: x column \"x1\" is smoothed out: its bandwidth rose past 10 times its "
                    "range and is set at 1e+06 times it, where its kernel weighs every pair of rows alike; the fit is "
                    "a straight line along it, one slope over its whole range\n") != std::string::npos);
  const Result nw = run_nwreg({"fit", "-", "-x", "x1,x2", "-y", "y"}, csv);
  REQUIRE(nw.exit_code == 0);
  auto g3 = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return std::string(buf);
  };
  CHECK(nw.err.find("local linear's leave-one-out error is " + g3(reported(ll.out, "loo_mse")) + ", under half of NW's " +
                    g3(reported(nw.out, "loo_mse"))) != std::string::npos);
  CHECK(nw.err.find("smoothed out") == std::string::npos);
}

TEST_CASE("edges: a learned score that explains less than the mean is warned of") {
  const Result r = run_nwreg({"fit", data("mcycle.csv"), "--score", "general"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err == "nwreg: warning: " + data("mcycle.csv") +
                     ": the learned general score's leave-one-out R^2 is -0.567: it predicts y worse than y's mean "
                     "does. Try --score gaussian (a learned bandwidth), --optimizer line-search, or more --epochs\n");
}

TEST_CASE("edges: lowess at every span and iteration answers every row as R does") {
  // tests/golden/make_golden_lowess.R: 40 rows with six gross errors in runs, f = k/40 for
  // k = 2..40, iter 0..5. At 1f9acce --robust with span 2/40 exited 1 ("query 9 ... has no
  // training point within reach"); at b4e6a01 a window whose weighted x spread robustness weights
  // had shrunk got the exact local line, up to 3e14 times the range of y away from lowess's
  // constant at f = 0.1 (24 of 234 fits off). Within 1e-9 of the range with --like lowess, which
  // cuts the window at 0.999 h as clowess does (loess's window, the long form's, moves 2 of the
  // 234 fits by 2.6e-9, at the window's edge).
  const auto g = testing::read_golden("tests/golden/lowess_small.csv");
  const std::size_t n = 40, fits = 39 * 6;
  REQUIRE(g.at("x").size() == fits * n);
  Scratch s;
  std::string csv = "x,y\n";
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) {
    csv += num(std::stod(g.at("x")[i])) + "," + num(std::stod(g.at("y")[i])) + "\n";
    lo = std::min(lo, std::stod(g.at("y")[i])), hi = std::max(hi, std::stod(g.at("y")[i]));
  }
  spit(s / "d.csv", csv);
  for (std::size_t block = 0; block < fits; ++block) {
    const std::size_t first = block * n;
    const std::string f = num(std::stod(g.at("f")[first])), iter = std::to_string(std::stoi(g.at("iter")[first]));
    CAPTURE(f);
    CAPTURE(iter);
    const std::vector<std::string> args = {"predict", (s / "d.csv").string(), "--like", "lowess", "-b", "span:" + f,
                                           "--robust", iter};
    const Result r = run_nwreg(args);
    REQUIRE(r.exit_code == 0);
    const auto out = lines(r.out);
    REQUIRE(out.size() == n + 1);
    for (std::size_t i = 0; i < n; ++i) {
      CAPTURE(i);
      CHECK(std::abs(std::stod(split(out[i + 1])[2]) - std::stod(g.at("fitted")[first + i])) <= 1e-9 * (hi - lo));
    }
  }
}

TEST_CASE("edges: local linear stays the exact weighted line as h shrinks, not NW") {
  // women: the LOO error by weighted least squares at each h (numpy lstsq, every key). At
  // 1f9acce the fit fell to NW between h = 0.254 and 0.256 (LOO 2.017): the slope's pivot about
  // q fell below 1e-10 of its diagonal. Now the line is solved about the weights' mean there.
  const std::string women = "height,weight\n58,115\n59,117\n60,120\n61,123\n62,126\n63,129\n64,132\n65,135\n66,139\n"
                            "67,142\n68,146\n69,150\n70,154\n71,159\n72,164\n";
  const std::vector<std::pair<std::string, double>> want = {{"0.2", 0.14999999999999336},
                                                            {"0.25", 0.1500000000006357},
                                                            {"0.254", 0.1500000000013216},
                                                            {"0.256", 0.150000000001909},
                                                            {"0.3", 0.15000000096295824}};
  for (const auto& h_and_loo : want) {
    const std::string& h = h_and_loo.first;
    const double loo = h_and_loo.second;
    CAPTURE(h);
    const Result r = run_nwreg({"fit", "-", "--method", "local-linear", "-b", h}, women);
    REQUIRE(r.exit_code == 0);
    CHECK(reported(r.out, "loo_mse") == doctest::Approx(loo).epsilon(1e-10));
  }
  // Narrower, the next keys' weights fall below the pruning tolerance (1e-16 of a row's sum)
  // and each window holds one x: its mean. --tolerance 0 keeps them, down to their underflow.
  CHECK(reported(run_nwreg({"fit", "-", "--method", "local-linear", "-b", "0.1"}, women).out, "loo_mse") ==
        doctest::Approx(2.0166666666666666).epsilon(1e-12));
  CHECK(reported(run_nwreg({"fit", "-", "--method", "local-linear", "-b", "0.1", "--tolerance", "0"}, women).out,
                 "loo_mse") == doctest::Approx(0.15).epsilon(1e-10));
}

TEST_CASE("edges: a local polynomial that loses a term is warned of (R's loess uses a pseudo-inverse there)") {
  // R's pressure, loess(span = 0.5, degree = 2, family = "symmetric"): after the robustness
  // iterations some windows keep two weighted points for a quadratic. At 1f9acce nothing was said.
  const std::string pressure = "temperature,pressure\n0,2e-04\n20,0.0012\n40,0.006\n60,0.03\n80,0.09\n100,0.27\n"
                               "120,0.75\n140,1.85\n160,4.2\n180,8.8\n200,17.3\n220,32.1\n240,57\n260,96\n280,157\n"
                               "300,247\n320,376\n340,558\n360,806\n";
  const std::vector<std::string> loess = {"predict", "-", "-b", "span:0.5", "--kernel", "tricube", "--method",
                                          "local-polynomial", "--degree", "2"};
  std::vector<std::string> robust = loess;
  robust.insert(robust.end(), {"--robust", "3"});
  const Result r = run_nwreg(robust, pressure);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err ==
        "nwreg: warning: <stdin>: at 6 of 19 queries the keys that weigh something do not spread along every term of the "
        "local polynomial of degree 2 (too few distinct x, as where --robust leaves few rows): those terms are fitted as "
        "0 there (R's loess uses a pseudo-inverse there, \"pseudoinverse used\", and differs)\n");
  CHECK(run_nwreg(loess, pressure).err.empty());  // every window spread
}

TEST_CASE("edges: JSON --se output records the band's level, interval and critical value") {
  const Result r = run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--grid", "10:30:10", "--se", "--level", "0.9",
                              "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["band"] == Json::parse(R"({"level":0.9,"interval":"rbc","kind":"pointwise"})"));
  const Result s = run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--grid", "10:30:10", "--se", "--simultaneous",
                              "--interval", "plain", "--format", "json"});
  REQUIRE(s.exit_code == 0);
  const Json b = Json::parse(s.out)["band"];
  CHECK(b["interval"] == "plain");
  CHECK(b["kind"] == "simultaneous");
  CHECK(b["critical"].get<double>() > 1.96);  // wider than the pointwise band's z
  CHECK(s.err.find("critical value " + std::to_string(b["critical"].get<double>()).substr(0, 4)) != std::string::npos);
  CHECK(!Json::parse(run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--grid", "10:30:10", "--format", "json"}).out)
             .contains("band"));
}

TEST_CASE("edges: a constant training column has no range to be past") {
  Scratch s;
  spit(s / "t.csv", "x,c,y\n1,5,1\n2,5,2\n3,5,4\n");
  spit(s / "q.csv", "x,c\n2,6\n4,5\n");
  const Result q = run_nwreg({"predict", (s / "t.csv").string(), "-x", "x,c", "-y", "y", "-b", "1,1", "--query",
                              (s / "q.csv").string()});
  REQUIRE(q.exit_code == 0);
  // Only x = 4 lies past x's range [1, 3]; c = 6 is no farther from a constant column than 5 is from itself.
  CHECK(q.err ==
        "nwreg: note: 1 of 2 queries lie past the training x range (farthest: 1 past [1, 3] of \"x\", 0.5 of its range); "
        "their predictions are extrapolated (--out-of-reach empty leaves them empty, error refuses)\n");
}

TEST_CASE("edges: with -x naming the second column, y defaults to the first column that is no x") {
  // At 1f9acce -x x,g took g (the second column) as y too: "-y: column "g" is also an x column".
  const std::string csv = "x,g,y\n1,0,1\n2,1,3\n3,0,2\n4,1,5\n5,0,4\n";
  const Result r = run_nwreg({"fit", "-", "-x", "x,g", "-b", "1,1", "--format", "json"}, csv);
  REQUIRE(r.exit_code == 0);
  CHECK(Json::parse(r.out)["y_column"] == "y");
  // The second column stays the default wherever -x leaves it free.
  CHECK(Json::parse(run_nwreg({"fit", "-", "-x", "y", "-b", "1", "--format", "json"}, csv).out)["y_column"] == "g");
}

TEST_CASE("edges: an adaptive Gaussian bandwidth answers a query near 1e300 with its heaviest key, as Laplace does") {
  // At 1f9acce: "prediction 1 is not finite" (the weights relative to the key overflowed).
  for (const std::string kernel : {"gaussian", "laplace"})
    for (const std::string method : {"nw", "local-linear"}) {
      CAPTURE(kernel);
      CAPTURE(method);
      const Result r = run_nwreg({"predict", data("cars.csv"), "-b", "adaptive:10", "--kernel", kernel, "--method", method,
                                  "--query", "-", "--out-of-reach", "extrapolate"},
                                 "speed\n1e300\n-1e300\n");
      REQUIRE(r.exit_code == 0);
      CHECK(r.out == "speed,prediction\n1e+300,6\n-1e+300,6\n");  // the speed-4 rows (2 and 10), the widest reach
    }
}

TEST_CASE("edges: a local polynomial in two columns is held at its coefficients + 1 neighbours, and says so") {
  // y steps in both columns, no noise: the LOO error alone keeps falling towards bandwidths at
  // which one key carries each row's weight. Local linear (3 coefficients) is held where the
  // kernel weights average 4 effective neighbours.
  std::string csv = "a,b,y\n";
  for (int i = 1; i <= 300; ++i) {
    const double a = std::fmod(i * 0.6180339887498949, 1.0), b = std::fmod(i * 0.7548776662466927, 1.0);
    csv += num(a) + "," + num(b) + "," + num(std::copysign(1.0, std::sin(40 * a)) * std::floor(20 * b)) + "\n";
  }
  const Result r = run_nwreg({"fit", "-", "-x", "a,b", "--method", "local-linear"}, csv);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("nwreg: warning: <stdin>: the bandwidth is held where the kernel weights average 4 effective "
                   "neighbours, the local polynomial's coefficients + 1: with fewer, each row's fit rests on a handful "
                   "of keys and drops terms; the criterion alone would go lower\n") != std::string::npos);
  // NW has no such floor.
  CHECK(run_nwreg({"fit", "-", "-x", "a,b"}, csv).err.find("held where") == std::string::npos);
}

TEST_CASE("edges: --grid-n N with two x columns is the N x N grid over both ranges, the first column slowest") {
  const std::vector<std::string> base = {"predict", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", "2,0.5"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = base;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const Result g = run_nwreg(with({"--grid-n", "3"}));
  REQUIRE(g.exit_code == 0);
  // lstat 1.73 .. 37.97, rm 3.561 .. 8.78: the same rows as --query with those nine points.
  const std::string q = "lstat,rm\n1.73,3.561\n1.73,6.1705\n1.73,8.78\n19.85,3.561\n19.85,6.1705\n19.85,8.78\n"
                        "37.97,3.561\n37.97,6.1705\n37.97,8.78\n";
  const Result r = run_nwreg(with({"--query", "-"}), q);
  REQUIRE(r.exit_code == 0);
  CHECK(g.out == r.out);
  CHECK(std::count(g.out.begin(), g.out.end(), '\n') == 10);
}

TEST_CASE("edges: --plot with two x columns draws the fitted surface, the points on top and a colour bar") {
  Scratch s;
  const std::string svg_path = (s / "surface.svg").string();
  const Result r = run_nwreg({"predict", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", "2,0.5", "--plot",
                              svg_path, "-o", (s / "p.csv").string()});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const std::string svg = slurp(svg_path);
  CHECK(svg.find(">nwreg: h = 2, 0.5 (fixed), n = 506</text>") != std::string::npos);
  CHECK(std::count(svg.begin(), svg.end(), '\n') > 506);
  std::size_t circles = 0;
  for (std::size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
  CHECK(circles == 506);  // every training point
  for (const char* text : {">lstat</text>", ">rm</text>", ">medv</text>", "<g class=\"surface\"", "class=\"colour-bar\""})
    CHECK(svg.find(text) != std::string::npos);
  CHECK(svg.find("grey") == std::string::npos);  // the Gaussian reaches every lattice point
  // The colour bar's bounds bracket the fit over the lattice (120 x 120 over both ranges).
  std::string q = "lstat,rm\n";
  for (int i = 0; i < 120; ++i)
    for (int j = 0; j < 120; ++j)
      q += num(1.73 + (37.97 - 1.73) * i / 119.0) + "," + num(3.561 + (8.78 - 3.561) * j / 119.0) + "\n";
  const Result lattice = run_nwreg({"predict", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", "2,0.5",
                                    "--query", "-"}, q);
  REQUIRE(lattice.exit_code == 0);
  double lo = INFINITY, hi = -INFINITY;
  std::istringstream in(lattice.out);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const double f = std::stod(split(line)[2]);
    lo = std::min(lo, f), hi = std::max(hi, f);
  }
  std::vector<double> bounds;
  const std::string bar = svg.substr(svg.find("class=\"colour-bar\""));
  for (std::size_t at = bar.find("font-size") == std::string::npos ? 0 : bar.find("<text x="); at != std::string::npos;
       at = bar.find("<text x=", at + 1)) {
    const std::size_t open = bar.find('>', at) + 1;
    const std::string label = bar.substr(open, bar.find('<', open) - open);
    if (label != "medv") bounds.push_back(std::stod(label));
  }
  REQUIRE(bounds.size() >= 3);
  const double step = bounds[1] - bounds[0];
  CHECK(bounds.front() <= lo);
  CHECK(bounds.front() > lo - step);
  CHECK(bounds.back() >= hi);
  CHECK(bounds.back() < hi + step);

  // A compact kernel leaves the lattice's empty corners grey, and says so.
  REQUIRE(run_nwreg({"predict", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", "2,0.3", "--kernel",
                     "epanechnikov", "--plot", svg_path, "-o", (s / "p.csv").string()}).exit_code == 0);
  CHECK(slurp(svg_path).find(">grey: no key in reach</text>") != std::string::npos);
}

TEST_CASE("edges: a surface over a column without spread covers the plot, over the range its axis is padded to") {
  // Column c is 7 in every row (and a one-row set has no spread in either): the lattice ran from
  // 7 to 7, its cells had no height, and the picture was grey with no word. Now the cells cover
  // the plot area (560 x 480) as over any other column: rectangles "M xa ya H xb V yb H xa z".
  Scratch s;
  std::string csv = "a,c,y\n";
  for (int i = 0; i < 20; ++i) csv += std::to_string(i / 19.0) + ",7," + std::to_string(0.5 + i / 19.0) + "\n";
  spit(s / "flat.csv", csv);
  spit(s / "one.csv", "a,b,y\n1,2,3\n");
  const std::string svg_path = (s / "surface.svg").string();
  for (const std::string set : {"flat.csv", "one.csv"}) {
    CAPTURE(set);
    const Result r = run_nwreg({"predict", (s / set).string(), "-x", set == "flat.csv" ? "a,c" : "a,b", "-y", "y", "-b",
                                "0.1,1", "--plot", svg_path, "-o", (s / "p.csv").string()});
    REQUIRE(r.exit_code == 0);
    const std::string svg = slurp(svg_path);
    const std::size_t at = svg.find("<g class=\"surface\"");
    REQUIRE(at != std::string::npos);
    const std::string group = svg.substr(at, svg.find("</g>", at) - at);
    double area = 0;
    for (std::size_t d = group.find(" d=\""); d != std::string::npos; d = group.find(" d=\"", d + 1)) {
      std::istringstream path(group.substr(d + 4, group.find('"', d + 4) - d - 4));
      char m, h, v, h2, z;
      double xa, ya, xb, yb, xc;
      while (path >> m >> xa >> ya >> h >> xb >> v >> yb >> h2 >> xc >> z) area += std::abs((xb - xa) * (yb - ya));
    }
    CHECK(area == doctest::Approx(560.0 * 480.0).epsilon(1e-3));
  }
}

TEST_CASE("edges: the surface hatches the lattice points more than 3 bandwidths from every training row") {
  // Brute force over Boston's rows: the 120 x 120 lattice over lstat's and rm's ranges at
  // h = 2, 0.3, each point's nearest row in bandwidths (Euclidean, the Gaussian's norm); with
  // adaptive bandwidths in each row's own, h s_r (s_r its 4th nearest other row's distance in
  // bandwidths of h).
  std::vector<double> lstat, rm;
  {
    std::istringstream in(slurp(data("boston.csv")));
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      const auto f = split(line);
      lstat.push_back(std::stod(f[0]));
      rm.push_back(std::stod(f[1]));
    }
  }
  const std::size_t n = lstat.size();
  auto lattice = [](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    std::vector<double> g;
    for (int i = 0; i < 119; ++i) g.push_back(*lo + (*hi - *lo) * i / 119.0);
    g.push_back(*hi);
    return g;
  };
  const std::vector<double> g1 = lattice(lstat), g2 = lattice(rm);
  auto far_cells = [&](const std::vector<double>& scale) {  // row j (rm) by column i (lstat)
    std::vector<char> far(120 * 120, 0);
    for (int j = 0; j < 120; ++j)
      for (int i = 0; i < 120; ++i) {
        double nearest = INFINITY;
        for (std::size_t r = 0; r < n; ++r)
          nearest = std::min(nearest, std::hypot((g1[i] - lstat[r]) / 2, (g2[j] - rm[r]) / 0.3) / scale[r]);
        far[j * 120 + i] = nearest > 3;
      }
    return far;
  };

  Scratch s;
  const std::string svg_path = (s / "surface.svg").string();
  auto hatched_cells = [&](const std::string& bandwidth) {
    const Result r = run_nwreg({"predict", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", bandwidth, "--plot",
                                svg_path, "-o", (s / "p.csv").string()});
    REQUIRE(r.exit_code == 0);
    const std::string svg = slurp(svg_path);
    CHECK(svg.find(">hatched: more than 3 bandwidths from the data</text>") != std::string::npos);
    // The hatched rectangles, "M xa ya H xb V yb H xa z": cells 560 / 120 pixels wide and 480 / 120
    // high, rows from the bottom (rm's least at y = 530).
    const std::size_t at = svg.find("<g class=\"far\"");
    REQUIRE(at != std::string::npos);
    std::istringstream path(svg.substr(svg.find(" d=\"", at) + 4, svg.find("\"/>", at) - svg.find(" d=\"", at) - 4));
    std::vector<char> hatched(120 * 120, 0);
    char m, h, v, h2, z;
    double xa, ya, xb, yb, xa2;
    while (path >> m >> xa >> ya >> h >> xb >> v >> yb >> h2 >> xa2 >> z) {
      REQUIRE(m == 'M');
      const int row = static_cast<int>(std::lround((530 - yb) / 4.0));
      REQUIRE(row >= 0);
      REQUIRE(row < 120);
      CHECK(std::abs(ya - yb) == doctest::Approx(4.0).epsilon(0.01));
      const long first = std::lround((xa - 80) / (560 / 120.0)), last = std::lround((xb - 80) / (560 / 120.0));
      REQUIRE(first >= 0);
      REQUIRE(last <= 120);
      for (long i = first; i < last; ++i) hatched[row * 120 + i] = 1;
    }
    return hatched;
  };

  const std::vector<char> fixed = far_cells(std::vector<double>(n, 1.0));
  const auto count = [](const std::vector<char>& cells) { return std::count(cells.begin(), cells.end(), 1); };
  REQUIRE(count(fixed) > 100);  // the empty corners
  REQUIRE(count(fixed) < 120 * 120 / 2);
  CHECK(hatched_cells("2,0.3") == fixed);

  std::vector<double> own(n);
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<double> d;
    for (std::size_t o = 0; o < n; ++o)
      if (o != r) d.push_back(std::hypot((lstat[o] - lstat[r]) / 2, (rm[o] - rm[r]) / 0.3));
    std::nth_element(d.begin(), d.begin() + 3, d.end());
    own[r] = d[3];
  }
  const std::vector<char> adaptive = far_cells(own);
  INFO("adaptive: ", count(adaptive), " cells far");
  REQUIRE(count(adaptive) > 100);
  REQUIRE(count(adaptive) < 120 * 120 / 2);
  REQUIRE(adaptive != fixed);
  CHECK(hatched_cells("adaptive:4:2,0.3") == adaptive);

  // A wide bandwidth reaches every lattice point: nothing hatched, nothing said.
  REQUIRE(run_nwreg({"predict", data("boston.csv"), "-x", "lstat,rm", "-y", "medv", "-b", "20,3", "--plot", svg_path,
                     "-o", (s / "p.csv").string()}).exit_code == 0);
  CHECK(slurp(svg_path).find("hatched") == std::string::npos);
}

TEST_CASE("edges: test refuses rows past the chi-square calibration's limit before choosing a bandwidth") {
  // At 1f9acce 2e5 rows worked 9 s (the default df:6 bandwidth) before this refusal. df:1e5 is
  // out of range here: the bandwidth is not even tried.
  std::string csv = "x,y\n";
  for (int i = 0; i < 5001; ++i) csv += std::to_string(i) + "," + std::to_string(i % 7) + "\n";
  const std::string refusal =
      "nwreg: error: the chi-square calibration forms n x n matrices (memory and time grow as n^2 and n^3): at most "
      "5000 rows, got 5001; use the permutation calibration (--permutations B), or test a random subset of the rows\n";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"test", "-", "-b", "df:100000"},
                                                std::vector<std::string>{"test", "-", "-b", "1", "--permutations", "0"}}) {
    const Result r = run_nwreg(args, csv);
    CHECK(r.exit_code == 1);
    CHECK(r.err == refusal);
  }
}

TEST_CASE("edges: a constant y is said, not taken for a fit that interpolates") {
  // At 1f9acce: h = 0.25 and "the fit nearly interpolates" (the LOO error is 0 at every h).
  const std::string csv = "x,y\n1,5\n2,5\n3,5\n4,5\n5,5\n6,5\n";
  for (const std::string method : {"nw", "local-linear"}) {
    CAPTURE(method);
    const Result r = run_nwreg({"fit", "-", "--method", method}, csv);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err == "nwreg: warning: <stdin>: y is constant (5 in every row): every bandwidth fits it exactly; h is set "
                   "at 4 times the x range, the fit that constant\n");
    CHECK(reported("\n" + r.out, "bandwidth") == 20);  // 4 x (6 - 1)
    CHECK(reported(r.out, "loo_mse") == 0);
  }
  // Rows of weight 0 do not count: the others' y is constant.
  const Result w = run_nwreg({"fit", "-", "--sample-weight", "w"}, "x,y,w\n1,5,1\n2,5,1\n3,9,0\n4,5,1\n");
  REQUIRE(w.exit_code == 0);
  CHECK(w.err.find("y is constant (5 in every row of positive weight)") != std::string::npos);
}

TEST_CASE("edges: a nearest-neighbour bandwidth's report gives the range of its bandwidths, not the scale alone") {
  // At 1f9acce `bandwidth: 1` was all: the scale. knn:K's bandwidth at row j (left out) is the
  // distance to its K-th nearest other row: min, median and max over the rows, by brute force.
  std::vector<double> x;
  {
    std::istringstream in(slurp(data("mcycle.csv")));
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) x.push_back(std::stod(split(line)[0]));
  }
  for (std::size_t K : {1, 10, 40}) {
    CAPTURE(K);
    std::vector<double> h;
    for (std::size_t j = 0; j < x.size(); ++j) {
      std::vector<double> dist;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (i != j) dist.push_back(std::abs(x[i] - x[j]));
      std::nth_element(dist.begin(), dist.begin() + static_cast<long>(K - 1), dist.end());
      h.push_back(dist[K - 1]);
    }
    std::sort(h.begin(), h.end());
    const Result r = run_nwreg({"fit", data("mcycle.csv"), "-b", "knn:" + std::to_string(K)});
    REQUIRE(r.exit_code == 0);
    // 133 rows: the median is the 67th. A distance of 0 (repeated times) is widened to 1e-12 or
    // so by the engine (a bandwidth of 0 weighs nothing).
    REQUIRE(x.size() == 133);
    CHECK(reported(r.out, "reach_min") == doctest::Approx(h.front()).epsilon(1e-12).scale(10));
    CHECK(reported(r.out, "reach_median") == doctest::Approx(h[66]).epsilon(1e-12).scale(10));
    CHECK(reported(r.out, "reach_max") == doctest::Approx(h.back()).epsilon(1e-12).scale(10));
  }
  // A fixed bandwidth has no such lines.
  CHECK(run_nwreg({"fit", data("mcycle.csv"), "-b", "2"}).out.find("reach") == std::string::npos);
}

TEST_CASE("edges: --like loess and --like lowess are R's calls in one word, a span with another kernel is noted") {
  // R 4.2: predict(loess(eruptions ~ waiting, faithful, control = loess.control(surface =
  // "direct")), data.frame(waiting = 50)) and lowess(cars$speed, cars$dist) at speed 10.
  const Result loess = run_nwreg({"predict", data("faithful.csv"), "-x", "waiting", "-y", "eruptions", "--like", "loess",
                                  "--grid", "50:51:1"});
  REQUIRE(loess.exit_code == 0);
  CHECK(loess.err.empty());
  CHECK(std::stod(split(loess.out.substr(loess.out.find('\n') + 1))[1]) == doctest::Approx(1.91736130350361).epsilon(1e-12));
  const Result lowess = run_nwreg({"predict", data("cars.csv"), "--like", "lowess", "--grid", "10:11:1"});
  REQUIRE(lowess.exit_code == 0);
  CHECK(std::stod(split(lowess.out.substr(lowess.out.find('\n') + 1))[1]) == doctest::Approx(21.2803125785285).epsilon(1e-12));
  // Options given override the preset: loess of degree 1 is the span with tricube and local linear.
  CHECK(run_nwreg({"predict", data("cars.csv"), "--like", "loess", "--method", "local-linear", "-b", "span:0.5",
                   "--grid", "10:20:5"}).out ==
        run_nwreg({"predict", data("cars.csv"), "-b", "span:0.5", "--kernel", "tricube", "--method", "local-linear",
                   "--grid", "10:20:5"}).out);
  // lowess without its iterations: --robust 0 given.
  CHECK(run_nwreg({"fit", data("cars.csv"), "--like", "lowess", "--robust", "0"}).out.find("robust") == std::string::npos);
  // lowess's window (keys past 0.999 h weigh 0) goes into the model file and comes back out of
  // it; on 300 rows of uniform x some queries have a key just inside h, which loess's window
  // (the long form's) weighs.
  Scratch s;
  std::string csv = "x,y\n";
  std::uint64_t u = 7;
  for (int i = 0; i < 300; ++i) {
    u = u * 6364136223846793005ULL + 1442695040888963407ULL;
    const double x = static_cast<double>(u >> 11) * 0x1p-53 * 10;
    csv += num(x) + "," + num(std::sin(x) + std::cos(5 * x)) + "\n";
  }
  spit(s / "u.csv", csv);
  const std::string train = (s / "u.csv").string(), model = (s / "lowess.json").string();
  REQUIRE(run_nwreg({"fit", train, "--like", "lowess", "-b", "span:0.3", "-o", model}).exit_code == 0);
  CHECK(slurp(model).find("\"window\": \"lowess\"") != std::string::npos);
  const Result direct = run_nwreg({"predict", train, "--like", "lowess", "-b", "span:0.3", "--grid-n", "400"});
  REQUIRE(direct.exit_code == 0);
  CHECK(run_nwreg({"predict", train, "--model", model, "--grid-n", "400"}).out == direct.out);
  CHECK(run_nwreg({"predict", train, "-b", "span:0.3", "--kernel", "tricube", "--method", "local-linear", "--robust", "3",
                   "--grid-n", "400"}).out != direct.out);
  REQUIRE(run_nwreg({"fit", train, "--like", "loess", "-o", (s / "loess.json").string()}).exit_code == 0);
  CHECK(slurp(s / "loess.json").find("\"window\"") == std::string::npos);
  // A span alone weighs by the Gaussian: said, once.
  const Result plain = run_nwreg({"predict", data("faithful.csv"), "-x", "waiting", "-y", "eruptions", "-b", "span:0.75",
                                  "--grid", "50:51:1"});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.err == "nwreg: note: -b span:0.75 weighs by the gaussian kernel, which loess never uses (loess weighs by "
                     "tricube): --like loess is R's loess(y ~ x, surface = \"direct\"), --like lowess its lowess(x, y)\n");
}

TEST_CASE("edges: --date-format reads dates in a local form, in training and query files, written back as ISO") {
  Scratch s;
  spit(s / "us.csv", "date,temp\n05/01/1973,67\n05/02/1973,72\n05/03/1973,74\n05/04/1973,62\n05/05/1973,65\n");
  spit(s / "iso.csv", "date,temp\n1973-05-01,67\n1973-05-02,72\n1973-05-03,74\n1973-05-04,62\n1973-05-05,65\n");
  spit(s / "q.csv", "date\n05/02/1973\n1973-05-03\n");  // ISO stamps are still read
  const Result us = run_nwreg({"predict", (s / "us.csv").string(), "-b", "1d", "--date-format", "%m/%d/%Y", "--query",
                               (s / "q.csv").string()});
  REQUIRE(us.exit_code == 0);
  const Result iso = run_nwreg({"predict", (s / "iso.csv").string(), "-b", "1d", "--grid", "1973-05-02/1973-05-04/1d"});
  REQUIRE(iso.exit_code == 0);
  CHECK(us.out == iso.out);
  CHECK(us.out.rfind("date,prediction\n1973-05-02,", 0) == 0);
}

TEST_CASE("edges: under --out-of-reach empty a query past the data weighs no key in the weights file") {
  // Its prediction is left empty; at 87dc890 its weight row held the extrapolated weights (summing
  // to 1) all the same. Now a row of 0, as a query no key reaches gets.
  Scratch s;
  const Result r = run_nwreg({"predict", data("mcycle.csv"), "--grid", "56:60:2", "--out-of-reach", "empty", "--weights",
                              (s / "w.csv").string()});
  REQUIRE(r.exit_code == 0);
  CHECK(lines(r.out) == std::vector<std::string>{"times,prediction", "56,2.063740763642641", "58,"});
  const auto w = lines(slurp(s / "w.csv"));
  REQUIRE(w.size() == 3);
  for (std::size_t row : {1, 2}) {
    const auto cells = split(w[row]);
    REQUIRE(cells.size() == 134);
    double sum = 0;
    for (std::size_t i = 1; i < cells.size(); ++i) sum += std::stod(cells[i]);
    CHECK(sum == doctest::Approx(row == 1 ? 1.0 : 0.0).epsilon(1e-12));
  }
}

TEST_CASE("edges: a sharded run says once, in shard 1, how many of all its queries lie past the data") {
  // At 87dc890 each shard with such queries printed its own note, counting only its slice.
  const Result whole = run_nwreg({"predict", data("mcycle.csv"), "--grid", "0:70:5"});
  REQUIRE(whole.exit_code == 0);
  CHECK(whole.err.rfind("nwreg: note: 3 of 14 queries lie past the training x range", 0) == 0);
  std::string joined;
  for (const char* k : {"1/3", "2/3", "3/3"}) {
    const Result r = run_nwreg({"predict", data("mcycle.csv"), "--grid", "0:70:5", "--shard", k});
    REQUIRE(r.exit_code == 0);
    CHECK(r.err == (std::string(k) == "1/3" ? whole.err : ""));
    joined += r.out;
  }
  CHECK(joined == whole.out);
}

TEST_CASE("edges: a given span whose leave-one-out leaves a row alone still reports its in-sample criterion") {
  // mcycle at span:0.05 (tricube, 6 of 133 rows a window): some row left out has no other key of
  // positive weight in its window, so the LOO error is undefined; AICc is not. The LOO
  // statistics are left out and the criterion stands, as at c17db9f (the values over every row
  // made by the span's chooser; the statistics' pass would refuse the row).
  const Result r = run_nwreg({"fit", data("mcycle.csv"), "-b", "span:0.05", "--kernel", "tricube", "--criterion", "aicc"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("loo_mse: none\n") != std::string::npos);
  CHECK(r.out.find("df: 44.2004152185") != std::string::npos);
  CHECK(r.out.find("criterion: aicc 7.88687088418") != std::string::npos);
}

TEST_CASE("edges: queries far from every training row inside the range are said once") {
  // mcycle's times jump from 4 to 6.2: at h = 0.25 the query at 5 is 1 from 4, 4 bandwidths;
  // 4.5 (2) and 5.5 (2.8) are within 3.
  const std::string note =
      "nwreg: note: 1 of 5 queries not past the training x range lie more than 3 bandwidths from every training row "
      "(farthest: query 3, 4 bandwidths); their answers rest on rows far from them, where a local fit extrapolates and "
      "NW repeats the nearest rows' values\n";
  const Result r = run_nwreg({"predict", data("mcycle.csv"), "-b", "0.25", "--grid", "4:6.5:0.5"});
  REQUIRE(r.exit_code == 0);
  CHECK(lines(r.out).size() == 6);
  CHECK(r.err == note);
  // The same from a stream, said once at the end; a query past the range has its own note only.
  const Result st = run_nwreg({"predict", data("mcycle.csv"), "-b", "0.25", "--query", "-", "--method", "local-linear"},
                              "times\n4\n4.5\n5\n5.5\n6\n");
  REQUIRE(st.exit_code == 0);
  CHECK(st.err == note);
  const Result past = run_nwreg({"predict", data("mcycle.csv"), "-b", "0.25", "--grid", "58:62:2"});
  CHECK(past.err.find("past the training x range (") != std::string::npos);
  CHECK(past.err.find("bandwidths from every") == std::string::npos);
  // Two columns: (5, 5) is sqrt(32) = 5.66 bandwidths from (1, 1), its nearest row; (0.5, 0.5) is near.
  const std::string square = "a,b,y\n0,0,1\n1,0,2\n0,1,3\n1,1,4\n10,10,5\n";
  Scratch s;
  spit(s / "q.csv", "a,b\n5,5\n0.5,0.5\n");
  const Result t2 = run_nwreg({"predict", "-", "-x", "a,b", "-y", "y", "-b", "1,1", "--query", (s / "q.csv").string()}, square);
  REQUIRE(t2.exit_code == 0);
  auto far = [](const std::string& counts, const std::string& farthest) {
    return "nwreg: note: " + counts + " not past the training x range lie more than 3 bandwidths from every training row (farthest: " +
           farthest + " bandwidths); their answers rest on rows far from them, where a local fit extrapolates and NW repeats the "
                      "nearest rows' values\n";
  };
  CHECK(t2.err == far("1 of 2 queries", "query 1, 5.66"));
  // Laplace measures in its own norm, the sum of |u|: (0, 0) is 3.9 from (3.9, 0) and 4.2 from (2.1, 2.1).
  spit(s / "lap.csv", "a,b,y\n2.1,2.1,1\n3.9,0,2\n-20,-20,3\n20,20,4\n");
  spit(s / "origin.csv", "a,b\n0,0\n1,1\n");
  const Result lap = run_nwreg({"predict", (s / "lap.csv").string(), "-x", "a,b", "-y", "y", "-b", "1,1", "--kernel", "laplace",
                                "--query", (s / "origin.csv").string()});
  CHECK(lap.err == far("1 of 2 queries", "query 1, 3.9"));
  // A categorical column costs nothing: (5, A) is 0 from the row (5, B) whatever lambda.
  spit(s / "cat.csv", "a,g,y\n0,A,1\n1,A,2\n10,A,3\n5,B,4\n0,B,5\n10,B,6\n");
  spit(s / "catq.csv", "a,g\n5,A\n");
  for (const char* lambda : {"1e-4", "0.5"})
    CHECK(run_nwreg({"predict", (s / "cat.csv").string(), "-x", "a,g", "-y", "y", "--categorical", "g", "-b",
                     std::string("1,") + lambda, "--query", (s / "catq.csv").string()})
              .err.empty());
  // Distances past the largest double's square root neither overflow nor lose the farthest.
  spit(s / "tiny.csv", "a,b,y\n0,0,1\n1,1,2\n");
  spit(s / "tinyq.csv", "a,b\n0.25,0.25\n0.5,0.5\n");
  CHECK(run_nwreg({"predict", (s / "tiny.csv").string(), "-x", "a,b", "-y", "y", "-b", "1e-160,1e-160", "--query",
                   (s / "tinyq.csv").string()})
            .err == far("2 of 2 queries", "query 2, 7.07e+159"));
  // Just past 3: never printed as 3.
  CHECK(run_nwreg({"predict", "-", "-b", "1", "--grid", "3.0004:3.0005:1"}, "x,y\n0,1\n10,2\n").err ==
        "nwreg: note: 1 of 1 query not past the training x range lies more than 3 bandwidths from every training row "
        "(farthest: query 1, 3.0004 bandwidths); their answers rest on rows far from them, where a local fit extrapolates "
        "and NW repeats the nearest rows' values\n");
  // Adaptive bandwidths: each row's distance in its own bandwidth, h s_i (s_i its 6th nearest
  // other row's distance), the least over the rows, here by brute force. Two columns, two
  // clusters of 64 rows (the k-d tree's nodes bound the scales), and one column with a gap (the
  // tree over blocks of keys).
  // Laplace measures both in its own norm, the sum of |x_k - q_k|.
  auto adaptive_far = [](const std::vector<std::vector<double>>& x, const std::vector<double>& q, bool l1 = false) {
    auto dist = [l1](const std::vector<double>& a, const std::vector<double>& b) {
      double r = 0;
      for (std::size_t k = 0; k < a.size(); ++k) r += l1 ? std::abs(a[k] - b[k]) : (a[k] - b[k]) * (a[k] - b[k]);
      return l1 ? r : std::sqrt(r);
    };
    double best = INFINITY;
    for (std::size_t i = 0; i < x.size(); ++i) {
      std::vector<double> others;
      for (std::size_t j = 0; j < x.size(); ++j)
        if (j != i) others.push_back(dist(x[i], x[j]));
      std::nth_element(others.begin(), others.begin() + 5, others.end());
      best = std::min(best, dist(q, x[i]) / others[5]);
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", best);
    return std::string(text);
  };
  std::string clusters = "a,b,y\n";
  std::vector<std::vector<double>> cx;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      for (double c : {0.0, 5.0}) {
        cx.push_back({c + i / 10.0, c + j / 10.0});
        clusters += num(cx.back()[0]) + "," + num(cx.back()[1]) + "," + std::to_string(i * j) + "\n";
      }
  spit(s / "clusters.csv", clusters);
  spit(s / "clustersq.csv", "a,b\n2.5,2.5\n0.5,5\n0.3,0.3\n");
  const std::string two_far = adaptive_far(cx, {0.5, 5});
  CHECK(two_far == "19.3");
  CHECK(adaptive_far(cx, {2.5, 2.5}) == "11.4");
  CHECK(run_nwreg({"predict", (s / "clusters.csv").string(), "-x", "a,b", "-y", "y", "-b", "adaptive:6:1,1", "--query",
                   (s / "clustersq.csv").string()})
            .err == far("2 of 3 queries", "query 2, " + two_far));
  // A row of sample weight 0 at the far query is no row here (its own scale is 0.1 from the
  // cluster's corner (0.7, 5): the query would be 0 from it).
  std::string weighed = "a,b,y,w\n0.5,5,0,0\n";
  for (const auto& x : cx) weighed += num(x[0]) + "," + num(x[1]) + ",1,1\n";
  spit(s / "weighed.csv", weighed);
  CHECK(run_nwreg({"predict", (s / "weighed.csv").string(), "-x", "a,b", "-y", "y", "--sample-weight", "w", "-b",
                   "adaptive:6:1,1", "--query", (s / "clustersq.csv").string()})
            .err.find("(farthest: query 2, " + two_far + " bandwidths)") != std::string::npos);
  // The least is not always in the nearest box: a tight cluster (spacing 0.01) 7 from the
  // query, a loose one (spacing 1) 21 from it, whose rows' own bandwidths are 100 times wider.
  std::string mixed = "a,b,y\n";
  std::vector<std::vector<double>> mx;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      for (double c : {0.0, 20.0}) {
        const double step = c == 0 ? 0.01 : 1.0;
        mx.push_back({c + i * step, c + j * step});
        mixed += num(mx.back()[0]) + "," + num(mx.back()[1]) + "," + std::to_string((i + j) % 7) + "\n";
      }
  spit(s / "mixed.csv", mixed);
  spit(s / "mixedq.csv", "a,b\n5,5\n0.05,0.05\n12,12\n");
  for (const bool laplace : {false, true}) {
    const std::string mixed_far = adaptive_far(mx, {5, 5}, laplace);
    CHECK(mixed_far == (laplace ? "10" : "9.49"));  // from (20, 20): the tight cluster is some 350 of its own away
    CHECK(run_nwreg({"predict", (s / "mixed.csv").string(), "-x", "a,b", "-y", "y", "-b", "adaptive:6:1,1", "--kernel",
                     laplace ? "laplace" : "gaussian", "--query", (s / "mixedq.csv").string()})
              .err == far("2 of 3 queries", "query 1, " + mixed_far));
  }
  std::string gap = "x,y\n";
  std::vector<std::vector<double>> gx;
  for (int i = 0; i <= 50; ++i)
    for (double c : {0.0, 9.0}) {
      gx.push_back({c + i / 50.0});
      gap += num(gx.back()[0]) + "," + std::to_string(i % 5) + "\n";
    }
  const std::string one_far = adaptive_far(gx, {5});
  CHECK(one_far == "33.3");
  CHECK(adaptive_far(gx, {1.2}) == "1.67");
  spit(s / "gap.csv", gap);
  CHECK(run_nwreg({"predict", (s / "gap.csv").string(), "-b", "adaptive:6", "--query", "-"}, "x\n0.2\n1.2\n5\n").err ==
        far("1 of 3 queries", "query 3, " + one_far));
  // Bandwidths that follow the data (knn) and compact kernels (out of reach is --out-of-reach's) say nothing of it.
  CHECK(run_nwreg({"predict", data("mcycle.csv"), "-b", "knn:3", "--grid", "4:6.5:0.5"}).err.empty());
  const Result compact = run_nwreg({"predict", data("mcycle.csv"), "-b", "0.25", "--kernel", "epanechnikov", "--grid",
                                    "4:6.5:0.5", "--out-of-reach", "empty"});
  CHECK(compact.err.find("bandwidths from every") == std::string::npos);
}

TEST_CASE("edges: predict on 2^20 rows and more reads x in place, in x order, with the same answers") {
  // From 2^20 rows of one column `predict` gives its training rows up (put in x order, x read in
  // place by the engines): its answers are NW's sums over every row, here by a brute-force loop.
  const std::size_t n = (std::size_t{1} << 20) + 7;
  std::vector<double> x(n), y(n);
  std::string csv = "x,y\n";
  csv.reserve(n * 40);
  std::uint64_t state = 20261128;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = static_cast<double>(state >> 11) * 0x1p-53;  // input order: not x order
    if (x[i] > 0.5 && x[i] < 0.52) x[i] -= 0.02;            // a gap
    y[i] = std::sin(6 * x[i]) + (i % 7) * 0.01;
    csv += num(x[i]) + "," + num(y[i]) + "\n";
  }
  Scratch s;
  spit(s / "big.csv", csv);
  const Result r = run_nwreg({"predict", (s / "big.csv").string(), "-b", "0.002", "--grid", "0.1:1:0.2", "--threads", "2"});
  REQUIRE(r.exit_code == 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == 6);
  for (std::size_t j = 1; j < out.size(); ++j) {
    const double q = std::stod(split(out[j])[0]);
    long double num_sum = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const long double w = std::exp(-0.5L * ((x[i] - q) / 0.002) * ((x[i] - q) / 0.002));
      num_sum += w * y[i];
      den += w;
    }
    CAPTURE(q);
    CHECK(std::stod(split(out[j])[1]) == doctest::Approx(static_cast<double>(num_sum / den)).epsilon(1e-12));
  }
  // The same bytes where the rows are kept in their order (--weights names them by position).
  const Result kept = run_nwreg({"predict", (s / "big.csv").string(), "-b", "0.002", "--grid", "0.1:0.2:0.2", "--weights",
                                 (s / "w.csv").string(), "--max-weights", "2000000"});
  REQUIRE(kept.exit_code == 0);
  CHECK(lines(kept.out)[1] == out[1]);
  // --se keeps the rows in their order: its band sums residuals over them in that order, and in
  // the gap (the correction taken in part) sorted rows moved the band's last bits.
  const std::vector<std::string> se = {"predict", (s / "big.csv").string(), "-b", "0.0033", "--grid", "0.505:0.52:0.005", "--se"};
  std::vector<std::string> plotted = se;
  plotted.insert(plotted.end(), {"--plot", (s / "p.svg").string()});  // (--plot keeps the rows' order)
  const Result banded = run_nwreg(se);
  REQUIRE(banded.exit_code == 0);
  CHECK(banded.out == run_nwreg(plotted).out);
}
