// Daily use: shards, streams, batches, progress, plots, install. Runs the real binary.

#include <doctest/doctest.h>
#include <signal.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>
#include <stdexcept>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "nwreg/io/writers.h"
#include <thread>

#include "cli_helpers.h"
#include "nwreg/base/errors.h"
#include "nwreg/data/grid.h"

using namespace clitest;
using Json = nlohmann::json;

TEST_CASE("daily: N shards joined in order are the unsharded output, byte for byte") {
  Scratch s;
  for (const std::string format : {"csv", "jsonl"}) {
    for (int n : {1, 2, 3, 7}) {
      std::string joined, joined_weights;
      for (int k = 1; k <= n; ++k) {
        const std::string shard = std::to_string(k) + "/" + std::to_string(n);
        Result r = run_nwreg({"predict", data("mcycle.csv"), "--grid", "0:60:0.25", "--format", format, "--shard",
                              shard, "--weights", (s / "w.csv").string(), "--weights-layout", "long"});
        REQUIRE(r.exit_code == 0);
        joined += r.out;
        joined_weights += slurp(s / "w.csv");
      }
      Result all = run_nwreg({"predict", data("mcycle.csv"), "--grid", "0:60:0.25", "--format", format, "--weights",
                              (s / "w.csv").string(), "--weights-layout", "long"});
      CAPTURE(format);
      CAPTURE(n);
      CHECK(joined == all.out);
      CHECK(joined_weights == slurp(s / "w.csv"));
    }
  }
  // 240 queries in 7 slices: sizes 34 or 35, in order.
  nwreg::Shard sh{3, 7};
  CHECK(sh.first(240) == 68);
  CHECK(sh.last(240) == 102);
  CHECK(nwreg::parse_shard("7/7").k == 7);
  CHECK_THROWS_AS(nwreg::parse_shard("8/7"), nwreg::UsageError);
  CHECK_THROWS_AS(nwreg::parse_shard("1/0"), nwreg::UsageError);
  CHECK_THROWS_AS(nwreg::parse_shard("a/b"), nwreg::UsageError);
}

TEST_CASE("daily: JSONL, one object a line, the same numbers as CSV") {
  Result j = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:0.5", "--format", "jsonl"});
  Result c = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:0.5"});
  const auto jl = lines(j.out), cl = lines(c.out);
  REQUIRE(jl.size() == 10);
  REQUIRE(cl.size() == 11);
  for (std::size_t i = 0; i < jl.size(); ++i) {
    const Json rec = Json::parse(jl[i]);
    CHECK(rec.size() == 2);
    const auto comma = cl[i + 1].find(',');
    CHECK(rec["x"].get<double>() == std::stod(cl[i + 1].substr(0, comma)));
    CHECK(rec["prediction"].get<double>() == std::stod(cl[i + 1].substr(comma + 1)));
  }
  Scratch s;
  REQUIRE(run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:0.5", "-o",
                     (s / "p.jsonl").string()}).exit_code == 0);
  CHECK(slurp(s / "p.jsonl") == j.out);  // .jsonl names the format
}

namespace {

// The queries "x\n0.5\n", "1.5\n" and "4\n", each sent as `pieces` holds it (plain or
// encoded), the next only after the answer to the last has been read (a reader that waited for
// the end of its input, or for a full buffer, would hang here), then `end` (what closes the
// encoding): the answers equal those of the same queries sent at once.
const char* const stream_queries[] = {"x\n0.5\n", "1.5\n", "4\n"};
void check_streamed(const std::vector<std::string>& pieces, const std::string& end) {
  Conversation c({"predict", data("synthetic.csv"), "-b", "0.3", "--query", "-", "--format", "jsonl"});
  std::vector<double> got;
  for (const std::string& piece : pieces) got.push_back(Json::parse(c.ask(piece))["prediction"].get<double>());
  if (!end.empty()) c.ask_nothing(end);
  CHECK(c.finish() == 0);
  Result batch = run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--query", "-", "--format", "jsonl"},
                           "x\n0.5\n1.5\n4\n");
  const auto bl = lines(batch.out);
  REQUIRE(bl.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(Json::parse(bl[i])["prediction"].get<double>() == got[i]);
}

}  // namespace

