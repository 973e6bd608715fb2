// The rows `nwreg predict` answers and the model it answers them with.
#include "cli/predict_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>

namespace nwreg::cli {

Model load_model(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a directory, not a file");
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  return read_model(in, path);
}

namespace {

// The query points: `grid` (parsed before the data were read), an even grid over the data,
// a query file, or the training x.
std::string describe_columns(const std::vector<std::string>& x, const std::string& y) {
  std::string s = "x column";
  if (x.size() > 1) s += "s";
  for (std::size_t i = 0; i < x.size(); ++i) s += (i ? ", " : " ") + quote(x[i]);
  return s + " and y column " + quote(y);
}

}  // namespace


namespace {

// How each x column of `x` is written: dates stay dates where every value is a whole day.
std::vector<ColumnKind> written_kinds(const Dataset& data, const std::vector<double>& x) {
  std::vector<ColumnKind> out;
  const std::size_t m = x.size() / data.d;
  for (std::size_t k = 0; k < data.d; ++k) out.push_back(output_kind(data.kind(k), x.data() + k, m, data.d));
  return out;
}

}  // namespace

namespace {

// n points evenly spanning column k's training range.
std::vector<double> column_lattice(const Dataset& data, std::size_t k, std::size_t n) {
  double lo = data.x[k];
  for (std::size_t i = 0; i < data.n; ++i) lo = std::min(lo, data.x[i * data.d + k]);
  return linspace(lo, lo + column_stats(data, k).range, n);
}

}  // namespace

namespace {

// Every pair (a_i, b_j), two columns row-major, a slowest: the rows in sorted order.
std::vector<double> product_lattice(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  out.reserve(2 * a.size() * b.size());
  for (double u : a)
    for (double v : b) out.insert(out.end(), {u, v});
  return out;
}

}  // namespace

// The query points: `grid` (parsed before the data were read), an even grid over the data,
// a query file, or the training x (fitted values, with their y).
Rows rows_for(const PredictCommand& cmd, const Dataset& data, std::vector<double> grid, bool grid_time) {
  Rows rows;
  if (!cmd.grid.empty() || cmd.grid_n > 0) {
    const char* option = cmd.grid.empty() ? "--grid-n" : "--grid";
    if (!cmd.grid.empty() && data.d != 1)
      throw UsageError("--grid: a range of one x column, and there are " + std::to_string(data.d) +
                       (data.d == 2 ? "; give --grid-n N (an N x N grid over both ranges) or --query FILE"
                                    : "; give --query FILE"));
    if (data.d > 2)
      throw UsageError("--grid-n: an even grid over one x column, or an N x N grid over two, and there are " +
                       std::to_string(data.d) + "; give --query FILE");
    for (std::size_t k = 0; k < data.d; ++k)
      if (is_categorical(data.kind(k)))
        throw UsageError(std::string(option) + ": x column " + quote(data.x_names[k]) +
                         " is categorical, with no points between its levels; give --query FILE with the levels wanted");
    if (!cmd.keep.empty()) throw UsageError("--keep: copies columns of the query or training rows; a grid has none");
    if (!cmd.grid.empty()) {
      if (grid_time && !is_time(data.kind(0)))
        throw UsageError("--grid: " + quote(cmd.grid) + " is between instants, but x column " + quote(data.x_names[0]) +
                         " of " + escape_excerpt(data.source, 200) + " holds numbers; give START:STOP:STEP");
      if (!grid_time && is_time(data.kind(0)))
        throw UsageError("--grid: x column " + quote(data.x_names[0]) + " holds dates or times; give START/STOP/STEP, e.g. " +
                         format_instant(data.x[0], data.kind(0) == ColumnKind::date) + "/" +
                         format_instant(data.x[0] + 7 * 86400.0, data.kind(0) == ColumnKind::date) + "/1d");
      rows.x = std::move(grid);
    } else if (data.d == 1) {
      rows.x = column_lattice(data, 0, cmd.grid_n);
    } else {
      if (static_cast<double>(cmd.grid_n) * static_cast<double>(cmd.grid_n) > static_cast<double>(max_grid_points))
        throw UsageError("--grid-n: " + std::to_string(cmd.grid_n) + " x " + std::to_string(cmd.grid_n) +
                         " points with two x columns, over the limit of " + std::to_string(max_grid_points));
      rows.x = product_lattice(column_lattice(data, 0, cmd.grid_n), column_lattice(data, 1, cmd.grid_n));
    }
  } else if (!cmd.query.empty()) {
    auto reader = open_csv(cmd.query, cmd.input, std::cin, true);
    QueryRows q = read_query_rows(*reader, data, cmd.keep);
    report_skipped(*reader, "query row", std::cerr);
    rows.x = std::move(q.x);  // written as the training column's kind (dates stay dates)
    rows.kept_names = std::move(q.kept_names);
    rows.kept = std::move(q.kept);
  } else {
    rows.x = data.x;  // fitted values at the training points
    rows.kept_names = data.kept_names;
    rows.kept = data.kept;
    rows.y = &data.y;
  }
  rows.kinds = written_kinds(data, rows.x);
  return rows;
}

// The model read with --model, checked against the data it is to be used with.
Model checked_model(Model model, const std::string& path, const Dataset& data) {
  if (model.x_columns != data.x_names || model.y_column != data.y_name)
    throw InputError(path, 0, "",
                     "fitted on " + describe_columns(model.x_columns, model.y_column) + ", not on " +
                         describe_columns(data.x_names, data.y_name) + " of " + data.source);
  // Numbers, time (dates or date-times), or labels of the same kind.
  auto family = [](ColumnKind k) { return is_time(k) ? ColumnKind::time : k; };
  for (std::size_t k = 0; k < data.d; ++k)
    if (family(column_kind(model, k)) != family(data.kind(k)))
      throw InputError(path, 0, "",
                       "fitted on x column " + quote(model.x_columns[k]) + " of " + to_string(column_kind(model, k)) +
                           "s, but " + escape_excerpt(data.source, 200) + " holds " + to_string(data.kind(k)) + "s there");
  if (!model.robustness.empty() && model.robustness.size() != data.n)
    throw InputError(path, 0, "",
                     "holds robustness weights for " + std::to_string(model.robustness.size()) + " training rows; " +
                         escape_excerpt(data.source, 200) + " has " + std::to_string(data.n));
  const std::string sum = checksum(data);
  // Robustness weights belong to the training rows in their order: on other rows (or the same
  // in another order) they would weigh the wrong points.
  if (!model.robustness.empty() && (sum != model.checksum || model.n != data.n))
    throw InputError(path, 0, "",
                     "holds the robustness weights of the rows it was fitted on, in their order, and " +
                         escape_excerpt(data.source, 200) + " is not those rows (" + std::to_string(data.n) + " rows, " +
                         sum + "; the model has " + std::to_string(model.n) + " rows, " + model.checksum +
                         "); give the training file as it was, or fit again with --robust");
  if (sum != model.checksum || model.n != data.n)
    std::cerr << "nwreg: warning: " << data.source << " is not the data " << path << " was fitted on (" << data.n
              << " rows, " << sum << "; the model has " << model.n << " rows, " << model.checksum << ")\n";
  model.bandwidth_source = "model";
  model.n = data.n;
  model.checksum = sum;
  model.history.clear();
  return model;
}

// A size for people: "29 kB", "2.1 GB".
std::string about_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 999.5 && u < 6) bytes /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, bytes < 9.95 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

