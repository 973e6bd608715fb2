// Files as real programs write them: R's write.csv2 (semicolons, decimal commas, row names),
// write.csv's row names, TSV and other delimiters found without --delimiter, CR and CRLF line
// ends, gzip-compressed files and streams, and a pipe that pauses mid-file.

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <algorithm>
#include <cstdlib>
#include <thread>

#include "cli_helpers.h"

using namespace clitest;

namespace {

// The first 40 rows of mcycle as plain CSV, and the fit every variant below must reproduce.
std::string plain() {
  const std::string all = slurp(data("mcycle.csv"));
  std::size_t end = 0;
  for (int i = 0; i < 41; ++i) end = all.find('\n', end) + 1;
  return all.substr(0, end);
}

// `plain()` rewritten: each line through `row` (header: line 0).
template <class F>
std::string rewrite(F row) {
  std::string out, text = plain();
  std::size_t start = 0;
  for (int i = 0; start < text.size(); ++i) {
    const std::size_t nl = text.find('\n', start);
    out += row(i, text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

std::string replace_all(std::string s, char from, const std::string& to) {
  std::string out;
  for (char c : s) out += c == from ? to : std::string(1, c);
  return out;
}

}  // namespace

TEST_CASE("input formats: R's write.csv2 and write.csv row names, and delimiters found without --delimiter") {
  Scratch s;
  spit(s / "plain.csv", plain());
  const Result expected = run_nwreg({"fit", (s / "plain.csv").string(), "-b", "2"});
  REQUIRE(expected.exit_code == 0);

  // write.csv2: "";"times";"accel" then "1";2,4;0 (semicolons, decimal commas, row names).
  spit(s / "csv2.csv", rewrite([](int i, std::string line) {
         line = replace_all(replace_all(line, ',', ";"), '.', ",");
         return (i == 0 ? std::string("\"\";") : "\"" + std::to_string(i) + "\";") + line + "\n";
       }));
  const std::string csv2 = (s / "csv2.csv").string();
  Result r = run_nwreg({"fit", csv2, "-b", "2"});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "nwreg: error: " + csv2 + ":2: column \"times\": cannot parse \"2,4\" as a number (a decimal comma? "
                                          "give --decimal ,)\n");
  r = run_nwreg({"fit", csv2, "-b", "2", "--decimal", ","});
  CHECK(r.exit_code == 0);
  CHECK(r.out == expected.out);
  // Forcing the wrong delimiter says which one the file uses.
  r = run_nwreg({"fit", csv2, "-b", "2", "--decimal", ",", "--delimiter", "|"});
  CHECK(r.err == "nwreg: error: " + csv2 +
                     ":1: unexpected text after a closing quote (the fields look separated by ';': give --delimiter ';')\n");
  // A point is not read as a decimal mark then (in a German file 1.000 is a thousand).
  r = run_nwreg({"fit", "-", "-b", "2", "--decimal", ","}, "x;y\n1,5;1\n1.000;2\n");
  CHECK(r.err == "nwreg: error: <stdin>:3: column \"x\": cannot parse \"1.000\" as a number: with --decimal , a "
                 "point is not a decimal mark\n");
  // Decimal commas in a tab-separated file, and quoted ones in a comma-separated file.
  const std::string tsv2 = replace_all(replace_all(plain(), ',', "\t"), '.', ",");
  CHECK(run_nwreg({"fit", "-", "-b", "2", "--decimal", ","}, tsv2).out == expected.out);
  const std::string quoted = rewrite([](int i, std::string line) {
    if (i == 0) return line + "\n";
    const auto comma = line.find(',');
    return "\"" + replace_all(line.substr(0, comma), '.', ",") + "\",\"" +
           replace_all(line.substr(comma + 1), '.', ",") + "\"\n";
  });
  CHECK(run_nwreg({"fit", "-", "-b", "2", "--decimal", ",", "--delimiter", ","}, quoted).out == expected.out);
  // ... and streamed queries in the same locale.
  r = run_nwreg({"predict", csv2, "-b", "2", "--decimal", ",", "--query", "-"}, "times\n2,4\n10\n");
  CHECK(r.exit_code == 0);
  const Result q = run_nwreg({"predict", (s / "plain.csv").string(), "-b", "2", "--query", "-"}, "times\n2.4\n10\n");
  CHECK(r.out == q.out);

  // write.csv's row names: the unnamed first column is skipped by the default columns, in
  // training and query files.
  spit(s / "rows.csv", rewrite([](int i, const std::string& line) {
         return (i == 0 ? std::string("\"\",") : "\"" + std::to_string(i) + "\",") + line + "\n";
       }));
  r = run_nwreg({"fit", (s / "rows.csv").string(), "-b", "2"});
  CHECK(r.out == expected.out);
  spit(s / "q.csv", "\"\",\"times\"\n\"a\",2.4\n\"b\",10\n");
  r = run_nwreg({"predict", (s / "rows.csv").string(), "-b", "2", "--query", (s / "q.csv").string()});
  CHECK(r.exit_code == 0);
  CHECK(r.out == q.out);

  // Tab, semicolon and bar found from the header line.
  for (const std::string d : {"\t", ";", "|"}) {
    CAPTURE(d);
    spit(s / "d.txt", rewrite([&](int, const std::string& line) { return replace_all(line, ',', d) + "\n"; }));
    r = run_nwreg({"fit", (s / "d.txt").string(), "-b", "2"});
    CHECK(r.out == expected.out);
  }
  // R's write.table: one space between fields, strings quoted, row names with a header one field
  // short; found without --delimiter, and with --delimiter space; runs of blanks (aligned
  // columns) are one separator.
  spit(s / "table.txt", rewrite([](int i, const std::string& line) {
         const std::string fields = replace_all(line, ',', " ");
         return (i == 0 ? std::string() : "\"" + std::to_string(i) + "\" ") + fields + "\n";
       }));
  r = run_nwreg({"fit", (s / "table.txt").string(), "-b", "2"});
  CHECK(r.err.empty());
  CHECK(r.out == expected.out);
  CHECK(run_nwreg({"fit", (s / "table.txt").string(), "-b", "2", "--delimiter", "space"}).out == expected.out);
  spit(s / "aligned.txt", rewrite([](int, const std::string& line) { return "  " + replace_all(line, ',', " \t  ") + "   \n"; }));
  CHECK(run_nwreg({"fit", (s / "aligned.txt").string(), "-b", "2"}).out == expected.out);
  // A header that fooled the detection (commas in its names) gets a hint at the first row.
  spit(s / "h.txt", "Temperature, C\tPressure, hPa\n1\t2\n");
  r = run_nwreg({"fit", (s / "h.txt").string(), "-b", "2"});
  CHECK(r.err == "nwreg: error: " + (s / "h.txt").string() +
                     ":2: expected 3 fields, found 1 (the fields look separated by tab: give --delimiter tab)\n");
  // A field that holds another delimiter names it.
  spit(s / "mixed.csv", "x,y\n1;2,3\n");
  r = run_nwreg({"fit", (s / "mixed.csv").string(), "-b", "2"});
  CHECK(r.err == "nwreg: error: " + (s / "mixed.csv").string() +
                     ":2: column \"x\": cannot parse \"1;2\" as a number (the fields look separated by ';': give "
                     "--delimiter ';')\n");
}

TEST_CASE("input formats: CR and CRLF line ends, files and streams") {
  Scratch s;
  const Result expected = run_nwreg({"fit", "-", "-b", "2"}, plain());
  REQUIRE(expected.exit_code == 0);
  const std::string cr = replace_all(plain(), '\n', "\r"), crlf = replace_all(plain(), '\n', "\r\n");
  for (const std::string& text : {cr, crlf}) {
    spit(s / "f.csv", text);
    CHECK(run_nwreg({"fit", (s / "f.csv").string(), "-b", "2"}).out == expected.out);
    CHECK(run_nwreg({"fit", "-", "-b", "2"}, text).out == expected.out);
  }
  // A field error names the physical line, as with LF.
  spit(s / "bad.csv", "x,y\r1,2\r3,abc\r");
  const Result r = run_nwreg({"fit", (s / "bad.csv").string(), "-b", "2"});
  CHECK(r.err == "nwreg: error: " + (s / "bad.csv").string() + ":3: column \"y\": cannot parse \"abc\" as a number\n");
  // Queries on stdin, read whole (csv) or line by line (jsonl), CR and CRLF alike.
  const Result lf = run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--query", "-"}, "times\n2.4\n10\n");
  CHECK(run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--query", "-"}, "times\r2.4\r10\r").out == lf.out);
  CHECK(run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--query", "-"}, "times\r\n2.4\r\n10\r\n").out == lf.out);
  const Result lf_jsonl =
      run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--query", "-", "--format", "jsonl"}, "times\n2.4\n10\n");
  for (const std::string text : {"times\r2.4\r10\r", "times\r\n2.4\r\n10\r\n", "times\r2.4\n10\r\n"})
    CHECK(run_nwreg({"predict", data("mcycle.csv"), "-b", "2", "--query", "-", "--format", "jsonl"}, text).out ==
          lf_jsonl.out);
}

TEST_CASE("input formats: gzip-compressed files and stdin are read directly") {
  Scratch s;
  spit(s / "m.csv", slurp(data("mcycle.csv")));
  const std::string gz = (s / "m.csv.gz").string();
  REQUIRE(std::system(("gzip -c " + (s / "m.csv").string() + " > " + gz).c_str()) == 0);
  const Result expected = run_nwreg({"fit", data("mcycle.csv")});
  CHECK(run_nwreg({"fit", gz}).out == expected.out);
  CHECK(run_nwreg({"fit", "-"}, slurp(gz)).out == expected.out);
  // Concatenated members read as one text (what zcat gives): here, a second header is a bad row.
  spit(s / "two.gz", slurp(gz) + slurp(gz));
  Result r = run_nwreg({"fit", (s / "two.gz").string()});
  CHECK(r.err == "nwreg: error: " + (s / "two.gz").string() + ":135: column \"times\": cannot parse \"times\" as a number\n");
  // Zero padding after the data (tape, some archivers) is read as zcat reads it; other trailing
  // bytes are refused.
  spit(s / "pad.gz", slurp(gz) + std::string(1000, '\0'));
  CHECK(run_nwreg({"fit", (s / "pad.gz").string()}).out == expected.out);
  CHECK(run_nwreg({"fit", "-"}, slurp(s / "pad.gz")).out == expected.out);
  spit(s / "junk.gz", slurp(gz) + "junk\n");
  r = run_nwreg({"fit", (s / "junk.gz").string()});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "nwreg: error: " + (s / "junk.gz").string() +
                     ": gzip input: bytes after the compressed data that are neither zero padding nor another gzip member\n");
  spit(s / "padjunk.gz", slurp(gz) + std::string(10, '\0') + "x");
  CHECK(run_nwreg({"fit", (s / "padjunk.gz").string()}).exit_code == 1);
  // Truncated and corrupt files, and a compressed stream read line by line.
  spit(s / "cut.gz", slurp(gz).substr(0, 500));
  r = run_nwreg({"fit", (s / "cut.gz").string()});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "nwreg: error: " + (s / "cut.gz").string() + ": gzip input: the compressed data end early (a truncated file)\n");
  spit(s / "bad.gz", "\x1f\x8b" + std::string(30, 'x'));
  r = run_nwreg({"fit", (s / "bad.gz").string()});
  CHECK(r.err == "nwreg: error: " + (s / "bad.gz").string() +
                     ": gzip input: the compressed data are corrupt (unknown compression method)\n");
  // Queries on stdin: compressed or not, in every format (answered as they are inflated).
  const std::string queries = "times\n2.4\n10\n";
  spit(s / "q.csv", queries);
  REQUIRE(std::system(("gzip -c " + (s / "q.csv").string() + " > " + (s / "q.csv.gz").string()).c_str()) == 0);
  CHECK(run_nwreg({"predict", data("mcycle.csv"), "--query", "-", "-b", "2"}, slurp(s / "q.csv.gz")).out ==
        run_nwreg({"predict", data("mcycle.csv"), "--query", "-", "-b", "2"}, queries).out);
  r = run_nwreg({"predict", data("mcycle.csv"), "--query", "-", "-b", "2", "--format", "jsonl"}, slurp(s / "q.csv.gz"));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "{\"times\":2.4,\"prediction\":-1.377446125821568}\n{\"times\":10,\"prediction\":-4.079768267307068}\n");
}

TEST_CASE("input formats: a pipe given as a path that pauses mid-file is read to its end") {
  // A FIFO whose writer stops for a moment after a few rows: the reader must wait for the rest,
  // not take the first short read for the end of the file (it used to fit on the first rows).
  Scratch s;
  const std::string fifo = (s / "fifo.csv").string();
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::ofstream out(fifo);
    out << "x,y\n0,0\n1,1\n2,4\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (int i = 3; i < 50; ++i) out << i << "," << (i * i) % 7 << "\n";
  });
  const Result r = run_nwreg({"fit", fifo, "-b", "1", "--format", "json"});
  writer.join();
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"n\": 50") != std::string::npos);
}

