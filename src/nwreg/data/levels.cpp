#include "nwreg/data/levels.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {

std::optional<double> Levels::find(std::string_view label) const {
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == label) return values[i];
  if (const auto v = parse_double(label))  // a number: the level that is the same number ("0.0" is "0")
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (parse_double(labels[i]) == v) return values[i];
  return std::nullopt;
}

const std::string& Levels::label(double value) const {
  const auto it = std::lower_bound(values.begin(), values.end(), value);
  const std::size_t i = it == values.end() ? values.size() - 1 : static_cast<std::size_t>(it - values.begin());
  return labels[i];
}

std::string Levels::list() const {
  std::string s;
  const std::size_t shown = std::min<std::size_t>(labels.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + quote(labels[i], 30);
  if (shown < labels.size()) s += ", ... (" + std::to_string(labels.size()) + " in all)";
  return s;
}

std::optional<double> LabelMap::code(std::string_view label) {
  const std::string key(label);
  const auto it = codes_.find(key);
  if (it != codes_.end()) return it->second;
  if (known_) {
    const auto v = known_->find(label);
    if (v) codes_.emplace(key, *v);
    return v;
  }
  const double c = static_cast<double>(seen_.size());
  codes_.emplace(key, c);
  seen_.push_back(key);
  return c;
}

Levels make_levels(const std::vector<std::string>& seen, ColumnKind kind, const std::vector<std::string>& order,
                   const std::string& column, std::vector<double>& value_of_code) {
  Levels lv;
  std::vector<std::optional<double>> number;
  for (const auto& s : seen) number.push_back(parse_double(s));
  const bool all_numbers = std::all_of(number.begin(), number.end(), [](const auto& v) { return v.has_value(); });
  std::vector<std::size_t> idx(seen.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  value_of_code.assign(seen.size(), 0.0);
  if (!order.empty()) {
    for (std::size_t i = 0; i < order.size(); ++i)
      if (std::find(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(i), order[i]) != order.begin() + static_cast<std::ptrdiff_t>(i))
        throw ParameterError("levels", "column " + quote(column) + ": level " + quote(order[i]) + " is listed twice");
    for (std::size_t c = 0; c < seen.size(); ++c) {
      auto it = std::find(order.begin(), order.end(), seen[c]);
      if (it == order.end() && number[c])  // the same number spelled otherwise ("4.0" for "4")
        it = std::find_if(order.begin(), order.end(), [&](const std::string& l) { return parse_double(l) == number[c]; });
      if (it == order.end())
        throw ParameterError("levels", "column " + quote(column) + " holds " + quote(seen[c]) +
                                           ", which is not among the levels listed");
      value_of_code[c] = static_cast<double>(it - order.begin());
    }
    lv.labels = order;
    // An ordered column of numbers keeps its numbers' differences as distances, with --levels
    // too (which may add levels no row holds); listed out of their order, they are refused.
    std::vector<std::optional<double>> listed;
    for (const auto& l : order) listed.push_back(parse_double(l));
    lv.numeric = kind == ColumnKind::ordered && all_numbers &&
                 std::all_of(listed.begin(), listed.end(), [](const auto& v) { return v.has_value(); });
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (lv.numeric && i > 0 && !(*listed[i] > *listed[i - 1]))
        throw ParameterError("levels", "column " + quote(column) + " is ordered numbers, ordered by value (distances are "
                                           "their differences): list its levels ascending, or leave `levels` out; " +
                                           quote(order[i]) + " follows " + quote(order[i - 1]));
      lv.values.push_back(lv.numeric ? *listed[i] : static_cast<double>(i));
    }
    if (lv.numeric)
      for (double& v : value_of_code) v = lv.values[static_cast<std::size_t>(v)];
    return lv;
  }
  if (all_numbers) {
    // Labels that are the same number ("4", "4.0") are one level, named as first read.
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return *number[a] < *number[b]; });
  } else {
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      if (number[a].has_value() != number[b].has_value()) return number[a].has_value();
      if (number[a] && *number[a] != *number[b]) return *number[a] < *number[b];
      return seen[a] < seen[b];
    });
  }
  lv.numeric = kind == ColumnKind::ordered && all_numbers;
  std::optional<double> last;  // the number of the last level kept, if it is one
  for (std::size_t c : idx) {
    const bool same = number[c] && last && *number[c] == *last;  // "4" and "4.0": one level
    last = number[c];
    if (!same) {
      lv.labels.push_back(seen[c]);
      lv.values.push_back(lv.numeric ? *number[c] : static_cast<double>(lv.values.size()));
    }
    value_of_code[c] = lv.values.back();
  }
  return lv;
}

}  // namespace nwreg
