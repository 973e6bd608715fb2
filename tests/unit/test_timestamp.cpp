#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "nwreg/base/errors.h"
#include "nwreg/data/grid.h"
#include "nwreg/base/timestamp.h"

using namespace nwreg;

// Reference seconds from GNU date: `date -u -d 2024-03-01T06:30:00+05:30 +%s`.
TEST_CASE("ISO 8601 dates and date-times read as seconds since the epoch, in UTC") {
  CHECK(parse_instant("2024-03-01") == 1709251200.0);
  CHECK(parse_instant("2024-03-01T00:00:00Z") == 1709251200.0);
  CHECK(parse_instant("2024-03-01T06:30:00+05:30") == 1709254800.0);
  CHECK(parse_instant("2024-03-01 06:30:00+0530") == 1709254800.0);
  CHECK(parse_instant("2024-03-01T06:00+05") == 1709254800.0);
  CHECK(parse_instant("2024-03-01T01:00:00-00:00") == 1709254800.0);
  CHECK(parse_instant("2024-03-01T01:00") == 1709254800.0);  // no zone: UTC
  CHECK(parse_instant("1969-12-31T23:59:59Z") == -1.0);
  CHECK(parse_instant("2000-02-29T12:00:00z") == 951825600.0);
  CHECK(parse_instant("1900-01-01") == -2208988800.0);
  CHECK(parse_instant("9999-12-31T23:59:59Z") == 253402300799.0);
  CHECK(parse_instant("2016-12-31T23:59:60Z") == 1483228800.0);  // a leap second: the next midnight
  CHECK(parse_instant("2024-03-01T24:00:00Z") == parse_instant("2024-03-02"));
  CHECK(parse_instant(" 2024-03-01T00:00:00.25Z ") == 1709251200.25);
  CHECK(parse_instant("1970-01-01T00:00:00.000000001Z") == 1e-9);
  CHECK(parse_instant("1970-01-01T00:00:00.0000000000001Z") == 1e-13);  // any number of digits
  bool date_only = false;
  CHECK(parse_instant("2024-03-01", &date_only));
  CHECK(date_only);
  CHECK(parse_instant("2024-03-01T00:00Z", &date_only));
  CHECK(!date_only);
}

TEST_CASE("what is not a valid ISO 8601 instant is refused") {
  for (std::string bad : {"2023-02-29", "2024-13-01", "2024-1-5", "2024-03-01T25:00:00Z", "2024-03-01T12:60Z",
                          "2024-03-01T1:00:00Z", "2024-03-01X12:00", "2024-03-01T12:00:00+5:30", "2024-03-01T12:00:00.Z",
                          "2024-03-01T12:00:00 Z", "2024-03-01T12", "20240301", "2024/03/01", "", "1e9",
                          "2024-03-01T12:59:60Z", "2024-03-01T24:00:01Z", "2024-03-01T12:00+24:00"}) {
    CAPTURE(bad);
    CHECK(!parse_instant(bad));
  }
  CHECK(looks_like_instant("2024-03-0"));
  CHECK(!looks_like_instant("-2024.5"));
}

TEST_CASE("instants written back as ISO 8601 read back as the same double") {
  CHECK(format_instant(1709251200) == "2024-03-01T00:00:00Z");
  CHECK(format_instant(1709251200, true) == "2024-03-01");
  CHECK(format_instant(1709254800, true) == "2024-03-01T01:00:00Z");  // not a whole day
  CHECK(format_instant(1709251200.25) == "2024-03-01T00:00:00.25Z");
  CHECK(format_instant(-0.5) == "1969-12-31T23:59:59.5Z");
  CHECK(format_instant(1709251200.1) == "2024-03-01T00:00:00.1Z");  // not .100000143..., which a double holds
  CHECK(format_instant(1e-13) == "1970-01-01T00:00:00.0000000000001Z");
  CHECK(format_instant(-2208988800, true) == "1900-01-01");
  CHECK(format_instant(1e15) == "1e+15");  // beyond year 9999: a number
  // The last second of 9999 to a tenth of a microsecond rounds (doubles are 3e-5 s apart there)
  // to the double below year 10000, which is written and read back as itself.
  const auto last = parse_instant("9999-12-31T23:59:59.9999999Z");
  REQUIRE(last);
  CHECK(*last < 253402300800.0);
  CHECK(format_instant(*last) == "9999-12-31T23:59:59.99997Z");
  CHECK(parse_instant(format_instant(*last)) == *last);
  // A local clock still in 9999 is written with its offset, not as a number.
  CHECK(format_instant(253402300800.0 + 3600, false, -300) == "9999-12-31T20:00:00-05:00");
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(-2e9, 4e9);
  for (int i = 0; i < 2000; ++i) {
    const double t = u(g);
    CAPTURE(format_instant(t));
    CHECK(parse_instant(format_instant(t)) == t);
  }
}

