#pragma once
/// A batch's summary on stdout, for fit and test: a row (CSV) or a record (JSON) per file, as
/// soon as each is done, a failing file's error on its own row and on stderr.

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nwreg::cli {

/// Writes `header` (a CSV line with its newline) and a row per file, or with `json` an array of
/// records. `one(file, record, row)` reads and fits the file, fills the record (after its
/// "file") and the row (with its newline), or throws an nwreg Error: then the error goes to
/// stderr, to the record as "error" (after `failed(record)` fills the other fields, where
/// given) and to a row of the file, `empty` empty fields and the error. "-" (stdin) is refused
/// as a file of a batch. Returns whether every file succeeded.
bool write_batch(const std::vector<std::string>& files, bool json, const std::string& header, std::size_t empty,
                 const std::function<void(const std::string&, nlohmann::ordered_json&, std::string&)>& one,
                 const std::function<void(nlohmann::ordered_json&)>& failed = {});

}  // namespace nwreg::cli
