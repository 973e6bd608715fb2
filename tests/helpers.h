#pragma once
// Shared test helpers: paths to data and golden files, a small CSV reader independent of
// nwreg's own, and data sets built in code.

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "nwreg/data/dataset.h"
#include "nwreg/engine/options.h"

namespace testing {

/// Under the sanitizers (NWREG_ASAN) the run checks the code, not the cases: the Release run
/// checks every case against its reference. There a test whose reference is a slower way to the
/// same answer (every key, tolerance 0, a grid of bandwidths, a full-data descent; code the other
/// tests run) or a rate over many data sets leaves it out, or runs fewer cases, and checks what
/// the code under test makes.
#if defined(NWREG_ASAN)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif

inline std::string source_path(const std::string& rel) { return std::string(NWREG_SOURCE_DIR) + "/" + rel; }

/// A golden CSV (plain, unquoted, header row) as columns of text by header name.
inline std::map<std::string, std::vector<std::string>> read_golden(const std::string& rel) {
  std::ifstream in(source_path(rel));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream hs(line);
  for (std::string f; std::getline(hs, f, ',');) names.push_back(f);
  std::map<std::string, std::vector<std::string>> cols;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ls(line);
    std::size_t k = 0;
    for (std::string f; std::getline(ls, f, ','); ++k) cols[names.at(k)].push_back(f);
  }
  return cols;
}

inline std::vector<double> numbers(const std::vector<std::string>& text) {
  std::vector<double> v;
  for (const auto& t : text) v.push_back(std::stod(t));
  return v;
}

/// A one-column data set from vectors.
inline nwreg::Dataset make_dataset(const std::vector<double>& x, const std::vector<double>& y) {
  nwreg::Dataset d;
  d.n = x.size();
  d.d = 1;
  d.x = x;
  d.y = y;
  d.x_names = {"x"};
  d.y_name = "y";
  d.source = "test";
  return d;
}

/// One of the bundled data sets, read with nwreg's reader.
inline nwreg::Dataset bundled(const std::string& file, const std::string& x, const std::string& y) {
  nwreg::CsvReader r(source_path("data/" + file), nwreg::CsvOptions{});
  nwreg::ColumnChoice c;
  c.x = {x};
  c.y = y;
  return nwreg::read_dataset(r, c);
}

/// Numbers separated by blanks ("1.5 2"), as golden files list a point or a bandwidth vector.
inline std::vector<double> number_list(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> v;
  for (std::string w; in >> w;) v.push_back(std::stod(w));
  return v;
}

/// |a - b| / |b|.
inline double relative(double a, double b) { return std::abs(a - b) / std::abs(b); }

/// Engine options with a kernel, a method and what to do out of reach; the rest as default.
inline nwreg::EngineOptions engine(nwreg::Kernel k, nwreg::Method m = nwreg::Method::nw,
                                   nwreg::OutOfReach o = nwreg::OutOfReach::error) {
  nwreg::EngineOptions e;
  e.kernel = k;
  e.method = m;
  e.out_of_reach = o;
  return e;
}

/// mcycle (times -> accel) or Boston (lstat, rm -> medv), read with nwreg's reader.
inline nwreg::Dataset mcycle_or_boston(const std::string& set) {
  const bool mc = set == "mcycle";
  nwreg::CsvReader r(source_path(mc ? "data/mcycle.csv" : "data/boston.csv"), nwreg::CsvOptions{});
  nwreg::ColumnChoice c;
  c.x = mc ? std::vector<std::string>{"times"} : std::vector<std::string>{"lstat", "rm"};
  c.y = mc ? "accel" : "medv";
  return nwreg::read_dataset(r, c);
}

/// Nine weighted points in two columns whose pair distances stay clear of the bandwidths
/// (2.37, 2.93): for finite-difference checks of Epanechnikov, whose criteria have a kink
/// wherever a key enters a support.
inline nwreg::Dataset kink_free_set() {
  nwreg::Dataset small;
  small.n = 9;
  small.d = 2;
  small.x = {0.1, 0.3, 0.9, 1.7, 1.4, 0.2, 2.2, 2.9, 0.5, 1.1, 3.1, 2.4, 2.6, 0.4, 1.9, 1.3, 0.8, 2.0};
  small.y = {1, 3, 2, 5, 4, 7, 6, 2, 3};
  small.weight = {1, 2, 1, 3, 1, 1, 2, 1, 1};
  small.x_names = {"a", "b"};
  return small;
}

/// The golden sets: name, file, x column, y column.
struct GoldenSet {
  std::string name, file, x, y;
};
inline const std::vector<GoldenSet>& golden_sets() {
  static const std::vector<GoldenSet> sets = {{"synthetic", "synthetic.csv", "x", "y"},
                                              {"mcycle", "mcycle.csv", "times", "accel"},
                                              {"faithful", "faithful.csv", "waiting", "eruptions"}};
  return sets;
}

}  // namespace testing
