#pragma once
/// The pieces every SVG picture of nwreg's is made of: escaped text, coordinates, ticks on a
/// number or time axis, the mapping of data to the page, and the colour scales.

#include <ostream>
#include <string>
#include <vector>

namespace nwreg::svg {

/// Text for SVG: control characters and bytes that are not UTF-8 escaped visibly (escape_excerpt:
/// XML 1.0 allows neither), long names cut, then XML's five specials.
std::string escape(const std::string& text);
/// A coordinate, to two decimals.
std::string num(double v);

/// Ticks and their labels.
struct Ticks {
  std::vector<double> at;
  std::vector<std::string> label;
};
/// Ticks at 1, 2 or 5 times a power of ten, about `target` of them.
Ticks nice_ticks(double lo, double hi, int target = 6);
/// Ticks on a time axis (seconds since the epoch, UTC): about `target` of them at round steps of
/// microseconds to days, or at the first of every 1, 2, 3 or 6 months or of every 1, 2, 5, 10,
/// ... years.
Ticks time_ticks(double lo, double hi, int target = 6);
/// A label for instant t on an axis whose ticks are `step` seconds apart (months: 28 days and
/// more): only as fine as the step needs, with the day in front when the axis spans midnight.
std::string time_label(double t, double step, bool with_date);
/// Whether [lo, hi] holds more than one UTC day.
bool crosses_midnight(double lo, double hi);
/// Whether every value is a whole UTC day.
bool whole_days(const std::vector<double>& v);

/// Maps data to the plot area. Differences are taken of halves, so that data spanning the
/// whole double range (y = +-1.7e308) map to finite coordinates.
struct Scale {
  double lo, hi, from, to;
  double operator()(double v) const {
    return hi > lo ? from + (v / 2 - lo / 2) / (hi / 2 - lo / 2) * (to - from) : (from + to) / 2;
  }
};
/// Widens [lo, hi] by 4% each side (or by 10% of its size, or 1, when it is a point), within
/// the range of a double.
void pad(double& lo, double& hi);
/// Tick marks and labels: `tx` below the x axis at y0, `ty` left of the y axis at x0.
void write_ticks(std::ostream& out, const Scale& sx, const Ticks& tx, const Scale& sy, const Ticks& ty, double x0,
                 double y0);
/// The <svg> element's opening and a white background, w x h.
void header(std::ostream& out, double w, double h);

/// viridis at t in 0..1.
std::string colour(double t);
/// Blue, white, red (ColorBrewer RdBu) for t in 0..1, white at 0.5.
std::string diverging(double t);

}  // namespace nwreg::svg
