#include "nwreg/writers.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "nwreg/errors.h"
#include "nwreg/model.h"
#include "nwreg/numbers.h"

namespace nwreg {

using Json = nlohmann::ordered_json;

namespace {

bool all_finite(const Json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_structured())
    return std::all_of(j.begin(), j.end(), [](const Json& e) { return all_finite(e); });
  return true;
}


void append_point(std::string& buf, const double* p, std::size_t d) {
  if (d == 1) return append_double(buf, p[0]);
  buf += '[';
  for (std::size_t k = 0; k < d; ++k) {
    if (k) buf += ',';
    append_double(buf, p[k]);
  }
  buf += ']';
}

}  // namespace

Format parse_format(const std::string& text, const std::string& option) {
  if (text == "csv") return Format::csv;
  if (text == "tsv") return Format::tsv;
  if (text == "json") return Format::json;
  if (text == "jsonl") return Format::jsonl;
  throw UsageError(option + ": unknown format " + quote(text) + " (known: csv, tsv, json, jsonl)");
}

char separator(Format format) { return format == Format::tsv ? '\t' : ','; }

bool has_extension(std::string_view path, std::string_view ext) {
  if (path.size() < ext.size()) return false;
  const std::string_view tail = path.substr(path.size() - ext.size());
  return std::equal(tail.begin(), tail.end(), ext.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

Format format_for_path(const std::string& path, Format fallback) {
  if (has_extension(path, ".csv")) return Format::csv;
  if (has_extension(path, ".tsv")) return Format::tsv;
  if (has_extension(path, ".json")) return Format::json;
  if (has_extension(path, ".jsonl") || has_extension(path, ".ndjson")) return Format::jsonl;
  return fallback;
}

WeightsLayout parse_layout(const std::string& text) {
  if (text == "wide") return WeightsLayout::wide;
  if (text == "long") return WeightsLayout::long_;
  throw UsageError("--weights-layout: unknown layout " + quote(text) + " (known: wide, long)");
}

std::string csv_field(const std::string& text, char sep) {
  const bool quote = text.find_first_of(std::string("\"\r\n") + sep) != std::string::npos ||
                     (!text.empty() && (std::isspace(static_cast<unsigned char>(text.front())) ||
                                        std::isspace(static_cast<unsigned char>(text.back()))));
  if (!quote) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void check_stream(std::ostream& out) {
  if (!out) throw OutputError(std::string("write failed: ") + std::strerror(errno), errno);
}

JsonObjectWriter::JsonObjectWriter(std::ostream& out) : out_(out) { out_ << '{'; }

void JsonObjectWriter::key(const std::string& k) {
  out_ << (first_field_ ? "\n  " : ",\n  ") << Json(k).dump() << ": ";
  first_field_ = false;
}

void JsonObjectWriter::field(const std::string& k, const Json& value) {
  if (!all_finite(value))
    throw DataError("field \"" + k + "\" holds a number that is not finite; JSON cannot hold it");
  key(k);
  out_ << value.dump();
}

void JsonObjectWriter::begin_array(const std::string& k) {
  key(k);
  out_ << '[';
  first_element_ = true;
}

void JsonObjectWriter::element(const std::string& text) {
  out_ << (first_element_ ? "\n    " : ",\n    ") << text;
  first_element_ = false;
  check_stream(out_);
}

void JsonObjectWriter::end_array() { out_ << (first_element_ ? "]" : "\n  ]"); }

void JsonObjectWriter::finish() {
  out_ << "\n}\n";
  out_.flush();
  check_stream(out_);
}

void write_model_fields(JsonObjectWriter& w, const Model& m) {
  w.field("kernel", to_string(m.kernel));
  w.field("method", to_string(m.method));
  if (m.leave_out) w.field("leave_out", m.leave_out);
  w.field("bandwidth", m.bandwidth);
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
  w.field("y_column", m.y_column);
  if (!m.sample_weight.empty()) w.field("sample_weight", m.sample_weight);
  w.field("n", m.n);
  w.field("checksum", m.checksum);
  auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  w.field("loo_mse", opt(m.loo_mse));
  if (m.loo_r2) w.field("loo_r2", opt(m.loo_r2));
  if (m.neighbours) w.field("neighbours", opt(m.neighbours));
  if (m.criterion) {
    w.field("criterion", to_string(*m.criterion));
    w.field("criterion_value", opt(m.criterion_value));
  }
  if (!m.warnings.empty()) w.field("warnings", m.warnings);
  if (m.history.empty()) return;
  w.field("stop_reason", m.stop_reason);
  w.begin_array("history");
  for (const auto& e : m.history) {
    Json rec;
    rec["epoch"] = e.epoch;
    if (e.metric.empty()) rec["bandwidth"] = e.bandwidth;
    else rec["metric"] = e.metric;
    rec["loss"] = e.loss;
    if (!all_finite(rec)) throw DataError("the loss history holds a number that is not finite");
    w.element(rec.dump());
  }
  w.end_array();
}

void append_jsonl(std::string& out, const std::vector<std::string>& x_names, const double* q, std::size_t d,
                  const std::vector<ValueColumn>& columns, std::size_t i) {
  out += '{';
  for (std::size_t k = 0; k < d; ++k) {
    out += Json(x_names[k]).dump();
    out += ':';
    append_double(out, q[k]);
    out += ',';
  }
  for (std::size_t c = 0; c < columns.size(); ++c) {
    out += (c ? ",\"" : "\"") + columns[c].name + "\":";
    append_double(out, columns[c].values[i]);
  }
  out += "}\n";
}

void write_predictions(std::ostream& out, Format format, const Model& model, const double* queries,
                       std::size_t m, std::size_t d, const std::vector<ValueColumn>& columns, bool header) {
  for (const auto& c : columns)
    for (std::size_t i = 0; i < m; ++i)
      if (!std::isfinite(c.values[i]))
        throw DataError(c.name + " " + std::to_string(i + 1) + " is not finite");
  std::string buf;
  if (format != Format::json) {
    const char sep = separator(format);
    if (format != Format::jsonl && header) {
      for (const auto& name : model.x_columns) buf += csv_field(name, sep) + sep;
      for (std::size_t c = 0; c < columns.size(); ++c) {
        if (c) buf += sep;
        buf += columns[c].name;
      }
      buf += '\n';
    }
    for (std::size_t i = 0; i < m; ++i) {
      if (format == Format::jsonl) {
        append_jsonl(buf, model.x_columns, queries + i * d, d, columns, i);
      } else {
        for (std::size_t k = 0; k < d; ++k) {
          append_double(buf, queries[i * d + k]);
          buf += sep;
        }
        for (std::size_t c = 0; c < columns.size(); ++c) {
          if (c) buf += sep;
          append_double(buf, columns[c].values[i]);
        }
        buf += '\n';
      }
      if (buf.size() > (1 << 16)) {
        out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
        check_stream(out);
        buf.clear();
      }
    }
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    out.flush();
    check_stream(out);
    return;
  }
  JsonObjectWriter w(out);
  write_model_fields(w, model);
  std::vector<std::string> keys;
  for (const auto& name : model.x_columns) keys.push_back(Json(name).dump() + ": ");
  w.begin_array("predictions");
  for (std::size_t i = 0; i < m; ++i) {
    buf = "{";
    for (std::size_t k = 0; k < d; ++k) {
      buf += keys[k];
      append_double(buf, queries[i * d + k]);
      buf += ", ";
    }
    for (std::size_t c = 0; c < columns.size(); ++c) {
      buf += (c ? ", \"" : "\"") + columns[c].name + "\": ";
      append_double(buf, columns[c].values[i]);
    }
    buf += '}';
    w.element(buf);
  }
  w.end_array();
  w.finish();
}

WeightsWriter::WeightsWriter(std::ostream& out, Format format, WeightsLayout layout,
                             const Dataset& train, const double* queries, std::size_t m, std::size_t first,
                             bool header)
    : out_(out), format_(format), layout_(layout), train_(train),
      queries_(queries), m_(m), first_(first) {
  const std::size_t n = train.n, d = train.d;
  const char sep = separator(format_);
  if (format_ == Format::jsonl) {
    buf_.clear();
    for (const auto& name : train.x_names) x_keys_.push_back(Json(name).dump() + ":");
  } else if (format_ != Format::json) {
    if (!header) {
      buf_.clear();
    } else if (layout_ == WeightsLayout::long_) {
      buf_ = std::string("query") + sep + "key" + sep + "weight\n";
    } else {
      for (const auto& name : train.x_names) buf_ += csv_field(name, sep) + sep;
      for (std::size_t i = 0; i < n; ++i) buf_ += "k" + std::to_string(i + 1) + (i + 1 < n ? sep : '\n');
    }
  } else if (layout_ == WeightsLayout::long_) {
    buf_ = "[";
  } else {
    buf_ = "{\n  \"x_columns\": " + Json(train.x_names).dump() + ",\n  \"queries\": [";
    for (std::size_t j = 0; j < m; ++j) {
      if (j) buf_ += ',';
      append_point(buf_, queries + j * d, d);
    }
    buf_ += "],\n  \"keys\": [";
    for (std::size_t i = 0; i < n; ++i) {
      if (i) buf_ += ',';
      append_point(buf_, train.row(i), d);
    }
    buf_ += "],\n  \"weights\": [";
  }
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  check_stream(out_);
}

void WeightsWriter::row(std::size_t j, const double* a) {
  const std::size_t n = train_.n, d = train_.d;
  const char sep = separator(format_);
  buf_.clear();
  if (format_ == Format::jsonl && layout_ == WeightsLayout::wide) {
    // {"x": 2.4, "weights": [...]}: the query's coordinates by name, then its row.
    buf_ += '{';
    for (std::size_t k = 0; k < d; ++k) {
      buf_ += x_keys_[k];
      append_double(buf_, queries_[j * d + k]);
      buf_ += ',';
    }
    buf_ += "\"weights\":[";
    for (std::size_t i = 0; i < n; ++i) {
      if (i) buf_ += ',';
      append_double(buf_, a[i]);
    }
    buf_ += "]}\n";
  } else if (format_ == Format::jsonl) {
    const std::string q = "{\"query\":" + std::to_string(first_ + j + 1) + ",\"key\":";
    for (std::size_t i = 0; i < n; ++i) {
      buf_ += q;
      buf_ += std::to_string(i + 1);
      buf_ += ",\"weight\":";
      append_double(buf_, a[i]);
      buf_ += "}\n";
    }
  } else if (format_ != Format::json && layout_ == WeightsLayout::wide) {
    for (std::size_t k = 0; k < d; ++k) {
      append_double(buf_, queries_[j * d + k]);
      buf_ += sep;
    }
    for (std::size_t i = 0; i < n; ++i) {
      append_double(buf_, a[i]);
      buf_ += i + 1 < n ? sep : '\n';
    }
  } else if (format_ != Format::json) {
    const std::string q = std::to_string(first_ + j + 1) + sep;
    for (std::size_t i = 0; i < n; ++i) {
      buf_ += q;
      buf_ += std::to_string(i + 1);
      buf_ += sep;
      append_double(buf_, a[i]);
      buf_ += '\n';
    }
  } else if (layout_ == WeightsLayout::wide) {
    buf_ += j ? ",\n    [" : "\n    [";
    for (std::size_t i = 0; i < n; ++i) {
      if (i) buf_ += ',';
      append_double(buf_, a[i]);
    }
    buf_ += ']';
  } else {
    const std::string q = "{\"query\": " + std::to_string(first_ + j + 1) + ", \"key\": ";
    for (std::size_t i = 0; i < n; ++i) {
      buf_ += (j || i) ? ",\n  " : "\n  ";
      buf_ += q;
      buf_ += std::to_string(i + 1);
      buf_ += ", \"weight\": ";
      append_double(buf_, a[i]);
      buf_ += '}';
    }
  }
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  check_stream(out_);
}

void WeightsWriter::finish() {
  if (format_ == Format::json) {
    if (layout_ == WeightsLayout::long_) out_ << (m_ ? "\n]\n" : "]\n");
    else out_ << (m_ ? "\n  ]\n}\n" : "]\n}\n");
  }
  out_.flush();
  check_stream(out_);
}

}  // namespace nwreg
