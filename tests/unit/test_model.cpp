#include <doctest/doctest.h>

#include <sstream>

#include "nwreg/base/errors.h"
#include "nwreg/model/model.h"

using namespace nwreg;

namespace {

Model sample() {
  Model m;
  m.bandwidth = {0.26854399465824996};
  m.bandwidth_source = "learned";
  m.x_columns = {"time (s)"};
  m.y_column = "acc\"el";
  m.n = 50;
  m.checksum = "fnv1a64:0123456789abcdef";
  m.loo_mse = 0.3700667174529142;
  m.history = {{0, {0.25}, 0.371, {}}, {1, {0.26854399465824996}, 0.3700667174529142, {}}};
  m.stop_reason = "tolerance";
  return m;
}

Model parse(const std::string& text) {
  std::istringstream in(text);
  return read_model(in, "m.json");
}

}  // namespace

TEST_CASE("a model survives writing and reading, numbers exactly") {
  std::ostringstream out;
  write_model(out, sample());
  const Model back = parse(out.str());
  CHECK(back.bandwidth == sample().bandwidth);
  CHECK(back.bandwidth_source == "learned");
  CHECK(back.x_columns == sample().x_columns);
  CHECK(back.y_column == "acc\"el");
  CHECK(back.n == 50);
  CHECK(back.checksum == sample().checksum);
  CHECK(*back.loo_mse == *sample().loo_mse);
  CHECK(out.str().rfind("{\n  \"format\": \"nwreg-model\",\n  \"version\": 1,\n  \"kernel\": \"gaussian\",", 0) == 0);
}

TEST_CASE("a broken model file gets one clear error naming it") {
  CHECK_THROWS_WITH_AS(parse("{not json"), doctest::Contains("m.json: not a valid JSON model file"), InputError);
  CHECK_THROWS_WITH_AS(parse("[1,2]"), "m.json: not a usable nwreg model: no \"format\": \"nwreg-model\" field",
                       InputError);
  CHECK_THROWS_WITH_AS(parse(R"({"format":"nwreg-model","version":2})"),
                       "m.json: not a usable nwreg model: format version 2, this nwreg reads version 1", InputError);
  CHECK_THROWS_WITH_AS(parse(R"({"format":"nwreg-model","version":1,"kernel":"gaussian"})"),
                       doctest::Contains("m.json: not a usable nwreg model: a required field is missing"), InputError);
  const std::string base =
      R"({"format":"nwreg-model","version":1,"kernel":"gaussian","x_columns":["x"],"y_column":"y","n":3,"checksum":"c",)";
  CHECK_THROWS_WITH_AS(parse(base + R"("bandwidth":[-1]})"),
                       "m.json: not a usable nwreg model: bandwidth: must be > 0, got -1", InputError);
  CHECK_THROWS_WITH_AS(parse(base + R"("bandwidth":[1,2]})"),
                       "m.json: not a usable nwreg model: \"bandwidth\" needs one value per x column", InputError);
  CHECK_THROWS_WITH_AS(parse(base + R"("bandwidth":["a"]})"),
                       doctest::Contains("a required field is missing or has the wrong type"), InputError);
  CHECK_THROWS_WITH_AS(parse(R"({"format":"nwreg-model","version":1,"kernel":"box","x_columns":["x"],"y_column":"y","n":3,"checksum":"c","bandwidth":[1]})"),
                       "m.json: not a usable nwreg model: \"kernel\": unknown kernel \"box\" (known: gaussian, laplace, epanechnikov, tricube, uniform)",
                       InputError);
  CHECK(parse(base + R"("bandwidth":[2]})").bandwidth == std::vector<double>{2});
}

TEST_CASE("a number beyond the double range is a clear error, not an escaped exception") {
  // Found by the model fuzzer: nlohmann throws out_of_range, not parse_error, for it.
  CHECK_THROWS_WITH_AS(parse(R"({"format":"nwreg-model","version":1e7161})"),
                       doctest::Contains("m.json: not a valid JSON model file: [json.exception.out_of_range.406]"),
                       InputError);
}

TEST_CASE("a row count beyond the integer range is a clear error, not undefined behaviour") {
  // Found by the model fuzzer: 6.6e79 parses as a double, and casting it to size_t is UB.
  const std::string base =
      R"({"format":"nwreg-model","version":1,"kernel":"gaussian","bandwidth":[1.5],"x_columns":["x"],"y_column":"y",)";
  CHECK_THROWS_WITH_AS(parse(base + R"("n":66666666666666666666666666666666666666666666666666666666666666666666666666666663,"checksum":"c"})"),
                       "m.json: not a usable nwreg model: \"n\" must be a whole number of rows", InputError);
  CHECK_THROWS_WITH_AS(parse(base + R"("n":-3,"checksum":"c"})"),
                       "m.json: not a usable nwreg model: \"n\" must be a whole number of rows", InputError);
  CHECK_THROWS_WITH_AS(parse(base + R"("n":2.5,"checksum":"c"})"),
                       "m.json: not a usable nwreg model: \"n\" must be a whole number of rows", InputError);
  CHECK(parse(base + R"("n":3,"checksum":"c"})").n == 3);
}
