#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "nwreg/data/csv.h"
#include "nwreg/data/dataset.h"
#include "nwreg/base/errors.h"

using namespace nwreg;

namespace {

std::vector<std::string> split(std::string line, char delim = ',') {
  std::vector<std::string_view> f;
  split_fields(line.data(), delim, f, "t.csv", 7);
  return {f.begin(), f.end()};
}

Dataset read_text(const std::string& text, CsvOptions opts = {}, ColumnChoice cols = {}) {
  std::istringstream in(text);
  CsvReader r(in, "t.csv", opts);
  return read_dataset(r, cols);
}

}  // namespace

TEST_CASE("split_fields: plain, quoted, escaped quotes, blanks, empty fields") {
  CHECK(split("1,2,3") == std::vector<std::string>{"1", "2", "3"});
  CHECK(split(" 1 ,\t2 ") == std::vector<std::string>{"1", "2"});
  CHECK(split("\"a,b\",\"say \"\"hi\"\"\"") == std::vector<std::string>{"a,b", "say \"hi\""});
  CHECK(split(" \"x\" ,y") == std::vector<std::string>{"x", "y"});
  CHECK(split("1,,3,") == std::vector<std::string>{"1", "", "3", ""});
  CHECK(split("1\t2", '\t') == std::vector<std::string>{"1", "2"});
  CHECK(split("a;b", ';') == std::vector<std::string>{"a", "b"});
}

TEST_CASE("split_fields: broken quotes name file and line") {
  CHECK_THROWS_WITH_AS(split("\"abc,1"), "t.csv:7: unterminated quoted field (a field cannot span lines)",
                       InputError);
  CHECK_THROWS_WITH_AS(split("\"a\"b,1"), "t.csv:7: unexpected text after a closing quote", InputError);
}

TEST_CASE("parse_delimiter") {
  CHECK(parse_delimiter(",") == ',');
  CHECK(parse_delimiter("tab") == '\t');
  CHECK(parse_delimiter("\\t") == '\t');
  CHECK(parse_delimiter(";") == ';');
  CHECK(parse_delimiter("space") == ' ');
  CHECK(parse_delimiter(" ") == ' ');
  CHECK_THROWS_WITH_AS(parse_delimiter(",,"), "must be one character, \"tab\" or \"space\", got \",,\"",
                       UsageError);
  CHECK_THROWS_AS(parse_delimiter("\""), UsageError);
}

TEST_CASE("blanks as the delimiter: runs of spaces and tabs, found where no other delimiter is") {
  // R's write.table, row names under a header one field short: an unnamed first column (the
  // CLI's default columns skip it), the first data row still read.
  ColumnChoice after_names;
  after_names.x_position = 1;
  after_names.y_position = 2;
  for (const std::string text : {"\"a\" \"b\"\n\"1\" 1 2\n\"2\" 3 4\n", "a,b\nr1,1,2\nr2,3,4\n"}) {
    CAPTURE(text);
    std::istringstream in(text);
    CsvReader r(in, "t.csv", CsvOptions{});
    CHECK(r.row_names());
    CHECK(r.column_count() == 3);
    const Dataset d = read_dataset(r, after_names);
    CHECK(d.x_names == std::vector<std::string>{"a"});
    CHECK(d.x == std::vector<double>{1, 3});
    CHECK(d.y == std::vector<double>{2, 4});
  }
  // A trailing delimiter is no row name: the row has a field too many.
  CHECK_THROWS_WITH_AS(read_text("a,b\n1,2,\n"), "t.csv:2: expected 2 fields, found 3", InputError);
  const Dataset d = read_text("  a    b\n 1   2  \n3\t4\n");
  CHECK(d.x == std::vector<double>{1, 3});
  CHECK(d.y == std::vector<double>{2, 4});
  // One field a line: no blanks between fields, a comma file of one column.
  CHECK(detect_delimiter("\"a b\"", '.') == ',');
  CHECK(detect_delimiter(" a ", '.') == ',');
  CHECK(detect_delimiter("a b", '.') == ' ');
}

