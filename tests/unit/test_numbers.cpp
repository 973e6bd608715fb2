#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "nwreg/numbers.h"

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
