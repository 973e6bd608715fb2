#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.h"
#include "nwreg/base/errors.h"
#include "nwreg/model/model.h"
#include "nwreg/io/plot.h"
#include "nwreg/io/svg.h"
#include "nwreg/io/writers.h"

using namespace nwreg;
using Json = nlohmann::json;

namespace {

Model model_for(const Dataset& d) {
  Model m;
  m.bandwidth = {0.5};
  m.bandwidth_source = "fixed";
  m.x_columns = d.x_names;
  m.y_column = d.y_name;
  m.n = d.n;
  m.checksum = checksum(d);
  return m;
}

std::string weights_text(Format f, WeightsLayout l, const std::string& x_name = "x") {
  Dataset d = testing::make_dataset({0, 1}, {1, 2});
  d.x_names = {x_name};
  const std::vector<double> q = {0.5, 2};
  const std::vector<std::vector<double>> rows = {{0.5, 0.5}, {0.25, 0.75}};
  std::ostringstream out;
  WeightsWriter w(out, f, l, d, q.data(), q.size());
  for (std::size_t i = 0; i < rows.size(); ++i) w.row(i, rows[i].data());
  w.finish();
  return out.str();
}

// Predictions of one value column through PredictionWriter, one row per query.
std::string predictions(Format f, const Model& m, const std::vector<double>& q, const std::vector<double>& p,
                        PredictionWriter::Columns columns = {}, const std::vector<std::string>& kept = {}) {
  if (columns.x.empty()) columns.x = m.x_columns;
  if (columns.values.empty()) columns.values = {"prediction"};
  std::ostringstream out;
  PredictionWriter w(out, f, m, columns);
  for (std::size_t i = 0; i < q.size(); ++i) {
    std::vector<std::string_view> k;
    for (std::size_t c = 0; c < columns.kept.size(); ++c) k.push_back(kept[i * columns.kept.size() + c]);
    w.row(k.data(), &q[i], &p[i]);
  }
  w.finish();
  return out.str();
}

}  // namespace

TEST_CASE("CSV predictions: x column name, then prediction, in shortest numbers") {
  const Dataset d = testing::make_dataset({0, 1}, {1, 2});
  const std::vector<double> q = {0.1, 0.30000000000000004}, p = {1.5, -2e-300};
  CHECK(predictions(Format::csv, model_for(d), q, p) == "x,prediction\n0.1,1.5\n0.30000000000000004,-2e-300\n");
  CHECK(predictions(Format::tsv, model_for(d), q, p) == "x\tprediction\n0.1\t1.5\n0.30000000000000004\t-2e-300\n");
}

TEST_CASE("CSV header names are quoted when they need it") {
  CHECK(csv_field("x") == "x");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field(" x") == "\" x\"");
}

TEST_CASE("JSON predictions: the model's fields, then records") {
  Dataset d = testing::make_dataset({0, 1}, {1, 2});
  d.x_names = {"times"};
  Model m = model_for(d);
  m.loo_mse = 0.25;
  m.history = {{0, {0.4}, 0.3, {}}, {1, {0.5}, 0.25, {}}};
  m.stop_reason = "tolerance";
  const std::vector<double> q = {0.5, 1.5}, p = {1.25, 1.75};
  const std::string text = predictions(Format::json, m, q, p);
  const Json j = Json::parse(text);
  CHECK(j["kernel"] == "gaussian");
  CHECK(j["bandwidth"] == Json::array({0.5}));
  CHECK(j["x_columns"] == Json::array({"times"}));
  CHECK(j["n"] == 2);
  CHECK(j["loo_mse"] == 0.25);
  CHECK(j["history"].size() == 2);
  CHECK(j["history"][1]["loss"] == 0.25);
  CHECK(j["predictions"] == Json::parse(R"([{"times":0.5,"prediction":1.25},{"times":1.5,"prediction":1.75}])"));
  CHECK(text.find("\n    {\"times\": 0.5, \"prediction\": 1.25},\n") != std::string::npos);
}