TEST_CASE("daily: a stream of queries on stdin is answered line by line as it arrives") {
  check_streamed({std::begin(stream_queries), std::end(stream_queries)}, "");
}

TEST_CASE("daily: a gzip stream of queries on stdin is answered line by line as it arrives") {
  // Each piece is deflated with a sync flush, as `gzip` on a live pipe (pigz, zlib's flushes)
  // hands it on: the next is written only after the answer to the last. At b4e6a01 the stream
  // was inflated in 64 KiB blocks and the first answer waited for the end (this test hung).
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  auto deflated = [&z](const std::string& text, int flush) {
    std::string out(1024, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&z, flush) != Z_STREAM_ERROR);
    REQUIRE(z.avail_in == 0);
    out.resize(out.size() - z.avail_out);
    return out;
  };
  std::vector<std::string> pieces;
  for (const char* q : stream_queries) pieces.push_back(deflated(q, Z_SYNC_FLUSH));
  const std::string end = deflated("", Z_FINISH);
  deflateEnd(&z);
  check_streamed(pieces, end);
}

TEST_CASE("daily: a batch fits each file, one row each, and a failing file fails alone") {
  Scratch s;
  spit(s / "flat.csv", "x,y\n1,2\n1,3\n");
  spit(s / "b1.csv", "x,y\n0,1\n1,3\n2,2\n3,5\n");
  spit(s / "b2.csv", "x,y\n0,0\n1,1\n2,4\n3,9\n4,16\n");
  Result r = run_nwreg({"fit", data("mcycle.csv"), (s / "flat.csv").string(), (s / "none.csv").string(),
                        (s / "b*.csv").string()});
  CHECK(r.exit_code == 1);
  const auto l = lines(r.out);
  REQUIRE(l.size() == 6);
  CHECK(l[0] == "file,n,bandwidth,loo_mse,loo_r2,neighbours,df,criterion,criterion_value,warning,error");
  // The same numbers as fitting mcycle alone; LOO R^2 = 1 - LOO MSE / var(y).
  Result alone = run_nwreg({"fit", data("mcycle.csv")});
  const auto al = lines(alone.out);
  CHECK(l[1] == data("mcycle.csv") + ",133," + al[0].substr(11) + "," + al[1].substr(9) + ",0.742849792897521," +
                    al[3].substr(12) + "," + al[4].substr(4) + ",loo," + al[1].substr(9) + ",,");
  CHECK(l[2] == (s / "flat.csv").string() + ",,,,,,,,,,\"" + (s / "flat.csv").string() +
                    ": all values of x column \"\"x\"\" are equal: learning the bandwidth cannot work; give "
                    "--bandwidth H\"");
  CHECK(l[3] == (s / "none.csv").string() + ",,,,,,,,,," + (s / "none.csv").string() +
                    ": cannot open: No such file or directory");
  CHECK(l[4].rfind((s / "b1.csv").string() + ",4,", 0) == 0);  // the glob, expanded in order
  CHECK(l[4].substr(l[4].size() - 2) == ",,");                    // no warning, no error
  // y = x^2 on five points: the LOO error picks a bandwidth below the spacing of x, and says so.
  const std::string warning = "the fit nearly interpolates (1.6 effective neighbours; h = 0.152 is below the typical "
                              "spacing of \"x\", 1): the curve steps from point to point. Try --criterion aicc, "
                              "--bandwidth plugin, --leave-out K for a series with correlated errors, or --min-neighbours 5";
  // And local linear's error is a fifth of NW's: a trend.
  const std::string advice = "local linear's leave-one-out error is 2.2, under half of NW's 10.6: NW bends toward the "
                             "mean where a trend meets the ends of the data. Try --method local-linear";
  const std::string head = (s / "b2.csv").string() + ",5,0.15163266492815836,10.6,0.6954022988505747,1.6,",
                    tail = ",loo,10.6," + nwreg::csv_field(warning + "; " + advice) + ",";
  REQUIRE(l[5].size() > head.size() + tail.size());
  CHECK(l[5].rfind(head, 0) == 0);  // then df, about 5: each point nearly alone
  CHECK(std::stod(l[5].substr(head.size())) == doctest::Approx(5).epsilon(1e-6));
  CHECK(l[5].substr(l[5].size() - tail.size()) == tail);
  CHECK(r.err == "nwreg: error: " + (s / "flat.csv").string() +
                     ": all values of x column \"x\" are equal: learning the bandwidth cannot work; give --bandwidth "
                     "H\nnwreg: error: " + (s / "none.csv").string() + ": cannot open: No such file or directory\n" +
                     "nwreg: warning: " + (s / "b2.csv").string() + ": " + warning + "\n" + "nwreg: warning: " +
                     (s / "b2.csv").string() + ": " + advice + "\n");

  Result j = run_nwreg({"fit", (s / "b*.csv").string(), (s / "flat.csv").string(), "--format", "json"});
  CHECK(j.exit_code == 1);
  const Json arr = Json::parse(j.out);
  REQUIRE(arr.size() == 3);
  CHECK(arr[0]["n"] == 4);
  CHECK(arr[0]["error"].is_null());
  CHECK(arr[2]["loo_mse"].is_null());
  CHECK(arr[2]["error"].get<std::string>().find("are equal") != std::string::npos);
  CHECK(arr[1]["warnings"] == Json::array({warning, advice}));
  CHECK(arr[0]["warnings"] == Json::array());
  Result ok = run_nwreg({"fit", (s / "b*.csv").string()});
  CHECK(ok.exit_code == 0);
  CHECK(ok.err == "nwreg: warning: " + (s / "b2.csv").string() + ": " + warning + "\n" + "nwreg: warning: " +
                      (s / "b2.csv").string() + ": " + advice + "\n");
}

