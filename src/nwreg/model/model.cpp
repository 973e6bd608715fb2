#include "nwreg/model/model.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/json_writer.h"

namespace nwreg {

using Json = nlohmann::ordered_json;

namespace {

// Rows [first, first + rows) of a row-major matrix of `cols` columns, as an array of arrays.
Json matrix(const std::vector<double>& v, std::size_t first, std::size_t rows, std::size_t cols) {
  Json out = Json::array();
  for (std::size_t r = 0; r < rows; ++r) {
    const auto at = v.begin() + static_cast<std::ptrdiff_t>(first + r * cols);
    out.push_back(std::vector<double>(at, at + static_cast<std::ptrdiff_t>(cols)));
  }
  return out;
}

// A score's parameters by name: general {"W"}, additive {"w_v", "W_q", "W_k", "b"}.
Json score_parameters(const ScoreParameters& p) {
  Json out = Json::object();
  const std::size_t d = p.d, H = p.hidden;
  const std::vector<double>& t = p.theta;
  if (p.score == Score::general) out["W"] = matrix(t, 0, d, d);
  if (p.score == Score::additive) {
    out["w_v"] = std::vector<double>(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(H));
    out["W_q"] = matrix(t, H, H, d);
    out["W_k"] = matrix(t, H + H * d, H, d);
    if (p.bias) out["b"] = std::vector<double>(t.begin() + static_cast<std::ptrdiff_t>(H + 2 * H * d), t.end());
  }
  return out;
}

// Each categorical column's levels in order: labels, or numbers for an ordered column of
// numbers (whose values are the numbers); null for the other columns.
Json levels_json(const Model& m) {
  Json levels = Json::array();
  for (std::size_t k = 0; k < m.x_columns.size(); ++k) {
    if (k >= m.levels.size() || !is_categorical(column_kind(m, k))) {
      levels.push_back(nullptr);
    } else if (m.levels[k].numeric) {
      levels.push_back(m.levels[k].values);
    } else {
      levels.push_back(m.levels[k].labels);
    }
  }
  return levels;
}

// The descent's stop reason and its history, an epoch a line.
void write_history(JsonObjectWriter& w, const Model& m) {
  w.field("stop_reason", m.stop_reason);
  w.begin_array("history");
  for (const auto& e : m.history) {
    Json rec;
    rec["epoch"] = e.epoch;
    if (!e.metric.empty()) rec["metric"] = e.metric;
    else if (!e.bandwidth.empty()) rec["bandwidth"] = e.bandwidth;
    rec["loss"] = e.loss;
    const auto finite = [](const std::vector<double>& v) {
      return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
    };
    if (!std::isfinite(e.loss) || !finite(e.bandwidth) || !finite(e.metric))
      throw DataError("the loss history holds a number that is not finite");
    w.element(rec.dump());
  }
  w.end_array();
}

}  // namespace

void write_model_fields(JsonObjectWriter& w, const Model& m) {
  const bool distance = m.score.distance();
  if (distance) w.field("kernel", to_string(m.kernel));
  else w.field("score", to_string(m.score.score));
  w.field("method", to_string(m.method));
  if (m.method == Method::local_polynomial) w.field("degree", m.degree);
  if (m.leave_out) w.field("leave_out", m.leave_out);
  if (distance) w.field("bandwidth", m.bandwidth);
  if (m.score.score == Score::additive) w.field("hidden", m.score.hidden);
  if (!m.score.theta.empty()) w.field("parameters", score_parameters(m.score));
  if (m.neighbour_policy) {
    if (m.neighbour_policy.kind == Neighbours::span) w.field("span", m.neighbour_policy.F);
    else w.field(to_string(m.neighbour_policy.kind), m.neighbour_policy.K);
  }
  if (m.robust) w.field("robust", m.robust);
  if (m.lowess_window) w.field("window", "lowess");
  const bool any_time = std::any_of(m.x_kinds.begin(), m.x_kinds.end(), [](ColumnKind k) { return is_time(k); });
  const bool any_categorical = std::any_of(m.x_kinds.begin(), m.x_kinds.end(), [](ColumnKind k) { return is_categorical(k); });
  if (any_time && distance) {
    Json readable = Json::array();  // "6 h" for a time column, null for others
    for (std::size_t k = 0; k < m.bandwidth.size(); ++k)
      readable.push_back(is_time(column_kind(m, k)) ? Json(format_duration(m.bandwidth[k])) : Json(nullptr));
    w.field("bandwidth_readable", readable);
  }
  if (any_categorical) w.field("categorical_kernel", to_string(m.categorical));
  if (any_categorical && m.categorical_in_fit) w.field("categorical_fit", "line");
  if (m.metric.rank) {
    Json rows = Json::array();
    const std::size_t d = m.x_columns.size();
    for (std::size_t a = 0; a < m.metric.rank; ++a)
      rows.push_back(std::vector<double>(m.metric.a.begin() + static_cast<std::ptrdiff_t>(a * d),
                                         m.metric.a.begin() + static_cast<std::ptrdiff_t>((a + 1) * d)));
    w.field("metric", rows);
  }
  w.field("bandwidth_source", m.bandwidth_source);
  w.field("x_columns", m.x_columns);
  if (any_time || any_categorical) {
    Json kinds = Json::array();
    for (std::size_t k = 0; k < m.x_columns.size(); ++k) kinds.push_back(to_string(column_kind(m, k)));
    w.field("x_kinds", kinds);
  }
  if (std::any_of(m.x_offsets.begin(), m.x_offsets.end(), [](const UtcOffset& o) { return o.has_value(); })) {
    Json offsets = Json::array();  // "+01:00" for a time column written at that offset, null for others
    for (std::size_t k = 0; k < m.x_columns.size(); ++k) {
      const UtcOffset o = column_offset(m, k);
      offsets.push_back(o ? Json(format_utc_offset(*o)) : Json(nullptr));
    }
    w.field("x_offsets", offsets);
  }
  if (any_categorical) w.field("levels", levels_json(m));
  w.field("y_column", m.y_column);
  if (!m.sample_weight.empty()) w.field("sample_weight", m.sample_weight);
  w.field("n", m.n);
  w.field("checksum", m.checksum);
  auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  w.field("loo_mse", opt(m.loo_mse));
  if (m.loo_r2) w.field("loo_r2", opt(m.loo_r2));
  if (m.neighbours) w.field("neighbours", opt(m.neighbours));
  if (!m.reach.min.empty()) {
    auto column = [](const std::vector<double>& v) {
      Json a = Json::array();
      for (double x : v) a.push_back(std::isnan(x) ? Json(nullptr) : Json(x));
      return a;
    };
    w.field("reach", Json{{"min", column(m.reach.min)}, {"median", column(m.reach.median)}, {"max", column(m.reach.max)}});
  }
  if (m.df) w.field("df", opt(m.df));
  if (m.criterion) {
    w.field("criterion", to_string(*m.criterion));
    w.field("criterion_value", opt(m.criterion_value));
  }
  if (!m.warnings.empty()) w.field("warnings", m.warnings);
  if (!m.history.empty()) write_history(w, m);
}

void write_model(std::ostream& out, const Model& m) {
  JsonObjectWriter w(out);
  w.field("format", Json(model_format));
  w.field("version", Json(model_format_version));
  write_model_fields(w, m);
  if (!m.robustness.empty()) w.field("robustness", m.robustness);  // the file's only: n numbers
  w.finish();
}

namespace {

// Reads the whole stream, at most max_model_bytes; read errors name the source.
std::string read_bounded(std::istream& in, const std::string& source) {
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_model_bytes)
      throw InputError(source, 0, "", "larger than 64 MiB: not a model file nwreg wrote");  // max_model_bytes
  }
  if (in.bad()) throw InputError(source, 0, "", "cannot read: input/output error");
  return text;
}

