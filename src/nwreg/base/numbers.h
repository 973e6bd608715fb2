#pragma once
/// Reading and writing doubles exactly: correctly rounded parsing with strict checks, and the
/// shortest form that reads back to the same double.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nwreg {

/// Why a field is not a usable number.
enum class ParseFailure { empty, not_a_number, not_finite, out_of_range };

/// Parses a whole field as a finite double (correctly rounded, std::from_chars). Accepts a
/// leading '+', surrounding spaces and tabs; rejects empty text, NaN, inf, trailing junk and
/// values beyond the double range. Values too small for a double (1e-400) are out of range too.
std::optional<double> parse_double(std::string_view text, ParseFailure* why = nullptr);

/// `text` without the spaces and tabs around it.
std::string_view trim(std::string_view text);

/// Untrusted text made safe for a one-line message: control characters (C0, DEL, C1) and bytes
/// that are not UTF-8 are escaped (\n, \t, \x1b, \u009b), and text longer than `max_bytes` is
/// cut at a character boundary and ends in "..." with its full length, e.g.
/// `1234567890... (16777216 bytes)`.
std::string escape_excerpt(std::string_view text, std::size_t max_bytes = 60);

/// escape_excerpt in double quotes: `"abc"`, `"a\nb"`. Quotes and backslashes inside are
/// escaped too, so the quoted text reads back unambiguously.
std::string quote(std::string_view text, std::size_t max_bytes = 60);

/// Items listed as prose: "a", "a or b", "a, b or c".
std::string or_list(const std::vector<std::string>& items);

/// One sentence for a failure, e.g. `cannot parse "abc" as a number` (the text quoted short).
std::string describe(ParseFailure why, std::string_view text);

/// Shortest decimal text that reads back to exactly `v` (std::to_chars). `v` must be finite.
std::string format_double(double v);
/// Three significant digits (printf %.3g), for figures in messages: "1.98", "0.152", "1e+03".
std::string format_g3(double v);
/// "[lo, hi]" in format_g3's style, with as many more significant digits (up to 17) as tell the
/// ends apart: "[1e+09, 1e+09]" reads "[1000000000, 1000000001]".
std::string format_interval(double lo, double hi);

/// Appends format_double(v) to `out` without a temporary string.
void append_double(std::string& out, double v);

}  // namespace nwreg