TEST_CASE("daily: cmake --install puts nwreg, its man page and the shell completions under the prefix") {
  Scratch s;
  const std::string cmd = "cmake --install '" + std::string(NWREG_BUILD_DIR) + "' --prefix '" + s.dir.string() +
                          "' > '" + (s / "log").string() + "' 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const fs::path bin = s / "bin/nwreg", man = s / "share/man/man1/nwreg.1";
  REQUIRE(fs::exists(bin));
  REQUIRE(fs::exists(man));
  const std::string page = slurp(man);
  CHECK(page.find(".TH NWREG \"1\"") != std::string::npos);
  CHECK(page.find("nwreg \\- Nadaraya-Watson kernel regression as attention pooling") != std::string::npos);
  CHECK(page.find(".SS \"nwreg fit\"") != std::string::npos);
  CHECK(page.find(".SS \"nwreg predict\"") != std::string::npos);
  CHECK(page.find("\\-\\-max\\-weights") != std::string::npos);  // roff: each dash a minus sign
  CHECK(page.find(".SH \"EXIT STATUS\"") != std::string::npos);
  for (const char* completion : {"share/bash-completion/completions/nwreg", "share/zsh/site-functions/_nwreg",
                                 "share/fish/vendor_completions.d/nwreg.fish"}) {
    CAPTURE(completion);
    CHECK(slurp(s / completion).find("max-weights") != std::string::npos);
  }
  const std::string version = (s / "v").string();
  REQUIRE(std::system(("'" + bin.string() + "' --version > '" + version + "'").c_str()) == 0);
  CHECK(slurp(version) == "nwreg 0.1.0\n");
}

namespace {

// Runs a shell command under a pseudo-terminal (util-linux script): stderr is then a terminal.
std::string on_terminal(const std::string& command) {
  Scratch s;
  const std::string cmd = "script -qec \"" + command + "\" /dev/null > '" + (s / "out").string() + "' 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return slurp(s / "out");
}

}  // namespace

