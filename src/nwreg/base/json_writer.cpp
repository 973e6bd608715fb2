#include "nwreg/base/json_writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "nwreg/base/errors.h"

namespace nwreg {

using Json = nlohmann::ordered_json;

namespace {

bool all_finite(const Json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_structured())
    return std::all_of(j.begin(), j.end(), [](const Json& e) { return all_finite(e); });
  return true;
}

}  // namespace

void check_stream(std::ostream& out) {
  if (!out) throw OutputError(std::string("write failed: ") + std::strerror(errno), errno);
}

JsonObjectWriter::JsonObjectWriter(std::ostream& out) : out_(out) { out_ << '{'; }

void JsonObjectWriter::key(const std::string& k) {
  out_ << (first_field_ ? "\n  " : ",\n  ") << Json(k).dump(-1, ' ', false, Json::error_handler_t::replace) << ": ";
  first_field_ = false;
}

void JsonObjectWriter::field(const std::string& k, const Json& value) {
  if (!all_finite(value))
    throw DataError("field \"" + k + "\" holds a number that is not finite; JSON cannot hold it");
  key(k);
  out_ << value.dump(-1, ' ', false, Json::error_handler_t::replace);  // bytes that are not UTF-8: U+FFFD
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

}  // namespace nwreg
