#include "nwreg/base/numbers.h"

#include <cstdio>

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

namespace {

// Length of the valid UTF-8 character at s[0..len), 0 if it is not one.
std::size_t utf8_length(const unsigned char* s, std::size_t len) {
  const unsigned char c = s[0];
  std::size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (len < n || s[1] < lo || s[1] > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (s[k] < 0x80 || s[k] > 0xBF) return 0;
  return n;
}

std::string escape_impl(std::string_view text, std::size_t max_bytes, bool quoted) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  while (i < text.size()) {
    if (i >= max_bytes) {
      out += "...";
      if (quoted) out += '"';
      out += " (" + std::to_string(text.size()) + " bytes)";
      return out;
    }
    const unsigned char c = s[i];
    if (c >= 0x20 && c < 0x7F) {
      if (quoted && (c == '"' || c == '\\')) out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x80) out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    else if (const std::size_t n = utf8_length(s + i, text.size() - i)) {
      if (n == 2 && c == 0xC2 && s[i + 1] < 0xA0) {  // C1 controls (U+0080..U+009F): CSI and friends
        out += std::string("\\u00") + hex[s[i + 1] >> 4] + hex[s[i + 1] & 15];
      } else {
        out.append(text.data() + i, n);
      }
      i += n;
      continue;
    } else {
      out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
    ++i;
  }
  if (quoted) out += '"';
  return out;
}

}  // namespace

std::string escape_excerpt(std::string_view text, std::size_t max_bytes) { return escape_impl(text, max_bytes, false); }

std::string quote(std::string_view text, std::size_t max_bytes) { return '"' + escape_impl(text, max_bytes, true); }

std::string describe(ParseFailure why, std::string_view text) {
  const std::string quoted = quote(text);
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

namespace nwreg {

std::string format_g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string format_interval(double lo, double hi) {
  auto at = [](double v, int digits) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return std::string(buf);
  };
  int digits = 3;
  while (digits < 17 && lo != hi && at(lo, digits) == at(hi, digits)) ++digits;
  return "[" + at(lo, digits) + ", " + at(hi, digits) + "]";
}

std::string or_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return out;
}

}  // namespace nwreg
