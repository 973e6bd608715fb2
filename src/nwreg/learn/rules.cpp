#include "nwreg/learn/rules.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/timestamp.h"
#include "nwreg/model/settings.h"

namespace nwreg {
namespace {

// Rules of thumb know continuous columns only.
void no_categorical(const Dataset& data, const char* rule) {
  for (std::size_t k = 0; k < data.d; ++k)
    if (is_categorical(data.kind(k)))
      throw DataError(std::string(rule) + " has no lambda for categorical column " + quote(data.x_names[k]) +
                      ": learn the bandwidth, or give each column's value in `bandwidth`");
}

}  // namespace

std::vector<ColumnStats> x_column_stats(const Dataset& data, const char* what) {
  std::vector<ColumnStats> out;
  for (std::size_t k = 0; k < data.d; ++k) {
    // (A column of one value is refused before column_stats sorts a copy of it: 8 bytes a row.)
    bool spread = false;
    for (std::size_t i = 1; i < data.n && !spread; ++i) spread = data.row(i)[k] != data.row(0)[k];
    if (spread) out.push_back(column_stats(data, k));
    if (!spread || out.back().sd == 0)
      throw DataError(data.n < 2 ? std::string(what) + " needs at least 2 training rows, got " +
                                       std::to_string(data.n)
                                 : "all values of x column " + quote(data.x_names[k]) +
                                       " are equal: " + what +
                                       " cannot work; give `bandwidth` H");
  }
  return out;
}

BandwidthSpec parse_bandwidth_spec(const std::string& text, const std::string& option, bool neighbours) {
  BandwidthSpec spec;
  if (text.empty() || text == "auto") return spec;
  if (text == "silverman") spec.kind = BandwidthSpec::Kind::silverman;
  else if (text == "scott") spec.kind = BandwidthSpec::Kind::scott;
  else if (text == "plugin") spec.kind = BandwidthSpec::Kind::plugin;
  if (spec.kind != BandwidthSpec::Kind::learn) return spec;
  if (neighbours && text.rfind("df:", 0) == 0) {
    const auto k = parse_double(std::string_view(text).substr(3));
    if (!k || !(*k >= 1) || !std::isfinite(*k))
      throw UsageError(option + ": df:K takes the degrees of freedom K >= 1 of the fit (tr(H)), got " + quote(text));
    spec.kind = BandwidthSpec::Kind::df;
    spec.values = {*k};
    return spec;
  }
  for (const NeighbourDef& n : neighbour_table) {
    if (!neighbours || text.rfind(std::string(n.name) + ":", 0) != 0) continue;
    spec.kind = BandwidthSpec::Kind::knn;
    spec.neighbour_policy.kind = n.id;
    std::string k = text.substr(text.find(':') + 1);
    // NAME:K:H[,H...]: the columns' scales given, distances measured in x_k / H_k.
    if (const auto colon = k.find(':'); colon != std::string::npos) {
      const BandwidthSpec scales = parse_bandwidth_spec(k.substr(colon + 1), option, false);
      if (scales.kind != BandwidthSpec::Kind::fixed)
        throw UsageError(option + ": " + n.name + (n.fraction ? ":F:H" : ":K:H") +
                         " takes the columns' scales H > 0 after the second colon, got " + quote(text));
      spec.values = scales.values;
      spec.timed = scales.timed;
      k.resize(colon);
    }
    if (k == "auto") return spec;
    const auto v = parse_double(k);
    if (n.fraction) {
      if (!v) throw UsageError(option + ": span:F takes a fraction of the rows F > 0, or auto; got " + quote(text));
      check_span(*v, option);
      spec.neighbour_policy.F = *v;
      return spec;
    }
    if (!v || *v < 1 || *v != std::floor(*v) || *v > 1e9)
      throw UsageError(option + ": " + n.name + ":K takes a whole number of neighbours K >= 1, or auto; got " +
                       quote(text));
    spec.neighbour_policy.K = static_cast<std::size_t>(*v);
    return spec;
  }
  spec.kind = BandwidthSpec::Kind::fixed;
  std::string_view rest(text);
  for (;;) {
    const auto comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    ParseFailure why{};
    auto v = parse_double(part, &why);
    const auto span = v ? std::nullopt : parse_duration(part, option);
    if (span) v = span;
    spec.timed.push_back(span.has_value());
    if (!v) {
      if (why == ParseFailure::not_a_number)
        throw UsageError(option + ": expected a number > 0 (or a time span: 90s, 15min, 6h, 3d, 2w), auto, silverman, scott" +
                         (neighbours ? ", plugin, df:K, " + neighbour_forms() : std::string(" or plugin")) + ", got " +
                         quote(text));
      throw UsageError(option + ": " + describe(why, part));
    }
    check_bandwidth({*v}, 1, option);
    spec.values.push_back(*v);
    if (comma == std::string_view::npos) return spec;
    rest.remove_prefix(comma + 1);
  }
}

std::vector<double> silverman_bandwidth(const Dataset& data) {
  no_categorical(data, "Silverman's rule");
  std::vector<double> h;
  for (const auto& s : x_column_stats(data, "Silverman's rule")) {
    const double spread = s.iqr > 0 ? std::min(s.sd, s.iqr / 1.34) : s.sd;
    h.push_back(0.9 * spread * std::pow(static_cast<double>(data.n), -0.2));
  }
  return h;
}

std::vector<double> trimmed_sd_scales(const Dataset& data) {
  std::vector<double> h;
  // ceiling(0.1 n) in doubles, as R computes it (0.1 * 30 rounds above 3: 4 are trimmed).
  const std::size_t n = data.n, trim = static_cast<std::size_t>(std::ceil(0.1 * static_cast<double>(n)));
  if (n < 2 * trim + 2)
    throw DataError("span over several columns scales each by its 10%-trimmed standard deviation, as loess does, "
                    "which needs at least 4 training rows; got " + std::to_string(n));
  for (std::size_t k = 0; k < data.d; ++k) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = data.x[i * data.d + k];
    std::sort(v.begin(), v.end());
    double sd = 0;
    if (n > 2 * trim + 1) {
      long double mean = 0, ss = 0;
      const std::size_t m = n - 2 * trim;
      for (std::size_t i = trim; i < n - trim; ++i) mean += v[i];
      mean /= m;
      for (std::size_t i = trim; i < n - trim; ++i) ss += (v[i] - mean) * (v[i] - mean);
      sd = std::sqrt(static_cast<double>(ss / (m - 1)));
    }
    if (!(sd > 0) || !std::isfinite(sd))
      throw DataError("span over several columns scales each by its 10%-trimmed standard deviation, as loess "
                      "does; x column " + quote(data.x_names[k]) + " has none (its middle values are all equal)");
    h.push_back(sd);
  }
  return h;
}

std::vector<double> scott_bandwidth(const Dataset& data) {
  no_categorical(data, "Scott's rule");
  std::vector<double> h;
  const double p = -1.0 / (4.0 + static_cast<double>(data.d));
  for (const auto& s : x_column_stats(data, "Scott's rule"))
    h.push_back(1.06 * s.sd * std::pow(static_cast<double>(data.n), p));
  return h;
}

}  // namespace nwreg