TEST_CASE("daily: progress on a terminal, none with --quiet or when stderr is not a terminal") {
  const std::string nw = std::string(NWREG_BINARY);
  const std::string fit = on_terminal(nw + " fit " + data("mcycle.csv"));
  CHECK(fit.find("\r\033[Knwreg: scan 1/") != std::string::npos);
  CHECK(fit.find("\r\033[Knwreg: epoch 0  bandwidth ") != std::string::npos);
  CHECK(fit.find("\r\033[Kbandwidth: 0.91382897459369") != std::string::npos);  // cleared, then the report
  const std::string quiet = on_terminal(nw + " fit " + data("mcycle.csv") + " --quiet");
  CHECK(quiet.find('\r') == quiet.find("\r\n"));  // only the terminal's own line ends
  CHECK(quiet.find("nwreg:") == std::string::npos);
#if defined(NWREG_ASAN)
  const std::string queries = "1000000";  // still seconds under the sanitizers, past the 200 ms
#else
  const std::string queries = "4000000";  // (the bar shows once a run has taken 200 ms)
#endif
  const std::string pred = on_terminal(nw + " predict " + data("mcycle.csv") + " -b 1 --grid-n " + queries +
                                       " --tolerance 0 --threads 1 -o /dev/null");
  CHECK(pred.find("nwreg: predicting [") != std::string::npos);
  CHECK(pred.find("] 100%") != std::string::npos);
  Result piped = run_nwreg({"fit", data("mcycle.csv")});  // stderr is a file here
  CHECK(piped.err.empty());
}

namespace {

// A small XML checker: well-formed nesting, quoted attributes, escaped text. Returns element
// counts by name, or throws std::runtime_error naming the problem.
std::map<std::string, int> xml_elements(const std::string& doc) {
  std::map<std::string, int> count;
  std::vector<std::string> open;
  std::size_t i = 0;
  auto fail = [&](const std::string& why) { throw std::runtime_error(why + " at byte " + std::to_string(i)); };
  while (i < doc.size()) {
    if (doc[i] != '<') {
      if (doc[i] == '&') {
        const auto semi = doc.find(';', i);
        const std::string ent = doc.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
        if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;") fail("bad entity");
      }
      ++i;
      continue;
    }
    const auto end = doc.find('>', i);
    if (end == std::string::npos) fail("unclosed tag");
    std::string tag = doc.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) fail("empty tag");
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) fail("mismatched </" + tag.substr(1) + ">");
      open.pop_back();
      continue;
    }
    const bool self_closing = tag.back() == '/';
    if (self_closing) tag.pop_back();
    const std::string name = tag.substr(0, tag.find_first_of(" \n"));
    // Attributes: name="value" pairs, nothing else (scanned by hand: std::regex recurses per
    // character and overflows the stack on a path's long "d").
    auto word = [&](std::size_t& at) {
      const std::size_t from = at;
      while (at < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[at])) || tag[at] == '_' || tag[at] == ':' || tag[at] == '-')) ++at;
      return at > from && std::isalpha(static_cast<unsigned char>(tag[from]));
    };
    std::size_t at = 0;
    bool ok = word(at);
    while (ok && at < tag.size()) {
      const std::size_t blanks = at;
      while (at < tag.size() && std::isspace(static_cast<unsigned char>(tag[at]))) ++at;
      if (at == tag.size()) break;
      ok = at > blanks && word(at) && at + 1 < tag.size() && tag[at] == '=' && tag[at + 1] == '"';
      if (!ok) break;
      const std::size_t close = tag.find('"', at + 2);
      ok = close != std::string::npos && tag.find('<', at + 2) > close;
      at = close + 1;
    }
    if (!ok) fail("bad attributes in <" + name + ">");
    ++count[name];
    if (!self_closing) open.push_back(name);
  }
  if (!open.empty()) fail("unclosed <" + open.back() + ">");
  return count;
}

}  // namespace