TEST_CASE("a header is detected when the first row is not all numbers") {
  Dataset d = read_text("a,b\n1,2\n3,4\n");
  CHECK(d.x_names == std::vector<std::string>{"a"});
  CHECK(d.y_name == "b");
  CHECK(d.x == std::vector<double>{1, 3});
  CHECK(d.y == std::vector<double>{2, 4});

  Dataset n = read_text("1,2\n3,4\n");
  CHECK(n.n == 2);
  CHECK(n.x_names == std::vector<std::string>{"x"});
  CHECK(n.y_name == "y");
}

TEST_CASE("--no-header reads the first row as data, present forces a header") {
  CsvOptions o;
  o.header = HeaderMode::absent;
  CHECK_THROWS_WITH_AS(read_text("a,b\n1,2\n", o), "t.csv:1: column 1: cannot parse \"a\" as a number",
                       InputError);
  o.header = HeaderMode::present;
  Dataset d = read_text("10,20\n1,2\n", o);
  CHECK(d.x_names == std::vector<std::string>{"10"});
  CHECK(d.n == 1);
}

TEST_CASE("R's write.csv style: BOM, quoted header, CRLF, blanks, trailing blank lines") {
  Dataset d = read_text("\xEF\xBB\xBF\"times\",\"accel\"\r\n 2.4 ,\"0\"\r\n\r\n2.6,-1.3\r\n\r\n\n  \n");
  CHECK(d.x_names == std::vector<std::string>{"times"});
  CHECK(d.y_name == "accel");
  CHECK(d.x == std::vector<double>{2.4, 2.6});
  CHECK(d.y == std::vector<double>{0, -1.3});
}

TEST_CASE("columns are chosen by name, else by 1-based index") {
  ColumnChoice c;
  c.x = {"c"};
  c.y = "1";
  Dataset d = read_text("a,b,c\n1,2,3\n4,5,6\n", {}, c);
  CHECK(d.x == std::vector<double>{3, 6});
  CHECK(d.y == std::vector<double>{1, 4});
  CHECK(d.x_names == std::vector<std::string>{"c"});
  CHECK(d.y_name == "a");
}

TEST_CASE("columns not chosen may hold anything") {
  ColumnChoice c;
  c.x = {"x"};
  c.y = "y";
  Dataset d = read_text("id,x,y\nfoo,1,2\n,3,4\n", {}, c);
  CHECK(d.y == std::vector<double>{2, 4});
}

TEST_CASE("bad content: one message naming file, line and column") {
  CHECK_THROWS_WITH_AS(read_text("x,y\n1,2\n3,abc\n"), "t.csv:3: column \"y\": cannot parse \"abc\" as a number",
                       InputError);
  CHECK_THROWS_WITH_AS(read_text("x,y\n1,2\n3,\n"), "t.csv:3: column \"y\": missing value (empty field); give `na` skip to drop rows with missing values",
                       InputError);
  CHECK_THROWS_WITH_AS(read_text("x,y\n1,2\nnan,1\n"), "t.csv:3: column \"x\": missing value \"nan\"; give `na` skip to drop rows with missing values",
                       InputError);
  CHECK_THROWS_WITH_AS(read_text("x,y\n1,2\n-inf,1\n"), "t.csv:3: column \"x\": \"-inf\" is not a finite number",
                       InputError);
  CHECK_THROWS_WITH_AS(read_text("x,y\n1,1e999\n"), "t.csv:2: column \"y\": \"1e999\" is out of the range of a double",
                       InputError);
  CHECK_THROWS_WITH_AS(read_text("x,y\n1,2\n\n3,4,5\n"), "t.csv:4: expected 2 fields, found 3", InputError);
  CHECK_THROWS_WITH_AS(read_text("x,y\n1,2\n3\n"), "t.csv:3: expected 2 fields, found 1", InputError);
  CHECK_THROWS_WITH_AS(read_text("1,2\n3,x\n"), "t.csv:2: column 2: cannot parse \"x\" as a number", InputError);
}