// A short description of an untrusted JSON value for a message: never its whole text.
std::string describe_value(const Json& v) {
  if (v.is_number_integer() || v.is_number_float() || v.is_boolean() || v.is_null()) return v.dump();
  if (v.is_string()) return quote(v.get_ref<const std::string&>());
  return v.is_array() ? "an array" : "an object";
}

}  // namespace

namespace {

InputError unusable(const std::string& source, const std::string& what) {
  return InputError(source, 0, "", "not a usable nwreg model: " + what);
}

// The model file's JSON, nesting refused past max_model_depth.
Json parse_model_json(const std::string& text, const std::string& source) {
  Json j;
  try {
    // Nesting is refused past max_model_depth while parsing: nothing deeper is ever built,
    // dumped or destroyed (100,000 levels would overflow the stack).
    j = Json::parse(text, [&](int depth, Json::parse_event_t, Json&) {
      if (depth > max_model_depth)
        throw InputError(source, 0, "",
                         "not a usable nwreg model: nested deeper than " + std::to_string(max_model_depth) + " levels");
      return true;
    });
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for numbers like 1e7161
    throw InputError(source, 0, "", "not a valid JSON model file: " + escape_excerpt(e.what(), 200));
  }
  return j;
}

// The x columns' kinds and, for categorical ones, their kernel and levels.
void read_columns(const Json& j, Model& m, const std::string& source) {
  auto bad = [&](const std::string& what) { return unusable(source, what); };
  if (j.contains("x_kinds")) {
    for (const auto& kind : j.at("x_kinds").get<std::vector<std::string>>()) {
      const auto k = parse_column_kind(kind);
      if (!k) throw bad("\"x_kinds\": unknown kind " + quote(kind) + " (known: number, date, time, unordered, ordered)");
      m.x_kinds.push_back(*k);
    }
    if (m.x_kinds.size() != m.x_columns.size()) throw bad("\"x_kinds\" needs one kind per x column");
  }
  if (j.contains("x_offsets")) {
    const Json& list = j.at("x_offsets");
    if (!list.is_array() || list.size() != m.x_columns.size()) throw bad("\"x_offsets\" needs one entry per x column");
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (list[k].is_null()) {
        m.x_offsets.emplace_back();
        continue;
      }
      if (!is_time(column_kind(m, k)))
        throw bad("\"x_offsets\": entry " + std::to_string(k + 1) + " is for column " + quote(m.x_columns[k]) +
                  ", which holds no time stamps: null");
      const auto o = list[k].is_string() ? parse_utc_offset(list[k].get<std::string>()) : std::nullopt;
      if (!o)
        throw bad("\"x_offsets\": entry " + std::to_string(k + 1) + " must be an offset such as \"+01:00\", got " +
                  escape_excerpt(list[k].dump(), 40));
      m.x_offsets.push_back(o);
    }
  }
  if (std::none_of(m.x_kinds.begin(), m.x_kinds.end(), [](ColumnKind k) { return is_categorical(k); })) return;
  m.categorical = parse_categorical_kernel(j.value("categorical_kernel", "aitchison-aitken"));
  const std::string fit = j.value("categorical_fit", "weights");
  if (fit != "weights" && fit != "line") throw bad("\"categorical_fit\": expected weights or line, got " + quote(fit));
  m.categorical_in_fit = fit == "line";
  const Json& levels = j.at("levels");
  if (!levels.is_array() || levels.size() != m.x_columns.size()) throw bad("\"levels\" needs one entry per x column");
  m.levels.resize(m.x_columns.size());
  for (std::size_t k = 0; k < m.x_columns.size(); ++k) {
    if (!is_categorical(m.x_kinds[k])) continue;
    Levels& lv = m.levels[k];
    const Json& list = levels[k];
    if (!list.is_array() || list.empty()) throw bad("\"levels\": each categorical column needs a list of its levels");
    lv.numeric = m.x_kinds[k] == ColumnKind::ordered && list[0].is_number();
    for (const Json& v : list) {
      if (lv.numeric) {
        lv.values.push_back(v.get<double>());
        lv.labels.push_back(format_double(lv.values.back()));
      } else {
        lv.labels.push_back(v.get<std::string>());
        lv.values.push_back(static_cast<double>(lv.values.size()));
      }
    }
    if (!std::is_sorted(lv.values.begin(), lv.values.end()) ||
        std::adjacent_find(lv.values.begin(), lv.values.end()) != lv.values.end())
      throw bad("\"levels\": an ordered column's numbers must increase");
  }
}

