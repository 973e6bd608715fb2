#include "nwreg/data/dataset.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"

namespace nwreg {

std::vector<std::string> parse_column_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto first = name.find_first_not_of(" \t");
    const auto last = name.find_last_not_of(" \t");
    name = first == std::string::npos ? "" : name.substr(first, last - first + 1);
    if (name.empty()) throw UsageError(option + ": empty column name in " + quote(text));
    out.push_back(name);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// Which x columns (positions idx in the file) are categorical (--categorical, --ordered), into
// label_kind, and the order of their levels where --levels gives it.
static void categorical_columns(const CsvReader& reader, const ColumnChoice& columns, const std::vector<std::size_t>& idx,
                         std::vector<ColumnKind>& label_kind, std::vector<std::vector<std::string>>& order) {
  auto x_column = [&](const std::string& spec, const char* option) {
    const std::size_t c = reader.resolve(spec, option);
    const auto it = std::find(idx.begin(), idx.end(), c);
    if (it == idx.end())
      throw UsageError(std::string(option) + ": column " + reader.column_label(c) + " is not an x column (-x)");
    return static_cast<std::size_t>(it - idx.begin());
  };
  for (const auto& [specs, kind] : {std::pair{&columns.unordered, ColumnKind::unordered},
                                    std::pair{&columns.ordered, ColumnKind::ordered}})
    for (const auto& spec : *specs) {
      const std::size_t k = x_column(spec, kind == ColumnKind::ordered ? "`ordered`" : "`categorical`");
      if (label_kind[k] != ColumnKind::number && label_kind[k] != kind)
        throw UsageError("`ordered`: column " + reader.column_label(idx[k]) + " is also given to `categorical`");
      label_kind[k] = kind;
    }
  for (const auto& [spec, labels] : columns.levels) {
    const std::size_t k = x_column(spec, "`levels`");
    if (label_kind[k] == ColumnKind::number)
      throw UsageError("`levels`: column " + reader.column_label(idx[k]) + " is not categorical; give it to `ordered` or `categorical`");
    order[k] = labels;
  }
}

namespace {

// One column whose header holds commas: --decimal , took the file's delimiter for decimal marks.
std::string one_column_hint(const CsvReader& reader) {
  if (reader.column_count() != 1 || !reader.has_header() || reader.names()[0].find(',') == std::string::npos) return "";
  return " (its one column " + quote(reader.names()[0]) +
         " holds commas: with `decimal` , they are decimal marks, not delimiters; drop `decimal` , if commas "
         "separate the fields)";
}

// A word in an x column of numbers: labels, which --categorical (or --ordered) reads: e with that
// hint; else e as it is. The first x_count of idx are the x columns.
[[noreturn]] void throw_with_label_hint(const InputError& e, const CsvReader& reader, const std::vector<std::size_t>& idx,
                                        std::size_t x_count) {
  const auto x_end = idx.begin() + static_cast<std::ptrdiff_t>(x_count);
  const auto x = std::find_if(idx.begin(), x_end, [&](std::size_t c) { return reader.column_label(c) == e.column(); });
  const bool x_column = x != x_end;
  const std::string& d = e.detail();
  const auto q = d.find('"');
  const std::string field = q == std::string::npos ? "" : d.substr(q + 1, d.find('"', q + 1) - q - 1);
  const bool word = std::any_of(field.begin(), field.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }) &&
                    std::none_of(field.begin(), field.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  // (Not a header: the first line of a file read without one, or a header repeated.)
  if (!x_column || !word || (!reader.has_header() && e.line() == 1) ||
      (reader.has_header() && field == reader.names()[*x]) || d.rfind("cannot parse", 0) != 0 || d.find(" as a number") == std::string::npos ||
      d.back() == ')')
    throw e;
  throw InputError(e.file(), e.line(), e.column(),
                   d + " (labels? give `categorical` " +
                       (reader.has_header() ? escape_excerpt(reader.names()[*x], 60) : std::to_string(*x + 1)) +
                       ", or `ordered`)");
}

// The x columns' and the y column's indices, by name or by default position; each named once.
std::pair<std::vector<std::size_t>, std::size_t> pick_columns(CsvReader& reader, const ColumnChoice& columns) {
  // A default column is taken by position: a header that names a column "2" does not move it.
  auto by_position = [&](std::size_t position, const char* option) {
    if (position >= reader.column_count()) {
      static const char* const ordinal[] = {"first", "second", "third"};
      throw UsageError(std::string(option) + ": " + escape_excerpt(reader.source(), 200) + " has " +
                       std::to_string(reader.column_count()) + " column" + (reader.column_count() == 1 ? "" : "s") +
                       ", no " + (position < 3 ? ordinal[position] : std::to_string(position + 1) + "th") +
                       " to take by default; name the columns with -x and -y" + one_column_hint(reader));
    }
    return position;
  };
  std::vector<std::size_t> idx;
  for (const auto& spec : columns.x) idx.push_back(reader.resolve(spec, "-x"));
  if (columns.x.empty()) idx.push_back(by_position(columns.x_position, "-x"));
  // y by default: the column at y_position (the second), unless -x took it: then the first data
  // column that is not an x column (-x x,g on x,g,y takes y, not g).
  auto default_y = [&] {
    if (columns.x.empty() || (columns.y_position < reader.column_count() &&
                              std::find(idx.begin(), idx.end(), columns.y_position) == idx.end()))
      return by_position(columns.y_position, "-y");
    for (std::size_t c = columns.x_position; c < reader.column_count(); ++c)
      if (std::find(idx.begin(), idx.end(), c) == idx.end()) return c;
    throw UsageError("-y: every column of " + escape_excerpt(reader.source(), 200) +
                     " is an x column; name the y column with -y");
  };
  const std::size_t y_idx = columns.y.empty() ? default_y() : reader.resolve(columns.y, "-y");
  if (std::find(idx.begin(), idx.end(), y_idx) != idx.end())
    throw UsageError("-y: column " + reader.column_label(y_idx) + " is also an x column");
  for (std::size_t i = 0; i < idx.size(); ++i)
    if (std::find(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(i), idx[i]) !=
        idx.begin() + static_cast<std::ptrdiff_t>(i))
      throw UsageError("-x: column " + reader.column_label(idx[i]) + " is named twice");
  return {idx, y_idx};
}

}  // namespace

Dataset read_dataset(CsvReader& reader, const ColumnChoice& columns) {
  auto [idx, y_idx] = pick_columns(reader, columns);

  // Categorical x columns, and the order of their levels where given.
  std::vector<ColumnKind> label_kind(idx.size(), ColumnKind::number);
  std::vector<std::vector<std::string>> order(idx.size());
  categorical_columns(reader, columns, idx, label_kind, order);

  std::size_t w_idx = 0;
  if (!columns.weight.empty()) {
    w_idx = reader.resolve(columns.weight, "`sample_weight`");
    if (w_idx == y_idx || std::find(idx.begin(), idx.end(), w_idx) != idx.end())
      throw ParameterError("sample_weight", "column " + reader.column_label(w_idx) + " is also an x or y column");
  }

  Dataset data;
  data.source = reader.source();
  data.d = idx.size();
  for (std::size_t k = 0; k < data.d; ++k)
    data.x_names.push_back(reader.has_header() ? reader.names()[idx[k]]
                                               : (data.d == 1 ? "x" : "x" + std::to_string(k + 1)));
  data.y_name = reader.has_header() ? reader.names()[y_idx] : "y";

  if (!columns.weight.empty()) {
    data.weight_name = reader.has_header() ? reader.names()[w_idx] : "w";
    idx.push_back(w_idx);
  }
  idx.push_back(y_idx);
  CsvReader::Kinds kinds(idx.size(), ColumnKind::number);  // y and the weights: numbers
  for (std::size_t k = 0; k < data.d; ++k)  // x: labels, or numbers or time by the first value
    kinds[k] = label_kind[k] == ColumnKind::number ? std::nullopt : std::optional(label_kind[k]);
  CsvReader::TextColumns text = kept_columns(reader, columns.keep, data.kept_names);
  CsvReader::Labels labels(idx.size());
  std::vector<std::vector<double>> cols;
  try {
    cols = reader.read_numeric(idx, &kinds, &text, &labels);
  } catch (const InputError& e) {
    throw_with_label_hint(e, reader, idx, data.d);
  }
  data.kept = std::move(text.values);
  for (std::size_t k = 0; k < data.d; ++k) {
    data.x_kind.push_back(kinds[k].value_or(ColumnKind::number));
    data.x_offset.push_back(is_time(data.x_kind.back()) ? reader.common_offset(idx[k]) : std::nullopt);
    data.x_local_time.push_back(is_time(data.x_kind.back()) && reader.local_times(idx[k]));
  }
  if (std::any_of(label_kind.begin(), label_kind.end(), [](ColumnKind k) { return is_categorical(k); })) {
    data.levels.resize(data.d);
    for (std::size_t k = 0; k < data.d; ++k) {
      if (!is_categorical(label_kind[k])) continue;
      std::vector<double> value;
      data.levels[k] = make_levels(labels[k].seen(), label_kind[k], order[k], data.x_names[k], value);
      for (double& v : cols[k]) v = value[static_cast<std::size_t>(v)];
    }
  }
  data.n = cols.back().size();
  data.y = std::move(cols.back());
  cols.pop_back();
  if (!columns.weight.empty()) {
    data.weight = std::move(cols.back());
    cols.pop_back();
    for (std::size_t i = 0; i < data.n; ++i)
      if (data.weight[i] < 0)
        throw InputError(data.source, 0, reader.column_label(w_idx),
                         "data row " + std::to_string(i + 1) + ": sample weight " + format_double(data.weight[i]) +
                             " is negative");
  }
  if (data.d == 1) {
    data.x = std::move(cols[0]);  // no copy: at 1e7 rows that is 80 MB
  } else {
    data.x.resize(data.n * data.d);
    for (std::size_t k = 0; k < data.d; ++k)
      for (std::size_t i = 0; i < data.n; ++i) data.x[i * data.d + k] = cols[k][i];
  }
  data.x.shrink_to_fit();
  data.y.shrink_to_fit();
  return data;
}

CsvReader::Kinds query_kinds(const Dataset& train) {
  CsvReader::Kinds kinds;
  for (std::size_t k = 0; k < train.d; ++k)
    kinds.push_back(is_time(train.kind(k)) ? ColumnKind::date : train.kind(k));  // stamps only, labels, numbers
  return kinds;
}

CsvReader::Labels query_labels(const Dataset& train) {
  CsvReader::Labels labels;
  for (std::size_t k = 0; k < train.d; ++k)
    labels.emplace_back(is_categorical(train.kind(k)) ? &train.levels.at(k) : nullptr);
  return labels;
}

std::pair<std::string, std::vector<std::string>> parse_levels(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("`levels`: expected COLUMN=level,level,... (the levels in order), got " + quote(text));
  auto labels = parse_column_list(text.substr(eq + 1), "`levels`");
  return {parse_column_list(text.substr(0, eq), "`levels`").at(0), std::move(labels)};
}

CsvReader::TextColumns kept_columns(const CsvReader& reader, const std::vector<std::string>& keep,
                                    std::vector<std::string>& names) {
  CsvReader::TextColumns text;
  names.clear();
  for (const auto& spec : keep) {
    const std::size_t c = reader.resolve(spec, "`keep`");
    text.columns.push_back(c);
    names.push_back(reader.has_header() ? reader.names()[c] : "column" + std::to_string(c + 1));
  }
  return text;
}

QueryRows read_query_rows(CsvReader& reader, const Dataset& train, const std::vector<std::string>& keep) {
  QueryRows rows;
  CsvReader::TextColumns text = kept_columns(reader, keep, rows.kept_names);
  rows.x = read_queries(reader, train, &rows.kinds, &text);
  rows.kept = std::move(text.values);
  return rows;
}

std::vector<double> read_queries(CsvReader& reader, const Dataset& train, std::vector<ColumnKind>* kinds,
                                 CsvReader::TextColumns* text) {
  const std::vector<std::size_t> idx = query_columns(reader, train);
  CsvReader::Kinds read = query_kinds(train);
  CsvReader::Labels labels = query_labels(train);
  auto cols = reader.read_numeric(idx, &read, text, &labels);
  if (kinds) {
    kinds->clear();
    for (std::size_t k = 0; k < train.d; ++k) kinds->push_back(read[k].value_or(train.kind(k)));
  }
  const std::size_t m = cols[0].size();
  std::vector<double> q(m * train.d);
  for (std::size_t k = 0; k < train.d; ++k)
    for (std::size_t i = 0; i < m; ++i) q[i * train.d + k] = cols[k][i];
  return q;
}

std::vector<std::size_t> query_columns(const CsvReader& reader, const Dataset& train) {
  std::vector<std::size_t> idx;
  const auto& names = reader.names();
  for (std::size_t k = 0; k < train.d; ++k) {
    if (!reader.has_header()) {  // the x columns in order
      idx.push_back(k + (reader.row_names() ? 1 : 0));
      continue;
    }
    auto it = std::find(names.begin(), names.end(), train.x_names[k]);
    if (it == names.end()) {
      std::string have;
      for (std::size_t c = 0; c < names.size() && c < 8; ++c) have += (c ? ", " : "") + quote(names[c]);
      if (names.size() > 8) have += ", ...";
      throw InputError(reader.source(), 0, "",
                       "has no column " + quote(train.x_names[k]) + " for the x column of that name (its columns: " +
                           have + "); name it so, or give the x columns in order without a header");
    }
    if (std::find(it + 1, names.end(), train.x_names[k]) != names.end())
      throw InputError(reader.source(), 0, "",
                       "has two columns named " + quote(train.x_names[k]) +
                           " for the x column of that name; rename one, or give the x columns in order without a header");
    idx.push_back(static_cast<std::size_t>(it - names.begin()));
  }
  if (std::any_of(idx.begin(), idx.end(), [&](std::size_t i) { return i >= reader.column_count(); }))
    throw InputError(reader.source(), 0, "",
                     "needs " + std::to_string(train.d) + " columns for the query points, has " +
                         std::to_string(reader.column_count()));
  return idx;
}

Dataset reweighted(const Dataset& data, const std::vector<double>& factor) {
  Dataset out = data;
  if (out.weight.empty()) {
    out.weight = factor;
  } else {
    for (std::size_t i = 0; i < out.n; ++i) out.weight[i] *= factor[i];
  }
  return out;
}

void put_in_x_order(Dataset& data) {
  const std::size_t n = data.n;
  if (data.d != 1 || n >= std::numeric_limits<std::uint32_t>::max() || std::is_sorted(data.x.begin(), data.x.end()))
    return;
  struct [[gnu::packed]] Entry {  // 12 bytes
    double x;
    std::uint32_t row;
  };
  std::vector<Entry> by_x(n);
  for (std::size_t i = 0; i < n; ++i) by_x[i] = {data.x[i], static_cast<std::uint32_t>(i)};
  std::vector<double>().swap(data.x);  // (in by_x now)
  std::sort(by_x.begin(), by_x.end(), [](const Entry& a, const Entry& b) {
    const double xa = a.x, xb = b.x;
    return xa < xb || (xa == xb && a.row < b.row);
  });
  auto permute = [&](auto& column) {
    if (column.empty()) return;
    std::remove_reference_t<decltype(column)> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = std::move(column[by_x[i].row]);
    column.swap(out);
  };
  permute(data.y);
  permute(data.weight);
  for (auto& kept : data.kept) permute(kept);
  data.x.resize(n);
  for (std::size_t i = 0; i < n; ++i) data.x[i] = by_x[i].x;
}

std::string checksum(const Dataset& data) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  auto mix_double = [&mix](double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    mix(bits);
  };
  mix(data.n);
  mix(data.d);
  for (double v : data.x) mix_double(v);
  for (double v : data.y) mix_double(v);
  for (double v : data.weight) mix_double(v);  // none: the checksum of earlier versions
  char hex[17];
  for (int i = 0; i < 16; ++i) hex[i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 0xfu];
  hex[16] = '\0';
  return std::string("fnv1a64:") + hex;
}