TEST_CASE("output formats: each file's format follows its name, --format overrides") {
  Scratch s;
  const std::string mc = data("mcycle.csv");
  const Result csv = run_nwreg({"predict", mc, "-b", "2", "--grid", "0:3:1"});
  REQUIRE(csv.exit_code == 0);
  // .tsv: the same table, tab-separated.
  const std::string tsv = (s / "p.tsv").string();
  REQUIRE(run_nwreg({"predict", mc, "-b", "2", "--grid", "0:3:1", "-o", tsv}).exit_code == 0);
  CHECK(slurp(tsv) == replace_all(csv.out, ',', "\t"));
  CHECK(run_nwreg({"predict", mc, "-b", "2", "--grid", "0:3:1", "--format", "tsv"}).out == slurp(tsv));
  // .ndjson is JSON lines, as .jsonl.
  const std::string nd = (s / "p.ndjson").string();
  REQUIRE(run_nwreg({"predict", mc, "-b", "2", "--grid", "0:2:1", "-o", nd}).exit_code == 0);
  CHECK(slurp(nd) == "{\"times\":0,\"prediction\":-1.1104407154637506}\n{\"times\":1,\"prediction\":-1.2049890353781785}\n");
  // --weights by its own name: tsv, jsonl (wide and long); --format overrides the name.
  const std::string wcsv = (s / "w.csv").string(), wtsv = (s / "w.tsv").string(), wj = (s / "w.jsonl").string();
  for (const std::string layout : {"wide", "long"}) {
    CAPTURE(layout);
    REQUIRE(run_nwreg({"predict", mc, "-b", "20", "--grid", "0:2:1", "--weights-layout", layout, "--weights", wcsv})
                .exit_code == 0);
    REQUIRE(run_nwreg({"predict", mc, "-b", "20", "--grid", "0:2:1", "--weights-layout", layout, "--weights", wtsv})
                .exit_code == 0);
    CHECK(slurp(wtsv) == replace_all(slurp(wcsv), ',', "\t"));
    REQUIRE(run_nwreg({"predict", mc, "-b", "20", "--grid", "0:2:1", "--weights-layout", layout, "--weights", wj})
                .exit_code == 0);
    const std::string text = slurp(wj);
    CHECK(text.rfind(layout == "wide" ? "{\"times\":0,\"weights\":[0.014946888233335683," : "{\"query\":1,\"times\":0,\"key\":1,\"key_times\":2.4,"
                                                                                              "\"weight\":0.014946888233335683}\n",
                     0) == 0);
    CHECK(std::count(text.begin(), text.end(), '\n') == (layout == "wide" ? 2 : 2 * 133));
  }
  REQUIRE(run_nwreg({"predict", mc, "-b", "20", "--grid", "0:2:1", "--format", "json", "--weights", wcsv, "-o",
                     (s / "p.out").string()})
              .exit_code == 0);
  CHECK(slurp(wcsv).rfind("{\n  \"x_columns\": [\"times\"]", 0) == 0);
}
