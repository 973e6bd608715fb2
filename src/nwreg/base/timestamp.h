#pragma once
/// Time as x: ISO 8601 dates and date-times read as seconds since 1970-01-01T00:00:00Z, time
/// spans with units (90s, 15min, 6h, 3d, 2w), and both written back. The calendar (valid days,
/// leap years) and the formatting are Howard Hinnant's date library (libhowardhinnant-date-dev).
///
/// A double holds an instant near 2024 to about 0.24 microseconds (2^-22 s at 1.7e9 s), so
/// stamps with microsecond digits keep them to within that; written instants carry the fewest
/// fractional digits that read back as the same double.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nwreg {

/// What an x column holds.
enum class ColumnKind {
  number,  //!< plain numbers (epoch seconds included)
  date,    //!< ISO dates only (2024-03-01), read as midnight UTC
  time,    //!< ISO date-times (or dates and date-times mixed)
  unordered,  //!< categorical labels with no order (--categorical); x holds each level's value
  ordered,    //!< categorical labels in an order (--ordered); x holds each level's value
};

/// "number", "date", "time", "unordered", "ordered"; and back (nullopt for anything else).
const char* to_string(ColumnKind kind);
std::optional<ColumnKind> parse_column_kind(std::string_view text);
/// Whether a column holds time stamps (date or time), or categorical labels.
inline bool is_time(ColumnKind kind) { return kind == ColumnKind::date || kind == ColumnKind::time; }
inline bool is_categorical(ColumnKind kind) { return kind == ColumnKind::unordered || kind == ColumnKind::ordered; }

/// Whether a field starts like an ISO date (four digits, '-', two digits, '-'): it is then read
/// as a time stamp, or refused as one, never as a number.
bool looks_like_instant(std::string_view text);

/// How a stamp named its zone: not at all (a date, or a local time read as UTC), 'Z', or an
/// offset east of UTC in minutes.
struct StampZone {
  enum Kind { none, utc, offset } kind = none;
  int minutes = 0;
};

/// A time column's zone for output: the one offset every stamp of the training column gave
/// (minutes east of UTC), or none: UTC with 'Z'.
using UtcOffset = std::optional<int>;

/// Parses an ISO 8601 date (2024-03-01) or date-time: the date, 'T' or a space, hh:mm or
/// hh:mm:ss with optional fractional seconds, then optionally 'Z' or an offset +hh:mm, -hh:mm,
/// +hhmm or +hh (none = UTC). Returns seconds since 1970-01-01T00:00:00Z, or nullopt; sets
/// `*date_only` to whether the text was a date alone and `*zone` to how it named its zone.
/// Blanks around the text are ignored.
std::optional<double> parse_instant(std::string_view text, bool* date_only = nullptr, StampZone* zone = nullptr);

/// Parses a date or date-time written as `format` says (strptime's directives, a subset): %Y
/// (four digits), %y (two: 69-99 the 1900s, 00-68 the 2000s, as POSIX), %m and %d (one or two
/// digits), %b or %B (an English month name or its first three letters, any case), %H, %M and
/// %S (%S with optional fractional digits), %% (a percent sign); any other character stands for
/// itself. Read in UTC. Returns seconds since the epoch, or nullopt where the text does not
/// fit or the date does not exist; sets `*has_time` to whether the format holds a time of day.
/// Blanks around the text are ignored.
std::optional<double> parse_with_format(std::string_view text, std::string_view format, bool* has_time = nullptr);
/// Throws ParameterError naming date_format unless `format` holds %Y or %y, %m, %b or %B, and
/// %d, and no directive besides those parse_with_format reads.
void check_date_format(const std::string& format);

/// An instant as ISO 8601: a date (2024-03-01) when `as_date` and the instant is a whole day,
/// else a date-time with the fewest fractional digits that parse_instant reads back as the same
/// double: in UTC with 'Z' (2024-03-01T06:30:00Z, 2024-03-01T06:30:00.25Z), or with `offset`
/// the local time there and the offset (2024-03-01T07:30:00+01:00). Falls back to a plain
/// number for a value outside the years 0000..9999.
std::string format_instant(double seconds, bool as_date = false, UtcOffset offset = std::nullopt);
void append_instant(std::string& out, double seconds, bool as_date = false, UtcOffset offset = std::nullopt);

/// An offset as ISO 8601 writes it, "+01:00", "-05:30"; and back ("+01:00", "-0530", "+05"),
/// nullopt for anything else.
std::string format_utc_offset(int minutes);
std::optional<int> parse_utc_offset(std::string_view text);

/// Whether `seconds` is a whole number of days since the epoch.
bool whole_day(double seconds);

/// How x values of a column are written: numbers as numbers; instants as dates when the column
/// was read as dates and every value is a whole day, else as date-times.
ColumnKind output_kind(ColumnKind read, const double* values, std::size_t count, std::size_t stride = 1);

/// A time span: a number and a unit, ms, s, min, h, d or w ("90s", "1.5h", "2w"), in seconds;
/// nullopt when `text` has no unit. Throws UsageError naming `option` for a unit it does not
/// know or a span that is not positive and finite.
std::optional<double> parse_duration(std::string_view text, const std::string& option);

/// A span for people, in the largest unit that keeps it >= 1: "6 h", "1.5 d", "90 s".
std::string format_duration(double seconds);

}  // namespace nwreg