TEST_CASE("empty inputs") {
  CHECK_THROWS_WITH_AS(read_text(""), "t.csv: the file is empty", InputError);
  CHECK_THROWS_WITH_AS(read_text("\n \n\r\n"), "t.csv: the file is empty", InputError);
  CHECK_THROWS_WITH_AS(read_text("x,y\n"), "t.csv: no data rows after the header", InputError);
  CHECK_THROWS_WITH_AS(read_text("x,y\n\n\n"), "t.csv: no data rows after the header", InputError);
}

TEST_CASE("unknown columns are usage errors naming the option") {
  ColumnChoice c;
  c.x = {"nope"};
  CHECK_THROWS_WITH_AS(read_text("a,b\n1,2\n", {}, c),
                       "-x: no column named \"nope\" in t.csv (columns: a, b)", UsageError);
  c.x = {"1"};
  c.y = "3";
  CHECK_THROWS_WITH_AS(read_text("a,b\n1,2\n", {}, c), "-y: column 3 does not exist: t.csv has 2 columns",
                       UsageError);
  c.y = "0";
  CHECK_THROWS_AS(read_text("a,b\n1,2\n", {}, c), UsageError);
  c.y = "a";
  CHECK_THROWS_WITH_AS(read_text("a,b\n1,2\n", {}, c), "-y: column \"a\" is also an x column", UsageError);
}

TEST_CASE("files: missing, directory") {
  CHECK_THROWS_WITH_AS(CsvReader("/nonexistent/t.csv", {}), "/nonexistent/t.csv: cannot open: No such file or directory",
                       InputError);
  CHECK_THROWS_WITH_AS(CsvReader("/tmp", {}), "/tmp: is a directory, not a file", InputError);
}

TEST_CASE("tab-separated input") {
  CsvOptions o;
  o.delimiter = '\t';
  Dataset d = read_text("a\tb\n1\t2\n", o);
  CHECK(d.x == std::vector<double>{1});
  CHECK(d.y == std::vector<double>{2});
}

TEST_CASE("read_queries finds the x column by name, else takes the first column") {
  Dataset train = read_text("t,v\n1,2\n3,4\n");
  std::istringstream named("id,t\n7,0.5\n8,1.5\n");
  CsvReader r1(named, "q.csv", {});
  CHECK(read_queries(r1, train) == std::vector<double>{0.5, 1.5});
  std::istringstream plain("0.25\n0.75\n");
  CsvReader r2(plain, "q.csv", {});
  CHECK(read_queries(r2, train) == std::vector<double>{0.25, 0.75});
}

TEST_CASE("checksum depends on values and order") {
  Dataset a = read_text("x,y\n1,2\n3,4\n");
  Dataset b = read_text("x,y\n3,4\n1,2\n");
  Dataset c = read_text("p,q\n1,2\n3,4\n");
  CHECK(checksum(a).rfind("fnv1a64:", 0) == 0);
  CHECK(checksum(a).size() == 8 + 16);
  CHECK(checksum(a) != checksum(b));
  CHECK(checksum(a) == checksum(c));  // names do not count, values do
}

TEST_CASE("column_stats: sd (n-1), IQR (type 7), range, smallest gap") {
  Dataset d = read_text("x,y\n4,0\n1,0\n2,0\n2,0\n10,0\n");
  ColumnStats s = column_stats(d, 0);
  // values 1 2 2 4 10: mean 3.8, ss = 7.84+3.24+3.24+0.04+38.44 = 52.8, sd = sqrt(13.2)
  CHECK(s.sd == doctest::Approx(std::sqrt(13.2)).epsilon(1e-15));
  CHECK(s.iqr == 2.0);  // q1 = 2, q3 = 4
  CHECK(s.range == 9.0);
  CHECK(s.min_gap == 1.0);
}
