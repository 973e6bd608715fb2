// The real nwreg binary, run on files in data/: stdout, stderr and the exit code.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_helpers.h"
#include "helpers.h"

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace clitest;

TEST_CASE("cli: --version, --help, command help with examples") {
  Result v = run_nwreg({"--version"});
  CHECK(v.exit_code == 0);
  CHECK(v.out == "nwreg 0.1.0\n");
  Result h = run_nwreg({"--help"});
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("fit") != std::string::npos);
  CHECK(h.out.find("predict") != std::string::npos);
  CHECK(h.out.find("Exit codes: 0 ok, 1 data or runtime error, 2 usage error.") != std::string::npos);
  for (const char* cmd : {"fit", "predict"}) {
    Result c = run_nwreg({cmd, "--help"});
    CHECK(c.exit_code == 0);
    CHECK(c.out.find("Examples:") != std::string::npos);
    CHECK(c.out.find("--bandwidth") != std::string::npos);
  }
}

TEST_CASE("cli: usage errors exit 2 with one line, pointing at the command's help") {
  check_error(run_nwreg({}), 2, "A subcommand is required (see nwreg --help)");
  check_error(run_nwreg({"fit", data("synthetic.csv"), "--frob"}), 2,
              "The following argument was not expected: --frob (see nwreg fit --help)");
  check_error(run_nwreg({"predict", data("synthetic.csv"), "--grid", "0:1:0.5", "--grid-n", "5"}), 2,
              "--grid excludes --grid-n (see nwreg predict --help)");
  check_error(run_nwreg({"help", "plot"}), 2, "help: unknown command \"plot\" (known: fit, predict, test)");
}

TEST_CASE("cli: nwreg help [COMMAND] prints what --help prints") {
  const Result all = run_nwreg({"help"}), all_flag = run_nwreg({"--help"});
  CHECK(all.exit_code == 0);
  CHECK(all.out == all_flag.out);
  for (const std::string cmd : {"fit", "predict"}) {
    const Result r = run_nwreg({"help", cmd});
    CHECK(r.exit_code == 0);
    CHECK(r.out == run_nwreg({cmd, "--help"}).out);
    CHECK(r.err.empty());
  }
}