TEST_CASE("how a column of instants is written: dates only when every value is a whole day") {
  const double days[] = {0, 86400, 172800}, mixed[] = {0, 43200};
  CHECK(output_kind(ColumnKind::date, days, 3) == ColumnKind::date);
  CHECK(output_kind(ColumnKind::date, mixed, 2) == ColumnKind::time);
  CHECK(output_kind(ColumnKind::time, days, 3) == ColumnKind::time);
  CHECK(output_kind(ColumnKind::number, mixed, 2) == ColumnKind::number);
}

TEST_CASE("time spans: a number and a unit, in seconds") {
  CHECK(parse_duration("90s", "-b") == 90.0);
  CHECK(parse_duration("15min", "-b") == 900.0);
  CHECK(parse_duration("1.5h", "-b") == 5400.0);
  CHECK(parse_duration("3d", "-b") == 259200.0);
  CHECK(parse_duration("2w", "-b") == 1209600.0);
  CHECK(parse_duration("250ms", "-b") == 0.25);
  CHECK(!parse_duration("4850", "-b"));  // a plain number: no unit
  CHECK(!parse_duration("1e3", "-b"));
  CHECK_THROWS_WITH_AS(parse_duration("5m", "-b"), "-b: unknown time unit \"m\" in \"5m\" (known: ms, s, min, h, d, w; min for minutes)",
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_duration("-1h", "-b"), "-b: a time span must be positive, got \"-1h\"", UsageError);
  CHECK(format_duration(21600) == "6 h");
  CHECK(format_duration(129600) == "1.5 d");
  CHECK(format_duration(90) == "1.5 min");
  CHECK(format_duration(4850) == "1.347 h");
  CHECK(format_duration(0.25) == "250 ms");
  CHECK(format_duration(1209600) == "2 w");
  CHECK(format_duration(59.999) == "1 min");  // rounded before the unit is chosen
  CHECK(format_duration(3599.999999999998) == "1 h");
  CHECK(format_duration(0.99999) == "1 s");
}

TEST_CASE("grids between instants: START/STOP/STEP, STOP excluded, exact in whole seconds") {
  bool time = false;
  const auto g = parse_grid("2024-03-01/2024-03-02/6h", max_grid_points, &time);
  CHECK(time);
  CHECK(g == std::vector<double>{1709251200, 1709272800, 1709294400, 1709316000});
  CHECK(parse_grid("2024-03-01T00:00Z/2024-03-01T00:01Z/20", max_grid_points, &time).size() == 3);
  CHECK(parse_grid("0:1:0.5", max_grid_points, &time).size() == 2);
  CHECK(!time);
  CHECK_THROWS_WITH_AS(parse_grid("2024-03-02/2024-03-01/1d"),
                       "STEP 1 d does not lead from 2024-03-02T00:00:00Z towards 2024-03-01T00:00:00Z: no points",
                       UsageError);
}

TEST_CASE("dates in a format given (--date-format): strptime's directives, a subset, read in UTC") {
  bool time = true;
  CHECK(nwreg::parse_with_format("05/01/1973", "%m/%d/%Y", &time) == *parse_instant("1973-05-01"));
  CHECK(!time);
  CHECK(nwreg::parse_with_format("1.5.1973", "%d.%m.%Y") == *parse_instant("1973-05-01"));
  CHECK(nwreg::parse_with_format(" 01-May-73 ", "%d-%b-%y") == *parse_instant("1973-05-01"));
  CHECK(nwreg::parse_with_format("01 SEPTEMBER 2068", "%d %B %Y") == *parse_instant("2068-09-01"));
  CHECK(nwreg::parse_with_format("3/4/68", "%m/%d/%y") == *parse_instant("2068-03-04"));  // POSIX's pivot
  CHECK(nwreg::parse_with_format("3/4/69", "%m/%d/%y") == *parse_instant("1969-03-04"));
  CHECK(nwreg::parse_with_format("05/01/1973 06:30:15.25", "%m/%d/%Y %H:%M:%S", &time) ==
        *parse_instant("1973-05-01T06:30:15.25Z"));
  CHECK(time);
  CHECK(nwreg::parse_with_format("100%", "%d%%") == std::nullopt);  // no year or month
  for (const char* bad : {"02/30/1973", "13/01/1973", "05/01/73", "05/01/1973x", "5-1-1973", ""}) {
    CAPTURE(bad);
    CHECK(nwreg::parse_with_format(bad, "%m/%d/%Y") == std::nullopt);
  }
  CHECK_NOTHROW(nwreg::check_date_format("%d.%m.%Y %H:%M"));
  CHECK_THROWS_WITH_AS(nwreg::check_date_format("%m/%d/%q"),
                       "unknown directive %q in \"%m/%d/%q\" (known: %Y %y %m %b %B %d %H %M %S %%)", nwreg::ParameterError);
  CHECK_THROWS_WITH_AS(nwreg::check_date_format("%m/%Y"),
                       "\"%m/%Y\" needs a year (%Y or %y), a month (%m, %b or %B) and a day (%d)", nwreg::ParameterError);
  CHECK_THROWS_WITH_AS(nwreg::check_date_format("%d/%m/%Y%"), "ends in a lone %: \"%d/%m/%Y%\"", nwreg::ParameterError);
}