ColumnStats column_stats(const Dataset& data, std::size_t column) {
  std::vector<double> v(data.n);
  for (std::size_t i = 0; i < data.n; ++i) v[i] = data.x[i * data.d + column];
  std::sort(v.begin(), v.end());
  ColumnStats s;
  const std::size_t n = v.size();
  if (n == 0) return s;
  // Halved differences keep max - min finite for data spanning the whole double range.
  s.range = 2 * (v.back() / 2 - v.front() / 2);
  long double mean = 0;
  for (double a : v) mean += a;
  mean /= static_cast<long double>(n);
  long double ss = 0;
  for (double a : v) ss += (a - mean) * (a - mean);
  // Equal values have sd 0 exactly (their mean, summed, can round off the value: 1e5 rows of
  // 0.123 gave sd 1e-18, and a constant column passed for a spread one).
  s.sd = n > 1 && s.range > 0 ? static_cast<double>(std::sqrt(ss / static_cast<long double>(n - 1))) : 0.0;
  auto quantile = [&](double p) {
    const double pos = p * static_cast<double>(n - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, n - 1);
    const double frac = pos - static_cast<double>(lo);
    return v[lo] + frac * (v[hi] - v[lo]);
  };
  s.iqr = quantile(0.75) - quantile(0.25);
  for (std::size_t i = 1; i < n; ++i) {
    const double gap = v[i] - v[i - 1];
    if (gap > 0 && (s.min_gap == 0 || gap < s.min_gap)) s.min_gap = gap;
  }
  return s;
}

double typical_spacing(const Dataset& data, std::size_t column) {
  std::vector<double> v(data.n);
  for (std::size_t i = 0; i < data.n; ++i) v[i] = data.x[i * data.d + column];
  std::sort(v.begin(), v.end());
  std::vector<double> gaps;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[i - 1]) gaps.push_back(v[i] - v[i - 1]);
  if (gaps.empty()) return 0;
  const auto mid = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  return *mid;
}

}  // namespace nwreg
