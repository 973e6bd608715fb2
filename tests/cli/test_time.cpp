// Time as x, on files made like real ones: R's write.csv2 with dates, ISO stamps with offsets
// across a daylight-saving change, a daily series with gaps, gzip, and a pipe answered one
// query at a time. Expected values come from a plain Gaussian NW loop written out here.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "nwreg/base/numbers.h"

using namespace clitest;
using Json = nlohmann::json;

namespace {

// Gaussian NW at q: sum_i exp(-(x_i - q)^2 / (2 h^2)) y_i / sum_i exp(...).
double nw(const std::vector<double>& x, const std::vector<double>& y, double h, double q) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = std::exp(-0.5 * ((x[i] - q) / h) * ((x[i] - q) / h));
    num += w * y[i];
    den += w;
  }
  return num / den;
}

double number(const std::string& text) { return *nwreg::parse_double(text); }

}  // namespace

TEST_CASE("time: R's write.csv2 output with dates: row names, semicolons, decimal commas") {
  Scratch s;
  // As R 4.2 writes write.csv2(data.frame(date = as.Date("2024-03-01") + 0:3, temp = ...)).
  spit(s / "r.csv", "\"\";\"date\";\"temp\"\n\"1\";2024-03-01;2,5\n\"2\";2024-03-02;3,25\n\"3\";2024-03-03;4\n\"4\";2024-03-04;1,5\n");
  const Result r = run_nwreg({"predict", (s / "r.csv").string(), "--decimal", ",", "-b", "1d", "--keep", "1"});
  REQUIRE(r.exit_code == 0);
  const auto out = lines(r.out);
  REQUIRE(out.size() == 5);
  CHECK(out[0] == "1,date,temp,prediction,residual");  // the row names kept, then x, y, fit, residual
  const std::vector<double> day = {0, 1, 2, 3}, temp = {2.5, 3.25, 4, 1.5};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto f = split(out[i + 1]);
    CHECK(f[0] == std::to_string(i + 1));
    CHECK(f[1] == "2024-03-0" + std::to_string(i + 1));  // dates stay dates
    CHECK(number(f[2]) == temp[i]);
    const double expect = nw(day, temp, 1, day[i]);
    CHECK(number(f[3]) == doctest::Approx(expect).epsilon(1e-12));
    CHECK(number(f[4]) == temp[i] - number(f[3]));
  }
  // Days as seconds: 1d is 86400 s, the same fit.
  CHECK(run_nwreg({"predict", (s / "r.csv").string(), "--decimal", ",", "-b", "86400"}).out ==
        run_nwreg({"predict", (s / "r.csv").string(), "--decimal", ",", "-b", "24h"}).out);
}