TEST_CASE("time x columns are written as ISO 8601: dates stay dates, JSON holds strings") {
  Dataset d = testing::make_dataset({0, 1}, {1, 2});
  d.x_names = {"day"};
  const Model m = model_for(d);
  const std::vector<double> q = {1709251200, 1709251200 + 6.5 * 3600}, p = {1, 2};  // 2024-03-01
  CHECK(predictions(Format::csv, m, q, p, {{}, {}, {ColumnKind::time}, {}, {}, {}, {}}) ==
        "day,prediction\n2024-03-01T00:00:00Z,1\n2024-03-01T06:30:00Z,2\n");
  CHECK(predictions(Format::csv, m, {q[0]}, p, {{}, {}, {ColumnKind::date}, {}, {}, {}, {}}) == "day,prediction\n2024-03-01,1\n");
  // A date column writes an instant that is not a whole day as a date-time.
  CHECK(predictions(Format::jsonl, m, q, p, {{}, {}, {ColumnKind::date}, {}, {}, {}, {}}) ==
        "{\"day\":\"2024-03-01\",\"prediction\":1}\n{\"day\":\"2024-03-01T06:30:00Z\",\"prediction\":2}\n");
  // At an offset: the local clock there and the offset, the same instant (a date stays a date).
  CHECK(predictions(Format::csv, m, q, p, {{}, {}, {ColumnKind::time}, {}, {}, {-330}, {}}) ==
        "day,prediction\n2024-02-29T18:30:00-05:30,1\n2024-03-01T01:00:00-05:30,2\n");
  CHECK(predictions(Format::csv, m, {q[0]}, p, {{}, {}, {ColumnKind::date}, {}, {}, {60}, {}}) == "day,prediction\n2024-03-01,1\n");
  CHECK(nwreg::parse_instant("2024-02-29T18:30:00-05:30") == q[0]);
  CHECK(nwreg::format_instant(q[1] + 0.25, false, 60) == "2024-03-01T07:30:00.25+01:00");
}

TEST_CASE("kept columns come first: text quoted for CSV, numbers as numbers in JSON") {
  const Dataset d = testing::make_dataset({0, 1}, {1, 2});
  const Model m = model_for(d);
  const std::vector<double> q = {0.5, 1.5}, p = {1, 2};
  const PredictionWriter::Columns c{{"id", "name"}, {"x"}, {}, {"prediction"}, {}, {}, {}};
  const std::vector<std::string> kept = {"7", "a,b", "0.50", "say \"hi\""};
  CHECK(predictions(Format::csv, m, q, p, c, kept) ==
        "id,name,x,prediction\n7,\"a,b\",0.5,1\n0.50,\"say \"\"hi\"\"\",1.5,2\n");
  CHECK(predictions(Format::jsonl, m, q, p, c, kept) ==
        "{\"id\":7,\"name\":\"a,b\",\"x\":0.5,\"prediction\":1}\n{\"id\":0.50,\"name\":\"say \\\"hi\\\"\",\"x\":1.5,\"prediction\":2}\n");
  // A JSON number that every reader takes as one double goes in digit for digit; other text (a
  // zip code, "+4") as a string, and so do numbers that jq, pandas and nwreg would read apart:
  // past a double (1e999), a nonzero underflowing to 0 (-1e-400), an integer past 2^53.
  const PredictionWriter::Columns one{{"id"}, {"x"}, {}, {"prediction"}, {}, {}, {}};
  CHECK(predictions(Format::jsonl, m, {0.5, 1.5, 2.5, 3.5}, {1, 2, 3, 4}, one, {"007", "12345678901234567890", "+4", "-1.5e-3"}) ==
        "{\"id\":\"007\",\"x\":0.5,\"prediction\":1}\n{\"id\":\"12345678901234567890\",\"x\":1.5,\"prediction\":2}\n"
        "{\"id\":\"+4\",\"x\":2.5,\"prediction\":3}\n{\"id\":-1.5e-3,\"x\":3.5,\"prediction\":4}\n");
  CHECK(predictions(Format::jsonl, m, {0.5, 1.5, 2.5, 3.5}, {1, 2, 3, 4}, one, {"1e999", "-1e-400", "0.0e5", "9007199254740992"}) ==
        "{\"id\":\"1e999\",\"x\":0.5,\"prediction\":1}\n{\"id\":\"-1e-400\",\"x\":1.5,\"prediction\":2}\n"
        "{\"id\":0.0e5,\"x\":2.5,\"prediction\":3}\n{\"id\":9007199254740992,\"x\":3.5,\"prediction\":4}\n");
}

TEST_CASE("a non-finite number is never written") {
  const Dataset d = testing::make_dataset({0, 1}, {1, 2});
  const std::vector<double> q = {0.5}, p = {NAN};
  std::ostringstream out;
  CHECK_THROWS_WITH_AS(predictions(Format::csv, model_for(d), q, p), "prediction 1 is not finite", DataError);
  Model m = model_for(d);
  m.loo_mse = INFINITY;
  CHECK_THROWS_WITH_AS(write_model(out, m), "field \"loo_mse\" holds a number that is not finite; JSON cannot hold it",
                       DataError);
}

