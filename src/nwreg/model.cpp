#include "nwreg/model.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "nwreg/errors.h"
#include "nwreg/writers.h"

namespace nwreg {

using Json = nlohmann::ordered_json;

void write_model(std::ostream& out, const Model& m) {
  JsonObjectWriter w(out);
  w.field("format", Json(model_format));
  w.field("version", Json(model_format_version));
  write_model_fields(w, m);
  w.finish();
}

Model read_model(std::istream& in, const std::string& source) {
  Json j;
  try {
    j = Json::parse(in);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for numbers like 1e7161
    throw InputError(source, 0, "", std::string("not a valid JSON model file: ") + e.what());
  }
  auto bad = [&](const std::string& what) -> InputError {
    return InputError(source, 0, "", "not a usable nwreg model: " + what);
  };
  if (!j.is_object() || j.value("format", Json()) != Json(model_format))
    throw bad("no \"format\": \"nwreg-model\" field");
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<long long>() != model_format_version)
    throw bad("format version " + (j.contains("version") ? j["version"].dump() : "missing") +
              ", this nwreg reads version " + std::to_string(model_format_version));
  Model m;
  try {
    m.kernel = parse_kernel(j.at("kernel").get<std::string>());
    m.method = parse_method(j.value("method", "nw"));
    m.bandwidth = j.at("bandwidth").get<std::vector<double>>();
    m.x_columns = j.at("x_columns").get<std::vector<std::string>>();
    m.y_column = j.at("y_column").get<std::string>();
    m.sample_weight = j.value("sample_weight", "");
    if (j.contains("metric")) {
      for (const auto& row : j.at("metric").get<std::vector<std::vector<double>>>()) {
        if (row.size() != m.x_columns.size()) throw bad("each \"metric\" row needs one value per x column");
        m.metric.a.insert(m.metric.a.end(), row.begin(), row.end());
        ++m.metric.rank;
      }
      if (m.metric.rank == 0) throw bad("\"metric\" has no rows");
    }
    // A number too big for size_t parses as a double, and casting that is undefined (fuzzer).
    if (!j.at("n").is_number_unsigned()) throw bad("\"n\" must be a whole number of rows");
    m.n = j.at("n").get<std::size_t>();
    m.checksum = j.at("checksum").get<std::string>();
    m.bandwidth_source = j.value("bandwidth_source", "model");
    for (auto [key, field] : {std::pair{"loo_mse", &m.loo_mse}, {"loo_r2", &m.loo_r2}, {"neighbours", &m.neighbours}})
      if (j.contains(key) && j[key].is_number()) *field = j[key].get<double>();
  } catch (const Json::exception& e) {
    throw bad(std::string("a required field is missing or has the wrong type (") + e.what() + ")");
  } catch (const UsageError& e) {
    throw bad(e.what());
  }
  if (m.bandwidth.size() != m.x_columns.size() || m.bandwidth.empty())
    throw bad("\"bandwidth\" needs one value per x column");
  try {
    check_bandwidth(m.bandwidth, m.x_columns.size(), "bandwidth");
    if (m.metric.rank) check_metric(m.metric, m.x_columns.size(), "metric");
  } catch (const UsageError& e) {
    throw bad(e.what());
  }
  return m;
}

}  // namespace nwreg
