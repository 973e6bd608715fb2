#include "nwreg/base/timestamp.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <date/date.h>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {
namespace {

constexpr double seconds_per_day = 86400;

bool digits(std::string_view s, std::size_t from, std::size_t count) {
  if (s.size() < from + count) return false;
  for (std::size_t i = from; i < from + count; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// The calendar day of yyyy-mm-dd at the start of `s` (digits checked by the caller), by the date
// library's civil calendar: nullopt for a day that does not exist (2023-02-29, 2024-13-01).
std::optional<date::sys_days> calendar_day(std::string_view s) {
  auto number = [&](std::size_t from, std::size_t count) {
    int v = 0;
    for (std::size_t i = from; i < from + count; ++i) v = v * 10 + (s[i] - '0');
    return v;
  };
  const date::year_month_day ymd{date::year{number(0, 4)}, date::month{static_cast<unsigned>(number(5, 2))},
                                 date::day{static_cast<unsigned>(number(8, 2))}};
  if (!ymd.ok()) return std::nullopt;
  return date::sys_days{ymd};
}

// "+05:30", "-0800", "+05": the offset east of UTC in minutes; nullopt if malformed.
std::optional<long> parse_offset(std::string_view s) {
  const long sign = s[0] == '-' ? -1 : 1;
  s.remove_prefix(1);
  long hh = 0, mm = 0;
  if (s.size() == 2 && digits(s, 0, 2)) {
    hh = (s[0] - '0') * 10 + (s[1] - '0');
  } else if ((s.size() == 4 && digits(s, 0, 4)) || (s.size() == 5 && s[2] == ':' && digits(s, 0, 2) && digits(s, 3, 2))) {
    hh = (s[0] - '0') * 10 + (s[1] - '0');
    mm = (s[s.size() - 2] - '0') * 10 + (s.back() - '0');
  } else {
    return std::nullopt;
  }
  if (hh > 23 || mm > 59) return std::nullopt;
  return sign * (hh * 60 + mm);
}

}  // namespace

const char* to_string(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::date: return "date";
    case ColumnKind::time: return "time";
    case ColumnKind::unordered: return "unordered";
    case ColumnKind::ordered: return "ordered";
    case ColumnKind::number: break;
  }
  return "number";
}

std::optional<ColumnKind> parse_column_kind(std::string_view text) {
  for (ColumnKind k : {ColumnKind::number, ColumnKind::date, ColumnKind::time, ColumnKind::unordered, ColumnKind::ordered})
    if (text == to_string(k)) return k;
  return std::nullopt;
}

bool looks_like_instant(std::string_view text) {
  text = trim(text);
  return digits(text, 0, 4) && text.size() >= 8 && text[4] == '-' && digits(text, 5, 2) && text[7] == '-';
}

std::optional<double> parse_instant(std::string_view text, bool* date_only, StampZone* zone) {
  text = trim(text);
  if (zone) *zone = {};
  // The calendar date: exactly yyyy-mm-dd, checked by the library (2023-02-29 is refused).
  if (text.size() < 10 || !looks_like_instant(text) || !digits(text, 8, 2)) return std::nullopt;
  const auto day = calendar_day(text);
  if (!day) return std::nullopt;
  const std::int64_t day_seconds = static_cast<std::int64_t>(day->time_since_epoch().count()) * 86400;
  if (date_only) *date_only = text.size() == 10;
  if (text.size() == 10) return static_cast<double>(day_seconds);
  if (text[10] != 'T' && text[10] != 't' && text[10] != ' ') return std::nullopt;
  std::string_view rest = text.substr(11);

  // The zone: Z, an offset, or nothing (UTC).
  long offset_minutes = 0;
  StampZone named;
  if (!rest.empty() && (rest.back() == 'Z' || rest.back() == 'z')) {
    rest.remove_suffix(1);
    named.kind = StampZone::utc;
  } else if (const auto sign = rest.find_first_of("+-"); sign != std::string_view::npos) {
    const auto offset = parse_offset(rest.substr(sign));
    if (!offset) return std::nullopt;
    offset_minutes = *offset;
    named = {StampZone::offset, static_cast<int>(offset_minutes)};
    rest = rest.substr(0, sign);
  }
  // The time of day: hh:mm or hh:mm:ss (24:00:00 is the end of the day; :60 a leap second),
  // then any number of fractional digits, read as a correctly rounded decimal.
  if (!(digits(rest, 0, 2) && rest.size() >= 5 && rest[2] == ':' && digits(rest, 3, 2))) return std::nullopt;
  auto two = [&](std::size_t at) { return (rest[at] - '0') * 10 + (rest[at + 1] - '0'); };
  const int hh = two(0), mm = two(3);
  int ss = 0;
  double fraction = 0;
  if (rest.size() > 5) {
    if (!(rest[5] == ':' && digits(rest, 6, 2))) return std::nullopt;
    ss = two(6);
    if (rest.size() > 8) {
      if (rest[8] != '.' || rest.size() == 9 || !digits(rest, 9, rest.size() - 9)) return std::nullopt;
      fraction = *parse_double("0" + std::string(rest.substr(8)));
    }
  }
  // :60 only as a leap second, at 23:59 (UTC days have none elsewhere).
  if (mm > 59 || ss > 60 || hh > 24 || (hh == 24 && (mm || ss || fraction)) || (ss == 60 && (hh != 23 || mm != 59)))
    return std::nullopt;
  const std::int64_t tod = hh * 3600 + mm * 60 + ss;
  const std::int64_t whole = day_seconds + tod - std::int64_t{offset_minutes} * 60;
  if (zone) *zone = named;
  const double t = static_cast<double>(whole) + fraction;
  // A fraction that rounds the last second of 9999 up to year 10000 (23:59:59.9999999, where
  // doubles are 3e-5 s apart), which ISO 8601 cannot write without an expanded year, stays in
  // 9999: the double below.
  constexpr double year_10000 = 253402300800.0;
  if (t >= year_10000 && static_cast<double>(whole) < year_10000) return std::nextafter(year_10000, 0.0);
  return t;
}

std::optional<double> parse_with_format(std::string_view text, std::string_view format, bool* has_time) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  static const char* months[] = {"january", "february", "march",     "april",   "may",      "june",
                                 "july",    "august",   "september", "october", "november", "december"};
  std::size_t at = 0;
  // Up to `most` digits (at least `least`).
  auto number = [&](std::size_t least, std::size_t most) -> std::optional<int> {
    std::size_t n = 0;
    int v = 0;
    while (n < most && at < text.size() && text[at] >= '0' && text[at] <= '9') v = v * 10 + (text[at++] - '0'), ++n;
    if (n < least) return std::nullopt;
    return v;
  };
  int year = -1, month = -1, day = -1, hh = 0, mm = 0;
  double ss = 0;
  bool time = false;
  for (std::size_t f = 0; f < format.size(); ++f) {
    if (format[f] != '%' || f + 1 == format.size()) {
      if (at >= text.size() || text[at] != format[f]) return std::nullopt;
      ++at;
      continue;
    }
    const char d = format[++f];
    std::optional<int> v;
    switch (d) {
      case 'Y': v = number(4, 4), year = v.value_or(-1); break;
      case 'y': v = number(2, 2), year = v ? (*v < 69 ? 2000 + *v : 1900 + *v) : -1; break;
      case 'm': v = number(1, 2), month = v.value_or(-1); break;
      case 'd': v = number(1, 2), day = v.value_or(-1); break;
      case 'H': v = number(1, 2), hh = v.value_or(0), time = true; break;
      case 'M': v = number(1, 2), mm = v.value_or(0), time = true; break;
      case 'S': {
        v = number(1, 2);
        ss = v.value_or(0);
        time = true;
        if (v && at + 1 < text.size() && text[at] == '.' && text[at + 1] >= '0' && text[at + 1] <= '9') {
          const std::size_t from = at;
          ++at;
          while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
          ss += *parse_double("0" + std::string(text.substr(from, at - from)));
        }
        break;
      }
      case 'b':
      case 'B': {
        for (int k = 0; k < 12 && !v; ++k) {
          const std::string_view name(months[k]);
          auto matches = [&](std::size_t len) {
            if (at + len > text.size()) return false;
            for (std::size_t c = 0; c < len; ++c)
              if (std::tolower(static_cast<unsigned char>(text[at + c])) != name[c]) return false;
            return true;
          };
          if (matches(name.size())) v = k + 1, at += name.size();
          else if (matches(3)) v = k + 1, at += 3;
        }
        month = v.value_or(-1);
        break;
      }
      case '%':
        if (at >= text.size() || text[at] != '%') return std::nullopt;
        ++at;
        v = 0;
        break;
      default:
        return std::nullopt;
    }
    if (!v) return std::nullopt;
  }
  if (at != text.size() || year < 0 || month < 1 || day < 1 || hh > 23 || mm > 59 || ss >= 60) return std::nullopt;
  const date::year_month_day ymd{date::year{year}, date::month{static_cast<unsigned>(month)},
                                 date::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return std::nullopt;
  if (has_time) *has_time = time;
  const auto days = static_cast<double>(date::sys_days{ymd}.time_since_epoch().count());
  return days * 86400 + hh * 3600 + mm * 60 + ss;
}

void check_date_format(const std::string& format) {
  bool year = false, month = false, day = false;
  for (std::size_t f = 0; f < format.size(); ++f) {
    if (format[f] != '%') continue;
    if (++f == format.size()) throw ParameterError("date_format", "ends in a lone %: " + quote(format));
    switch (format[f]) {
      case 'Y': case 'y': year = true; break;
      case 'm': case 'b': case 'B': month = true; break;
      case 'd': day = true; break;
      case 'H': case 'M': case 'S': case '%': break;
      default:
        throw ParameterError("date_format", "unknown directive %" + std::string(1, format[f]) + " in " + quote(format) +
                                                " (known: %Y %y %m %b %B %d %H %M %S %%)");
    }
  }
  if (!year || !month || !day)
    throw ParameterError("date_format", quote(format) + " needs a year (%Y or %y), a month (%m, %b or %B) and a day (%d)");
}

std::string format_utc_offset(int minutes) {
  char buf[16];
  const int a = std::abs(minutes);
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", minutes < 0 ? '-' : '+', a / 60 % 100, a % 60);
  return buf;
}

std::optional<int> parse_utc_offset(std::string_view text) {
  if (text.size() < 3 || (text[0] != '+' && text[0] != '-')) return std::nullopt;
  const auto m = parse_offset(text);
  return m ? std::optional<int>(static_cast<int>(*m)) : std::nullopt;
}

bool whole_day(double seconds) { return std::isfinite(seconds) && std::fmod(seconds, seconds_per_day) == 0; }

ColumnKind output_kind(ColumnKind read, const double* values, std::size_t count, std::size_t stride) {
  if (read != ColumnKind::date) return read;
  for (std::size_t i = 0; i < count; ++i)  // (a missing query value, NaN, is no instant)
    if (!std::isnan(values[i * stride]) && !whole_day(values[i * stride])) return ColumnKind::time;
  return ColumnKind::date;
}

void append_instant(std::string& out, double seconds, bool as_date, UtcOffset offset) {
  // Years 0000..9999 on the clock written: what ISO 8601 writes without an expanded representation.
  const std::int64_t shift = offset && !(as_date && whole_day(seconds)) ? std::int64_t{*offset} * 60 : 0;
  const double local = seconds + static_cast<double>(shift);
  if (!(local >= -62167219200.0 && local < 253402300800.0)) {
    append_double(out, seconds);
    return;
  }
  // The civil date by the library (digits written here, not through a stream), then the
  // time of day; with an offset, of the local clock there (a whole number of seconds away).
  const double whole = std::floor(seconds), fraction = seconds - whole;  // both exact
  const auto secs = static_cast<std::int64_t>(whole) + shift;
  const std::int64_t day_index = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  const date::year_month_day ymd{date::sys_days{date::days{day_index}}};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  out += buf;
  if (as_date && whole_day(seconds)) return;
  const std::int64_t tod = secs - day_index * 86400;
  std::snprintf(buf, sizeof buf, "T%02d:%02d:%02d", static_cast<int>(tod / 3600), static_cast<int>(tod / 60 % 60),
                static_cast<int>(tod % 60));
  out += buf;
  // The fewest fractional digits (up to nine) that parse_instant reads back as `seconds`; past
  // nine (instants within months of 1970, where a double holds more), the fraction's shortest
  // exact form.
  std::string digits;
  double scale = 1;
  for (int d = 0; d <= 9; ++d, scale *= 10) {
    const double k = std::nearbyint(fraction * scale);
    if (k < scale && whole + k / scale == seconds) {
      if (d) {
        std::snprintf(buf, sizeof buf, "%0*lld", d, static_cast<long long>(k));
        digits = buf;
      }
      break;
    }
    if (d == 9) {
      const auto r = std::to_chars(buf, buf + sizeof buf, fraction, std::chars_format::fixed);
      digits.assign(buf + 2, r.ptr);  // after "0."
    }
  }
  if (!digits.empty()) out += '.' + digits;
  out += offset ? format_utc_offset(*offset) : std::string("Z");
}

std::string format_instant(double seconds, bool as_date, UtcOffset offset) {
  std::string out;
  append_instant(out, seconds, as_date, offset);
  return out;
}

namespace {
struct Unit {
  const char* name;
  double seconds;
};
constexpr Unit units[] = {{"w", 604800}, {"d", 86400}, {"h", 3600}, {"min", 60}, {"s", 1}, {"ms", 1e-3}};
}  // namespace

std::optional<double> parse_duration(std::string_view text, const std::string& option) {
  text = trim(text);
  std::size_t end = text.size();
  while (end > 0 && ((text[end - 1] >= 'a' && text[end - 1] <= 'z') || (text[end - 1] >= 'A' && text[end - 1] <= 'Z'))) --end;
  if (end == text.size() || end == 0) return std::nullopt;
  const std::string_view number = text.substr(0, end), unit = text.substr(end);
  // "1e3" ends in no unit; "nan", "inf" are no spans either way.
  const auto value = parse_double(number);
  if (!value) return std::nullopt;
  for (const Unit& u : units)
    if (unit == u.name) {
      const double s = *value * u.seconds;
      if (!(s > 0)) throw UsageError(option + ": a time span must be positive, got " + quote(text));
      if (!std::isfinite(s))
        throw UsageError(option + ": a time span must be finite in seconds (at most 1.8e308 s), got " + quote(text));
      return s;
    }
  throw UsageError(option + ": unknown time unit " + quote(unit) + " in " + quote(text) +
                   " (known: ms, s, min, h, d, w" + (unit == "m" ? "; min for minutes" : "") + ")");
}

std::string format_duration(double seconds) {
  // The largest unit in which the value, rounded to the four digits shown, is at least 1:
  // 59.999 s is "1 min", not "60 s".
  char buf[48];
  for (const Unit& u : units) {
    std::snprintf(buf, sizeof buf, "%.4g", seconds / u.seconds);
    if (std::fabs(std::strtod(buf, nullptr)) >= 1 || u.seconds == 1e-3) return std::string(buf) + " " + u.name;
  }
  return format_double(seconds) + " s";
}

}  // namespace nwreg