TEST_CASE("time: stamps with offsets are instants, a daylight-saving change leaves the series even") {
  Scratch s;
  // Berlin, 2024-03-31: 01:30+01:00 is 00:30Z, then the clocks jump from 02:00 to 03:00.
  const std::string stamps = "t,load\n2024-03-31T00:30:00+01:00,5\n2024-03-31T01:30:00+01:00,7\n"
                             "2024-03-31T03:30:00+02:00,6\n2024-03-31 04:30:00.5+02:00,9\n2024-03-31T03:30:00Z,8\n";
  spit(s / "t.csv", stamps);
  // The same instants as epoch seconds: numbers stay numbers.
  spit(s / "e.csv", "t,load\n1711841400,5\n1711845000,7\n1711848600,6\n1711852200.5,9\n1711855800,8\n");
  const Result t = run_nwreg({"predict", (s / "t.csv").string(), "-b", "1.5h"});
  const Result e = run_nwreg({"predict", (s / "e.csv").string(), "-b", "5400"});
  REQUIRE(t.exit_code == 0);
  REQUIRE(e.exit_code == 0);
  const auto tl = lines(t.out), el = lines(e.out);
  REQUIRE(tl.size() == 6);
  CHECK(tl[1].rfind("2024-03-30T23:30:00Z,5,", 0) == 0);
  CHECK(tl[2].rfind("2024-03-31T00:30:00Z,7,", 0) == 0);
  CHECK(tl[3].rfind("2024-03-31T01:30:00Z,6,", 0) == 0);
  CHECK(tl[4].rfind("2024-03-31T02:30:00.5Z,9,", 0) == 0);
  CHECK(tl[5].rfind("2024-03-31T03:30:00Z,8,", 0) == 0);
  CHECK(el[1].rfind("1711841400,5,", 0) == 0);
  for (std::size_t i = 1; i < 6; ++i) {  // the same fit, x written two ways
    const auto a = split(tl[i]), b = split(el[i]);
    CHECK(a[2] == b[2]);
    CHECK(a[3] == b[3]);
  }
  // fit reports the bandwidth in seconds and readably; the model file says so too.
  const Result f = run_nwreg({"fit", (s / "t.csv").string(), "-b", "90min", "-o", (s / "m.json").string()});
  CHECK(f.out.find("bandwidth: 5400\nbandwidth_readable: 1.5 h\n") == 0);
  const Json m = Json::parse(slurp(s / "m.json"));
  CHECK(m["bandwidth"] == Json::array({5400.0}));
  CHECK(m["bandwidth_readable"] == Json::array({"1.5 h"}));
  CHECK(m["x_kinds"] == Json::array({"time"}));
  // A gzip-compressed copy reads the same.
  REQUIRE(std::system(("gzip -c " + (s / "t.csv").string() + " > " + (s / "t.csv.gz").string()).c_str()) == 0);
  CHECK(run_nwreg({"predict", (s / "t.csv.gz").string(), "-b", "1.5h"}).out == t.out);
  // Queries between instants with the model: a grid by STEP, and --grid-n.
  const Result g = run_nwreg({"predict", (s / "t.csv").string(), "--model", (s / "m.json").string(), "--grid",
                              "2024-03-31T00:00Z/2024-03-31T02:00Z/30min"});
  CHECK(lines(g.out) == std::vector<std::string>{"t,prediction",
                                                 "2024-03-31T00:00:00Z," + split(lines(g.out)[1])[1],
                                                 "2024-03-31T00:30:00Z," + split(lines(g.out)[2])[1],
                                                 "2024-03-31T01:00:00Z," + split(lines(g.out)[3])[1],
                                                 "2024-03-31T01:30:00Z," + split(lines(g.out)[4])[1]});
  const std::vector<double> x = {1711841400, 1711845000, 1711848600, 1711852200.5, 1711855800}, y = {5, 7, 6, 9, 8};
  CHECK(number(split(lines(g.out)[2])[1]) == doctest::Approx(nw(x, y, 5400, 1711845000)).epsilon(1e-12));
  const auto n = lines(run_nwreg({"predict", (s / "t.csv").string(), "-b", "1h", "--grid-n", "3"}).out);
  REQUIRE(n.size() == 4);
  CHECK(n[1].rfind("2024-03-30T23:30:00Z,", 0) == 0);
  CHECK(n[2].rfind("2024-03-31T01:30:00Z,", 0) == 0);
  CHECK(n[3].rfind("2024-03-31T03:30:00Z,", 0) == 0);
}

