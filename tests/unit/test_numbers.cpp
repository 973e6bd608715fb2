#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "nwreg/base/numbers.h"

using nwreg::ParseFailure;
using nwreg::parse_double;

TEST_CASE("parse_double accepts plain numbers, a leading plus and surrounding blanks") {
  CHECK(*parse_double("1.5") == 1.5);
  CHECK(*parse_double(" +2 ") == 2.0);
  CHECK(*parse_double("\t-3e2") == -300.0);
  CHECK(*parse_double("1e-310") == 1e-310);  // subnormal, still representable
  CHECK(*parse_double("0.1") == 0.1);
}

TEST_CASE("parse_double rejects what is not one finite double, saying why") {
  ParseFailure why{};
  CHECK_FALSE(parse_double("", &why));
  CHECK(why == ParseFailure::empty);
  CHECK_FALSE(parse_double("   ", &why));
  CHECK(why == ParseFailure::empty);
  for (const char* bad : {"abc", "1e", "1.5x", "+-1", "+", "1,5", "0x10", "- 1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_double(bad, &why));
    CHECK(why == ParseFailure::not_a_number);
  }
  for (const char* bad : {"nan", "inf", "-inf", "NaN", "infinity"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_double(bad, &why));
    CHECK(why == ParseFailure::not_finite);
  }
  CHECK_FALSE(parse_double("1e400", &why));
  CHECK(why == ParseFailure::out_of_range);
  CHECK_FALSE(parse_double("1e-400", &why));
  CHECK(why == ParseFailure::out_of_range);
}

TEST_CASE("describe names the field") {
  CHECK(nwreg::describe(ParseFailure::not_a_number, "abc") == "cannot parse \"abc\" as a number");
  CHECK(nwreg::describe(ParseFailure::empty, "") == "empty field where a number is required");
  CHECK(nwreg::describe(ParseFailure::not_finite, "nan") == "\"nan\" is not a finite number");
}

TEST_CASE("format_double writes the shortest text that reads back to the same bits") {
  CHECK(nwreg::format_double(0.1) == "0.1");
  CHECK(nwreg::format_double(1e300) == "1e+300");
  CHECK(nwreg::format_double(-2) == "-2");
  CHECK(nwreg::format_double(0.30000000000000004) == "0.30000000000000004");
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const auto back = parse_double(nwreg::format_double(v));
    REQUIRE(back.has_value());
    std::uint64_t back_bits;
    std::memcpy(&back_bits, &*back, sizeof v);
    CHECK(back_bits == bits);
  }
}

TEST_CASE("quote and escape_excerpt: short, one line, no terminal controls") {
  using nwreg::escape_excerpt;
  using nwreg::quote;
  CHECK(quote("abc") == "\"abc\"");
  CHECK(quote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(quote("a\nb\tc\rd") == "\"a\\nb\\tc\\rd\"");
  CHECK(quote("\x1b[31mred\x7f") == "\"\\x1b[31mred\\x7f\"");
  CHECK(quote(std::string_view("a\0b", 3)) == "\"a\\x00b\"");
  CHECK(quote("caf\xc3\xa9 \xe2\x82\xac") == "\"caf\xc3\xa9 \xe2\x82\xac\"");  // UTF-8 stays
  CHECK(quote("\xc2\x9b" "2J") == "\"\\u009b2J\"");                          // C1 CSI is escaped
  CHECK(quote("\xff\xc3(") == "\"\\xff\\xc3(\"");                             // not UTF-8
  CHECK(quote("\xed\xa0\x80") == "\"\\xed\\xa0\\x80\"");                      // a UTF-16 surrogate
  const std::string big(1 << 20, 'x');
  CHECK(quote(big) == "\"" + std::string(60, 'x') + "...\" (1048576 bytes)");
  CHECK(escape_excerpt(big, 5) == "xxxxx... (1048576 bytes)");
  // Cut on a character boundary: never half of a UTF-8 sequence.
  CHECK(escape_excerpt("ab\xc3\xa9\xc3\xa9", 3) == "ab\xc3\xa9... (6 bytes)");
  CHECK(escape_excerpt("plain/path.csv") == "plain/path.csv");
}

TEST_CASE("format_interval: three digits, more where the ends would read the same") {
  CHECK(format_interval(0.152, 1.98) == "[0.152, 1.98]");
  CHECK(format_interval(1e9, 1e9 + 10) == "[1e+09, 1.00000001e+09]");  // %.3g: [1e+09, 1e+09]
  CHECK(format_interval(1e9, 1e9 + 1) == "[1000000000, 1000000001]");
  CHECK(format_interval(1e15, 1e15 + 2) == "[1000000000000000, 1000000000000002]");
  CHECK(format_interval(7, 7) == "[7, 7]");
  CHECK(format_interval(-1.2345e-300, -1.2346e-300) == "[-1.234e-300, -1.235e-300]");
}