TEST_CASE("cli: TRAIN left out means stdin, unless stdin is a terminal") {
  const Result piped = run_nwreg({"fit"}, slurp(data("mcycle.csv")));
  CHECK(piped.exit_code == 0);
  CHECK(piped.out == run_nwreg({"fit", data("mcycle.csv")}).out);
  CHECK(run_nwreg({"predict", "-b", "1", "--grid", "0:2:1"}, slurp(data("mcycle.csv"))).out ==
        run_nwreg({"predict", data("mcycle.csv"), "-b", "1", "--grid", "0:2:1"}).out);
  // On a terminal (a pseudo-terminal here) nobody is typing a CSV file: a usage error.
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(grantpt(master) == 0);
  REQUIRE(unlockpt(master) == 0);
  const std::string slave = ptsname(master);
  Scratch s;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, slave.c_str(), O_RDONLY | O_NOCTTY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, (s / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (s / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const pid_t pid = spawn_nwreg({"fit"}, &fa);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(slurp(s / "err") ==
        "nwreg: error: TRAIN is required: a CSV file, or - for standard input (it is a terminal here)\n");
}

TEST_CASE("cli: predict at fixed h equals statsmodels through files, reading back every digit") {
  Scratch s;
  const auto g = testing::read_golden("tests/golden/predict_mcycle.csv");
  std::string queries = "times\n";
  std::vector<double> want;
  for (std::size_t i = 0; i < g.at("query").size(); ++i)
    if (g.at("bandwidth")[i] == "2.0") {
      queries += g.at("query")[i] + "\n";
      want.push_back(std::stod(g.at("prediction")[i]));
    }
  spit(s / "q.csv", queries);
  Result r = run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--query", (s / "q.csv").string()});
  REQUIRE(r.exit_code == 0);
  // The grid runs past both ends of the data: extrapolated, and said.
  CHECK(r.err ==
        "nwreg: note: 8 of 174 queries lie past the training x range (farthest: 5.52 past [2.4, 57.6] of \"times\", 0.1 "
        "of its range); their predictions are extrapolated (--out-of-reach empty leaves them empty, error refuses)\n");
  const auto out = lines(r.out);
  REQUIRE(out.size() == want.size() + 1);
  CHECK(out[0] == "times,prediction");
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto comma = out[i + 1].find(',');
    CHECK(std::stod(out[i + 1].substr(0, comma)) == std::stod(lines(queries)[i + 1]));  // exactly
    CHECK(std::stod(out[i + 1].substr(comma + 1)) == doctest::Approx(want[i]).epsilon(1e-9).scale(0));
  }
}

TEST_CASE("cli: stdin and file give the same bytes, and header options") {
  const std::string csv = slurp(data("synthetic.csv"));
  Result a = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:0.25"});
  Result b = run_nwreg({"predict", "-", "-b", "0.3", "--grid", "0:5:0.25"}, csv);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(lines(a.out).size() == 21);
  CHECK(lines(a.out)[0] == "x,prediction");
  // Without its header line, --no-header reads the same rows; the x column is then "x".
  Result c = run_nwreg({"predict", "-", "--no-header", "-b", "0.3", "--grid", "0:5:0.25"}, csv.substr(csv.find('\n') + 1));
  CHECK(c.out == a.out);
  // Columns by index and name, tab-separated.
  Result d = run_nwreg({"predict", "-", "--delimiter", "tab", "-x", "2", "-y", "a", "-b", "1", "--grid", "0:2:1"},
                   "a\tb\n1\t0\n3\t1\n");
  // By hand: keys 0 and 1 with values 1 and 3, h = 1; the far key weighs exp(-1/2).
  const auto dl = lines(d.out);
  REQUIRE(dl.size() == 3);
  CHECK(dl[0] == "b,prediction");
  const double e = std::exp(-0.5);
  CHECK(std::stod(dl[1].substr(2)) == doctest::Approx((1 + 3 * e) / (1 + e)).epsilon(1e-15));
  CHECK(std::stod(dl[2].substr(2)) == doctest::Approx((e + 3) / (1 + e)).epsilon(1e-15));
}

TEST_CASE("cli: queries from stdin, training from a file") {
  Result r = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--query", "-"}, "0\n2.5\n");
  REQUIRE(r.exit_code == 0);
  Result g = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:2.5"});
  CHECK(r.out == g.out);
  check_error(run_nwreg({"predict", "-", "--query", "-", "-b", "1"}, "1,2\n2,3\n"), 2,
              "--query -: standard input already carries the training data");
}

TEST_CASE("cli: --grid-n spans the training range, and default queries are the training x") {
  Result r = run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--grid-n", "3"});
  const auto l = lines(r.out);
  REQUIRE(l.size() == 4);
  CHECK(l[1].rfind("2.4,", 0) == 0);
  CHECK(l[2].rfind("30,", 0) == 0);
  CHECK(l[3].rfind("57.6,", 0) == 0);
  Result f = run_nwreg({"predict", data("mcycle.csv"), "-b", "2"});
  CHECK(lines(f.out).size() == 134);
}

TEST_CASE("cli: fit learns at least as well as statsmodels cv_ls and reports it") {
  const auto g = testing::read_golden("tests/golden/cv_ls.csv");
  Result r = run_nwreg({"fit", data("faithful.csv"), "-x", "waiting", "-y", "eruptions"});
  REQUIRE(r.exit_code == 0);
  const auto l = lines(r.out);
  REQUIRE(l.size() == 11);
  CHECK(l[0].rfind("bandwidth: 3.77", 0) == 0);
  CHECK(l[10] == "criterion: loo " + l[1].substr(9));
  const double loo = std::stod(l[1].substr(9));
  CHECK(loo <= std::stod(g.at("loo_mse")[2]));
  // R^2 = 1 - LOO MSE / var(eruptions), the population variance of faithful's 272 eruptions.
  CHECK(std::stod(l[2].substr(8)) == doctest::Approx(1 - loo / 1.2979388904492855).epsilon(1e-12));
  CHECK(l[3].rfind("neighbours: ", 0) == 0);
  CHECK(l[4].rfind("df: ", 0) == 0);  // tr(H), every fit's degrees of freedom
  CHECK(l[5] == "n: 272");
  CHECK(l[6] == "kernel: gaussian");
  CHECK(l[7] == "method: nw");
  CHECK(l[8] == "source: learned");
  CHECK(l[9].find("(tolerance)") != std::string::npos);
  CHECK(r.err.empty());
  Result v = run_nwreg({"fit", data("synthetic.csv"), "--verbose"});
  // The scan's result (a line a second while it runs), then each epoch.
  CHECK(v.err.rfind("nwreg: scanned 44 bandwidths, best 0.24330280801084964  loss 0.3708748980981183\n"
                    "nwreg: epoch 0  bandwidth 0.24330280801084964  loss 0.3708748980981183\n",
                    0) == 0);
  CHECK(v.err.find("leave-one-out passes; the epochs' losses are the LOO error of every row\n") != std::string::npos);
}

TEST_CASE("cli: fit --verbose counts the passes' work: pairs weighed key by key, rows by moments or transforms") {
  // 12 rows in two columns at h = 100 (every key in reach of every row; too few rows for a
  // series): 2 SGD epochs make 3 passes of 12 rows weighing 12 keys each (the left-out one's
  // weight set to 0 in its range), 432 pairs, and no row by moments.
  std::string csv = "a,b,y\n";
  for (int i = 0; i < 12; ++i)
    csv += std::to_string(0.07 * i) + "," + std::to_string(0.31 * ((i * 5) % 12) / 12) + "," + std::to_string((i * i) % 7) + "\n";
  const Result r = run_nwreg({"fit", "-", "-x", "a,b", "--optimizer", "sgd", "--epochs", "2", "--init", "100", "-v"}, csv);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("3 leave-one-out passes") != std::string::npos);
  CHECK(r.err.find("nwreg: the passes weighed 432 query-key pairs key by key\n") != std::string::npos);
  // 2000 rows in two columns, learned: the scan's widest scales by the series over boxes, the
  // rest key by key, fewer pairs than every key for every row of every pass.
  std::string many = "a,b,y\n";
  for (int i = 0; i < 2000; ++i)
    many += std::to_string(std::fmod(i * 0.618034, 1.0)) + "," + std::to_string(std::fmod(i * 0.7548777, 1.0)) + "," +
            std::to_string((i * i) % 7) + "\n";
  const Result f = run_nwreg({"fit", "-", "-x", "a,b", "-v"}, many);
  REQUIRE(f.exit_code == 0);
  const std::size_t at = f.err.find("leave-one-out passes;");
  REQUIRE(at != std::string::npos);
  const std::size_t from = f.err.rfind(", ", at) + 2;
  const std::size_t work = f.err.find("nwreg: the passes weighed ");
  REQUIRE(work != std::string::npos);
  unsigned long long passes = 0, pairs = 0, rows = 0;
  REQUIRE(std::sscanf(f.err.c_str() + from, "%llu", &passes) == 1);
  REQUIRE(std::sscanf(f.err.c_str() + work, "nwreg: the passes weighed %llu query-key pairs key by key and answered %llu",
                      &pairs, &rows) == 2);
  CHECK(pairs > 0);
  CHECK(rows > 0);
  CHECK(pairs + rows * 2000 < passes * 2000 * 2000);
  CHECK(run_nwreg({"fit", "-", "-x", "a,b"}, many).err.find("the passes weighed") == std::string::npos);  // -v only
}