// A score other than gaussian: its parameters (general: W; additive: w_v, W_q, W_k and b), each
// of the shape the x columns and H = the length of w_v give.
void read_score(const Json& j, Model& m, const std::string& source) {
  ScoreParameters& p = m.score;
  p.d = m.x_columns.size();
  const std::size_t d = p.d;
  if (m.method != Method::nw) throw unusable(source, "the " + to_string(p.score) + " score is for \"method\": \"nw\"");
  if (!score_def(p.score).learned) return;
  const Json& par = j.at("parameters");
  auto rows = [&](const char* name, std::size_t count) {
    const auto v = par.at(name).get<std::vector<std::vector<double>>>();
    if (v.size() != count) throw unusable(source, "\"" + std::string(name) + "\" needs " + std::to_string(count) + " rows");
    for (const auto& row : v) {
      if (row.size() != d) throw unusable(source, "each \"" + std::string(name) + "\" row needs one value per x column");
      p.theta.insert(p.theta.end(), row.begin(), row.end());
    }
  };
  if (p.score == Score::general) {
    rows("W", d);
    return;
  }
  const auto wv = par.at("w_v").get<std::vector<double>>();
  if (j.contains("hidden") && (!j.at("hidden").is_number_unsigned() || j.at("hidden").get<std::size_t>() != wv.size()))
    throw unusable(source, "\"hidden\" must be the number of values in \"w_v\" (" + std::to_string(wv.size()) + ")");
  p.hidden = std::min(wv.size(), max_hidden + 1);  // check_model says what is wrong with 0 or more
  if (p.hidden != wv.size()) return;
  p.theta = wv;
  rows("W_q", p.hidden);
  rows("W_k", p.hidden);
  p.bias = par.contains("b");
  if (p.bias) {
    const auto b = par.at("b").get<std::vector<double>>();
    if (b.size() != p.hidden) throw unusable(source, "\"b\" needs one value per unit of \"w_v\"");
    p.theta.insert(p.theta.end(), b.begin(), b.end());
  }
}

