#include "nwreg/base/errors.h"

#include <cerrno>
#include <utility>

#include "nwreg/base/numbers.h"

namespace nwreg {
namespace {

std::string locate(const std::string& file, std::size_t line, const std::string& column,
                   const std::string& detail) {
  std::string out = escape_excerpt(file, 200);
  if (line > 0) out.append(":").append(std::to_string(line));
  if (!out.empty()) out.append(": ");
  if (!column.empty()) out.append("column ").append(column).append(": ");
  return out.append(detail);
}

}  // namespace

InputError::InputError(std::string file, std::size_t line, std::string column,
                       const std::string& detail)
    : Error(locate(file, line, column, detail)),
      file_(std::move(file)),
      line_(line),
      column_(std::move(column)),
      detail_(detail) {}

OutputError::OutputError(const std::string& what, int errno_value)
    : Error(what), errno_(errno_value) {}

bool OutputError::broken_pipe() const { return errno_ == EPIPE; }

}  // namespace nwreg