TEST_CASE("cli: the d2l run through options, history as JSON") {
  Result r = run_nwreg({"fit", data("synthetic.csv"), "--optimizer", "sgd", "--param", "w", "--init-w", "0.3", "--loss",
                    "sum", "--lr", "0.5", "--epochs", "5", "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const Json j = Json::parse(r.out);
  const auto g = testing::read_golden("tests/golden/d2l_sgd.csv");
  REQUIRE(j["history"].size() == 6);
  for (int e = 0; e < 6; ++e) {
    CHECK(1 / j["history"][e]["bandwidth"][0].get<double>() == doctest::Approx(std::stod(g.at("w")[e])).epsilon(1e-9));
    CHECK(j["history"][e]["loss"].get<double>() == doctest::Approx(std::stod(g.at("loss_sum")[e])).epsilon(1e-9));
  }
  CHECK(j["stop_reason"] == "epochs done");
  check_error(run_nwreg({"fit", data("synthetic.csv"), "--optimizer", "sgd"}), 2,
              "--optimizer sgd: needs a start point, --init H or --init-w W");
  check_error(run_nwreg({"fit", data("synthetic.csv"), "--param", "w"}), 2,
              "--param w: only with --optimizer sgd (auto always steps in log h)");
}

TEST_CASE("cli: fit -o writes a model that predict --model uses, and other data get a warning") {
  Scratch s;
  const std::string model = (s / "m.json").string();
  Result f = run_nwreg({"fit", data("mcycle.csv"), "-o", model});
  REQUIRE(f.exit_code == 0);
  const Json j = Json::parse(slurp(model));
  CHECK(j["format"] == "nwreg-model");
  CHECK(j["x_columns"] == Json::array({"times"}));
  CHECK(j["n"] == 133);
  const std::string h = Json(j["bandwidth"][0]).dump();
  CHECK(f.out.rfind("bandwidth: " + h + "\n", 0) == 0);

  Result p = run_nwreg({"predict", data("mcycle.csv"), "--model", model, "--grid", "0:60:10"});
  Result q = run_nwreg({"predict", data("mcycle.csv"), "-b", h, "--grid", "0:60:10"});
  REQUIRE(p.exit_code == 0);
  CHECK(p.err.rfind("nwreg: note: 1 of 6 queries lie past the training x range", 0) == 0);  // x = 0
  CHECK(p.err == q.err);
  CHECK(p.out == q.out);

  std::string part = slurp(data("mcycle.csv"));
  part = part.substr(0, part.find("\n14.6,"));
  Result w = run_nwreg({"predict", "-", "--model", model, "--grid", "0:60:10"}, part + "\n");
  CHECK(w.exit_code == 0);
  CHECK(w.err.find("nwreg: warning: <stdin> is not the data " + model + " was fitted on") == 0);

  spit(s / "bad.json", "{\"format\": \"nwreg-model\", \"version\": 9}");
  check_error(run_nwreg({"predict", data("mcycle.csv"), "--model", (s / "bad.json").string()}), 1,
              (s / "bad.json").string() + ": not a usable nwreg model: format version 9, this nwreg reads version 1");
  check_error(run_nwreg({"predict", data("mcycle.csv"), "--model", model, "-b", "1"}), 2,
              "--bandwidth excludes --model (see nwreg predict --help)");
}

TEST_CASE("cli: JSON predictions for jq and pandas, and -o NAME.json implies JSON") {
  Scratch s;
  Result r = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.5", "--grid", "0:1:0.5", "-o", (s / "p.json").string()});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  const Json j = Json::parse(slurp(s / "p.json"));
  CHECK(j["bandwidth"] == Json::array({0.5}));
  CHECK(j["bandwidth_source"] == "fixed");
  REQUIRE(j["predictions"].size() == 2);
  CHECK(j["predictions"][1]["x"] == 0.5);
  Result c = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.5", "--grid", "0:1:0.5"});
  CHECK(std::stod(lines(c.out)[2].substr(4)) == j["predictions"][1]["prediction"].get<double>());
}

TEST_CASE("cli: the weights matrix, wide and long") {
  Scratch s;
  Result r = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:1", "--weights", (s / "w.csv").string()});
  REQUIRE(r.exit_code == 0);
  const auto w = lines(slurp(s / "w.csv"));
  REQUIRE(w.size() == 6);
  CHECK(w[0].rfind("x,k1,k2,", 0) == 0);
  CHECK(w[0].substr(w[0].rfind(',')) == ",k50");
  double sum = 0;
  std::istringstream row(w[3]);
  std::string cell;
  std::getline(row, cell, ',');
  CHECK(cell == "2");
  int cells = 0;
  while (std::getline(row, cell, ',')) {
    sum += std::stod(cell);
    ++cells;
  }
  CHECK(cells == 50);
  CHECK(sum == doctest::Approx(1).epsilon(1e-14));

  run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:1", "--weights", (s / "l.csv").string(),
         "--weights-layout", "long"});
  const auto l = lines(slurp(s / "l.csv"));
  CHECK(l.size() == 5 * 50 + 1);
  CHECK(l[0] == "query,x,key,key_x,weight");  // each pair with the query's x and the key's
  CHECK(l[1].rfind("1,0,1,", 0) == 0);
  CHECK(l.back().rfind("5,4,50,", 0) == 0);

  run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:1", "--weights", (s / "w.json").string()});
  const Json j = Json::parse(slurp(s / "w.json"));
  CHECK(j["weights"].size() == 5);
  CHECK(j["weights"][0].size() == 50);
  CHECK(j["keys"].size() == 50);
  check_error(run_nwreg({"predict", data("synthetic.csv"), "-b", "1", "--weights", "-"}), 2,
              "--weights -: standard output already carries the -o output; give --weights FILE");
}

