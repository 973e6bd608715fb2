#include "nwreg/io/svg.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include <date/date.h>

#include "nwreg/base/numbers.h"
#include "nwreg/base/timestamp.h"

namespace nwreg::svg {

// Text for SVG: control characters and bytes that are not UTF-8 escaped visibly (escape_excerpt:
// XML 1.0 allows neither), long names cut, then XML's five specials.
std::string escape(const std::string& text) {
  const std::string s = escape_excerpt(text, 200);
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

Ticks nice_ticks(double lo, double hi, int target) {
  Ticks t;
  if (!(hi > lo)) {
    t.at = {lo};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", lo);
    t.label = {buf};
    return t;
  }
  const double raw = (hi / 2 - lo / 2) / target * 2;  // halves: finite for data near +-1.7e308
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * mag >= raw) {
      step = f * mag;
      break;
    }
  const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
  // Counted, not accumulated: a step below the spacing of doubles near lo (x near 1e16, a
  // range of 1) would never advance v. At most 2 * target + 2 ticks.
  const double first = std::ceil(lo / step);
  for (int i = 0; i <= 2 * target + 1; ++i) {
    const double v = (first + i) * step;
    if (!(v <= hi + step * 1e-9)) break;
    const double r = std::round(v / step) * step;
    if (!std::isfinite(r)) break;  // past the largest double
    if (!t.at.empty() && !(r > t.at.back())) continue;
    t.at.push_back(r);
    // Large and small values in %g with the significant digits that tell ticks a step apart
    // (1e15 + 2 beside 1e15 + 4: 16 digits), 0 beside them as "0" (not 0.0000000000).
    char buf[48];
    if (r == 0 && step < 1e-4) {
      std::snprintf(buf, sizeof buf, "0");
    } else if (std::abs(r) >= 1e6 || (std::abs(r) < 1e-4 && r != 0)) {
      const int digits = static_cast<int>(std::floor(std::log10(std::abs(r))) - std::floor(std::log10(step) + 1e-9)) + 1;
      std::snprintf(buf, sizeof buf, "%.*g", std::clamp(digits, 1, 17), r);
    } else {
      std::snprintf(buf, sizeof buf, "%.*f", decimals, r == 0 ? 0.0 : r);
    }
    t.label.push_back(buf);
  }
  return t;
}

// A label for instant t on an axis whose ticks are `step` seconds apart (months: 28 days and
// more): only as fine as the step needs, with the day in front when the axis spans midnight.
std::string time_label(double t, double step, bool with_date) {
  const double whole = std::floor(t);
  const date::sys_seconds at{std::chrono::seconds{static_cast<std::int64_t>(whole)}};
  if (step >= 365 * 86400.0) return date::format("%Y", at);
  if (step >= 28 * 86400.0) return date::format("%Y-%m", at);
  if (step >= 86400) return date::format("%F", at);
  std::string clock = date::format(step >= 60 ? "%H:%M" : "%H:%M:%S", at);
  if (step < 1) {  // fractional seconds, as many digits as the step has
    const int digits = std::min(9, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
    char frac[16];
    std::snprintf(frac, sizeof frac, "%.*f", digits, t - whole);
    clock += frac + 1;  // from the point: ".25"
  }
  return with_date ? date::format("%m-%d ", at) + clock : clock;
}

// Whether [lo, hi] holds more than one UTC day.
bool crosses_midnight(double lo, double hi) { return std::floor(lo / 86400) != std::floor(hi / 86400); }

// Ticks on a time axis (seconds since the epoch, UTC): about `target` of them at round steps
// of microseconds to days, or at the first of every 1, 2, 3 or 6 months or of every 1, 2, 5,
// 10, ... years.
Ticks time_ticks(double lo, double hi, int target) {
  Ticks t;
  const double span = hi - lo, raw = span / target;
  // Within about +-31000 years of 1970 (date::year holds -32767..32767; the axis may be padded
  // past the years 0000..9999 of the data).
  if (!(span > 0) || !(lo > -1e12 && hi < 1e12)) return nice_ticks(lo, hi, target);
  static const double steps[] = {1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01,
                                 0.02, 0.05, 0.1,  0.2,  0.5,  1,    2,    5,    10,   15,   30,   60,   120,
                                 300,  600,  900,  1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
                                 1209600};
  const bool with_date = crosses_midnight(lo, hi);
  for (double step : steps) {
    if (step < raw) continue;
    const double first = std::ceil(lo / step);
    for (int i = 0; i < 40; ++i) {
      const double v = (first + i) * step;  // counted, not accumulated: exact for whole steps
      if (v > hi) break;
      t.at.push_back(v);
      t.label.push_back(time_label(v, step, with_date));
    }
    return t;
  }
  // Calendar months: every k months (k years past a year), each at midnight on the 1st.
  const double month = 30.436875 * 86400;
  long k = 1;
  for (long m : {1L, 2L, 3L, 6L, 12L, 24L, 60L, 120L, 240L, 600L, 1200L, 2400L, 6000L, 12000L, 24000L})
    if ((k = m) * month >= raw) break;
  const date::year_month_day first{date::floor<date::days>(date::sys_seconds{std::chrono::seconds{static_cast<std::int64_t>(lo)}})};
  long index = static_cast<int>(first.year()) * 12L + static_cast<long>(static_cast<unsigned>(first.month())) - 1;
  index = (index >= 0 ? index / k : -((-index + k - 1) / k)) * k;  // down to a multiple of k months
  for (int i = 0; i < 200 && t.at.size() < 40; ++i, index += k) {
    const long y = index >= 0 ? index / 12 : -((-index + 11) / 12);
    const date::year_month_day d{date::year{static_cast<int>(y)}, date::month{static_cast<unsigned>(index - y * 12 + 1)},
                                 date::day{1}};
    const double v = static_cast<double>(date::sys_days{d}.time_since_epoch().count()) * 86400;
    if (v < lo) continue;
    if (v > hi) break;
    t.at.push_back(v);
    t.label.push_back(time_label(v, static_cast<double>(k) * month, with_date));
  }
  return t;
}

// Widens [lo, hi] by 4% each side (or by 10% of its size, or 1, when it is a point), within
// the range of a double.
void pad(double& lo, double& hi) {
  const double half_span = hi / 2 - lo / 2;
  const double p = half_span > 0 ? half_span * 0.08 : (std::abs(lo) > 0 ? std::abs(lo) * 0.1 : 1.0);
  const double big = std::numeric_limits<double>::max();
  lo = lo < -big + p ? -big : lo - p;
  hi = hi > big - p ? big : hi + p;
}

void write_ticks(std::ostream& out, const Scale& sx, const Ticks& tx, const Scale& sy, const Ticks& ty, double x0,
                 double y0) {
  out << "<g class=\"x-ticks\" text-anchor=\"middle\">\n";
  for (std::size_t i = 0; i < tx.at.size(); ++i) {
    const double px = sx(tx.at[i]);
    out << "<line x1=\"" << num(px) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(px) << "\" y2=\"" << num(y0 + 5)
        << "\" stroke=\"#333\"/><text x=\"" << num(px) << "\" y=\"" << num(y0 + 20) << "\">" << escape(tx.label[i])
        << "</text>\n";
  }
  out << "</g>\n<g class=\"y-ticks\" text-anchor=\"end\">\n";
  for (std::size_t i = 0; i < ty.at.size(); ++i) {
    const double py = sy(ty.at[i]);
    out << "<line x1=\"" << num(x0 - 5) << "\" y1=\"" << num(py) << "\" x2=\"" << num(x0) << "\" y2=\"" << num(py)
        << "\" stroke=\"#333\"/><text x=\"" << num(x0 - 8) << "\" y=\"" << num(py + 4) << "\">" << escape(ty.label[i])
        << "</text>\n";
  }
  out << "</g>\n";
}

void header(std::ostream& out, double w, double h) {
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w
      << ' ' << h << "\" font-family=\"sans-serif\" font-size=\"13\">\n"
      << "<rect width=\"" << w << "\" height=\"" << h << "\" fill=\"white\"/>\n";
}

// A colour from `count` RGB stops, evenly spaced over 0..1, interpolated linearly.
namespace {
std::string interpolate(const double (*stops)[3], int count, double t) {
  t = std::clamp(t, 0.0, 1.0) * (count - 1);
  const int i = std::min(count - 2, static_cast<int>(t));
  const double f = t - i;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
  return buf;
}
}  // namespace

// viridis, sampled at nine points.
std::string colour(double t) {
  static const double stops[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
                                     {39, 173, 129}, {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
  return interpolate(stops, 9, t);
}

// Blue, white, red (ColorBrewer RdBu, 7 stops) for 0..1, white at 0.5: negative weights blue.
std::string diverging(double t) {
  static const double stops[7][3] = {{33, 102, 172}, {103, 169, 207}, {209, 229, 240}, {247, 247, 247},
                                     {253, 219, 199}, {239, 138, 98},  {178, 24, 43}};
  return interpolate(stops, 7, t);
}

bool whole_days(const std::vector<double>& v) { return std::all_of(v.begin(), v.end(), whole_day); }

}  // namespace nwreg::svg