TEST_CASE("weights: wide and long CSV") {
  CHECK(weights_text(Format::csv, WeightsLayout::wide) == "x,k1,k2\n0.5,0.5,0.5\n2,0.25,0.75\n");
  CHECK(weights_text(Format::csv, WeightsLayout::long_) ==
        "query,x,key,key_x,weight\n1,0.5,1,0,0.5\n1,0.5,2,1,0.5\n2,2,1,0,0.25\n2,2,2,1,0.75\n");
}

TEST_CASE("weights: an x column named as one of the layout's own columns is written with a suffix") {
  // Python's json keeps the last of two equal keys: {"query": 1, "query": 0.5} lost the row number.
  auto first_line = [](const std::string& text) { return text.substr(0, text.find('\n')); };
  CHECK(first_line(weights_text(Format::csv, WeightsLayout::long_, "query")) == "query,query.1,key,key_query,weight");
  CHECK(first_line(weights_text(Format::csv, WeightsLayout::long_, "key")) == "query,key.1,key,key_key,weight");
  CHECK(first_line(weights_text(Format::csv, WeightsLayout::wide, "k2")) == "k2.1,k1,k2");
  CHECK(first_line(weights_text(Format::csv, WeightsLayout::wide, "k3")) == "k3,k1,k2");  // two keys: no k3
  CHECK(first_line(weights_text(Format::csv, WeightsLayout::wide, "k02")) == "k02,k1,k2");
  CHECK(first_line(weights_text(Format::jsonl, WeightsLayout::wide, "weights")) == R"({"weights.1":0.5,"weights":[0.5,0.5]})");
  const Json lng = Json::parse(weights_text(Format::json, WeightsLayout::long_, "weight"));
  CHECK(lng[3] == Json::parse(R"({"query": 2, "weight.1": 2, "key": 2, "key_weight": 1, "weight": 0.75})"));
}

TEST_CASE("weights: wide and long JSON") {
  const Json wide = Json::parse(weights_text(Format::json, WeightsLayout::wide));
  CHECK(wide["x_columns"] == Json::array({"x"}));
  CHECK(wide["queries"] == Json::parse("[0.5, 2]"));
  CHECK(wide["keys"] == Json::parse("[0, 1]"));
  CHECK(wide["weights"] == Json::parse("[[0.5, 0.5], [0.25, 0.75]]"));
  const Json lng = Json::parse(weights_text(Format::json, WeightsLayout::long_));
  REQUIRE(lng.is_array());
  CHECK(lng.size() == 4);
  CHECK(lng[3] == Json::parse(R"({"query": 2, "x": 2, "key": 2, "key_x": 1, "weight": 0.75})"));
}

TEST_CASE("formats from names and paths") {
  CHECK(parse_format("csv", "--format") == Format::csv);
  CHECK(parse_format("json", "--format") == Format::json);
  CHECK_THROWS_WITH_AS(parse_format("xml", "--format"), "--format: unknown format \"xml\" (known: csv, tsv, json, jsonl)",
                       UsageError);
  CHECK(format_for_path("out.json", Format::csv) == Format::json);
  CHECK(format_for_path("OUT.JSON", Format::csv) == Format::json);
  CHECK(format_for_path("out.csv", Format::json) == Format::csv);
  CHECK(format_for_path("out.TSV", Format::csv) == Format::tsv);
  CHECK(format_for_path("out.ndjson", Format::csv) == Format::jsonl);
  CHECK(format_for_path("out.jsonl", Format::csv) == Format::jsonl);
  CHECK(format_for_path("out.txt", Format::json) == Format::json);
  CHECK(parse_format("tsv", "--format") == Format::tsv);
  CHECK(format_for_path("-", Format::csv) == Format::csv);
  CHECK(parse_layout("long") == WeightsLayout::long_);
  CHECK_THROWS_WITH_AS(parse_layout("tall"), "unknown layout \"tall\" (known: wide, long)",
                       UsageError);
}