TEST_CASE("cli: bad data files, one line each, exit 1") {
  Scratch s;
  auto with = [&](const std::string& text) {
    spit(s / "t.csv", text);
    return (s / "t.csv").string();
  };
  const std::string t = (s / "t.csv").string();
  check_error(run_nwreg({"fit", (s / "none.csv").string()}), 1, (s / "none.csv").string() + ": cannot open: No such file or directory");
  check_error(run_nwreg({"fit", s.dir.string()}), 1, s.dir.string() + ": is a directory, not a file");
  check_error(run_nwreg({"fit", with("")}), 1, t + ": the file is empty");
  check_error(run_nwreg({"fit", with("x,y\n")}), 1, t + ": no data rows after the header");
  check_error(run_nwreg({"fit", with("x,y\n1,2\n3,abc\n")}), 1, t + ":3: column \"y\": cannot parse \"abc\" as a number");
  check_error(run_nwreg({"fit", with("x,y\n1,2\n,3\n")}), 1, t + ":3: column \"x\": missing value (empty field); give --na skip to drop rows with missing values");
  check_error(run_nwreg({"fit", with("x,y\n1,2\n2,NaN\n")}), 1, t + ":3: column \"y\": missing value \"NaN\"; give --na skip to drop rows with missing values");
  check_error(run_nwreg({"fit", with("x,y\n1,2\n2,inf\n")}), 1, t + ":3: column \"y\": \"inf\" is not a finite number");
  check_error(run_nwreg({"fit", with("x,y\n1e999,2\n")}), 1, t + ":2: column \"x\": \"1e999\" is out of the range of a double");
  check_error(run_nwreg({"fit", with("x,y\n1,2\n2,3,4\n")}), 1, t + ":3: expected 2 fields, found 3");
  check_error(run_nwreg({"fit", with("x,y\n1,2\n")}), 1, "learning the bandwidth needs at least 2 training rows, got 1");
  check_error(run_nwreg({"fit", with("x,y\n1,2\n1,3\n1,5\n")}), 1,
              "all values of x column \"x\" are equal: learning the bandwidth cannot work; give --bandwidth H");
  // 100,000 equal rows (a gzip bomb's kind of file): their mean rounds off 0.123, and the
  // column passed for a spread one with sd 1e-18, into a scan of no bandwidths (a crash).
  std::string equal = "x,y\n";
  for (int i = 0; i < 100000; ++i) equal += "0.123,4.56\n";
  check_error(run_nwreg({"fit", with(equal)}), 1,
              "all values of x column \"x\" are equal: learning the bandwidth cannot work; give --bandwidth H");
  Result fixed = run_nwreg({"fit", with("x,y\n1,2\n1,3\n1,5\n"), "-b", "1"});
  CHECK(fixed.exit_code == 0);
  // Equal x: each row's LOO prediction is the mean of the other two: (2-4)^2 + (3-3.5)^2 + (5-2.5)^2 = 10.5.
  CHECK(lines(fixed.out)[1] == "loo_mse: 3.5");
}

