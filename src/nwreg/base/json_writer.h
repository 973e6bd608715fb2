#pragma once
/// Writing JSON objects and checking output streams: what the model file and the output
/// formats share.

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace nwreg {

/// Throws OutputError (with errno) if the stream has failed.
void check_stream(std::ostream& out);

/// Writes a JSON object one field per line; large arrays stream one element per line.
class JsonObjectWriter {
 public:
  explicit JsonObjectWriter(std::ostream& out);
  /// A field with a compact value. Throws DataError if the value holds a non-finite number.
  void field(const std::string& key, const nlohmann::ordered_json& value);
  void begin_array(const std::string& key);
  /// One element of the open array: already-formatted JSON text.
  void element(const std::string& json_text);
  void end_array();
  void finish();

 private:
  void key(const std::string& k);
  std::ostream& out_;
  bool first_field_ = true;
  bool first_element_ = true;
};

}  // namespace nwreg
