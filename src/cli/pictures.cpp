#include "cli/pictures.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/timestamp.h"
#include "nwreg/data/grid.h"
#include "nwreg/io/svg.h"

namespace nwreg::cli {

std::string bandwidth_label(const Model& model) {
  if (!model.score.distance()) return to_string(model.score.score) + " score (" + model.bandwidth_source + ")";
  std::string h = "h = ";
  for (std::size_t k = 0; k < model.bandwidth.size(); ++k) {
    char v[48];
    if (is_time(column_kind(model, k))) std::snprintf(v, sizeof v, "%s", format_duration(model.bandwidth[k]).c_str());
    else std::snprintf(v, sizeof v, "%.4g", model.bandwidth[k]);
    h += (k ? ", " : "") + std::string(v);
  }
  h += " (" + model.bandwidth_source + ")";
  std::string label = model.neighbour_policy ? to_string(model.neighbour_policy) : h;
  if (model.robust) label += ", robust " + std::to_string(model.robust);
  if (model.kernel != Kernel::gaussian) label += ", " + to_string(model.kernel);
  if (model.method != Method::nw) label += ", " + to_string(model.method);
  if (model.method == Method::local_polynomial) label += " " + std::to_string(model.degree);
  return label;
}

std::string picture_title(const Model& model, const Dataset& data) {
  std::string title = "nwreg: " + bandwidth_label(model) + ", n = " + std::to_string(data.n);
  if (model.loo_mse) {
    char loo[48];
    std::snprintf(loo, sizeof loo, ", LOO MSE %.4g", *model.loo_mse);
    title += loo;
  }
  return title;
}

void check_picture(const Dataset& data, const char* option, std::size_t most) {
  if (data.d > most)
    throw UsageError(std::string(option) +
                     (most == 2 ? ": draws one x column (a curve) or two (a surface), and there are "
                                : ": only for one x column, and there are ") +
                     std::to_string(data.d));
  for (std::size_t k = 0; k < data.d; ++k)
    if (is_categorical(data.kind(k)))
      throw UsageError(std::string(option) + ": x column " + quote(data.x_names[k]) + " is categorical; the picture needs " +
                       (data.d == 1 ? "one continuous x column" : "continuous x columns"));
}

void write_heatmap(OutputFile& file, const Dataset& data, const Fitted& fitted, const Model& model, const double* q,
                   std::size_t m, bool log_scale) {
  Heatmap map(std::vector<double>(q, q + m * data.d), data.x);
  fitted.weights(q, m, [&](std::size_t i, const double* a) { map.row(i, a); });
  file.write([&](std::ostream& os) {
    map.write_svg(os, {data.x_names[0], "attention weights, " + bandwidth_label(model), is_time(data.kind(0)), log_scale});
  });
}

SurfacePlot surface_plot(const Dataset& data, const Model& model, EngineOptions engine) {
  SurfacePlot p;
  for (std::size_t i = 0; i < data.n; ++i) {
    p.x1.push_back(data.x[i * 2]);
    p.x2.push_back(data.x[i * 2 + 1]);
  }
  // A column without spread (constant, or one row) gets the range its axis is padded to: the
  // lattice's cells would have no height or width, and the picture no surface.
  auto lattice = [&](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    double a = *lo, b = *hi;
    if (!(b > a)) svg::pad(a, b);
    return linspace(a, b, surface_lattice);
  };
  p.g1 = lattice(p.x1);
  p.g2 = lattice(p.x2);
  std::vector<double> q;
  q.reserve(2 * p.g1.size() * p.g2.size());
  for (double b : p.g2)
    for (double a : p.g1) q.insert(q.end(), {a, b});
  // Every lattice point lies within the training ranges; one no key of a compact kernel reaches
  // is left without a value (grey), whatever --out-of-reach says of the queries.
  engine.out_of_reach = OutOfReach::empty;
  engine.progress = nullptr;
  const Fitted fitted(data, model, engine);
  p.f.resize(q.size() / 2);
  fitted.predict(q.data(), p.f.size(), p.f.data());
  // Points whose nearest training row is more than far_bandwidths away are hatched: the note
  // predict gives of such queries (fixed or adaptive bandwidths, kernels without compact
  // support: past the support a point has no value).
  if (!is_compact(model.kernel)) {
    const std::vector<double> distance = fitted.nearest_distances(q.data(), p.f.size());
    p.far.resize(distance.size());
    for (std::size_t j = 0; j < distance.size(); ++j) p.far[j] = distance[j] > far_bandwidths;
  }
  p.far_distance = far_bandwidths;
  p.x1_name = data.x_names[0];
  p.x2_name = data.x_names[1];
  p.y_name = data.y_name;
  p.title = picture_title(model, data);
  p.x1_time = is_time(data.kind(0));
  p.x2_time = is_time(data.kind(1));
  return p;
}

}  // namespace nwreg::cli