std::vector<SlopeColumn> slope_columns(const Model& model, const std::string& slope_unit) {
  std::vector<SlopeColumn> out;
  bool time = false;
  std::optional<double> per;
  if (!slope_unit.empty()) {
    // A unit alone ("d") is one of it; "7d" a week; a plain number is seconds.
    const std::string text = slope_unit.find_first_of("0123456789") == std::string::npos ? "1" + slope_unit : slope_unit;
    try {
      per = parse_duration(text, "--slope-unit");
    } catch (const UsageError&) {
      per.reset();
    }
    if (!per) per = parse_double(text);
    if (!per || !(*per > 0) || !std::isfinite(*per))
      throw UsageError("--slope-unit: expected a positive time span (ms, s, min, h, d, w, or with a number: 7d, "
                       "0.5h), got " + quote(slope_unit));
  }
  for (std::size_t k = 0; k < model.x_columns.size(); ++k) {
    const ColumnKind kind = column_kind(model, k);
    if (is_categorical(kind)) continue;
    time = time || is_time(kind);
    out.push_back({k, is_time(kind) && per ? *per : 1.0});
  }
  if (per && !time)
    throw UsageError("--slope-unit: only for a time x column (a number column's slope is per its own unit)");
  return out;
}

// The output's columns: kept, x, then the values (the observed y first for fitted values, the
// prediction, with --se its standard error and band, and for fitted values the residual).
PredictionWriter::Columns output_columns(const Model& model, const std::vector<std::string>& kept, bool se,
                                         bool fitted, std::vector<ColumnKind> kinds, bool derivative) {
  PredictionWriter::Columns c{kept, model.x_columns, std::move(kinds), {}, model.levels, model.x_offsets, {}};
  if (fitted) c.values.push_back(model.y_column);
  c.values.push_back("prediction");
  if (se) c.values.insert(c.values.end(), {"se", "lower", "upper"});
  if (derivative) {
    const std::vector<SlopeColumn> cols = slope_columns(model);
    for (const SlopeColumn& s : cols) c.values.push_back("d_" + model.x_columns[s.k]);
    if (se)
      for (const SlopeColumn& s : cols) c.values.push_back("d_" + model.x_columns[s.k] + "_se");
  }
  if (fitted) c.values.push_back("residual");
  // Every name once, so JSON keys and CSV headers stay unambiguous: a later repeat gets ".1",
  // ".2", ... (as pandas names repeated columns), kept columns giving way to the others.
  std::vector<std::string*> order;
  for (auto* names : {&c.x, &c.values, &c.kept})
    for (auto& name : *names) order.push_back(&name);
  make_unique(order);
  return c;
}

}  // namespace nwreg::cli