TEST_CASE("daily: --plot and --heatmap write SVG that parses, with the expected elements") {
  Scratch s;
  Result r = run_nwreg({"predict", data("synthetic.csv"), "--grid", "0:5:0.1", "--plot", (s / "fit.svg").string(),
                        "--heatmap", (s / "map.svg").string()});
  REQUIRE(r.exit_code == 0);
  const std::string fit = slurp(s / "fit.svg");
  const auto f = xml_elements(fit);
  CHECK(f.at("svg") == 1);
  CHECK(f.at("circle") == 50);    // every training point
  CHECK(f.at("polyline") == 1);   // the curve
  CHECK(f.count("polygon") == 0); // no band without standard errors
  CHECK(fit.find("<polyline class=\"curve\"") != std::string::npos);
  CHECK(std::count(fit.begin(), fit.end(), ',') >= 50);  // 50 curve points
  CHECK(fit.find(">nwreg: h = 0.2685 (learned), n = 50, LOO MSE 0.3701</text>") != std::string::npos);
  CHECK(fit.find("class=\"x-title\"") != std::string::npos);
  CHECK(fit.find(">x</text>") != std::string::npos);
  CHECK(fit.find(">y</text>") != std::string::npos);
  CHECK(f.at("text") >= 10);  // title, axis titles, tick labels

  const std::string map = slurp(s / "map.svg");
  const auto m = xml_elements(map);
  CHECK(m.at("rect") == 2 + 100 + 1);  // background and frame, colour bar and its frame
  CHECK(m.at("path") >= 2);           // the cells: one path per colour
  CHECK(map.find("M49 49h1v1h-1z") != std::string::npos);  // the last cell, in cell units
  CHECK(map.find("translate(100 60) scale(10.00 10.00)") != std::string::npos);  // 50 x 50 cells on 500 x 500
  // NW weights: the sequential scale; its lowest colour viridis at 0.5% (68 + 0.04 * 3, ...) = #440255.
  CHECK(map.substr(map.find("class=\"colour-bar\""), 200).find("fill=\"#440255\"") != std::string::npos);
  CHECK(map.find(">attention weights, h = 0.2685 (learned)</text>") != std::string::npos);
  CHECK(map.find("binned") == std::string::npos);

  // Large: binned to 150 x 150 and said so; points thinned past 20000 and said so.
  std::string big = "x,y\n";
  for (int i = 0; i < 30000; ++i) big += std::to_string(i * 1e-3) + "," + std::to_string(std::sin(i * 1e-3)) + "\n";
  spit(s / "big.csv", big);
  REQUIRE(run_nwreg({"predict", (s / "big.csv").string(), "-b", "0.5", "--grid-n", "400", "--plot",
                     (s / "bfit.svg").string(), "--heatmap", (s / "bmap.svg").string()}).exit_code == 0);
  const std::string bmap = slurp(s / "bmap.svg"), bfit = slurp(s / "bfit.svg");
  CHECK(xml_elements(bmap).at("rect") == 2 + 100 + 1);
  CHECK(std::count(bmap.begin(), bmap.end(), 'M') == 150 * 150);  // every cell drawn once
  CHECK(bmap.size() < 500'000);                                   // a 150 x 150 map well under 1 MB
  CHECK(bmap.find("binned: 400 queries into 150 rows, 30000 keys into 150 columns;</text>") != std::string::npos);
  CHECK(bmap.find(">a cell is the mean over its queries of the weight summed over its keys</text>") != std::string::npos);
  CHECK(xml_elements(bfit).at("circle") == 15000);
  CHECK(bfit.find("showing 15000 of 30000 points, evenly thinned") != std::string::npos);

  // Local linear's negative weights: a diverging scale around a white 0, labelled both ways.
  REQUIRE(run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--method", "local-linear", "--grid", "0:5:0.1",
                     "--heatmap", (s / "ll.svg").string(), "-o", "/dev/null"}).exit_code == 0);
  const std::string ll = slurp(s / "ll.svg");
  // The colour bar's lowest colour: RdBu's blue, 0.5% up (33 + 0.03 (103 - 33), ...) = #2368ad.
  CHECK(ll.substr(ll.find("class=\"colour-bar\""), 200).find("fill=\"#2368ad\"") != std::string::npos);
  CHECK(ll.find(">0</text>") != std::string::npos);
  CHECK(ll.find(">-0.") != std::string::npos);
  // Log scale: a label per decade below the largest weight, the lowest marked "<".
  REQUIRE(run_nwreg({"predict", data("synthetic.csv"), "-b", "0.3", "--grid", "0:5:0.1", "--heatmap-scale", "log",
                     "--heatmap", (s / "log.svg").string(), "-o", "/dev/null"}).exit_code == 0);
  const std::string lg = slurp(s / "log.svg");
  CHECK(lg.find(">weight (log)</text>") != std::string::npos);
  CHECK(lg.find(">&lt;") != std::string::npos);
  // Ticks where their labels are: a tick line for each of the five labels on both axes.
  const std::size_t from = lg.find("class=\"key-ticks\""), to = lg.find("class=\"query-ticks\"");
  REQUIRE(to != std::string::npos);
  const std::string key_ticks = lg.substr(from, to - from);
  auto count = [&](const std::string& text, const std::string& what) {
    std::size_t c = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++c;
    return c;
  };
  CHECK(count(key_ticks, "<line ") == 5);
  CHECK(count(key_ticks, "<text ") == 5);
}

