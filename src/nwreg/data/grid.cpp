#include "nwreg/data/grid.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include <date/date.h>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/timestamp.h"

namespace nwreg {
namespace {

// Digits after the decimal point of a plain decimal ("0.25" -> 2, "1e-3" -> none).
std::optional<int> decimals(std::string_view s) {
  int places = 0;
  bool dot = false;
  for (char c : s) {
    if (c == '.') {
      dot = true;
    } else if (c >= '0' && c <= '9') {
      places += dot;
    } else if (c != '-' && c != '+' && c != ' ') {
      return std::nullopt;
    }
  }
  return places;
}

// v * scale when that is an integer below 2^53 (exact in a double), else nothing.
std::optional<double> as_integer(double v, double scale) {
  const double r = std::nearbyint(v * scale);
  if (std::abs(r) >= 9007199254740992.0 || std::abs(r / scale - v) > std::abs(v) * 1e-15)
    return std::nullopt;
  return r;
}

// A calendar step, "Nmonth(s)" or "Nyear(s)" (N >= 1, whole): N months (12 a year).
std::optional<std::int64_t> calendar_months(std::string_view step) {
  std::size_t digits = 0;
  while (digits < step.size() && step[digits] >= '0' && step[digits] <= '9') ++digits;
  const std::string_view unit = step.substr(digits);
  const int per = unit == "month" || unit == "months" ? 1 : unit == "year" || unit == "years" ? 12 : 0;
  if (!per || digits == 0 || digits > 6) return std::nullopt;
  std::int64_t n = 0;
  std::from_chars(step.data(), step.data() + digits, n);
  if (n == 0) throw ParameterError("grid", "STEP must not be 0");
  return n * per;
}

// START, START + k months, ... before STOP: the day of the month START's, clamped to each
// month's last (2024-01-31 + 1 month is 2024-02-29, + 2 months 2024-03-31), the time of day kept.
std::vector<double> calendar_grid(double start, double stop, std::int64_t months, std::size_t max_points) {
  using namespace std::chrono;
  const double day_start = std::floor(start / 86400) * 86400, clock = start - day_start;
  const date::year_month_day first{date::sys_days{date::days{static_cast<std::int64_t>(day_start / 86400)}}};
  const std::int64_t base = static_cast<std::int64_t>(static_cast<int>(first.year())) * 12 +
                            static_cast<unsigned>(first.month()) - 1;
  std::vector<double> out;
  for (std::int64_t i = 0;; ++i) {
    const std::int64_t index = base + i * months, y = index >= 0 ? index / 12 : -((11 - index) / 12);
    if (y > 9999) break;
    const date::year_month ym{date::year{static_cast<int>(y)}, date::month{static_cast<unsigned>(index - y * 12 + 1)}};
    const date::day last = date::year_month_day_last{ym.year(), date::month_day_last{ym.month()}}.day();
    const date::year_month_day at{ym.year(), ym.month(), std::min(first.day(), last)};
    const double t = static_cast<double>(date::sys_days{at}.time_since_epoch().count()) * 86400 + clock;
    if (!(t < stop)) break;
    if (out.size() == max_points)
      throw ParameterError("grid", "more than " + std::to_string(max_points) + " points");
    out.push_back(t);
  }
  return out;
}

// The points start, start + step, ... towards stop (count_f of them), from the three parts as
// written: exact decimal arithmetic where all three are short decimals (scaled to integers).
std::vector<double> grid_points(const std::vector<std::string_view>& parts, bool instants, double start, double stop,
                                double step, double count_f) {
  int places = 0;
  bool exact = true;
  for (auto p : parts) {
    auto dp = instants ? std::optional<int>(0) : decimals(p);  // instants: exact in whole seconds
    if (!dp || *dp > 15) exact = false;
    else places = std::max(places, *dp);
  }
  const double scale = std::pow(10.0, places);
  std::optional<double> a, b, s;
  if (exact) {
    a = as_integer(start, scale);
    b = as_integer(stop, scale);
    s = as_integer(step, scale);
    exact = a && b && s;
  }
  std::vector<double> out;
  if (exact) {
    // count = ceil((b - a) / s) in integers: exact, unlike the floating-point division.
    const auto ia = static_cast<std::int64_t>(*a), ib = static_cast<std::int64_t>(*b),
               is = static_cast<std::int64_t>(*s);
    const std::int64_t span = ib - ia;
    const std::int64_t count = span / is + ((span % is) != 0 ? 1 : 0);
    out.reserve(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
      out.push_back(static_cast<double>(ia + i * is) / scale);
  } else {
    const auto count = static_cast<std::size_t>(count_f);
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) out.push_back(start + static_cast<double>(i) * step);
  }
  return out;
}

}  // namespace

std::vector<double> parse_grid(const std::string& text, std::size_t max_points, bool* time) {
  // START/STOP/STEP between instants (ISO times hold colons), else START:STOP:STEP.
  const bool instants = text.find('/') != std::string::npos;
  if (time) *time = instants;
  const char sep = instants ? '/' : ':';
  std::vector<std::string_view> parts;
  std::string_view rest(text);
  for (std::size_t pos; (pos = rest.find(sep)) != std::string_view::npos;) {
    parts.push_back(rest.substr(0, pos));
    rest.remove_prefix(pos + 1);
  }
  parts.push_back(rest);
  if (parts.size() != 3)
    throw UsageError(instants ? "`grid`: expected START/STOP/STEP between instants (2024-01-01/2024-02-01/6h), got " + quote(text)
                              : "`grid`: expected START:STOP:STEP, got " + quote(text));
  double v[3];
  const char* names[3] = {"START", "STOP", "STEP"};
  for (int i = 0; i < 3; ++i) {
    ParseFailure why{};
    std::optional<double> p;
    if (instants && i < 2) {
      p = parse_instant(parts[i]);
      if (!p)
        throw ParameterError("grid", "" + std::string(names[i]) + ": cannot parse " + quote(parts[i]) +
                         " as a date or time (ISO 8601: 2024-03-01, 2024-03-01T06:30:00Z; for numbers, "
                         "START:STOP:STEP)");
    } else {
      p = parse_double(parts[i], &why);
      if (!p && instants) {
        if (const auto months = calendar_months(parts[i])) {
          if (!(v[1] > v[0]))
            throw ParameterError("grid", "STEP " + std::string(parts[i]) + " does not lead from " + format_instant(v[0]) +
                                             " towards " + format_instant(v[1]) + ": no points");
          return calendar_grid(v[0], v[1], *months, max_points);
        }
        p = parse_duration(parts[i], "`grid`: STEP");
      }
      if (!p && !instants && looks_like_instant(parts[i]))
        throw ParameterError("grid", "" + quote(text) +
                         ": between dates or times give START/STOP/STEP, e.g. 2024-01-01/2024-02-01/6h");
    }
    if (!p) throw ParameterError("grid", "" + std::string(names[i]) + ": " + describe(why, parts[i]));
    v[i] = *p;
  }
  const double start = v[0], stop = v[1], step = v[2];
  if (step == 0) throw ParameterError("grid", "STEP must not be 0");
  if ((stop - start) / step <= 0) {
    auto show = [&](double t) { return instants ? format_instant(t) : format_double(t); };
    throw ParameterError("grid", "STEP " + (instants ? format_duration(step) : format_double(step)) + " does not lead from " +
                     show(start) + " towards " + show(stop) + ": no points");
  }
  const double count_f = std::ceil((stop - start) / step);
  if (!(count_f <= static_cast<double>(max_points)))
    throw ParameterError("grid", "" + text + " has more than " + std::to_string(max_points) + " points");

  return grid_points(parts, instants, start, stop, step, count_f);
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](std::string_view part) -> std::size_t {
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty()) return 0;
    return v;
  };
  Shard s;
  if (slash != std::string::npos) {
    s.k = number(std::string_view(text).substr(0, slash));
    s.n = number(std::string_view(text).substr(slash + 1));
  }
  if (slash == std::string::npos || s.k == 0 || s.n == 0 || s.k > s.n)
    throw ParameterError("shard", "expected K/N with 1 <= K <= N, got " + quote(text));
  return s;
}

std::vector<double> linspace(double lo, double hi, std::size_t n) {
  std::vector<double> out;
  if (n == 0) return out;
  if (n == 1) return {lo};
  out.reserve(n);
  const double span = hi - lo;
  for (std::size_t i = 0; i + 1 < n; ++i)
    out.push_back(lo + span * static_cast<double>(i) / static_cast<double>(n - 1));
  out.push_back(hi);
  return out;
}

}  // namespace nwreg
