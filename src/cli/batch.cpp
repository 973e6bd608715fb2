#include "cli/batch.h"

#include <iostream>

#include "cli/common.h"
#include "cli/output_file.h"
#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg::cli {

bool write_batch(const std::vector<std::string>& files, bool json, const std::string& header, std::size_t empty,
                 const std::function<void(const std::string&, nlohmann::ordered_json&, std::string&)>& one,
                 const std::function<void(nlohmann::ordered_json&)>& failed) {
  OutputFile out("-", "stdout");
  bool all_ok = true;
  out.write([&](std::ostream& os) {
    os << (json ? "[" : header);
    for (std::size_t i = 0; i < files.size(); ++i) {
      const std::string& file = files[i];
      nlohmann::ordered_json rec;
      rec["file"] = file;
      std::string row;
      try {
        if (file == "-") throw UsageError("-: standard input cannot be one file of a batch");
        one(file, rec, row);
      } catch (const Error& e) {
        all_ok = false;
        std::string what = error_message(e);
        if (what.rfind(file, 0) != 0) what = file + ": " + what;
        std::cerr << "nwreg: error: " << what << '\n';
        if (failed) failed(rec);
        rec["error"] = what;
        row = csv_field(file) + std::string(empty + 1, ',') + csv_field(what) + "\n";
      }
      if (json) os << (i ? ",\n  " : "\n  ") << rec.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      else os << row;
      os.flush();  // a row as soon as its file is done
      check_stream(os);
    }
    os << (json ? (files.empty() ? "]\n" : "\n]\n") : "");
    os.flush();
    check_stream(os);
  });
  out.commit();
  return all_ok;
}

}  // namespace nwreg::cli