TEST_CASE("daily: --help is in sections, every line within 80 columns (the man page copies it)") {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"}, {"fit", "--help"}, {"predict", "--help"}}) {
    const Result r = run_nwreg(args);
    CAPTURE(args.front());
    REQUIRE(r.exit_code == 0);
    for (const auto& line : lines(r.out)) {
      CAPTURE(line);
      CHECK(line.size() <= 80);
    }
  }
  for (const char* cmd : {"fit", "predict"}) {
    const std::string help = run_nwreg({cmd, "--help"}).out;
    std::size_t at = 0;
    for (const char* section : {"\nInput:\n", "\nBandwidth:\n", "\nMethod:\n", "\nOutput:\n", "\nPerformance:\n"}) {
      CAPTURE(section);
      const auto found = help.find(section);
      REQUIRE(found != std::string::npos);
      CHECK(found > at);  // in this order
      at = found;
    }
    CHECK(help.find("Excludes:") == std::string::npos);  // said in words in the descriptions
  }
  const std::string predict = run_nwreg({"predict", "--help"}).out;
  CHECK(predict.find("--keep") > predict.find("\nOutput:\n"));
  CHECK(predict.find("--grid ") > predict.find("\nInput:\n"));
  CHECK(predict.find("--grid ") < predict.find("\nBandwidth:\n"));
  CHECK(predict.find("--threads") > predict.find("\nPerformance:\n"));
  // fit writes no predictions: no query or prediction options in its help (its --plot draws
  // the criteria over the bandwidth grid, not a curve of predictions).
  const std::string fit = run_nwreg({"fit", "--help"}).out;
  for (const char* other : {"--grid", "--query", "--heatmap", "--keep", "--se", "--weights", "--shard"}) {
    CAPTURE(other);
    CHECK(fit.find(std::string("  ") + other + " ") == std::string::npos);
  }
  CHECK(fit.find("Draw the criteria over that grid") != std::string::npos);
  CHECK(run_nwreg({"help", "predict"}).out == predict);
}

TEST_CASE("daily: --se adds its columns and leaves the prediction exactly as without it") {
  for (const char* method : {"nw", "local-linear"}) {
    CAPTURE(method);
    const auto plain = lines(run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--method", method, "--grid", "0:60:0.5"}).out);
    const auto se =
        lines(run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--method", method, "--grid", "0:60:0.5", "--se"}).out);
    REQUIRE(plain.size() == 121);
    REQUIRE(se.size() == plain.size());
    CHECK(se[0] == "times,prediction,se,lower,upper");
    for (std::size_t i = 1; i < plain.size(); ++i) {
      CAPTURE(plain[i]);
      CHECK(se[i].rfind(plain[i] + ",", 0) == 0);
    }
  }
}
