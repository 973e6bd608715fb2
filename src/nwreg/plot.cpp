#include "nwreg/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace nwreg {
namespace {

constexpr double width = 800, height = 500;
constexpr double left = 80, right = 30, top = 50, bottom = 60;

std::string escape(const std::string& s) {
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
          const std::string& title, double plot_right) {
  const double x0 = left, x1 = plot_right, y0 = height - bottom, y1 = top;
  out << "<g stroke=\"#333\" fill=\"none\"><rect x=\"" << num(x0) << "\" y=\"" << num(y1) << "\" width=\""
      << num(x1 - x0) << "\" height=\"" << num(y0 - y1) << "\"/></g>\n";
  const Ticks tx = nice_ticks(sx.lo, sx.hi), ty = nice_ticks(sy.lo, sy.hi);
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
      << "\" text-anchor=\"middle\" font-size=\"15\">" << escape(x_name) << "</text>\n"
      << "<text class=\"y-title\" transform=\"translate(20," << num((y0 + y1) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"15\">" << escape(y_name) << "</text>\n"
      << "<text class=\"title\" x=\"" << num(width / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
      << escape(title) << "</text>\n";
}

// viridis, sampled at nine points and interpolated linearly.
std::string colour(double t) {
  static const double stops[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
                                     {39, 173, 129}, {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 8;
  const int i = std::min(7, static_cast<int>(t));
  const double f = t - i;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
  return buf;
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
  if (!p.lower.empty()) {
    out << "<polygon class=\"band\" fill=\"#1f77b4\" fill-opacity=\"0.18\" stroke=\"none\" points=\"";
    for (std::size_t i : order) out << num(sx(p.qx[i])) << ',' << num(sy(p.upper[i])) << ' ';
    for (auto it = order.rbegin(); it != order.rend(); ++it) out << num(sx(p.qx[*it])) << ',' << num(sy(p.lower[*it])) << ' ';
    out << "\"/>\n";
  }
  // Points: smaller and lighter as they get many; past 20000, every k-th.
  const std::size_t n = p.x.size(), limit = 20000, stride = n > limit ? (n + limit - 1) / limit : 1;
  const double r = n <= 200 ? 3.0 : n <= 2000 ? 2.0 : 1.2, alpha = n <= 200 ? 0.75 : n <= 2000 ? 0.5 : 0.3;
  out << "<g class=\"points\" fill=\"#555\" fill-opacity=\"" << alpha << "\">\n";
  for (std::size_t i = 0; i < n; i += stride)
    out << "<circle cx=\"" << num(sx(p.x[i])) << "\" cy=\"" << num(sy(p.y[i])) << "\" r=\"" << r << "\"/>\n";
  out << "</g>\n<polyline class=\"curve\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2.2\" points=\"";
  for (std::size_t i : order) out << num(sx(p.qx[i])) << ',' << num(sy(p.f[i])) << ' ';
  out << "\"/>\n";
  axes(out, sx, sy, p.x_name, p.y_name, p.title, width - right);
  if (stride > 1)
    out << "<text class=\"note\" x=\"" << num(width - right) << "\" y=\"" << num(top - 6)
        << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#666\">showing " << (n + stride - 1) / stride << " of " << n
        << " points, evenly thinned</text>\n";
  out << "</svg>\n";
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

void Heatmap::write_svg(std::ostream& out, const std::string& x_name, const std::string& title) const {
  const double w = 700, h = 640, l = 90, t = 60, size = 500, bar_x = l + size + 30;
  std::vector<double> v(cells_.size());
  double vmax = 0;
  for (std::size_t r = 0; r < rb_; ++r)
    for (std::size_t c = 0; c < cb_; ++c) {
      v[r * cb_ + c] = q_count_[r] ? cells_[r * cb_ + c] / static_cast<double>(q_count_[r]) : 0.0;
      vmax = std::max(vmax, v[r * cb_ + c]);
    }
  header(out, w, h);
  const double cw = size / static_cast<double>(cb_), ch = size / static_cast<double>(rb_);
  out << "<g class=\"cells\" shape-rendering=\"crispEdges\">\n";
  for (std::size_t r = 0; r < rb_; ++r)
    for (std::size_t c = 0; c < cb_; ++c)
      out << "<rect x=\"" << num(l + c * cw) << "\" y=\"" << num(t + r * ch) << "\" width=\"" << num(cw + 0.05)
          << "\" height=\"" << num(ch + 0.05) << "\" fill=\"" << colour(vmax > 0 ? v[r * cb_ + c] / vmax : 0)
          << "\"/>\n";
  out << "</g>\n<rect x=\"" << l << "\" y=\"" << t << "\" width=\"" << size << "\" height=\"" << size
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
  // Axes: x values of the sorted keys (columns) and queries (rows) at five positions.
  auto ticks = [&](const char* cls, const char* anchor, const std::vector<double>& sorted, bool columns) {
    if (sorted.empty()) return;  // an empty shard of queries: no rows, no ticks
    out << "<g class=\"" << cls << "\" text-anchor=\"" << anchor << "\" font-size=\"11\">\n";
    for (int i = 0; i <= 4; ++i) {
      const double f = i / 4.0;
      const double v = sorted[static_cast<std::size_t>(f * static_cast<double>(sorted.size() - 1))];
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", v);
      out << "<text x=\"" << num(columns ? l + f * size : l - 6) << "\" y=\""
          << num(columns ? t + size + 16 : t + f * size + 4) << "\">" << buf << "</text>\n";
    }
    out << "</g>\n";
  };
  ticks("key-ticks", "middle", kx_sorted_, true);
  ticks("query-ticks", "end", qx_sorted_, false);
  out << "<text class=\"x-title\" x=\"" << num(l + size / 2) << "\" y=\"" << num(t + size + 40)
      << "\" text-anchor=\"middle\" font-size=\"14\">keys: training " << escape(x_name) << ", sorted</text>\n"
      << "<text class=\"y-title\" transform=\"translate(22," << num(t + size / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"14\">queries: " << escape(x_name) << ", sorted</text>\n"
      << "<text class=\"title\" x=\"" << num(w / 2) << "\" y=\"30\" text-anchor=\"middle\" font-size=\"16\">"
      << escape(title) << "</text>\n";
  // Colour bar.
  out << "<g class=\"colour-bar\">\n";
  for (int i = 0; i < 100; ++i)
    out << "<rect x=\"" << num(bar_x) << "\" y=\"" << num(t + size - (i + 1) * size / 100) << "\" width=\"18\" height=\""
        << num(size / 100 + 0.3) << "\" fill=\"" << colour((i + 0.5) / 100) << "\"/>\n";
  out << "<rect x=\"" << num(bar_x) << "\" y=\"" << t << "\" width=\"18\" height=\"" << size
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", vmax * i / 4);
    out << "<text x=\"" << num(bar_x + 24) << "\" y=\"" << num(t + size - i * size / 4 + 4) << "\" font-size=\"11\">"
        << buf << "</text>\n";
  }
  out << "<text x=\"" << num(bar_x + 9) << "\" y=\"" << num(t - 10)
      << "\" text-anchor=\"middle\" font-size=\"12\">weight</text>\n</g>\n";
  if (m_ == 0) {
    out << "<text class=\"note\" x=\"" << num(l + size / 2) << "\" y=\"" << num(t + size / 2)
        << "\" text-anchor=\"middle\" font-size=\"14\" fill=\"white\">no queries</text>\n";
  } else if (rb_ < m_ || cb_ < n_) {
    out << "<text class=\"note\" x=\"" << num(l) << "\" y=\"" << num(h - 22) << "\" font-size=\"12\" fill=\"#444\">binned: "
        << m_ << " queries into " << rb_ << " rows, " << n_ << " keys into " << cb_
        << " columns; a cell is the mean over its queries of the weight summed over its keys</text>\n";
  }
  out << "</svg>\n";
}

}  // namespace nwreg