TEST_CASE("cli: bad option values, one line each, exit 2") {
  const std::string f = data("synthetic.csv");
  check_error(run_nwreg({"fit", f, "-x", "nope"}), 2, "-x: no column named \"nope\" in " + f + " (columns: x, y)");
  check_error(run_nwreg({"fit", f, "-y", "9"}), 2, "-y: column 9 does not exist: " + f + " has 2 columns");
  check_error(run_nwreg({"fit", f, "-b", "0"}), 2, "--bandwidth: must be > 0, got 0");
  check_error(run_nwreg({"fit", f, "-b", "-3"}), 2, "--bandwidth: must be > 0, got -3");
  check_error(run_nwreg({"fit", f, "-b", "abc"}), 2, "--bandwidth: expected a number > 0 (or a time span: 90s, 15min, 6h, 3d, 2w), auto, silverman, scott, plugin, df:K, knn:K, adaptive:K or span:F, got \"abc\"");
  check_error(run_nwreg({"fit", f, "-b", "nan"}), 2, "--bandwidth: \"nan\" is not a finite number");
  check_error(run_nwreg({"predict", f, "-b", "1", "--grid", "0:1:0"}), 2, "--grid: STEP must not be 0");
  check_error(run_nwreg({"predict", f, "-b", "1", "--grid", "0:1:-1"}), 2, "--grid: STEP -1 does not lead from 0 towards 1: no points");
  check_error(run_nwreg({"predict", f, "-b", "1", "--grid", "a:1:1"}), 2, "--grid: START: cannot parse \"a\" as a number");
  check_error(run_nwreg({"predict", f, "-b", "1", "--format", "xml"}), 2, "--format: unknown format \"xml\" (known: csv, tsv, json, jsonl)");
  check_error(run_nwreg({"predict", f, "-b", "1", "--delimiter", "ab"}), 2, "--delimiter: must be one character, \"tab\" or \"space\", got \"ab\"");
}

