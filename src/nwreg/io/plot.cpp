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
#include "nwreg/io/svg.h"

namespace nwreg {
using namespace svg;
namespace {

constexpr double width = 800, height = 500;
constexpr double left = 80, right = 30, top = 50, bottom = 60;

void axes(std::ostream& out, const Scale& sx, const Scale& sy, const std::string& x_name, const std::string& y_name,
          const std::string& title, double plot_right, bool x_time) {
  const double x0 = left, x1 = plot_right, y0 = height - bottom, y1 = top;
  out << "<g stroke=\"#333\" fill=\"none\"><rect x=\"" << num(x0) << "\" y=\"" << num(y1) << "\" width=\""
      << num(x1 - x0) << "\" height=\"" << num(y0 - y1) << "\"/></g>\n";
  const Ticks tx = x_time ? time_ticks(sx.lo, sx.hi) : nice_ticks(sx.lo, sx.hi), ty = nice_ticks(sy.lo, sy.hi);
  write_ticks(out, sx, tx, sy, ty, x0, y0);
  out << "<text class=\"x-title\" x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(height - 15)
      << "\" text-anchor=\"middle\" font-size=\"15\">" << escape(x_name) << (x_time ? " (UTC)" : "") << "</text>\n"
      << "<text class=\"y-title\" transform=\"translate(20," << num((y0 + y1) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"15\">" << escape(y_name) << "</text>\n"
      << "<text class=\"title\" x=\"" << num(width / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
      << escape(title) << "</text>\n";
}

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

namespace {

// Each curve relative to its minimum (at_min: where it lies), capped at `cap`; top_ratio the
// largest ratio drawn.
std::vector<std::vector<std::optional<double>>> ratios(const CurvePlot& p, double cap,
                                                       std::vector<std::optional<std::size_t>>& at_min,
                                                       double& top_ratio) {
  std::vector<std::vector<std::optional<double>>> ratio(p.values.size());
  at_min.assign(p.values.size(), std::nullopt);
  top_ratio = 1;
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
  return ratio;
}

// The x axis' ticks on a log scale: decades, with 2 and 5 between them when the axis spans few.
void write_decades(std::ostream& out, const Scale& sx, double xlo, double xhi, double y0) {
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
  out << "</g>\n";
}

}  // namespace

void write_curve_svg(std::ostream& out, const CurvePlot& p) {
  constexpr double cap = 3;  // ratios above it are drawn at it
  const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  std::vector<std::optional<std::size_t>> at_min;
  double top_ratio = 1;
  const std::vector<std::vector<std::optional<double>>> ratio = ratios(p, cap, at_min, top_ratio);
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
  write_decades(out, sx, xlo, xhi, y0);
  const Ticks ty = nice_ticks(sy.lo, sy.hi);
  out << "<g class=\"y-ticks\" text-anchor=\"end\">\n";
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
