#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "nwreg/base/numbers.h"
#include "nwreg/io/plot.h"
#include "nwreg/io/svg.h"

namespace nwreg {
using namespace svg;
namespace {

// The picture's geometry: the plot area (left, top, width, height), the colour bar's x.
constexpr double area_l = 80, area_t = 50, area_w = 560, area_h = 480, bar_x = 670, page_w = 800, page_h = 600;

// The bands' bounds: round values (nice_ticks) covering [lo, hi], at least two.
std::vector<double> band_bounds(double lo, double hi) {
  if (!(hi > lo)) return {lo, lo};
  const Ticks t = nice_ticks(lo, hi, 10);
  std::vector<double> b = t.at;
  const double step = b.size() > 1 ? b[1] - b[0] : hi - lo;
  if (b.empty() || b.front() > lo) b.insert(b.begin(), b.empty() ? lo : b.front() - step);
  if (b.back() < hi) b.push_back(b.back() + step);
  return b;
}

// The value bands: their bounds (none without a finite value: one band), which one a value
// falls in, and its colour.
struct Bands {
  explicit Bands(std::vector<double> b) : bounds(std::move(b)), count(bounds.size() > 1 ? bounds.size() - 1 : 1) {}
  std::size_t of(double v) const {
    const auto it = std::upper_bound(bounds.begin(), bounds.end(), v);
    const std::size_t k = it == bounds.begin() ? 0 : static_cast<std::size_t>(it - bounds.begin()) - 1;
    return std::min(k, count - 1);
  }
  std::string paint(std::size_t k) const { return colour(count > 1 ? (static_cast<double>(k) + 0.5) / count : 0.5); }
  std::vector<double> bounds;
  std::size_t count;
};

// The lattice's cells in `count` classes, one path each: class_of(cell) gives a cell's class
// (count or more: not drawn), and a row's run of cells in one class is one rectangle.
template <class ClassOf>
std::vector<std::string> cell_paths(const SurfacePlot& p, std::size_t count, const ClassOf& class_of, const Scale& s1,
                                    const Scale& s2) {
  auto cut = [](const std::vector<double>& g, std::size_t i) {  // the boundary below cell i
    if (g.size() < 2) return i == 0 ? g[0] - 0.5 : g[0] + 0.5;
    if (i == 0) return g[0] - (g[1] - g[0]) / 2;
    if (i == g.size()) return g.back() + (g.back() - g[g.size() - 2]) / 2;
    return g[i - 1] / 2 + g[i] / 2;
  };
  std::vector<std::string> paths(count);
  const std::size_t n1 = p.g1.size(), n2 = p.g2.size();
  for (std::size_t j = 0; j < n2; ++j) {
    const double ya = s2(cut(p.g2, j + 1)), yb = s2(cut(p.g2, j));
    for (std::size_t i = 0; i < n1;) {
      const std::size_t k = class_of(j * n1 + i);
      std::size_t e = i + 1;
      while (e < n1 && class_of(j * n1 + e) == k) ++e;
      if (k < count) {
        const double xa = s1(cut(p.g1, i)), xb = s1(cut(p.g1, e));
        paths[k] += "M" + num(xa) + " " + num(ya) + "H" + num(xb) + "V" + num(yb) + "H" + num(xa) + "z";
      }
      i = e;
    }
  }
  return paths;
}

// The colour bar: one block per band, its bounds labelled.
void write_colour_bar(std::ostream& out, const Bands& bands, bool any, const std::string& y_name, double y0, double y1) {
  out << "<g class=\"colour-bar\" font-size=\"11\">\n";
  const double bh = area_h / static_cast<double>(bands.count);
  for (std::size_t k = 0; k < bands.count && any; ++k)
    out << "<rect x=\"" << num(bar_x) << "\" y=\"" << num(y0 - (static_cast<double>(k) + 1) * bh) << "\" width=\"18\" height=\""
        << num(bh + 0.3) << "\" fill=\"" << bands.paint(k) << "\"/>\n";
  out << "<rect x=\"" << num(bar_x) << "\" y=\"" << num(y1) << "\" width=\"18\" height=\"" << num(area_h)
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
  for (std::size_t k = 0; k < bands.bounds.size(); ++k)
    out << "<text x=\"" << num(bar_x + 24) << "\" y=\"" << num(y0 - static_cast<double>(k) * bh + 4) << "\">"
        << escape(format_g3(bands.bounds[k])) << "</text>\n";
  out << "<text x=\"" << num(bar_x + 9) << "\" y=\"" << num(y1 - 10) << "\" text-anchor=\"middle\" font-size=\"12\">"
      << escape(y_name) << "</text>\n</g>\n";
}

}  // namespace

void write_surface_svg(std::ostream& out, const SurfacePlot& p) {
  double flo = INFINITY, fhi = -INFINITY;
  for (double v : p.f)
    if (std::isfinite(v)) flo = std::min(flo, v), fhi = std::max(fhi, v);
  const bool any = flo <= fhi;
  const Bands bands(any ? band_bounds(flo, fhi) : std::vector<double>{});

  // The lattice's cells span half a step past its outer points; the axes span the cells and the
  // points.
  auto edges = [](const std::vector<double>& g, const std::vector<double>& x, double& lo, double& hi) {
    const double half = g.size() > 1 ? (g[1] - g[0]) / 2 : 0;
    lo = g.empty() ? INFINITY : g.front() - half;
    hi = g.empty() ? -INFINITY : g.back() + half;
    for (double v : x) lo = std::min(lo, v), hi = std::max(hi, v);
    if (!(hi > lo)) pad(lo, hi);
  };
  double lo1, hi1, lo2, hi2;
  edges(p.g1, p.x1, lo1, hi1);
  edges(p.g2, p.x2, lo2, hi2);
  const Scale s1{lo1, hi1, area_l, area_l + area_w}, s2{lo2, hi2, area_t + area_h, area_t};

  header(out, page_w, page_h);
  out << "<rect x=\"" << area_l << "\" y=\"" << area_t << "\" width=\"" << area_w << "\" height=\"" << area_h
      << "\" fill=\"#e8e8e8\"/>\n";
  const std::vector<std::string> paths = cell_paths(
      p, bands.count, [&](std::size_t c) { return std::isfinite(p.f[c]) ? bands.of(p.f[c]) : bands.count; }, s1, s2);
  out << "<g class=\"surface\" shape-rendering=\"crispEdges\">\n";
  for (std::size_t k = 0; k < bands.count; ++k)
    if (!paths[k].empty()) out << "<path fill=\"" << bands.paint(k) << "\" d=\"" << paths[k] << "\"/>\n";
  out << "</g>\n";
  // Cells far from every training point: hatched over their colour, white lines on a pale veil.
  const bool any_far = std::any_of(p.far.begin(), p.far.end(), [](char v) { return v != 0; });
  if (any_far) {
    const std::string hatch =
        cell_paths(p, 1, [&](std::size_t c) { return std::size_t{c < p.far.size() && p.far[c] && std::isfinite(p.f[c]) ? 0u : 1u}; },
                   s1, s2)[0];
    out << "<defs><pattern id=\"far\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
           "patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"white\" fill-opacity=\"0.35\"/>"
           "<rect width=\"3\" height=\"8\" fill=\"white\" fill-opacity=\"0.7\"/></pattern></defs>\n"
        << "<g class=\"far\" shape-rendering=\"crispEdges\"><path fill=\"url(#far)\" d=\"" << hatch << "\"/></g>\n";
  }

  // Points: white with a dark rim, smaller as they get many; past 20000, every k-th.
  const std::size_t n = p.x1.size(), limit = 20000, stride = n > limit ? (n + limit - 1) / limit : 1;
  const double r = n <= 200 ? 3.0 : n <= 2000 ? 2.0 : 1.2;
  out << "<g class=\"points\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#222\" stroke-width=\"0.8\">\n";
  for (std::size_t i = 0; i < n; i += stride)
    out << "<circle cx=\"" << num(s1(p.x1[i])) << "\" cy=\"" << num(s2(p.x2[i])) << "\" r=\"" << r << "\"/>\n";
  out << "</g>\n";

  // Axes, ticks and titles.
  const double x0 = area_l, x1 = area_l + area_w, y0 = area_t + area_h, y1 = area_t;
  out << "<rect x=\"" << num(x0) << "\" y=\"" << num(y1) << "\" width=\"" << num(x1 - x0) << "\" height=\""
      << num(y0 - y1) << "\" fill=\"none\" stroke=\"#333\"/>\n";
  const Ticks t1 = p.x1_time ? time_ticks(lo1, hi1) : nice_ticks(lo1, hi1);
  const Ticks t2 = p.x2_time ? time_ticks(lo2, hi2) : nice_ticks(lo2, hi2);
  write_ticks(out, s1, t1, s2, t2, x0, y0);
  out << "<text class=\"x-title\" x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num(y0 + 45)
      << "\" text-anchor=\"middle\" font-size=\"15\">" << escape(p.x1_name) << (p.x1_time ? " (UTC)" : "") << "</text>\n"
      << "<text class=\"y-title\" transform=\"translate(20," << num((y0 + y1) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"15\">" << escape(p.x2_name) << (p.x2_time ? " (UTC)" : "")
      << "</text>\n<text class=\"title\" x=\"" << num(page_w / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
      << escape(p.title) << "</text>\n";

  write_colour_bar(out, bands, any, p.y_name, y0, y1);
  if (!any)
    out << "<text class=\"note\" x=\"" << num((x0 + x1) / 2) << "\" y=\"" << num((y0 + y1) / 2)
        << "\" text-anchor=\"middle\" font-size=\"14\">no point of the lattice has a prediction</text>\n";
  else {
    std::string note;
    if (std::any_of(p.f.begin(), p.f.end(), [](double v) { return !std::isfinite(v); })) note = "grey: no key in reach";
    if (any_far)
      note += (note.empty() ? "" : "; ") + std::string("hatched: more than ") + format_g3(p.far_distance) +
              " bandwidths from the data";
    if (!note.empty())
      out << "<text class=\"note\" x=\"" << num(x1) << "\" y=\"" << num(y1 - 6)
          << "\" text-anchor=\"end\" font-size=\"11\" fill=\"#666\">" << escape(note) << "</text>\n";
  }
  if (stride > 1)
    out << "<text class=\"note\" x=\"" << num(x0) << "\" y=\"" << num(page_h - 8) << "\" font-size=\"11\" fill=\"#666\">showing "
        << (n + stride - 1) / stride << " of " << n << " points, evenly thinned</text>\n";
  out << "</svg>\n";
}

}  // namespace nwreg