TEST_CASE("time: a daily series with gaps: --na skip, --keep, a grid of days, a query file, JSON") {
  Scratch s;
  const std::string aq = data("airquality_daily.csv");
  const Result r = run_nwreg({"predict", aq, "-y", "Ozone", "--na", "skip", "-b", "3d", "--keep", "Temp"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err == "nwreg: dropped 37 training rows with missing values from " + aq + " (first: line 6)\n");
  const auto out = lines(r.out);
  REQUIRE(out.size() == 117);
  CHECK(out[0] == "Temp,date,Ozone,prediction,residual");
  CHECK(out[1].rfind("67,1973-05-01,41,", 0) == 0);
  CHECK(out[5].rfind("66,1973-05-06,28,", 0) == 0);  // 1973-05-05 had no ozone reading
  for (std::size_t i = 1; i < out.size(); ++i) {  // residual = y - prediction, exactly
    const auto f = split(out[i]);
    CHECK(number(f[4]) == number(f[2]) - number(f[3]));
  }
  const Result num = run_nwreg({"predict", aq, "-y", "Ozone", "--na", "skip", "-b", "3d", "--format", "json"});
  const Json j = Json::parse(num.out);
  CHECK(j["x_kinds"] == Json::array({"date"}));
  CHECK(j["predictions"][0]["date"] == "1973-05-01");
  CHECK(j["predictions"][0]["Ozone"] == 41);
  // A grid of whole days stays dates; of hours, date-times.
  CHECK(lines(run_nwreg({"predict", aq, "-y", "Temp", "-b", "3d", "--grid", "1973-06-01/1973-06-03/1d"}).out)[2].rfind(
            "1973-06-02,", 0) == 0);
  CHECK(lines(run_nwreg({"predict", aq, "-y", "Temp", "-b", "3d", "--grid", "1973-06-01/1973-06-02/12h"}).out)[2].rfind(
            "1973-06-01T12:00:00Z,", 0) == 0);
  // A query file of dates and date-times, its own columns kept.
  spit(s / "q.csv", "id,date\na,1973-07-04\nb,1973-07-04T12:00Z\n");
  const auto q = lines(run_nwreg({"predict", aq, "-y", "Temp", "-b", "3d", "--query", (s / "q.csv").string(), "--keep", "id"}).out);
  REQUIRE(q.size() == 3);
  CHECK(q[0] == "id,date,prediction");
  CHECK(q[1].rfind("a,1973-07-04T00:00:00Z,", 0) == 0);  // one value is not a whole day: all date-times
  CHECK(q[2].rfind("b,1973-07-04T12:00:00Z,", 0) == 0);
  // The fit by hand: daily Temp, 153 days from 1973-05-01, at 1973-07-04 (day 64).
  std::vector<double> days, temp;
  const auto rows = lines(slurp(aq));
  for (std::size_t i = 1; i < rows.size(); ++i) {
    days.push_back(static_cast<double>(i - 1));
    temp.push_back(number(split(rows[i])[1]));
  }
  CHECK(number(split(q[1])[2]) == doctest::Approx(nw(days, temp, 3, 64)).epsilon(1e-12));
  CHECK(number(split(q[2])[2]) == doctest::Approx(nw(days, temp, 3, 64.5)).epsilon(1e-12));
  // Attention weights name their queries and keys as dates too.
  REQUIRE(run_nwreg({"predict", aq, "-b", "3d", "--grid", "1973-06-01/1973-06-03/1d", "--weights",
                     (s / "w.json").string(), "-o", "/dev/null"}).exit_code == 0);
  const Json w = Json::parse(slurp(s / "w.json"));
  CHECK(w["queries"] == Json::array({"1973-06-01", "1973-06-02"}));
  CHECK(w["keys"][0] == "1973-05-01");
  CHECK(w["keys"][152] == "1973-09-30");
  // A plot of a time series has date ticks and says UTC.
  REQUIRE(run_nwreg({"predict", aq, "-y", "Temp", "-b", "3d", "--plot", (s / "p.svg").string(), "-o", "/dev/null"}).exit_code == 0);
  const std::string svg = slurp(s / "p.svg");
  CHECK(svg.find(">date (UTC)</text>") != std::string::npos);
  CHECK(svg.find(">1973-07</text>") != std::string::npos);
  CHECK(svg.find("h = 3 d (fixed)") != std::string::npos);
}

TEST_CASE("time: CSV answers a pipe one query at a time, stamps and kept columns included") {
  // The next query is written only after the answer to the previous one has been read.
  Conversation c({"predict", data("airquality_daily.csv"), "-y", "Temp", "-b", "3d", "--query", "-", "--keep", "id"});
  std::vector<std::string> got;
  got.push_back(c.ask("id,date\n"));  // the header is answered with the output's header
  for (const char* q : {"a,1973-07-04\n", "b,1973-07-04T12:00:00+02:00\n"}) got.push_back(c.ask(q));
  CHECK(c.finish() == 0);
  CHECK(got[0] == "id,date,prediction\n");
  CHECK(got[1].rfind("a,1973-07-04,", 0) == 0);              // a date column answers dates with dates
  CHECK(got[2].rfind("b,1973-07-04T10:00:00Z,", 0) == 0);    // and instants in UTC
  // The same answers as the query file read whole (which writes both as date-times).
  const Result batch = run_nwreg({"predict", data("airquality_daily.csv"), "-y", "Temp", "-b", "3d", "--query", "-"},
                                 "date\n1973-07-04\n1973-07-04T12:00:00+02:00\n");
  CHECK(split(lines(batch.out)[1])[1] + "\n" == split(got[1])[2]);
  CHECK(split(lines(batch.out)[2])[1] + "\n" == split(got[2])[2]);
}

TEST_CASE("time: output names stay unique, JSON keys included, and NaT is a missing value") {
  const Result r = run_nwreg({"predict", "-", "-b", "1", "--format", "jsonl"}, "residual,prediction\n1,2\n2,3\n3,1\n");
  REQUIRE(r.exit_code == 0);
  const auto first = Json::parse(lines(r.out)[0]);
  CHECK(first.size() == 4);
  CHECK(first["residual"] == 1);  // x
  CHECK(first["prediction"] == 2);  // y
  CHECK(first.contains("prediction.1"));
  CHECK(first.contains("residual.1"));
  CHECK(lines(run_nwreg({"predict", "-", "-b", "1", "--keep", "1,1"}, "x,y\n1,2\n2,3\n3,1\n").out)[0] ==
        "x.1,x.2,x,y,prediction,residual");
  const Result nat = run_nwreg({"predict", "-", "-b", "1d", "--na", "skip"}, "t,y\n2024-01-01,1\nNaT,2\n2024-01-03,3\n");
  CHECK(nat.exit_code == 0);
  CHECK(lines(nat.out).size() == 3);
  CHECK(nat.err == "nwreg: dropped 1 training row with missing values from <stdin> (first: line 3)\n");
}

TEST_CASE("time: plot ticks from milliseconds to millennia, the day shown when the axis spans midnight") {
  Scratch s;
  std::string ms = "t,y\n";
  for (int i = 0; i < 40; ++i) ms += "2024-03-01T12:00:00." + std::to_string(100 + 12 * i) + "Z," + std::to_string(i % 7) + "\n";
  spit(s / "ms.csv", ms);
  spit(s / "mid.csv", "t,y\n2024-03-01T22:00Z,1\n2024-03-02T03:00Z,2\n2024-03-02T01:00Z,3\n");
  spit(s / "ky.csv", "t,y\n0000-01-01,1\n5000-01-01,2\n2500-01-01,3\n");
  auto ticks = [&](const std::string& file, const std::string& b) {
    REQUIRE(run_nwreg({"predict", (s / file).string(), "-b", b, "--plot", (s / "p.svg").string(), "-o", "/dev/null"})
                .exit_code == 0);
    const std::string svg = slurp(s / "p.svg");
    const std::size_t from = svg.find("class=\"x-ticks\""), to = svg.find("</g>", from);
    std::vector<std::string> labels;
    for (std::size_t at = svg.find("\">", svg.find("<text", from)); at < to; at = svg.find("\">", svg.find("<text", at + 1)))
      labels.push_back(svg.substr(at + 2, svg.find('<', at) - at - 2));
    return labels;
  };
  CHECK(ticks("ms.csv", "0.05s") == std::vector<std::string>{"12:00:00.1", "12:00:00.2", "12:00:00.3", "12:00:00.4", "12:00:00.5"});
  const auto mid = ticks("mid.csv", "1h");
  REQUIRE(mid.size() >= 3);
  CHECK(mid[0] == "03-01 22:00");
  CHECK(std::find(mid.begin(), mid.end(), "03-02 00:00") != mid.end());
  CHECK(ticks("ky.csv", "100w") == std::vector<std::string>{"0000", "1000", "2000", "3000", "4000", "5000"});
}

TEST_CASE("time: the default columns are the first and second by position, whatever the header names") {
  // A header that names a column "2" (a year, a count) does not move the default y to it.
  const Result r = run_nwreg({"predict", "-", "-b", "1"}, "x,y,2\n1,2,A\n2,3,B\n3,1,C\n");
  CHECK(r.exit_code == 0);
  CHECK(lines(r.out)[0] == "x,y,prediction,residual");
  CHECK(lines(run_nwreg({"predict", "-", "-b", "1", "-y", "2"}, "x,y,2\n1,2,7\n2,3,8\n3,1,9\n").out)[0] ==
        "x,2,prediction,residual");  // a name the user gives is found by name first
}

TEST_CASE("time: one offset throughout is kept in the output, mixed zones are written in UTC") {
  // Issue 25: output was UTC even when every stamp had +01:00.
  Scratch s;
  spit(s / "cet.csv", "t,y\n2024-03-01T00:00+01:00,1\n2024-03-01T06:00+01:00,2\n2024-03-01T12:00+01:00,4\n"
                      "2024-03-01T18:00+01:00,3\n2024-03-02T00:00+01:00,5\n");
  spit(s / "utc.csv", "t,y\n2024-02-29T23:00Z,1\n2024-03-01T05:00Z,2\n2024-03-01T11:00Z,4\n"
                      "2024-03-01T17:00Z,3\n2024-03-01T23:00Z,5\n");
  const Result cet = run_nwreg({"predict", (s / "cet.csv").string(), "-b", "6h"});
  const Result utc = run_nwreg({"predict", (s / "utc.csv").string(), "-b", "6h"});
  REQUIRE(cet.exit_code == 0);
  CHECK(cet.err.empty());
  const auto c = lines(cet.out), u = lines(utc.out);
  REQUIRE(c.size() == 6);
  CHECK(c[1].rfind("2024-03-01T00:00:00+01:00,1,", 0) == 0);
  CHECK(c[5].rfind("2024-03-02T00:00:00+01:00,5,", 0) == 0);
  CHECK(u[1].rfind("2024-02-29T23:00:00Z,1,", 0) == 0);
  for (std::size_t i = 1; i < 6; ++i) CHECK(split(c[i])[2] == split(u[i])[2]);  // the same instants
  // Queries in any zone are written at the training column's offset; the model keeps it.
  REQUIRE(run_nwreg({"fit", (s / "cet.csv").string(), "-b", "6h", "-o", (s / "m.json").string()}).exit_code == 0);
  CHECK(Json::parse(slurp(s / "m.json"))["x_offsets"] == Json::array({"+01:00"}));
  const Result g = run_nwreg({"predict", (s / "cet.csv").string(), "--model", (s / "m.json").string(), "--grid",
                              "2024-02-29T23:00Z/2024-03-01T11:00Z/6h", "--format", "jsonl"});
  CHECK(lines(g.out).size() == 2);
  CHECK(g.out.rfind("{\"t\":\"2024-03-01T00:00:00+01:00\",\"prediction\":", 0) == 0);
  // Two offsets (or Z beside an offset): UTC, as before.
  spit(s / "mixed.csv", "t,y\n2024-03-01T00:00+01:00,1\n2024-03-01T06:00+02:00,2\n2024-03-01T12:00+01:00,4\n");
  CHECK(lines(run_nwreg({"predict", (s / "mixed.csv").string(), "-b", "6h"}).out)[1].rfind("2024-02-29T23:00:00Z,", 0) == 0);
  // A model's offset must be one, for a time column.
  spit(s / "bad.json", R"({"format":"nwreg-model","version":1,"kernel":"gaussian","x_columns":["t"],"y_column":"y",)"
                       R"("n":5,"checksum":"c","bandwidth":[21600],"x_kinds":["time"],"x_offsets":["+25:00"]})");
  const Result bad = run_nwreg({"predict", (s / "cet.csv").string(), "--model", (s / "bad.json").string()});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "nwreg: error: " + (s / "bad.json").string() + ": not a usable nwreg model: \"x_offsets\": entry 1 "
                   "must be an offset such as \"+01:00\", got \"+25:00\"\n");
}

