#pragma once
/// One parser for every setting that takes one of a few names. Each setting's names live in one
/// table (a Choice array beside the setting's type); the parser, its "(known: ...)" message,
/// the option's help and the shell completions all read that table, so none can drift.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {

template <class T>
struct Choice {
  const char* name;
  T value;
  bool listed = true;  //!< false: an alias still read (a former name), not offered
};

/// The table's names as offered: in order, aliases left out.
template <class T>
std::vector<std::string> choice_names(std::span<const Choice<T>> table) {
  std::vector<std::string> out;
  for (const Choice<T>& c : table)
    if (c.listed) out.emplace_back(c.name);
  return out;
}

/// "a, b, c": the names as a message lists them.
template <class T>
std::string choice_list(std::span<const Choice<T>> table, const char* separator = ", ") {
  std::string out;
  for (const std::string& name : choice_names(table)) out += (out.empty() ? "" : separator) + name;
  return out;
}

/// The value named `text`. Otherwise throws ParameterError(setting, "unknown WHAT \"text\"
/// (known: a, b, c)"): the CLI names the setting's option.
template <class T>
T parse_choice(std::string_view text, std::span<const Choice<T>> table, const std::string& setting, const std::string& what) {
  for (const Choice<T>& c : table)
    if (text == c.name) return c.value;
  throw ParameterError(setting, "unknown " + what + " " + quote(text) + " (known: " + choice_list(table) + ")");
}

}  // namespace nwreg