TEST_CASE("cli: option errors are found before the data are read") {
  const std::string bad = "x,y\n1,oops\n";
  check_error(run_nwreg({"predict", "-", "-b", "0"}, bad), 2, "--bandwidth: must be > 0, got 0");
  check_error(run_nwreg({"predict", "-", "--grid", "0:1:0"}, bad), 2, "--grid: STEP must not be 0");
  check_error(run_nwreg({"fit", "-", "--lr", "-1"}, bad), 2, "--lr: must be > 0, got -1");
  check_error(run_nwreg({"fit", "-", "--epochs", "-2"}, bad), 2, "--epochs: must be >= 0, got -2");
  check_error(run_nwreg({"fit", "-", "--optimizer", "adam"}, bad), 2,
              "--optimizer adam: for learned scores (--score general or additive); bandwidths learn by auto or sgd, "
              "and dot and scaled-dot learn nothing");
  check_error(run_nwreg({"fit", "-", "--score", "dot", "-b", "1"}, bad), 2,
              "--bandwidth: --score dot has no bandwidth; drop --bandwidth");
  check_error(run_nwreg({"fit", "-", "--init", "0.5", "--init-w", "2"}, bad), 2,
              "--init-w: give --init or --init-w, not both");
  check_error(run_nwreg({"fit", "-"}, bad), 1, "<stdin>:2: column \"y\": cannot parse \"oops\" as a number");
}

TEST_CASE("cli: silverman and scott") {
  Result r = run_nwreg({"fit", data("synthetic.csv"), "-b", "silverman"});
  const auto g = testing::read_golden("tests/golden/silverman.csv");
  CHECK(std::stod(lines(r.out)[0].substr(11)) == doctest::Approx(std::stod(g.at("bandwidth")[0])).epsilon(1e-13));
  CHECK(lines(r.out)[8] == "source: silverman");
  Result s = run_nwreg({"fit", data("synthetic.csv"), "-b", "scott"});
  CHECK(lines(s.out)[8] == "source: scott");
}

TEST_CASE("cli: an output that cannot be written leaves nothing behind, nor clobbers a file") {
  Scratch s;
  spit(s / "old.csv", "keep me\n");
  check_error(run_nwreg({"predict", data("synthetic.csv"), "-b", "1", "-o", (s / "no/dir/p.csv").string()}), 1,
              "-o: cannot write " + (s / "no/dir/p.csv").string() + ": No such file or directory");
  check_error(run_nwreg({"predict", data("synthetic.csv"), "-b", "1", "-o", s.dir.string()}), 1,
              "-o: " + s.dir.string() + " is a directory");
  // The weights are written in full to a temporary file, then -o fails: neither file appears.
  Result r = run_nwreg({"predict", data("synthetic.csv"), "-b", "1", "--weights", (s / "w.csv").string(), "-o",
                    (s / "no/p.csv").string()});
  CHECK(r.exit_code == 1);
  // Bad training data after -o names an existing file: the old content stays.
  Result b = run_nwreg({"predict", "-", "-b", "1", "-o", (s / "old.csv").string()}, "x,y\n1,oops\n");
  CHECK(b.exit_code == 1);
  CHECK(slurp(s / "old.csv") == "keep me\n");
  CHECK(s.files() == 1);  // only old.csv: no temporary files, no w.csv
  // Success replaces it whole.
  Result ok = run_nwreg({"predict", data("synthetic.csv"), "-b", "1", "--grid", "0:1:1", "-o", (s / "old.csv").string()});
  CHECK(ok.exit_code == 0);
  CHECK(slurp(s / "old.csv").rfind("x,prediction\n0,", 0) == 0);
  CHECK(s.files() == 1);
}

