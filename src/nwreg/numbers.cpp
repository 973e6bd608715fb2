#include "nwreg/numbers.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace nwreg {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_double(std::string_view text, ParseFailure* why) {
  auto fail = [&](ParseFailure f) -> std::optional<double> {
    if (why) *why = f;
    return std::nullopt;
  };
  std::string_view s = trim(text);
  if (s.empty()) return fail(ParseFailure::empty);
  if (s.front() == '+') {
    s.remove_prefix(1);
    // "+-1" and "+" alone are not numbers.
    if (s.empty() || s.front() == '-' || s.front() == '+') return fail(ParseFailure::not_a_number);
  }
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range && end == s.data() + s.size())
    return fail(ParseFailure::out_of_range);
  if (ec != std::errc() || end != s.data() + s.size()) return fail(ParseFailure::not_a_number);
  if (!std::isfinite(v)) return fail(ParseFailure::not_finite);
  return v;
}

std::string describe(ParseFailure why, std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  switch (why) {
    case ParseFailure::empty:
      return "empty field where a number is required";
    case ParseFailure::not_finite:
      return quoted + " is not a finite number";
    case ParseFailure::out_of_range:
      return quoted + " is out of the range of a double";
    case ParseFailure::not_a_number:
      break;
  }
  return "cannot parse " + quoted + " as a number";
}

void append_double(std::string& out, double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;  // 32 bytes always hold the shortest form of a double
  out.append(buf, end);
}

std::string format_double(double v) {
  std::string s;
  append_double(s, v);
  return s;
}

}  // namespace nwreg
