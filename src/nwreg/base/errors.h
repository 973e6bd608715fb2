#pragma once
/// Typed errors thrown by the nwreg core. The CLI catches them in one place and maps them to
/// one stderr line and an exit code (UsageError -> 2, every other Error -> 1).

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace nwreg {

/// Base of every error the core throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad content in an input file. The message reads `file:line: column "c": detail`, with the
/// parts that do not apply left out (line 0 = no line, empty column = no column).
class InputError : public Error {
 public:
  InputError(std::string file, std::size_t line, std::string column, const std::string& detail);

  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }      //!< 1-based physical line, 0 if none
  const std::string& column() const { return column_; }  //!< `"name"` or `2` (1-based), or empty
  const std::string& detail() const { return detail_; }  //!< the message less its place

 private:
  std::string file_;
  std::size_t line_;
  std::string column_, detail_;
};

/// An option value that cannot be used (bad grid, bandwidth <= 0, unknown column). The message
/// starts with the option's name. The CLI exits 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A setting of the core's that cannot be used, named in the core's words (`kernel`,
/// `tolerance`, `sample_weight`, `grid`); the message does not repeat the name. The CLI says
/// which option sets it. A UsageError: the CLI exits 2.
class ParameterError : public UsageError {
 public:
  ParameterError(std::string parameter, const std::string& message)
      : UsageError(message), parameter_(std::move(parameter)) {}
  const std::string& parameter() const { return parameter_; }

 private:
  std::string parameter_;
};

/// Readable data that do not allow what was asked (all x equal when learning, too few rows).
class DataError : public Error {
 public:
  using Error::Error;
};

/// A query that cannot be answered (no key in reach), named by its number among the queries of
/// the call that failed: "query 3 (x = 5) has no ...". `at(first)` numbers it among the caller's
/// queries, the call's first being number first + 1; `detail()` is the text after the number.
class QueryError : public DataError {
 public:
  QueryError(std::size_t index, std::string detail)
      : DataError("query " + std::to_string(index + 1) + detail), index_(index), detail_(std::move(detail)) {}
  std::size_t index() const { return index_; }
  const std::string& detail() const { return detail_; }
  QueryError at(std::size_t first) const { return QueryError(first + index_, detail_); }

 private:
  std::size_t index_;
  std::string detail_;
};

/// Writing an output failed; `broken_pipe()` tells a closed reader (`| head`) from a real error.
class OutputError : public Error {
 public:
  OutputError(const std::string& what, int errno_value);
  int errno_value() const { return errno_; }
  bool broken_pipe() const;

 private:
  int errno_;
};

}  // namespace nwreg