// The bandwidths (lambdas within their kernels' ranges) and the metric, against the columns.
void check_model(const Model& m, const std::string& source) {
  if (!m.score.distance()) {
    if (m.x_columns.empty()) throw unusable(source, "\"x_columns\" is empty");
    if (m.metric.rank || m.neighbour_policy || m.leave_out || std::any_of(m.x_kinds.begin(), m.x_kinds.end(), is_categorical))
      throw unusable(source, "the " + to_string(m.score.score) +
                                 " score takes no metric, neighbour bandwidth, leave-out or categorical column");
    try {
      check_score(m.score, "\"parameters\"");
    } catch (const UsageError& e) {
      throw unusable(source, e.what());
    }
  } else if (m.bandwidth.size() != m.x_columns.size() || m.bandwidth.empty())
    throw unusable(source, "\"bandwidth\" needs one value per x column");
  for (std::size_t k = 1; k < m.x_columns.size(); ++k)
    if (std::find(m.x_columns.begin(), m.x_columns.begin() + static_cast<std::ptrdiff_t>(k), m.x_columns[k]) !=
        m.x_columns.begin() + static_cast<std::ptrdiff_t>(k))
      throw unusable(source, "\"x_columns\" names " + quote(m.x_columns[k]) + " twice");
  if (m.leave_out > 0 && m.x_columns.size() != 1)
    throw unusable(source, "\"leave_out\" is for one x column");
  if (!m.robustness.empty() && m.robustness.size() != m.n)
    throw unusable(source, "\"robustness\" needs one weight per training row (" + std::to_string(m.n) + "), got " +
                               std::to_string(m.robustness.size()));
  // As strict as the command line: --robust takes at most max_robust iterations, and its
  // weights are what a robust model is (without them it would be the plain fit).
  if (m.robust > max_robust)
    throw unusable(source, "\"robust\" takes at most " + std::to_string(max_robust) + " iterations, got " +
                               std::to_string(m.robust));
  if (m.robust > 0 && m.robustness.empty())
    throw unusable(source, "\"robust\": " + std::to_string(m.robust) +
                               " needs its \"robustness\" weights, one per training row");
  if (m.robust == 0 && !m.robustness.empty()) throw unusable(source, "\"robustness\" weights without \"robust\"");
  // A neighbour count reaches at most the other rows (the engine's rule; --leave-out L leaves
  // 2L more out).
  if (m.neighbour_policy && m.neighbour_policy.kind != Neighbours::span && m.n > 0) {
    const std::size_t out = 2 * m.leave_out, most = m.n - 1 - std::min(out, m.n - 1);
    if (m.neighbour_policy.K > most)
      throw unusable(source, "\"" + to_string(m.neighbour_policy.kind) + "\": " + std::to_string(m.neighbour_policy.K) +
                                 " neighbours of " + std::to_string(m.n) + " training rows; at most " +
                                 std::to_string(most));
  }
  try {
    if (m.score.distance()) check_bandwidth(m.bandwidth, m.x_columns.size(), "bandwidth");
    for (std::size_t k = 0; k < m.levels.size(); ++k)
      if (is_categorical(column_kind(m, k)) &&
          m.bandwidth[k] > lambda_max(m.categorical, column_kind(m, k), m.levels[k].size()))
        throw UsageError("\"bandwidth\": x column " + quote(m.x_columns[k]) + " is categorical: its lambda must be at most " +
                         format_double(lambda_max(m.categorical, column_kind(m, k), m.levels[k].size())));
    if (m.metric.rank) check_metric(m.metric, m.x_columns.size(), "metric");
  } catch (const UsageError& e) {
    throw unusable(source, e.what());
  }
}

