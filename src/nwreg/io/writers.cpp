#include "nwreg/io/writers.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>

#include "nwreg/base/errors.h"
#include "nwreg/model/model.h"
#include "nwreg/base/numbers.h"

namespace nwreg {

using Json = nlohmann::ordered_json;

namespace {



ColumnKind kind_of(const std::vector<ColumnKind>& kinds, std::size_t k) {
  return k < kinds.size() ? kinds[k] : ColumnKind::number;
}

const Levels* levels_of(const std::vector<Levels>& levels, std::size_t k) {
  return k < levels.size() && levels[k].size() ? &levels[k] : nullptr;
}

UtcOffset offset_of(const std::vector<UtcOffset>& offsets, std::size_t k) {
  return k < offsets.size() ? offsets[k] : std::nullopt;
}

// An x value: a number, an ISO 8601 stamp (in quotes for JSON), or a categorical column's
// label (a JSON string, or a CSV field quoted where it must be; an ordered column of numbers
// writes the number).
void append_x(std::string& buf, double v, ColumnKind kind, const Levels* levels, UtcOffset offset, bool json,
              char sep = ',') {
  if (levels && is_categorical(kind) && !levels->numeric) {
    const std::string& label = levels->label(v);
    buf += json ? Json(label).dump(-1, ' ', false, Json::error_handler_t::replace) : csv_field(label, sep);
    return;
  }
  if (!is_time(kind)) return append_double(buf, v);
  if (json) buf += '"';
  append_instant(buf, v, kind == ColumnKind::date, offset);
  if (json) buf += '"';
}

// A point for JSON: its value when d = 1, else [v1,v2,...].
void append_point(std::string& buf, const double* p, std::size_t d, const std::vector<ColumnKind>& kinds,
                  const std::vector<Levels>& levels, const std::vector<UtcOffset>& offsets) {
  if (d == 1) return append_x(buf, p[0], kind_of(kinds, 0), levels_of(levels, 0), offset_of(offsets, 0), true);
  buf += '[';
  for (std::size_t k = 0; k < d; ++k) {
    if (k) buf += ',';
    append_x(buf, p[k], kind_of(kinds, k), levels_of(levels, k), offset_of(offsets, k), true);
  }
  buf += ']';
}

}  // namespace

const FormatDef& format_def(Format format) {
  for (const FormatDef& f : format_table)
    if (f.id == format) return f;
  return format_table[0];
}

std::string format_names() {
  std::string names;
  for (const FormatDef& f : format_table) names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

std::string format_extensions() {
  std::string out;
  for (const FormatDef& f : format_table)
    for (const char* e : f.extensions)
      if (e) out += (out.empty() ? "" : ", ") + std::string(e);
  return out;
}

Format parse_format(const std::string& text, const std::string& option) {
  for (const FormatDef& f : format_table)
    if (text == f.name) return f.id;
  throw UsageError(option + ": unknown format " + quote(text) + " (known: " + format_names() + ")");
}

char separator(Format format) { return format_def(format).separator; }

bool has_extension(std::string_view path, std::string_view ext) {
  if (path.size() < ext.size()) return false;
  const std::string_view tail = path.substr(path.size() - ext.size());
  return std::equal(tail.begin(), tail.end(), ext.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
}

Format format_for_path(const std::string& path, Format fallback) {
  for (const FormatDef& f : format_table)
    for (const char* e : f.extensions)
      if (e && has_extension(path, e)) return f.id;
  return fallback;
}

WeightsLayout parse_layout(const std::string& text) {
  return parse_choice<WeightsLayout>(text, layout_choices, "weights_layout", "layout");
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



PredictionWriter::PredictionWriter(std::ostream& out, Format format, const Model& model, Columns columns,
                                   bool header)
    : out_(out), format_(format), columns_(std::move(columns)) {
  const char sep = separator(format_);
  if (format_layout() == FormatDef::Layout::table) {
    if (!header) return;
    bool first = true;
    for (const auto* names : {&columns_.kept, &columns_.x, &columns_.values})
      for (const auto& name : *names) {
        if (!first) buf_ += sep;
        buf_ += csv_field(name, sep);
        first = false;
      }
    buf_ += '\n';
    return;
  }
  for (const auto* names : {&columns_.kept, &columns_.x, &columns_.values})
    for (const auto& name : *names)
      keys_.push_back(Json(name).dump(-1, ' ', false, Json::error_handler_t::replace) + (format_layout() == FormatDef::Layout::document ? ": " : ":"));
  if (format_layout() == FormatDef::Layout::document) {
    json_.emplace(out_);
    write_model_fields(*json_, model);
    if (columns_.band) {
      nlohmann::ordered_json band = {{"level", columns_.band->level},
                                     {"interval", columns_.band->interval},
                                     {"kind", columns_.band->critical ? "simultaneous" : "pointwise"}};
      if (columns_.band->critical) band["critical"] = *columns_.band->critical;
      json_->field("band", band);
    }
    json_->begin_array("predictions");
  }
}

namespace {

// Whether `t` is a JSON number as written (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) that
// reads back as one double everywhere: such text goes into JSON unchanged; anything else ("007",
// "+4", "inf", "1e999") as a string.
bool json_number(std::string_view t) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > from;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') ++i;
  else if (!digits()) return false;
  if (i < t.size() && t[i] == '.' && (++i, !digits())) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  if (i != t.size()) return false;
  // And one that every reader takes as the same double: finite (1e999 is inf to pandas, an error
  // to others), not a nonzero that underflows to 0 (-1e-400), not an integer past 2^53 (an ID
  // that jq would round and Python keep).
  const std::optional<double> v = parse_double(t);
  if (!v || !std::isfinite(*v)) return false;
  if (*v == 0 && t.find_first_of("123456789") < t.find_first_of("eE")) return false;
  if (t.find_first_of(".eE") == std::string_view::npos && std::abs(*v) > 9007199254740992.0) return false;
  return true;
}

}  // namespace

void PredictionWriter::append_kept(std::string_view text) {
  if (format_layout() == FormatDef::Layout::table) buf_ += csv_field(std::string(text), separator(format_));
  else if (json_number(text)) buf_ += text;  // as read, digit for digit
  else buf_ += Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

void PredictionWriter::row(const std::string_view* kept, const double* x, const double* values, const char* blank) {
  ++rows_;
  const std::size_t d = columns_.x.size();
  auto none = [&](std::size_t cell) { return blank && blank[cell]; };
  for (std::size_t c = 0; c < columns_.values.size(); ++c)
    if (!none(d + c) && !std::isfinite(values[c]))
      throw DataError(columns_.values[c] + " " + std::to_string(rows_) + " is not finite");
  const bool csv = format_layout() == FormatDef::Layout::table;
  const char* between = csv ? "" : format_layout() == FormatDef::Layout::document ? ", " : ",";
  if (format_layout() == FormatDef::Layout::document) buf_.clear();  // JSON: the record is one array element
  std::size_t key = 0;
  bool first = true;
  auto next = [&] {
    if (csv) {
      if (!first) buf_ += separator(format_);
    } else {
      if (!first) buf_ += between;
      buf_ += keys_[key];
    }
    ++key;
    first = false;
  };
  if (!csv) buf_ += '{';
  for (std::size_t c = 0; c < columns_.kept.size(); ++c) next(), append_kept(kept[c]);
  // A cell with no value: nothing between the separators, or JSON's null.
  auto empty = [&] {
    if (!csv) buf_ += "null";
  };
  for (std::size_t k = 0; k < d; ++k) {
    next();
    if (none(k)) empty();
    else append_x(buf_, x[k], kind_of(columns_.kinds, k), levels_of(columns_.levels, k), offset_of(columns_.offsets, k),
                  !csv, separator(format_));
  }
  for (std::size_t c = 0; c < columns_.values.size(); ++c) {
    next();
    if (none(d + c)) empty();
    else append_double(buf_, values[c]);
  }
  if (format_layout() == FormatDef::Layout::document) {
    buf_ += '}';
    json_->element(buf_);
    buf_.clear();
    return;
  }
  buf_ += csv ? "\n" : "}\n";
  if (buf_.size() > (1 << 16)) {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    check_stream(out_);
    buf_.clear();
  }
}

void PredictionWriter::flush() {
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  buf_.clear();
  out_.flush();
  check_stream(out_);
}

void PredictionWriter::finish() {
  if (json_) {
    json_->end_array();
    json_->finish();
    return;
  }
  flush();
}

void make_unique(const std::vector<std::string*>& names, const std::function<bool(const std::string&)>& taken) {
  std::set<std::string> seen;
  for (std::string* name : names) {
    std::string unique = *name;
    for (int k = 1; seen.count(unique) || (taken && taken(unique)); ++k) unique = *name + "." + std::to_string(k);
    seen.insert(unique);
    *name = unique;
  }
}

WeightsWriter::WeightsWriter(std::ostream& out, Format format, WeightsLayout layout,
                             const Dataset& train, const double* queries, std::size_t m, std::size_t first,
                             bool header, std::vector<ColumnKind> kinds)
    : out_(out), format_(format), layout_(layout), train_(train),
      queries_(queries), m_(m), first_(first), kinds_(std::move(kinds)) {
  const std::size_t n = train.n, d = train.d;
  const char sep = separator(format_);
  const bool json = format_layout() != FormatDef::Layout::table;
  auto json_name = [](const std::string& name) { return Json(name).dump(-1, ' ', false, Json::error_handler_t::replace); };
  // The names the queries' and keys' x are written under: the layout's own names first
  // ("query", "key", "weight"; a wide table's "k1".."kn"; wide lines' "weights").
  std::vector<std::string> x_names = train.x_names, key_names;
  if (layout_ == WeightsLayout::long_)  // (the wide layouts write no key's x by name)
    for (const auto& name : train.x_names) key_names.push_back("key_" + name);
  std::vector<std::string*> order;
  for (auto* names : {&x_names, &key_names})
    for (auto& name : *names) order.push_back(&name);
  if (layout_ == WeightsLayout::long_) {
    make_unique(order, [](const std::string& name) { return name == "query" || name == "key" || name == "weight"; });
  } else if (json) {
    make_unique(order, [](const std::string& name) { return name == "weights"; });
  } else {
    make_unique(order, [n](const std::string& name) {  // k1 .. kn
      if (name.size() < 2 || name[0] != 'k' || name[1] == '0' || name.size() > 21) return false;
      std::size_t i = 0;
      for (char c : name.substr(1)) {
        if (c < '0' || c > '9') return false;
        i = i * 10 + static_cast<std::size_t>(c - '0');
      }
      return i <= n;
    });
  }
  for (const auto& name : x_names) x_keys_.push_back(json_name(name) + ":");
  if (layout_ == WeightsLayout::long_) {
    std::vector<ColumnKind> key_kinds;
    for (std::size_t k = 0; k < d; ++k) key_kinds.push_back(output_kind(train.kind(k), train.x.data() + k, n, d));
    for (std::size_t i = 0; i < n; ++i) {
      std::string t;
      for (std::size_t k = 0; k < d; ++k) {
        if (json) t += (k ? "," : "") + json_name(key_names[k]) + ":";
        append_x(t, train.x[i * d + k], key_kinds[k], levels_of(train.levels, k), offset_of(train.x_offset, k), json, sep);
        if (!json) t += sep;
      }
      key_text_.push_back(std::move(t));
    }
  }
  if (format_layout() == FormatDef::Layout::lines) {
    buf_.clear();
  } else if (format_layout() != FormatDef::Layout::document) {
    if (!header) {
      buf_.clear();
    } else if (layout_ == WeightsLayout::long_) {
      buf_ = std::string("query") + sep;
      for (const auto& name : x_names) buf_ += csv_field(name, sep) + sep;
      buf_ += std::string("key") + sep;
      for (const auto& name : key_names) buf_ += csv_field(name, sep) + sep;
      buf_ += "weight\n";
    } else {
      for (const auto& name : x_names) buf_ += csv_field(name, sep) + sep;
      for (std::size_t i = 0; i < n; ++i) buf_ += "k" + std::to_string(i + 1) + (i + 1 < n ? sep : '\n');
    }
  } else if (layout_ == WeightsLayout::long_) {
    buf_ = "[";
  } else {
    buf_ = "{\n  \"x_columns\": " + Json(train.x_names).dump(-1, ' ', false, Json::error_handler_t::replace) + ",\n  \"queries\": [";
    for (std::size_t j = 0; j < m; ++j) {
      if (j) buf_ += ',';
      append_point(buf_, queries + j * d, d, kinds_, train.levels, train.x_offset);
    }
    buf_ += "],\n  \"keys\": [";
    std::vector<ColumnKind> key_kinds;
    for (std::size_t k = 0; k < d; ++k) key_kinds.push_back(output_kind(train.kind(k), train.x.data() + k, n, d));
    for (std::size_t i = 0; i < n; ++i) {
      if (i) buf_ += ',';
      append_point(buf_, train.row(i), d, key_kinds, train.levels, train.x_offset);
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
  if (format_layout() == FormatDef::Layout::lines && layout_ == WeightsLayout::wide) {
    // {"x": 2.4, "weights": [...]}: the query's coordinates by name, then its row.
    buf_ += '{';
    for (std::size_t k = 0; k < d; ++k) {
      buf_ += x_keys_[k];
      append_x(buf_, queries_[j * d + k], kind_of(kinds_, k), levels_of(train_.levels, k), offset_of(train_.x_offset, k),
               true);
      buf_ += ',';
    }
    buf_ += "\"weights\":[";
    for (std::size_t i = 0; i < n; ++i) {
      if (i) buf_ += ',';
      append_double(buf_, a[i]);
    }
    buf_ += "]}\n";
  } else if (format_layout() == FormatDef::Layout::lines) {
    const std::string q = "{\"query\":" + std::to_string(first_ + j + 1) + "," + query_text(j) + ",\"key\":";
    for (std::size_t i = 0; i < n; ++i) {
      buf_ += q;
      buf_ += std::to_string(i + 1);
      buf_ += ',';
      buf_ += key_text_[i];
      buf_ += ",\"weight\":";
      append_double(buf_, a[i]);
      buf_ += "}\n";
    }
  } else if (format_layout() != FormatDef::Layout::document && layout_ == WeightsLayout::wide) {
    for (std::size_t k = 0; k < d; ++k) {
      append_x(buf_, queries_[j * d + k], kind_of(kinds_, k), levels_of(train_.levels, k), offset_of(train_.x_offset, k),
               false, sep);
      buf_ += sep;
    }
    for (std::size_t i = 0; i < n; ++i) {
      append_double(buf_, a[i]);
      buf_ += i + 1 < n ? sep : '\n';
    }
  } else if (format_layout() != FormatDef::Layout::document) {
    const std::string q = std::to_string(first_ + j + 1) + sep + query_text(j);
    for (std::size_t i = 0; i < n; ++i) {
      buf_ += q;
      buf_ += std::to_string(i + 1);
      buf_ += sep;
      buf_ += key_text_[i];
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
    const std::string q = "{\"query\": " + std::to_string(first_ + j + 1) + ", " + query_text(j) + ", \"key\": ";
    for (std::size_t i = 0; i < n; ++i) {
      buf_ += (j || i) ? ",\n  " : "\n  ";
      buf_ += q;
      buf_ += std::to_string(i + 1);
      buf_ += ", ";
      buf_ += key_text_[i];
      buf_ += ", \"weight\": ";
      append_double(buf_, a[i]);
      buf_ += '}';
    }
  }
  out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  check_stream(out_);
}

std::string WeightsWriter::query_text(std::size_t j) const {
  const std::size_t d = train_.d;
  const bool json = format_layout() != FormatDef::Layout::table;
  const char sep = separator(format_);
  std::string t;
  for (std::size_t k = 0; k < d; ++k) {
    if (json) t += (k ? "," : "") + x_keys_[k];
    append_x(t, queries_[j * d + k], kind_of(kinds_, k), levels_of(train_.levels, k), offset_of(train_.x_offset, k), json,
             sep);
    if (!json) t += sep;
  }
  return t;
}

void WeightsWriter::finish() {
  if (format_layout() == FormatDef::Layout::document) {
    if (layout_ == WeightsLayout::long_) out_ << (m_ ? "\n]\n" : "]\n");
    else out_ << (m_ ? "\n  ]\n}\n" : "]\n}\n");
  }
  out_.flush();
  check_stream(out_);
}

}  // namespace nwreg