TEST_CASE("cli: devices are written to, links are followed, modes are kept") {
  Result r = run_nwreg({"predict", data("synthetic.csv"), "-b", "1", "-o", "/dev/null", "--weights", "/dev/null"});
  CHECK(r.exit_code == 0);
  CHECK(fs::is_character_file("/dev/null"));
  Scratch s;
  spit(s / "target.csv", "old\n");
  fs::permissions(s / "target.csv", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink(s / "target.csv", s / "link.csv");
  Result l = run_nwreg({"predict", data("synthetic.csv"), "-b", "1", "--grid", "0:1:1", "-o", (s / "link.csv").string()});
  CHECK(l.exit_code == 0);
  CHECK(fs::is_symlink(s / "link.csv"));
  CHECK(slurp(s / "target.csv").rfind("x,prediction\n0,", 0) == 0);
  CHECK(fs::status(s / "target.csv").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
}

TEST_CASE("cli: | head -1 ends quietly") {
  const std::string cmd = std::string("'") + NWREG_BINARY + "' predict '" + data("synthetic.csv") +
                          "' -b 0.3 --grid 0:5:0.00001 2>&1 | head -1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  CHECK(out == "x,prediction\n");  // and no error line from nwreg
}

TEST_CASE("cli: several x columns from end to end") {
  Scratch s;
  const std::string boston = data("boston.csv");
  spit(s / "q.csv", "rm,lstat\n6.5,5\n5.5,20\n");  // named columns, in another order
  Result p = run_nwreg({"predict", boston, "-x", "lstat", "-x", "rm", "-y", "medv", "-b", "1.5,0.3", "--query",
                        (s / "q.csv").string()});
  REQUIRE(p.exit_code == 0);
  const auto l = lines(p.out);
  REQUIRE(l.size() == 3);
  CHECK(l[0] == "lstat,rm,prediction");
  CHECK(l[1].rfind("5,6.5,", 0) == 0);
  CHECK(l[2].rfind("20,5.5,", 0) == 0);
  // fit -o keeps both columns and bandwidths; predict --model reuses them.
  const std::string model = (s / "m.json").string();
  REQUIRE(run_nwreg({"fit", boston, "-x", "lstat,rm", "-y", "medv", "-b", "1.5,0.3", "-o", model}).exit_code == 0);
  const Json j = Json::parse(slurp(model));
  CHECK(j["x_columns"] == Json::array({"lstat", "rm"}));
  CHECK(j["bandwidth"] == Json::array({1.5, 0.3}));
  Result m = run_nwreg({"predict", boston, "--model", model, "--query", (s / "q.csv").string()});
  CHECK(m.out == p.out);
  check_error(run_nwreg({"fit", boston, "-x", "lstat,rm", "-y", "medv", "-b", "1,2,3"}), 2,
              "--bandwidth: needs 2 values (one per x column), got 3");
}

TEST_CASE("cli: fit --format csv summarises one file as a batch row") {
  const Result one = run_nwreg({"fit", data("mcycle.csv"), "--format", "csv"});
  CHECK(one.exit_code == 0);
  const Result two = run_nwreg({"fit", data("mcycle.csv"), data("faithful.csv"), "--format", "csv"});
  const auto l1 = lines(one.out), l2 = lines(two.out);
  REQUIRE(l1.size() == 2);
  REQUIRE(l2.size() == 3);
  CHECK(l1[0] == "file,n,bandwidth,loo_mse,loo_r2,neighbours,df,criterion,criterion_value,warning,error");
  CHECK(l1[1] == l2[1]);
  CHECK(l1[1].rfind(data("mcycle.csv") + ",133,0.9138289745936999,595.9363441217379,", 0) == 0);
}