TEST_CASE("time: date-times without a zone are read as UTC, and stderr says so once") {
  Scratch s;
  spit(s / "local.csv", "t,y\n2024-10-27T01:30,1\n2024-10-27T02:30,2\n2024-10-27T02:30,3\n2024-10-27T03:30,4\n");
  const Result r = run_nwreg({"predict", (s / "local.csv").string(), "-b", "1h", "--grid-n", "2"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err == "nwreg: " + (s / "local.csv").string() +
                     ": column \"t\": date-times without a UTC offset are read as UTC, so a local clock's repeated or "
                     "skipped daylight-saving hour goes unseen (write Z or an offset such as +01:00)\n");
  CHECK(lines(r.out)[1].rfind("2024-10-27T01:30:00Z,", 0) == 0);
  // Dates, and stamps with Z or an offset, need no word.
  spit(s / "days.csv", "d,y\n2024-10-26,1\n2024-10-27,2\n2024-10-28,3\n");
  CHECK(run_nwreg({"predict", (s / "days.csv").string(), "-b", "1d", "--grid-n", "2"}).err.empty());
}

TEST_CASE("time: --slope-unit gives a time column's slope per that span") {
  // Issue 25: slopes of a time column were per second only (0.000288 degrees C/s).
  Scratch s;
  spit(s / "days.csv", "d,y\n2024-01-01,1\n2024-01-02,3\n2024-01-03,4\n2024-01-05,8\n2024-01-06,9\n");
  const std::vector<std::string> base = {"predict", (s / "days.csv").string(), "-b", "2d", "--grid",
                                         "2024-01-02/2024-01-05/1d", "--derivative", "--se"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_nwreg(a);
  };
  const Result per_s = with({}), per_d = with({"--slope-unit", "d"}), per_w = with({"--slope-unit", "1w"});
  REQUIRE(per_d.exit_code == 0);
  const auto a = lines(per_s.out), b = lines(per_d.out), w = lines(per_w.out);
  REQUIRE(a.size() == 4);
  CHECK(b[0] == "d,prediction,se,lower,upper,d_d,d_d_se");
  for (std::size_t i = 1; i < a.size(); ++i) {
    CHECK(split(b[i])[1] == split(a[i])[1]);  // predictions unchanged
    CHECK(number(split(b[i])[5]) == number(split(a[i])[5]) * 86400);
    CHECK(number(split(b[i])[6]) == number(split(a[i])[6]) * 86400);
    CHECK(number(split(w[i])[5]) == number(split(a[i])[5]) * 604800);
  }
  CHECK(with({"--slope-unit", "fortnight"}).err ==
        "nwreg: error: --slope-unit: expected a positive time span (ms, s, min, h, d, w, or with a number: 7d, 0.5h), "
        "got \"fortnight\"\n");
  const Result numbers = run_nwreg({"predict", "-", "-b", "1", "--grid-n", "2", "--derivative", "--slope-unit", "d"},
                                   "x,y\n1,2\n2,3\n3,5\n");
  CHECK(numbers.exit_code == 2);
  CHECK(numbers.err == "nwreg: error: --slope-unit: only for a time x column (a number column's slope is per its own unit)\n");
  CHECK(run_nwreg({"predict", (s / "days.csv").string(), "-b", "2d", "--slope-unit", "d"}).err ==
        "nwreg: error: --slope-unit requires --derivative (see nwreg predict --help)\n");
}