TEST_CASE("surface plot: cells coloured by band, a row's run of one band one rectangle, no value left grey") {
  // Values 0.05 .. 0.95: bands at round tenths, 0 to 1 (ten bands). Row 0 (x2 = 0): 0.05, 0.05,
  // 0.95; row 1 (x2 = 1): none, 0.5, 0.5. The lattice 0, 1, 2 by 0, 1: cells a unit wide,
  // spanning -0.5 .. 2.5 by -0.5 .. 1.5 on 560 x 480 pixels from (80, 50).
  SurfacePlot p;
  p.g1 = {0, 1, 2};
  p.g2 = {0, 1};
  p.f = {0.05, 0.05, 0.95, NAN, 0.5, 0.5};
  p.x1 = {1};
  p.x2 = {0.5};
  p.x1_name = "a";
  p.x2_name = "b";
  p.y_name = "y";
  p.title = "t";
  std::ostringstream os;
  write_surface_svg(os, p);
  const std::string svg = os.str();
  const std::string cells = svg.substr(svg.find("<g class=\"surface\""), svg.find("</g>", svg.find("<g class=\"surface\"")) -
                                                                              svg.find("<g class=\"surface\""));
  // Three paths (bands 0, 5 and 9), four cells in three rectangles: each x is 560/3 = 186.67 px.
  CHECK(std::count(cells.begin(), cells.end(), 'M') == 3);
  CHECK(cells.find("d=\"M80.00 290.00H453.33V530.00H80.00z\"") != std::string::npos);    // row 0, cells 0-1
  CHECK(cells.find("d=\"M453.33 290.00H640.00V530.00H453.33z\"") != std::string::npos);  // row 0, cell 2
  CHECK(cells.find("d=\"M266.67 50.00H640.00V290.00H266.67z\"") != std::string::npos);   // row 1, cells 1-2
  const std::string bar = svg.substr(svg.find("class=\"colour-bar\""));
  for (const char* label : {">0</text>", ">0.5</text>", ">1</text>", ">y</text>"}) CHECK(bar.find(label) != std::string::npos);
  CHECK(std::count(bar.begin(), bar.end(), '\n') >= 10 + 1 + 11);  // ten blocks, the frame, eleven bounds
  CHECK(svg.find("grey: no key in reach") != std::string::npos);
  CHECK(svg.find("<circle cx=\"360.00\" cy=\"290.00\"") != std::string::npos);  // the point (1, 0.5)
}

TEST_CASE("surface plot: cells far from the data hatched over their colour, a row's run one rectangle, and said") {
  // The lattice of the test above; far: row 0's cells 1 and 2, row 1's cells 0 (no value: grey,
  // not hatched) and 2.
  SurfacePlot p;
  p.g1 = {0, 1, 2};
  p.g2 = {0, 1};
  p.f = {0.05, 0.05, 0.95, NAN, 0.5, 0.5};
  p.far = {0, 1, 1, 1, 0, 1};
  p.far_distance = 3;
  p.x1 = {1};
  p.x2 = {0.5};
  std::ostringstream os;
  write_surface_svg(os, p);
  const std::string svg = os.str();
  const std::size_t at = svg.find("<g class=\"far\"");
  REQUIRE(at != std::string::npos);
  CHECK(svg.find("<pattern id=\"far\"") < at);
  CHECK(svg.find("<g class=\"surface\"") < at);  // over the colours,
  CHECK(at < svg.find("<g class=\"points\""));   // under the points
  const std::string hatch = svg.substr(at, svg.find("</g>", at) - at);
  CHECK(hatch == "<g class=\"far\" shape-rendering=\"crispEdges\"><path fill=\"url(#far)\" d=\""
                 "M266.67 290.00H640.00V530.00H266.67z"  // row 0, cells 1-2
                 "M453.33 50.00H640.00V290.00H453.33z\"/>");  // row 1, cell 2
  CHECK(svg.find(">grey: no key in reach; hatched: more than 3 bandwidths from the data</text>") != std::string::npos);
  p.far.assign(6, 0);  // none far: no pattern, no word of it
  std::ostringstream none;
  write_surface_svg(none, p);
  CHECK(none.str().find("far") == std::string::npos);
  CHECK(none.str().find(">grey: no key in reach</text>") != std::string::npos);
}

TEST_CASE("axis ticks: labels that tell the ticks apart at any offset and scale, 0 beside %g labels as 0") {
  auto labels = [](double lo, double hi) {
    std::string s;
    for (const std::string& l : svg::nice_ticks(lo, hi).label) s += (s.empty() ? "" : " ") + l;
    return s;
  };
  CHECK(labels(0, 1) == "0.0 0.2 0.4 0.6 0.8 1.0");  // as before
  CHECK(labels(0, 5e6) == "0 1e+06 2e+06 3e+06 4e+06 5e+06");
  // A range of 10 at 1e15 (%g gave 1e+15 six times) and of 1 near -1e12:
  CHECK(labels(1e15, 1e15 + 10) ==
        "1000000000000000 1000000000000002 1000000000000004 1000000000000006 1000000000000008 1000000000000010");
  CHECK(labels(-1e12, -1e12 + 1) == "-1000000000000 -999999999999.8 -999999999999.6 -999999999999.4 -999999999999.2 -999999999999");
  // Near 1e-9 the tick at 0 was 0.0000000000, and near 1e-300 three hundred zeros.
  CHECK(labels(-6e-10, 6e-10) == "-6e-10 -4e-10 -2e-10 0 2e-10 4e-10 6e-10");
  CHECK(labels(0, 1e-300) == "0 2e-301 4e-301 6e-301 8e-301 1e-300");
}