// The neighbour policy, the robustness iterations and their weights, and lowess's window.
void read_smoothing(const Json& j, Model& m, const std::string& source) {
  auto bad = [&](const std::string& what) { return unusable(source, what); };
  for (const NeighbourDef& n : neighbour_table)
    if (j.contains(n.name)) {
      if (m.neighbour_policy) throw bad("\"" + to_string(m.neighbour_policy.kind) + "\" and \"" + n.name + "\" exclude each other");
      if (n.fraction) {
        if (!j.at(n.name).is_number()) throw bad("\"" + std::string(n.name) + "\" must be a fraction of the rows > 0");
        m.neighbour_policy = {n.id, 0, j.at(n.name).get<double>()};
        check_span(m.neighbour_policy.F, "\"" + std::string(n.name) + "\"");
        continue;
      }
      if (!j.at(n.name).is_number_unsigned() || j.at(n.name).get<std::size_t>() == 0)
        throw bad("\"" + std::string(n.name) + "\" must be a whole number of neighbours >= 1");
      m.neighbour_policy = {n.id, j.at(n.name).get<std::size_t>()};
    }
  if (j.contains("robust")) {
    if (!j.at("robust").is_number_unsigned()) throw bad("\"robust\" must be a whole number of iterations");
    m.robust = j.at("robust").get<std::size_t>();
  }
  if (j.contains("window")) {
    const Json& v = j.at("window");
    if (!v.is_string() || (v.get<std::string>() != "lowess" && v.get<std::string>() != "loess"))
      throw bad("\"window\" must be \"lowess\" (R lowess's: keys past 0.999 h weigh 0) or \"loess\", got " +
                escape_excerpt(v.dump(), 40));
    m.lowess_window = v.get<std::string>() == "lowess";
  }
  if (j.contains("robustness")) {
    m.robustness = j.at("robustness").get<std::vector<double>>();
    for (double v : m.robustness)
      if (!(v >= 0 && v <= 1)) throw bad("\"robustness\" holds weights between 0 and 1, got " + format_double(v));
  }
}

}  // namespace

Model read_model(std::istream& in, const std::string& source) {
  const Json j = parse_model_json(read_bounded(in, source), source);
  auto bad = [&](const std::string& what) { return unusable(source, what); };
  if (!j.is_object() || j.value("format", Json()) != Json(model_format))
    throw bad("no \"format\": \"nwreg-model\" field");
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<long long>() != model_format_version)
    throw bad("format version " + (j.contains("version") ? describe_value(j["version"]) : "missing") +
              ", this nwreg reads version " + std::to_string(model_format_version));
  Model m;
  try {
    if (j.contains("score")) m.score.score = parse_score(j.at("score").get<std::string>());
    if (m.score.distance()) m.kernel = parse_kernel(j.at("kernel").get<std::string>());
    m.method = parse_method(j.value("method", "nw"));
    if (m.method == Method::local_polynomial) {
      if (!j.at("degree").is_number_unsigned()) throw bad("\"degree\" must be a whole number");
      m.degree = j.at("degree").get<std::size_t>();
      check_degree(m.degree);
    }
    if (j.contains("leave_out")) {
      if (!j.at("leave_out").is_number_unsigned()) throw bad("\"leave_out\" must be a whole number of keys");
      m.leave_out = j.at("leave_out").get<std::size_t>();
    }
    if (m.score.distance()) m.bandwidth = j.at("bandwidth").get<std::vector<double>>();
    read_smoothing(j, m, source);
    m.x_columns = j.at("x_columns").get<std::vector<std::string>>();
    m.y_column = j.at("y_column").get<std::string>();
    if (!m.score.distance()) read_score(j, m, source);
    read_columns(j, m, source);
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
    if (j.contains("criterion") && !j.at("criterion").is_null())
      m.criterion = parse_criterion(j.at("criterion").get<std::string>());
    if (j.contains("warnings")) m.warnings = j.at("warnings").get<std::vector<std::string>>();
    for (auto [key, field] : {std::pair{"loo_mse", &m.loo_mse}, {"loo_r2", &m.loo_r2}, {"neighbours", &m.neighbours},
                              {"df", &m.df}, {"criterion_value", &m.criterion_value}})
      if (j.contains(key) && j[key].is_number()) *field = j[key].get<double>();
  } catch (const Json::exception& e) {
    throw bad("a required field is missing or has the wrong type (" + escape_excerpt(e.what(), 200) + ")");
  } catch (const ParameterError& e) {  // the field that holds it
    throw bad("\"" + e.parameter() + "\": " + e.what());
  } catch (const UsageError& e) {
    throw bad(e.what());
  }
  check_model(m, source);
  return m;
}

}  // namespace nwreg
