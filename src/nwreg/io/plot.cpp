#include "nwreg/io/plot.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>

#include <date/date.h>

#include "nwreg/base/numbers.h"
#include "nwreg/base/timestamp.h"

namespace nwreg {
namespace {

constexpr double width = 800, height = 500;
constexpr double left = 80, right = 30, top = 50, bottom = 60;

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

// Ticks at 1, 2 or 5 times a power of ten, about `target` of them, and their labels.
struct Ticks {
  std::vector<double> at;
  std::vector<std::string> label;
};

Ticks nice_ticks(double lo, double hi, int target = 6) {
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
    char buf[48];
    if (std::abs(r) >= 1e6 || (std::abs(r) < 1e-4 && r != 0)) std::snprintf(buf, sizeof buf, "%g", r);
    else std::snprintf(buf, sizeof buf, "%.*f", decimals, r == 0 ? 0.0 : r);
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
Ticks time_ticks(double lo, double hi, int target = 6) {
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

// Maps data to the plot area. Differences are taken of halves, so that data spanning the
// whole double range (y = +-1.7e308) map to finite coordinates.
struct Scale {
  double lo, hi, from, to;
  double operator()(double v) const {
    return hi > lo ? from + (v / 2 - lo / 2) / (hi / 2 - lo / 2) * (to - from) : (from + to) / 2;
  }
};

// Widens [lo, hi] by 4% each side (or by 10% of its size, or 1, when it is a point), within
// the range of a double.
void pad(double& lo, double& hi) {
  const double half_span = hi / 2 - lo / 2;
  const double p = half_span > 0 ? half_span * 0.08 : (std::abs(lo) > 0 ? std::abs(lo) * 0.1 : 1.0);
  const double big = std::numeric_limits<double>::max();
  lo = lo < -big + p ? -big : lo - p;
  hi = hi > big - p ? big : hi + p;
}

void header(std::ostream& out, double w, double h) {
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w
      << ' ' << h << "\" font-family=\"sans-serif\" font-size=\"13\">\n"
      << "<rect width=\"" << w << "\" height=\"" << h << "\" fill=\"white\"/>\n";
}

void axes(std::ostream& out, const Scale& sx, const Scale& sy, const std::string& x_name, const std::string& y_name,
          const std::string& title, double plot_right, bool x_time) {
  const double x0 = left, x1 = plot_right, y0 = height - bottom, y1 = top;
  out << "<g stroke=\"#333\" fill=\"none\"><rect x=\"" << num(x0) << "\" y=\"" << num(y1) << "\" width=\""
      << num(x1 - x0) << "\" height=\"" << num(y0 - y1) << "\"/></g>\n";
  const Ticks tx = x_time ? time_ticks(sx.lo, sx.hi) : nice_ticks(sx.lo, sx.hi), ty = nice_ticks(sy.lo, sy.hi);
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
  out << "</g>\n<text class=\"x-title\" x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(height - 15)
      << "\" text-anchor=\"middle\" font-size=\"15\">" << escape(x_name) << (x_time ? " (UTC)" : "") << "</text>\n"
      << "<text class=\"y-title\" transform=\"translate(20," << num((y0 + y1) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"15\">" << escape(y_name) << "</text>\n"
      << "<text class=\"title\" x=\"" << num(width / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
      << escape(title) << "</text>\n";
}

// A colour from `count` RGB stops, evenly spaced over 0..1, interpolated linearly.
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

}  // namespace

void write_fit_svg(std::ostream& out, const FitPlot& p) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  auto take = [](const std::vector<double>& v, double& lo, double& hi) {
    for (double a : v) lo = std::min(lo, a), hi = std::max(hi, a);
  };
  take(p.x, xlo, xhi);
  take(p.qx, xlo, xhi);
  take(p.y, ylo, yhi);
  take(p.f, ylo, yhi);
  take(p.lower, ylo, yhi);
  take(p.upper, ylo, yhi);
  pad(xlo, xhi);
  pad(ylo, yhi);
  const Scale sx{xlo, xhi, left, width - right}, sy{ylo, yhi, height - bottom, top};
  header(out, width, height);

  std::vector<std::size_t> order(p.qx.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p.qx[a] < p.qx[b]; });
  // The runs of queries (in x order) whose values in `v` are all finite: a cell left empty (NaN)
  // breaks the curve and the band.
  auto runs = [&](std::initializer_list<const std::vector<double>*> v) {
    std::vector<std::vector<std::size_t>> out(1);
    for (std::size_t i : order) {
      if (std::all_of(v.begin(), v.end(), [&](const std::vector<double>* a) { return std::isfinite((*a)[i]); })) {
        out.back().push_back(i);
      } else if (!out.back().empty()) {
        out.emplace_back();
      }
    }
    if (out.back().empty()) out.pop_back();
    return out;
  };
  if (!p.lower.empty()) {
    for (const auto& run : runs({&p.lower, &p.upper})) {
      out << "<polygon class=\"band\" fill=\"#1f77b4\" fill-opacity=\"0.18\" stroke=\"none\" points=\"";
      for (std::size_t i : run) out << num(sx(p.qx[i])) << ',' << num(sy(p.upper[i])) << ' ';
      for (auto it = run.rbegin(); it != run.rend(); ++it) out << num(sx(p.qx[*it])) << ',' << num(sy(p.lower[*it])) << ' ';
      out << "\"/>\n";
    }
  }
  // Points: smaller and lighter as they get many; past 20000, every k-th.
  const std::size_t n = p.x.size(), limit = 20000, stride = n > limit ? (n + limit - 1) / limit : 1;
  const double r = n <= 200 ? 3.0 : n <= 2000 ? 2.0 : 1.2, alpha = n <= 200 ? 0.75 : n <= 2000 ? 0.5 : 0.3;
  out << "<g class=\"points\" fill=\"#555\" fill-opacity=\"" << alpha << "\">\n";
  for (std::size_t i = 0; i < n; i += stride)
    out << "<circle cx=\"" << num(sx(p.x[i])) << "\" cy=\"" << num(sy(p.y[i])) << "\" r=\"" << r << "\"/>\n";
  out << "</g>\n";
  for (const auto& run : runs({&p.f})) {
    out << "<polyline class=\"curve\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2.2\" points=\"";
    for (std::size_t i : run) out << num(sx(p.qx[i])) << ',' << num(sy(p.f[i])) << ' ';
    out << "\"/>\n";
  }
  axes(out, sx, sy, p.x_name, p.y_name, p.title, width - right, p.x_time);
  if (stride > 1)
    out << "<text class=\"note\" x=\"" << num(width - right) << "\" y=\"" << num(top - 6)
        << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#666\">showing " << (n + stride - 1) / stride << " of " << n
        << " points, evenly thinned</text>\n";
  out << "</svg>\n";
}

void write_curve_svg(std::ostream& out, const CurvePlot& p) {
  constexpr double cap = 3;  // ratios above it are drawn at it
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  // Each curve relative to its minimum.
  std::vector<std::vector<std::optional<double>>> ratio(p.values.size());
  std::vector<std::optional<std::size_t>> at_min(p.values.size());
  double top_ratio = 1;
  for (std::size_t c = 0; c < p.values.size(); ++c) {
    const auto& v = p.values[c];
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i] && (!at_min[c] || *v[i] < *v[*at_min[c]])) at_min[c] = i;
    ratio[c].resize(v.size());
    if (!at_min[c]) continue;
    const double m = *v[*at_min[c]];
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i]) continue;
      const double r = c < p.logarithmic.size() && p.logarithmic[c] ? std::exp(std::min(*v[i] - m, 50.0))
                       : m > 0                                    ? *v[i] / m
                                                                  : (*v[i] > 0 ? cap : 1.0);
      ratio[c][i] = std::min(r, cap);
      top_ratio = std::max(top_ratio, *ratio[c][i]);
    }
  }
  double xlo = INFINITY, xhi = -INFINITY;
  for (double x : p.x)
    if (x > 0 && std::isfinite(x)) xlo = std::min(xlo, std::log10(x)), xhi = std::max(xhi, std::log10(x));
  if (p.chosen && *p.chosen > 0 && std::isfinite(*p.chosen))  // a learned h can lie off the grid
    xlo = std::min(xlo, std::log10(*p.chosen)), xhi = std::max(xhi, std::log10(*p.chosen));
  if (!(xhi >= xlo)) xlo = -1, xhi = 1;
  double ylo = 1, yhi = std::max(top_ratio, 1.05);
  pad(xlo, xhi);
  pad(ylo, yhi);
  const Scale sx{xlo, xhi, left, width - right}, sy{ylo, yhi, height - bottom, top};
  header(out, width, height);
  const double x0 = left, x1 = width - right, y0 = height - bottom, y1 = top;
  out << "<g stroke=\"#333\" fill=\"none\"><rect x=\"" << num(x0) << "\" y=\"" << num(y1) << "\" width=\""
      << num(x1 - x0) << "\" height=\"" << num(y0 - y1) << "\"/></g>\n";
  // x: decades, with 2 and 5 between them when the axis spans few.
  std::vector<double> ticks;
  const bool fine = xhi - xlo < 2.5;
  for (double e = std::floor(xlo); e <= std::ceil(xhi); ++e)
    for (double f : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double t = e + std::log10(f);
      if (t >= xlo && t <= xhi) ticks.push_back(t);
    }
  out << "<g class=\"x-ticks\" text-anchor=\"middle\">\n";
  for (double t : ticks) {
    char label[32];
    std::snprintf(label, sizeof label, "%g", std::pow(10.0, t));
    out << "<line x1=\"" << num(sx(t)) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(sx(t)) << "\" y2=\"" << num(y0 + 5)
        << "\" stroke=\"#333\"/><text x=\"" << num(sx(t)) << "\" y=\"" << num(y0 + 20) << "\">" << label << "</text>\n";
  }
  const Ticks ty = nice_ticks(sy.lo, sy.hi);
  out << "</g>\n<g class=\"y-ticks\" text-anchor=\"end\">\n";
  for (std::size_t i = 0; i < ty.at.size(); ++i)
    out << "<line x1=\"" << num(x0 - 5) << "\" y1=\"" << num(sy(ty.at[i])) << "\" x2=\"" << num(x0) << "\" y2=\""
        << num(sy(ty.at[i])) << "\" stroke=\"#333\"/><text x=\"" << num(x0 - 8) << "\" y=\"" << num(sy(ty.at[i]) + 4)
        << "\">" << escape(ty.label[i]) << "</text>\n";
  out << "</g>\n";
  if (p.chosen && *p.chosen > 0)
    out << "<line class=\"chosen\" x1=\"" << num(sx(std::log10(*p.chosen))) << "\" y1=\"" << num(y1) << "\" x2=\""
        << num(sx(std::log10(*p.chosen))) << "\" y2=\"" << num(y0) << "\" stroke=\"#555\" stroke-dasharray=\"5,4\"/>\n";
  for (std::size_t c = 0; c < ratio.size(); ++c) {
    const char* colour_c = colours[c % 4];
    // A polyline per run of defined points.
    bool open = false;
    for (std::size_t i = 0; i < ratio[c].size() && i < p.x.size(); ++i) {
      if (!ratio[c][i] || !(p.x[i] > 0)) {
        if (open) out << "\"/>\n";
        open = false;
        continue;
      }
      if (!open)
        out << "<polyline class=\"curve\" fill=\"none\" stroke=\"" << colour_c << "\" stroke-width=\"2\" points=\"";
      open = true;
      out << num(sx(std::log10(p.x[i]))) << ',' << num(sy(*ratio[c][i])) << ' ';
    }
    if (open) out << "\"/>\n";
    if (at_min[c])
      out << "<circle class=\"minimum\" cx=\"" << num(sx(std::log10(p.x[*at_min[c]]))) << "\" cy=\"" << num(sy(1))
          << "\" r=\"4\" fill=\"" << colour_c << "\"/>\n";
  }
  // The legend's box, top right, over the curves.
  out << "<rect class=\"legend-box\" x=\"" << num(x1 - 200) << "\" y=\"" << num(y1 + 6) << "\" width=\"194\" height=\""
      << num(8 + 18 * static_cast<double>(ratio.size())) << "\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n";
  for (std::size_t c = 0; c < ratio.size(); ++c)
    out << "<text class=\"legend\" x=\"" << num(x1 - 10) << "\" y=\"" << num(y1 + 20 + 18 * static_cast<double>(c))
        << "\" text-anchor=\"end\" fill=\"" << colours[c % 4] << "\">" << escape(c < p.names.size() ? p.names[c] : "")
        << "</text>\n";
  out << "<text class=\"x-title\" x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(height - 15)
      << "\" text-anchor=\"middle\" font-size=\"15\">" << escape(p.x_name) << " (log scale)</text>\n"
      << "<text class=\"y-title\" transform=\"translate(20," << num((y0 + y1) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"15\">criterion / its minimum</text>\n"
      << "<text class=\"title\" x=\"" << num(width / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
      << escape(p.title) << "</text>\n</svg>\n";
}

Heatmap::Heatmap(const std::vector<double>& query_x, const std::vector<double>& key_x, std::size_t max_bins)
    : m_(query_x.size()), n_(key_x.size()) {
  rb_ = std::max<std::size_t>(1, std::min(m_, max_bins));
  cb_ = std::max<std::size_t>(1, std::min(n_, max_bins));
  auto bins = [](const std::vector<double>& v, std::size_t count, std::vector<std::size_t>& bin, std::vector<double>& sorted) {
    std::vector<std::size_t> order(v.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    bin.assign(v.size(), 0);
    sorted.clear();
    for (std::size_t r = 0; r < order.size(); ++r) {
      bin[order[r]] = r * count / order.size();  // rank r of the sorted x -> an equal-count bin
      sorted.push_back(v[order[r]]);
    }
  };
  bins(query_x, rb_, q_bin_, qx_sorted_);
  bins(key_x, cb_, k_bin_, kx_sorted_);
  q_count_.assign(rb_, 0);
  for (std::size_t b : q_bin_) ++q_count_[b];
  cells_.assign(rb_ * cb_, 0.0);
}

void Heatmap::row(std::size_t i, const double* weights) {
  double* cell = cells_.data() + q_bin_[i] * cb_;
  for (std::size_t k = 0; k < n_; ++k) cell[k_bin_[k]] += weights[k];
}

namespace {

// The heat map's geometry: the plot's left and top margins and side, the colour bar's x, the
// picture's width and height.
struct Frame {
  double l = 100, t = 60, size = 500, bar_x = 630, w = 730, h = 660;
};

// The heat map's axes and titles: both axes in rank order (equal counts per cell), so five
// ticks each at the ranks 0, 1/4, ..., 1 of the sorted x, labelled with the x found there.
void write_axes(std::ostream& out, const Frame& f, const HeatmapStyle& style, const std::vector<double>& kx_sorted,
                const std::vector<double>& qx_sorted) {
  const double l = f.l, t = f.t, size = f.size, w = f.w;
  // Time labels as fine as the x values need: days, minutes, seconds or their fractions.
  const bool days = whole_days(kx_sorted) && whole_days(qx_sorted);
  double xlo = INFINITY, xhi = -INFINITY;
  for (const auto* v : {&kx_sorted, &qx_sorted})
    if (!v->empty()) xlo = std::min(xlo, v->front()), xhi = std::max(xhi, v->back());
  const double span = xhi - xlo, fine = span >= 3600 ? 60 : span >= 60 ? 1 : std::max(1e-6, span / 10);
  auto label = [&](double x) {
    if (style.x_time) return days ? time_label(x, 86400, false) : time_label(x, fine, crosses_midnight(xlo, xhi));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", x);
    return std::string(buf);
  };
  auto ticks = [&](const char* cls, const char* anchor, const std::vector<double>& sorted, bool columns) {
    if (sorted.empty()) return;  // an empty shard of queries: no rows, no ticks
    out << "<g class=\"" << cls << "\" text-anchor=\"" << anchor << "\" font-size=\"11\">\n";
    const std::size_t count = sorted.size();
    for (int i = 0; i <= 4; ++i) {
      const std::size_t rank = static_cast<std::size_t>(std::lround(i / 4.0 * static_cast<double>(count - 1)));
      const double at = (static_cast<double>(rank) + 0.5) / static_cast<double>(count) * size;  // its slot's centre
      const std::string text = escape(label(sorted[rank]));
      if (columns)
        out << "<line x1=\"" << num(l + at) << "\" y1=\"" << num(t + size) << "\" x2=\"" << num(l + at) << "\" y2=\""
            << num(t + size + 5) << "\" stroke=\"#333\"/><text x=\"" << num(l + at) << "\" y=\"" << num(t + size + 18)
            << "\">" << text << "</text>\n";
      else
        out << "<line x1=\"" << num(l - 5) << "\" y1=\"" << num(t + at) << "\" x2=\"" << num(l) << "\" y2=\""
            << num(t + at) << "\" stroke=\"#333\"/><text x=\"" << num(l - 8) << "\" y=\"" << num(t + at + 4) << "\">"
            << text << "</text>\n";
    }
    out << "</g>\n";
  };
  ticks("key-ticks", "middle", kx_sorted, true);
  ticks("query-ticks", "end", qx_sorted, false);
  out << "<text class=\"x-title\" x=\"" << num(l + size / 2) << "\" y=\"" << num(t + size + 40)
      << "\" text-anchor=\"middle\" font-size=\"14\">keys: training " << escape(style.x_name)
      << ", sorted (spaced by rank)</text>\n"
      << "<text class=\"y-title\" transform=\"translate(18," << num(t + size / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"14\">queries: " << escape(style.x_name)
      << ", sorted (spaced by rank)</text>\n"
      << "<text class=\"title\" x=\"" << num(w / 2) << "\" y=\"30\" text-anchor=\"middle\" font-size=\"16\">"
      << escape(style.title) << "</text>\n";
}

// The colour bar: the scale from its lowest to its highest value, five labels (linear) or one
// per decade (log).
void write_colour_bar(std::ostream& out, const Frame& f, bool log_scale, double vmax, double decades, bool negative) {
  const double t = f.t, size = f.size, bar_x = f.bar_x;
  auto paint = [&](double pos) { return negative ? diverging((pos + 1) / 2) : colour(pos); };
  out << "<g class=\"colour-bar\">\n";
  const double bottom_pos = negative ? -1 : 0;
  for (int i = 0; i < 100; ++i) {
    const double pos = bottom_pos + (1 - bottom_pos) * (i + 0.5) / 100;
    out << "<rect x=\"" << num(bar_x) << "\" y=\"" << num(t + size - (i + 1) * size / 100) << "\" width=\"18\" height=\""
        << num(size / 100 + 0.3) << "\" fill=\"" << paint(pos) << "\"/>\n";
  }
  out << "<rect x=\"" << num(bar_x) << "\" y=\"" << t << "\" width=\"18\" height=\"" << size
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
  // Labels: five evenly spaced values (linear), or one per decade (log).
  auto bar_label = [&](double pos, const std::string& text) {
    const double y = t + size - (pos - bottom_pos) / (1 - bottom_pos) * size;
    out << "<text x=\"" << num(bar_x + 24) << "\" y=\"" << num(y + 4) << "\" font-size=\"11\">" << escape(text)
        << "</text>\n";
  };
  if (!log_scale) {
    for (int i = 0; i <= 4; ++i) {
      const double pos = bottom_pos + (1 - bottom_pos) * i / 4;
      bar_label(pos, format_g3(pos * vmax));
    }
  } else {
    for (int k = 0; k <= static_cast<int>(decades); ++k) {
      const double pos = 1 - k / decades, value = vmax * std::pow(10.0, -k);
      const std::string text = (k == static_cast<int>(decades) ? "<" : "") + format_g3(value);
      bar_label(pos, text);
      if (negative && k < static_cast<int>(decades)) bar_label(-pos, "-" + text);
    }
  }
  out << "<text x=\"" << num(bar_x + 9) << "\" y=\"" << num(t - 10) << "\" text-anchor=\"middle\" font-size=\"12\">weight"
      << (log_scale ? " (log)" : "") << "</text>\n</g>\n";
}

}  // namespace

void Heatmap::write_svg(std::ostream& out, const HeatmapStyle& style) const {
  const Frame frame;
  const double l = frame.l, t = frame.t, size = frame.size, w = frame.w, h = frame.h;
  std::vector<double> v(cells_.size());
  double vmax = 0, vmin_pos = INFINITY;  // largest |v|; smallest nonzero |v|
  bool negative = false;
  for (std::size_t r = 0; r < rb_; ++r)
    for (std::size_t c = 0; c < cb_; ++c) {
      const double x = q_count_[r] ? cells_[r * cb_ + c] / static_cast<double>(q_count_[r]) : 0.0;
      v[r * cb_ + c] = x;
      vmax = std::max(vmax, std::abs(x));
      if (x != 0) vmin_pos = std::min(vmin_pos, std::abs(x));
      negative = negative || x < 0;
    }
  // Log scale: |v| over at most six decades below the largest; smaller shows as the lowest.
  const double decades = vmax > 0 && vmin_pos < vmax ? std::min(6.0, std::ceil(std::log10(vmax / vmin_pos))) : 1.0;
  // Where a value falls on the colour scale: 0..1 (sequential), or -1..1 (diverging, local
  // linear's negative weights).
  auto position = [&](double x) {
    if (!(vmax > 0)) return 0.0;
    double m = std::abs(x) / vmax;
    if (style.log_scale) m = m > 0 ? std::max(0.0, 1 + std::log10(m) / decades) : 0.0;
    return x < 0 ? -m : m;
  };
  header(out, w, h);
  // Cells, in cell units (one path per colour of 256 levels: a 150 x 150 map stays small).
  const int levels = 256;
  std::vector<std::string> paths(levels);
  for (std::size_t r = 0; r < rb_; ++r)
    for (std::size_t c = 0; c < cb_; ++c) {
      const double pos = position(v[r * cb_ + c]);
      const int level = static_cast<int>(std::lround((negative ? (pos + 1) / 2 : pos) * (levels - 1)));
      paths[static_cast<std::size_t>(level)] +=
          "M" + std::to_string(c) + " " + std::to_string(r) + "h1v1h-1z";
    }
  out << "<g class=\"cells\" shape-rendering=\"crispEdges\" transform=\"translate(" << l << ' ' << t << ") scale("
      << num(size / static_cast<double>(cb_)) << ' ' << num(size / static_cast<double>(rb_)) << ")\">\n";
  for (int i = 0; i < levels; ++i)
    if (!paths[static_cast<std::size_t>(i)].empty()) {
      const double pos = static_cast<double>(i) / (levels - 1);
      out << "<path fill=\"" << (negative ? diverging(pos) : colour(pos)) << "\" d=\"" << paths[static_cast<std::size_t>(i)]
          << "\"/>\n";
    }
  out << "</g>\n<rect x=\"" << l << "\" y=\"" << t << "\" width=\"" << size << "\" height=\"" << size
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
  write_axes(out, frame, style, kx_sorted_, qx_sorted_);
  write_colour_bar(out, frame, style.log_scale, vmax, decades, negative);
  if (m_ == 0) {
    out << "<text class=\"note\" x=\"" << num(l + size / 2) << "\" y=\"" << num(t + size / 2)
        << "\" text-anchor=\"middle\" font-size=\"14\" fill=\"white\">no queries</text>\n";
  } else if (rb_ < m_ || cb_ < n_) {
    // Two short lines inside the picture.
    out << "<text class=\"note\" x=\"" << num(l) << "\" y=\"" << num(h - 36) << "\" font-size=\"12\" fill=\"#444\">binned: "
        << m_ << " queries into " << rb_ << " rows, " << n_ << " keys into " << cb_ << " columns;</text>\n"
        << "<text class=\"note\" x=\"" << num(l) << "\" y=\"" << num(h - 20) << "\" font-size=\"12\" fill=\"#444\">"
        << "a cell is the mean over its queries of the weight summed over its keys</text>\n";
  }
  out << "</svg>\n";
}

}  // namespace nwreg
