#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/pictures.h"
#include "nwreg/engine/results.h"
#include "nwreg/base/errors.h"
#include "nwreg/engine/fitted.h"
#include "nwreg/data/grid.h"
#include "nwreg/base/numbers.h"
#include "nwreg/io/plot.h"
#include "nwreg/base/thread_pool.h"
#include "nwreg/io/writers.h"
#include "nwreg/data/csv.h"

namespace nwreg::cli {
namespace {

Model load_model(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a directory, not a file");
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  return read_model(in, path);
}

// The query points: `grid` (parsed before the data were read), an even grid over the data,
// a query file, or the training x.
std::string describe_columns(const std::vector<std::string>& x, const std::string& y) {
  std::string s = "x column";
  if (x.size() > 1) s += "s";
  for (std::size_t i = 0; i < x.size(); ++i) s += (i ? ", " : " ") + quote(x[i]);
  return s + " and y column " + quote(y);
}

// The rows to answer: the query points and what each output row carries besides them.
struct Rows {
  std::vector<double> x;                        // m x d, row-major
  std::vector<ColumnKind> kinds;                // how each x column is written
  std::vector<std::string> kept_names;          // --keep
  std::vector<std::vector<std::string>> kept;   // kept[c][i]
  const std::vector<double>* y = nullptr;       // fitted values: the observed y of each row
};

// How each x column of `x` is written: dates stay dates where every value is a whole day.
std::vector<ColumnKind> written_kinds(const Dataset& data, const std::vector<double>& x) {
  std::vector<ColumnKind> out;
  const std::size_t m = x.size() / data.d;
  for (std::size_t k = 0; k < data.d; ++k) out.push_back(output_kind(data.kind(k), x.data() + k, m, data.d));
  return out;
}

// n points evenly spanning column k's training range.
std::vector<double> column_lattice(const Dataset& data, std::size_t k, std::size_t n) {
  double lo = data.x[k];
  for (std::size_t i = 0; i < data.n; ++i) lo = std::min(lo, data.x[i * data.d + k]);
  return linspace(lo, lo + column_stats(data, k).range, n);
}

// Every pair (a_i, b_j), two columns row-major, a slowest: the rows in sorted order.
std::vector<double> product_lattice(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  out.reserve(2 * a.size() * b.size());
  for (double u : a)
    for (double v : b) out.insert(out.end(), {u, v});
  return out;
}

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

// The x columns that get a slope (--derivative): the continuous ones, each with the factor its
// slope and se are written in: a time column's per --slope-unit (seconds in the model), others 1.
struct SlopeColumn {
  std::size_t k;
  double per = 1;
};
std::vector<SlopeColumn> slope_columns(const Model& model, const std::string& slope_unit = "") {
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
  std::set<std::string> seen;
  for (std::string* name : order) {
    std::string unique = *name;
    for (int k = 1; seen.count(unique); ++k) unique = *name + "." + std::to_string(k);
    seen.insert(unique);
    *name = unique;
  }
  return c;
}

// Predictions (and with --se the band) for a block of query points.
struct Block {
  std::vector<double> pred;
  std::optional<Band> band;
  std::optional<Fitted::Slopes> slopes;  // --derivative: m x d
  std::vector<char> none;     // per row: no answer, every value cell empty (a missing x; --out-of-reach empty)
  std::vector<char> no_band;  // per row: its standard errors and band empty (past the range, --out-of-reach auto)
};

// Queries the data do not support (--out-of-reach) in a block: the policy, and which of its
// rows lie past the training range (nullptr: none).
struct Reach {
  Unsupported policy = Unsupported::flag;
  const char* past = nullptr;
};
// How --se's band is made: its multiplier (the pointwise z, or the simultaneous critical value)
// and the fit it is centred on (--interval rbc: the bias-corrected one), or none.
struct BandSetup {
  double level = 0.95;
  std::optional<double> critical;  // --simultaneous
  std::optional<Fitted> corrected;
};

// What the JSON output records of the band (--se), or nothing.
std::optional<PredictionWriter::Columns::Band> band_record(const PredictCommand& cmd, const BandSetup& band) {
  if (!cmd.se) return std::nullopt;
  return PredictionWriter::Columns::Band{band.level, band.corrected ? "rbc" : "plain", band.critical};
}

// The band's setup for a model: rbc where the model has a bias-corrected fit (and --interval
// auto or rbc), and with --simultaneous the tube formula's critical value over the m queries
// q (every query of the run, so that shards share it), said on stderr.
void set_band(BandSetup& band, const PredictCommand& cmd, const Dataset& data, const Model& model,
              const EngineOptions& engine, const Fitted& fitted, const double* q, std::size_t m) {
  band.level = cmd.level;
  const bool asked = cmd.interval != "auto";
  const Interval interval = asked ? parse_interval(cmd.interval) : Interval::rbc;
  if (interval == Interval::rbc) {
    if (const auto corrected = bias_corrected(model)) {
      band.corrected.emplace(data, *corrected, engine);
    } else if (asked) {
      throw UsageError("--interval rbc: " +
                       (model.score.distance() ? std::string("degree ") + std::to_string(model.degree) +
                                                     "'s bias correction needs degree 4, beyond nwreg's local polynomials"
                                               : "--score " + to_string(model.score.score) + " has no local polynomial to correct its bias") +
                       "; give --interval plain");
    }
  }
  if (!cmd.simultaneous) return;
  if (data.d == 1 && is_categorical(data.kind(0)))
    throw UsageError("--simultaneous: a band over a curve in a continuous x; x column " + quote(data.x_names[0]) +
                     " is categorical, its levels separate points (for L of them, --level 1 - a/L is Bonferroni's "
                     "band at 1 - a)");
  // The tube formula walks every query's weights over every key (twice under rbc).
  constexpr double most = 1e10;
  if (static_cast<double>(m) * static_cast<double>(data.n) > most)
    throw UsageError("--simultaneous: the band walks each query's weights over every training row, " + std::to_string(m) +
                     " x " + std::to_string(data.n) + " > 1e10; give fewer queries (a grid of a few hundred is enough)");
  std::vector<double> known;  // the queries with no missing x (one column)
  for (std::size_t j = 0; j < m; ++j)
    if (!std::isnan(q[j])) known.push_back(q[j]);
  const Simultaneous s = fitted.simultaneous(known.data(), known.size(), cmd.level, band.corrected ? &*band.corrected : nullptr);
  band.critical = s.critical;
  std::cerr << "nwreg: simultaneous " << format_double(cmd.level) << " band over " << m << (m == 1 ? " query" : " queries")
            << ": critical value "
            << format_g3(s.critical) << " (pointwise " << format_g3(band_quantile(cmd.level, s.nu)) << "; tube formula, kappa0 "
            << format_g3(s.kappa0) << (s.nu < 1e7 ? ", t with " + format_g3(s.nu) + " df" : std::string()) << ")\n";
}

// The answers to m queries, the first of them query number first + 1 of the user's: an error
// names a query by that number.
Block answer_all(const Fitted& fitted, const double* q, std::size_t m, std::size_t first, const LooDetail* loo,
                 const BandSetup& band, bool derivative) try {
  Block b;
  b.pred.resize(m);
  if (loo)
    b.band = fitted.predict_band(q, m, band.level, *loo, b.pred.data(), band.corrected ? &*band.corrected : nullptr,
                                 band.critical);
  else fitted.predict(q, m, b.pred.data());
  if (derivative) b.slopes = fitted.slopes(q, m, loo);
  return b;
} catch (const QueryError& e) {
  throw e.at(first);
}

// The same where some queries are none: a row with a missing coordinate (--na skip keeps its
// place) is not asked; a row past the range or out of reach gets what `reach` says.
Block answer(const Fitted& fitted, const double* q, std::size_t m, std::size_t d, std::size_t first,
             const LooDetail* loo, const BandSetup& band, bool derivative, const Reach& reach) {
  std::vector<std::size_t> asked;
  for (std::size_t j = 0; j < m; ++j)
    if (std::all_of(q + j * d, q + (j + 1) * d, [](double v) { return !std::isnan(v); })) asked.push_back(j);
  Block b;
  if (asked.size() == m) {
    b = answer_all(fitted, q, m, first, loo, band, derivative);
  } else {
    // Only the rows asked, each error named by its own query number.
    std::vector<double> qa;
    for (std::size_t j : asked) qa.insert(qa.end(), q + j * d, q + (j + 1) * d);
    Block a;
    try {
      a = answer_all(fitted, qa.data(), asked.size(), 0, loo, band, derivative);
    } catch (const QueryError& e) {
      throw QueryError(first + asked[e.index()], e.detail());
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    b.pred.assign(m, nan);
    if (a.band) b.band = Band{std::vector<double>(m, nan), std::vector<double>(m, nan), std::vector<double>(m, nan)};
    if (a.slopes) b.slopes = Fitted::Slopes{std::vector<double>(m * d, nan), std::vector<double>(a.slopes->se.empty() ? 0 : m * d, nan)};
    for (std::size_t i = 0; i < asked.size(); ++i) {
      const std::size_t j = asked[i];
      b.pred[j] = a.pred[i];
      if (a.band) b.band->se[j] = a.band->se[i], b.band->lower[j] = a.band->lower[i], b.band->upper[j] = a.band->upper[i];
      if (a.slopes) {
        std::copy_n(a.slopes->slope.begin() + i * d, d, b.slopes->slope.begin() + j * d);
        if (!a.slopes->se.empty()) std::copy_n(a.slopes->se.begin() + i * d, d, b.slopes->se.begin() + j * d);
      }
    }
  }
  // No answer: a row not asked; under --out-of-reach empty, one past the range or no key reaches
  // (the engine's NaN). Any other NaN stays a value the writer refuses.
  b.none.assign(m, 1);
  for (std::size_t j : asked) b.none[j] = 0;
  b.no_band.assign(m, 0);
  for (std::size_t j = 0; j < m; ++j) {
    const bool past = reach.past && reach.past[j];
    if (reach.policy == Unsupported::empty && (past || std::isnan(b.pred[j]))) b.none[j] = 1;
    b.no_band[j] = past && reach.policy == Unsupported::flag;
  }
  return b;
}

// Says on stderr how many of the `total` queries' local polynomials lost a term (Fitted::dropped_rows).
void report_dropped(const Fitted& fitted, std::size_t total, const Model& model, const Dataset& data) {
  const std::uint64_t dropped = fitted.dropped_rows();
  if (!dropped) return;
  std::cerr << "nwreg: warning: " << escape_excerpt(data.source, 200) << ": at " << dropped << " of " << total
            << (total == 1 ? " query" : " queries") << " the keys that weigh something do not spread along every term of the "
            << (model.method == Method::local_polynomial ? "local polynomial of degree " + std::to_string(model.degree)
                                                         : std::string("local line"))
            << " (too few distinct x, as where --robust leaves few rows): those terms are fitted as 0 there (R's loess "
               "uses a pseudo-inverse there, \"pseudoinverse used\", and differs)\n";
}

// The training range of the column of `p`'s farthest query, as "[lo, hi]".
std::string range_text(const PastRange& p, const Dataset& data) {
  const bool time = is_time(data.kind(p.column));
  auto value = [&](double v) { return time ? format_instant(v, data.kind(p.column) == ColumnKind::date) : format_g3(v); };
  return "[" + value(p.lo) + ", " + value(p.hi) + "]";
}

// Under --out-of-reach error, a query past the training range is refused: a QueryError naming
// the first (first + 1 numbers the first query of `p`).
void refuse_past(const PastRange& p, std::size_t first, const Dataset& data, Unsupported policy) {
  if (!p.count || policy != Unsupported::error) return;
  throw QueryError(first + p.first, " lies past the training range " + range_text(p, data) + " of x column " +
                                        quote(data.x_names[p.column]) + "; give --out-of-reach extrapolate (or empty) to answer it");
}

// Says on stderr, once, after the output, how many queries lie past the training range, how
// far, and what they got.
void report_past(const PastRange& p, std::size_t total, const Dataset& data, Unsupported policy, bool se) {
  if (!p.count) return;
  const std::string column = quote(data.x_names[p.column]), range = range_text(p, data);
  const bool time = is_time(data.kind(p.column));
  std::string what = policy == Unsupported::empty ? "their cells are left empty"
                     : policy == Unsupported::extrapolate
                         ? std::string("they are extrapolated") + (se ? ", bands included" : "")
                     : se ? "their predictions are extrapolated and their band cells left empty (--out-of-reach "
                            "extrapolate fills them, empty leaves every cell empty, error refuses)"
                          : "their predictions are extrapolated (--out-of-reach empty leaves them empty, error refuses)";
  std::cerr << "nwreg: note: " << p.count << " of " << total << (total == 1 ? " query lies" : " queries lie")
            << " past the training x range (farthest: " << (time ? format_duration(p.beyond) : format_g3(p.beyond))
            << " past " << range << " of " << column << ", " << format_g3(p.ranges) << " of its range); " << what << "\n";
}


// Writes block `b`, rows [from, from + m) of `rows`.
void write_block(PredictionWriter& w, const Rows& rows, std::size_t d, std::size_t from, const Block& b,
                 const std::vector<SlopeColumn>& slope_cols) {
  std::vector<std::string_view> kept(rows.kept.size());
  std::vector<double> v;
  std::vector<char> blank;  // x cells, then value cells
  for (std::size_t i = 0; i < b.pred.size(); ++i) {
    const std::size_t r = from + i;
    const double* x = rows.x.data() + r * d;
    for (std::size_t c = 0; c < kept.size(); ++c) kept[c] = rows.kept[c][r];
    v.clear();
    blank.clear();
    for (std::size_t k = 0; k < d; ++k) blank.push_back(std::isnan(x[k]));
    const char none = b.none[i], no_se = none || b.no_band[i];
    auto put = [&](double value, char empty) {
      v.push_back(value);
      blank.push_back(empty);
    };
    if (rows.y) put((*rows.y)[r], 0);
    put(b.pred[i], none);
    if (b.band) put(b.band->se[i], no_se), put(b.band->lower[i], no_se), put(b.band->upper[i], no_se);
    if (b.slopes) {
      for (const SlopeColumn& s : slope_cols) put(b.slopes->slope[i * d + s.k] * s.per, none);
      if (!b.slopes->se.empty())
        for (const SlopeColumn& s : slope_cols) put(b.slopes->se[i * d + s.k] * s.per, no_se);
    }
    if (rows.y) put((*rows.y)[r] - b.pred[i], none);
    w.row(kept.data(), x, v.data(), blank.data());
  }
}

// Reads queries from stdin line by line and writes each prediction as soon as it is made, in
// any format: memory stays bounded however long the stream.
void stream_queries(const PredictCommand& cmd, const Dataset& data, const Model& model, const EngineOptions& engine,
                    Format format, OutputFile& out) {
  // Line by line, unless the stream is gzip-compressed (its first byte 0x1f is no text): that
  // is inflated in blocks, answered as they come.
  const bool gzip = std::cin.peek() == 0x1f;
  CsvReader reader(std::cin, "<stdin>", query_csv_options(cmd.input), !gzip);
  const std::vector<std::size_t> columns = query_columns(reader, data);
  std::vector<std::string> kept_names;
  const CsvReader::TextColumns keep = kept_columns(reader, cmd.keep, kept_names);
  CsvReader::Kinds kinds = query_kinds(data);
  CsvReader::Labels labels = query_labels(data);
  EngineOptions one = engine;
  one.pool = nullptr;
  one.progress = nullptr;
  const Fitted fitted(data, model, one);
  std::optional<LooDetail> loo;
  BandSetup band;
  if (cmd.se) {
    loo = Fitted(data, model, engine).loo_residuals();
    set_band(band, cmd, data, model, one, fitted, nullptr, 0);  // (--simultaneous is refused for a stream)
  }
  const Unsupported policy = parse_unsupported(cmd.engine.out_of_reach);
  const TrainingRange range(data);
  PastRange farthest;  // the stream's farthest query past the range,
  std::size_t queries = 0, past = 0;  // and how many of how many lie past it
  Rows row;
  row.x.resize(data.d);
  row.kept.assign(keep.columns.size(), std::vector<std::string>(1));
  const std::vector<SlopeColumn> slope_cols = slope_columns(model, cmd.slope_unit);
  out.write([&](std::ostream& os) {
    PredictionWriter::Columns written = output_columns(model, kept_names, cmd.se, false, data.x_kind, cmd.derivative);  // a date column: whole days as dates
    written.band = band_record(cmd, band);
    PredictionWriter w(os, format, model, std::move(written));
    w.flush();  // the header at once
    while (reader.next_numeric(columns, row.x.data(), &kinds, &labels)) {
      for (std::size_t c = 0; c < keep.columns.size(); ++c) row.kept[c][0] = reader.fields()[keep.columns[c]];
      Block b;
      try {
        const PastRange p = range.past(row.x.data(), 1);
        ++queries;
        if (p.count) {
          refuse_past(p, 0, data, policy);
          if (!past++ || p.ranges > farthest.ranges) farthest = p;
        }
        b = answer(fitted, row.x.data(), 1, data.d, 0, loo ? &*loo : nullptr, band, cmd.derivative,
                   {policy, p.past.data()});
      } catch (const QueryError& e) {  // named by its line in the stream
        throw InputError(reader.source(), reader.line(), "", "the query" + e.detail());
      }
      write_block(w, row, data.d, 0, b, slope_cols);
      w.flush();
    }
    w.finish();
  });
  report_skipped(reader, "query row", std::cerr);
  farthest.count = past;
  report_dropped(fitted, queries, model, data);
  report_past(farthest, queries, data, policy, cmd.se);
}

}  // namespace

CLI::App* setup_predict(CLI::App& app, PredictCommand& cmd) {
  CLI::App* sub = app.add_subcommand("predict", "Predict by attention pooling; optionally write the attention weights");
  add_input_options(*sub, cmd.input);
  add_bandwidth_options(*sub, cmd.bandwidth);
  add_method_options(*sub, cmd.engine);
  add_like_option(*sub, cmd.engine);
  sub->option_defaults()->group("Bandwidth");
  auto* model = sub->add_option("--model", cmd.model,
                                "Use the bandwidth (kernel, method, metric) of a model written by fit -o; not with "
                                "the Method or Bandwidth options, --categorical, --ordered or --levels (the model holds them)");
  sub->option_defaults()->group("Input");
  auto* grid = sub->add_option("--grid", cmd.grid,
                               "Query points START:STOP:STEP (stop excluded); between dates or times START/STOP/STEP "
                               "with ISO 8601 ends and a time-span step, e.g. 2024-01-01/2024-02-01/6h. Not with "
                               "--grid-n or --query");
  auto* grid_n = sub->add_option("--grid-n", cmd.grid_n, "N query points spanning the training x range (1 to 1e8); with two x columns an N x N grid over both")
                     ->check(CLI::Range(std::size_t{1}, max_grid_points));
  auto* query = sub->add_option("--query", cmd.query,
                                "Query points from a CSV file; - for stdin, each line answered as it arrives");
  grid->excludes(grid_n)->excludes(query);
  grid_n->excludes(query);
  sub->option_defaults()->group("Output");
  sub->add_option("-o,--output", cmd.output, "Predictions file; - for stdout")->capture_default_str();
  sub->add_option("--format", cmd.format,
                  "csv, tsv, json or jsonl (one object a line, written as computed; with --query - each "
                  "query is answered as it arrives), for -o and --weights. Default: from each file's name (" +
                      format_extensions() + "), else csv");
  sub->add_option("--weights", cmd.weights,
                  "Also write the attention-weight matrix to this file (format from its name, or --format)");
  sub->add_option("--weights-layout", cmd.weights_layout,
                  "wide: one row per query; long: one query,key,weight row per pair")
      ->capture_default_str();
  sub->add_option("--plot", cmd.plot, "Draw the training points and the fitted curve (two x columns: the fitted surface) to this SVG file");
  sub->add_option("--heatmap", cmd.heatmap,
                  "Draw the attention-weight matrix (queries by keys, sorted by x) to this SVG file");
  sub->add_option("--heatmap-scale", cmd.heatmap_scale,
                  "Colours of --heatmap: linear in the weight, or log (six decades below the largest)")
      ->check(CLI::IsMember({"linear", "log"}))
      ->capture_default_str();
  sub->add_option("--shard", cmd.shard,
                  "K/N: compute only the K-th of N equal slices of the queries; the N outputs, joined "
                  "in order, are the whole output (csv, tsv and jsonl)")
      ->group("Performance");
  sub->add_option("--keep", cmd.keep,
                  "Copy these columns (names or 1-based indices, comma-separated) of each query row, or of each "
                  "training row for fitted values, into the output, first: results join back to their input");
  sub->add_flag("--se", cmd.se,
                "Add pointwise standard errors and a confidence band: columns se, lower, upper (see "
                "docs/methods.md, \"Standard errors\")");
  sub->add_option("--level", cmd.level, "Confidence level of the --se band")->capture_default_str();
  sub->add_option("--interval", cmd.interval,
                  "The --se band: rbc (robust bias correction: centred on the local polynomial of degree "
                  "max(p + 1, 2) at the same bandwidth, with its standard error), plain (prediction -+ z se, "
                  "ignoring bias), or auto (rbc where it exists: not for other scores or degree 3)")
      ->capture_default_str();
  sub->add_flag("--simultaneous", cmd.simultaneous,
                "Make the --se band cover the whole curve over the queries at --level at once (one x column; the "
                "tube formula's critical value, said on stderr)");
  sub->add_flag("--derivative", cmd.derivative,
                "Add the slope df/dx of each continuous x column (d_<x>; per second for time, or per "
                "--slope-unit), with --se its standard error (d_<x>_se): NW's analytic derivative, local "
                "linear's fitted slope");
  sub->add_option("--slope-unit", cmd.slope_unit,
                  "--derivative of a time column: the slope per this span (s, min, h, d, w, or 7d, 0.5h), not "
                  "per second");
  sub->add_option("--max-weights", cmd.max_weights,
                  "Refuse a --weights matrix of more entries than this (m queries x n keys)")
      ->capture_default_str();
  add_performance_options(*sub, cmd.engine);
  // One rule for options that cannot apply: what chooses or learns the model (the Method and
  // Bandwidth groups, the columns' kinds and levels) excludes a model read from a file, and an
  // option that refines another needs it.
  for (CLI::Option* o : sub->get_options())
    if (o != model && (o->get_group() == "Method" || o->get_group() == "Bandwidth" ||
                       o->check_name("--categorical") || o->check_name("--ordered") || o->check_name("--levels")))
      o->excludes(model);
  for (auto [option, needs] : {std::pair{"--heatmap-scale", "--heatmap"}, {"--weights-layout", "--weights"},
                               {"--max-weights", "--weights"}, {"--level", "--se"},
                               {"--interval", "--se"}, {"--simultaneous", "--se"},
                               {"--slope-unit", "--derivative"}})
    sub->get_option(option)->needs(sub->get_option(needs));
  sub->footer(R"(Without --grid, --grid-n or --query, predicts at the training x (fitted values).
Examples:
  nwreg predict data/synthetic.csv --grid 0:5:0.1     learn h, predict on a grid
  nwreg predict data/mcycle.csv --bandwidth 2 --grid-n 200 -o fit.csv
  nwreg predict data/mcycle.csv --model mcycle.json --query new_times.csv
  nwreg predict data/synthetic.csv --grid 0:5:0.5 --weights w.csv \
                --weights-layout long
  seq 0 0.5 5 | nwreg predict data/synthetic.csv --query -    queries from stdin
  nwreg predict data/airquality_daily.csv -y Temp -b 3d \
                --grid 1973-06-01/1973-07-01/1d --plot temp.svg   a daily series)");
  return sub;
}

namespace {

// The options checked against each other before anything is read or opened.
struct PredictSetup {
  bool fitted_values = false;  // no --grid, --grid-n or --query: the training rows
  Format format = Format::csv, weights_format = Format::csv;
  WeightsLayout layout = WeightsLayout::wide;
  std::vector<double> grid;
  bool grid_time = false;
  Shard shard;
  bool streaming = false;  // --query -: queries answered one by one as they arrive
  BandwidthPlan plan;
};

PredictSetup check_predict(const PredictCommand& cmd) {
  PredictSetup s;
  s.fitted_values = cmd.grid.empty() && cmd.grid_n == 0 && cmd.query.empty();
  s.format = cmd.format.empty() ? format_for_path(cmd.output, Format::csv) : parse_format(cmd.format, "--format");
  s.layout = parse_layout(cmd.weights_layout);
  if (cmd.query == "-" && cmd.input.train == "-")
    throw UsageError("--query -: standard input already carries the training data");
  if (!cmd.grid.empty()) s.grid = parse_grid(cmd.grid, max_grid_points, &s.grid_time);
  if (!cmd.shard.empty()) s.shard = parse_shard(cmd.shard);
  // Each output file's format follows its name; --format overrides both.
  s.weights_format = cmd.format.empty() ? format_for_path(cmd.weights, Format::csv) : s.format;
  check_svg_name(cmd.plot, "--plot");
  check_svg_name(cmd.heatmap, "--heatmap");
  if (!cmd.shard.empty() &&
      (!format_def(s.format).shardable || (!cmd.weights.empty() && !format_def(s.weights_format).shardable)))
    throw UsageError("--shard: JSON output cannot be joined from pieces; use csv or jsonl");
  s.streaming = cmd.query == "-" && cmd.weights.empty() && cmd.shard.empty() && cmd.plot.empty() && cmd.heatmap.empty();
  if (cmd.simultaneous && s.streaming)
    throw UsageError("--simultaneous: a band over every query needs them all first; not with --query - (give a file)");
  if (cmd.interval != "auto") parse_interval(cmd.interval);  // (auto is the CLI's: rbc where it exists)
  s.plan = plan_bandwidth(cmd.bandwidth, cmd.engine);
  check_input_options(cmd.input);
  if (cmd.model.empty()) check_plan_columns(s.plan, cmd.engine, cmd.input);
  if (cmd.se) check_level(cmd.level);
  check_tolerance(cmd.engine.tolerance);
  std::vector<FileUse> uses{{cmd.input.train, "the training data", false}, {cmd.output, "-o", true}};
  if (!cmd.model.empty()) uses.push_back({cmd.model, "the --model file", false});
  if (!cmd.query.empty()) uses.push_back({cmd.query, "the --query file", false});
  for (auto [path, option] : {std::pair{&cmd.weights, "--weights"}, {&cmd.plot, "--plot"}, {&cmd.heatmap, "--heatmap"}})
    if (!path->empty()) uses.push_back({*path, option, true});
  check_distinct(uses);
  return s;
}

// --plot's picture: the training points, the curve at the m queries q and its band.
FitPlot fit_plot(const Dataset& data, const Model& model, const double* q, std::size_t m, const Block& all) {
  // Cells left empty are not drawn: NaN breaks the curve and the band there; a query row with a
  // missing x is left out (one x column).
  std::vector<double> qx, f, lower, upper;
  for (std::size_t j = 0; j < m; ++j) {
    if (std::isnan(q[j])) continue;
    qx.push_back(q[j]);
    f.push_back(all.none[j] ? NAN : all.pred[j]);
    if (!all.band) continue;
    const bool empty = all.none[j] || all.no_band[j];
    lower.push_back(empty ? NAN : all.band->lower[j]);
    upper.push_back(empty ? NAN : all.band->upper[j]);
  }
  FitPlot p{data.x,
            data.y,
            std::move(qx),
            std::move(f),
            std::move(lower),
            std::move(upper),
            data.x_names[0],
            data.y_name,
            picture_title(model, data),
            is_time(data.kind(0))};
  return p;
}

// --weights writes m x n entries: refused past --max-weights, before any work.
void check_weights_size(std::size_t m, std::size_t n, std::uint64_t most) {
  const double entries = static_cast<double>(m) * static_cast<double>(n);
  if (entries > static_cast<double>(most))
    throw UsageError("--weights: " + std::to_string(m) + " queries x " + std::to_string(n) + " keys = " +
                     std::to_string(static_cast<unsigned long long>(entries)) + " entries (about " + about_bytes(entries * 20) +
                     " as text), over the limit of " + std::to_string(most) + "; raise it with --max-weights");
}

// What every output of one predict run is written from: the queries [first, first + m) of
// rows (q), and their answers.
struct Answers {
  const PredictCommand& cmd;
  const PredictSetup& setup;
  const Dataset& data;
  const Rows& rows;
  const Model& model;
  const Fitted& fitted;
  const EngineOptions& engine;
  const PredictionWriter::Columns& columns;
  const std::vector<SlopeColumn>& slope_cols;
  const Block& all;
  const double* q;
  std::size_t m, first;
  bool header;  // the first shard: CSV headers
};

void write_outputs(const Answers& a, OutputFile& out, std::optional<OutputFile>& weights_file,
                   std::optional<OutputFile>& plot_file, std::optional<OutputFile>& heatmap_file, const char*& task) {
  const Dataset& data = a.data;
  const double* q = a.q;
  const std::size_t m = a.m;
  // Every output is written before any is committed, files before standard output: a failure
  // anywhere (a full disk) leaves every file as it was and, where it can, stdout untouched.
  std::vector<std::pair<OutputFile*, std::function<void()>>> writes;
  if (weights_file)
    writes.emplace_back(&*weights_file, [&] {
      task = "writing weights";
      weights_file->write([&](std::ostream& os) {
        WeightsWriter w(os, a.setup.weights_format, a.setup.layout, data, q, m, a.first, a.header, a.rows.kinds);
        a.fitted.weights(q, m, [&](std::size_t i, const double* a) { w.row(i, a); });
        w.finish();
      });
    });
  writes.emplace_back(&out, [&] {
    out.write([&](std::ostream& os) {
      PredictionWriter w(os, a.setup.format, a.model, a.columns, a.header);
      write_block(w, a.rows, data.d, a.first, a.all, a.slope_cols);
      w.finish();
    });
  });
  if (plot_file)
    writes.emplace_back(&*plot_file, [&] {
      if (data.d == 2) {
        task = "drawing the surface";
        const SurfacePlot p = surface_plot(data, a.model, a.engine);
        plot_file->write([&](std::ostream& os) { write_surface_svg(os, p); });
        return;
      }
      const FitPlot p = fit_plot(data, a.model, q, m, a.all);
      plot_file->write([&](std::ostream& os) { write_fit_svg(os, p); });
    });
  if (heatmap_file)
    writes.emplace_back(&*heatmap_file, [&] {
      task = "drawing the heat map";
      write_heatmap(*heatmap_file, data, a.fitted, a.model, q, m, a.cmd.heatmap_scale == "log");
    });
  std::stable_partition(writes.begin(), writes.end(), [](const auto& w) { return !w.first->in_place(); });
  for (auto& w : writes) w.second();
  OutputFile::commit_all({&out, weights_file ? &*weights_file : nullptr, plot_file ? &*plot_file : nullptr,
                          heatmap_file ? &*heatmap_file : nullptr});
}

}  // namespace

void run_predict(const PredictCommand& given) {
  PredictCommand cmd = given;
  cmd.keep.clear();  // "a,b" and repeated --keep: one list
  for (const auto& part : given.keep)
    for (auto& name : parse_column_list(part, "--keep")) cmd.keep.push_back(std::move(name));
  const EndNote note(apply_like(cmd.engine, cmd.bandwidth));
  PredictSetup setup = check_predict(cmd);

  ThreadPool pool(cmd.engine.threads);
  report_threads(pool, std::cerr);
  Progress progress(!cmd.engine.quiet);
  const char* task = "predicting";
  std::size_t blocks_done = 0, block_rows = 0;
  EngineOptions engine = cmd.engine.options(pool);
  if (progress.active())
    // Predictions in blocks report their progress over all the rows: `block_rows` of them, the
    // first `blocks_done` already written.
    engine.progress = [&](std::size_t done, std::size_t total) {
      if (block_rows) progress.bar(task, blocks_done + done, block_rows);
      else progress.bar(task, done, total);
    };

  // Outputs are opened (as temporary files) before any work: a path that cannot be written
  // fails at once, and a signal from here on removes what was started.
  std::optional<OutputFile> weights_file, plot_file, heatmap_file;
  if (!cmd.weights.empty()) weights_file.emplace(cmd.weights, "--weights");
  if (!cmd.plot.empty()) plot_file.emplace(cmd.plot, "--plot");
  if (!cmd.heatmap.empty()) heatmap_file.emplace(cmd.heatmap, "--heatmap");
  OutputFile out(cmd.output, "-o");

  std::optional<Model> from_file;
  if (!cmd.model.empty()) from_file = load_model(cmd.model);
  auto reader = open_csv(cmd.input.train, cmd.input, std::cin);
  const Dataset data = load_training(*reader, cmd.input, from_file ? &*from_file : nullptr, std::cerr, cmd.model,
                                     setup.fitted_values ? cmd.keep : std::vector<std::string>{});
  reader.reset();

  if (plot_file) check_picture(data, "--plot", 2);
  if (heatmap_file) check_picture(data, "--heatmap", 1);
  auto choose_model = [&] {
    return from_file ? checked_model(*from_file, cmd.model, data)
                     : choose_bandwidth(data, setup.plan, engine, false, std::cerr, &progress);
  };
  if (setup.streaming) {
    stream_queries(cmd, data, choose_model(), engine, setup.format, out);
    out.commit();
    return;
  }
  // The queries, and the checks on them, before the bandwidth is learned.
  const Rows rows = rows_for(cmd, data, std::move(setup.grid), setup.grid_time);
  const std::size_t first = setup.shard.first(rows.x.size() / data.d), last = setup.shard.last(rows.x.size() / data.d);
  const std::size_t m = last - first;
  const double* q = rows.x.data() + first * data.d;
  const bool header = setup.shard.k == 1;
  if (weights_file) check_weights_size(m, data.n, cmd.max_weights);
  if (weights_file || heatmap_file)
    for (std::size_t j = 0; j < m * data.d; ++j)
      if (std::isnan(q[j]))
        throw UsageError(std::string(weights_file ? "--weights" : "--heatmap") + ": query " + std::to_string(first + j / data.d + 1) +
                         " has a missing x and no weights; drop such rows from the --query file");
  const Model model = choose_model();
  const Fitted fitted(data, model, engine);
  const Unsupported policy = parse_unsupported(cmd.engine.out_of_reach);
  const PastRange past = TrainingRange(data).past(q, m);
  refuse_past(past, first, data, policy);
  std::optional<LooDetail> loo;
  BandSetup band;
  if (cmd.se) {
    task = "leave-one-out residuals";
    loo = fitted.loo_residuals();
    task = cmd.simultaneous ? "the simultaneous band" : "predicting";
    set_band(band, cmd, data, model, engine, fitted, rows.x.data(), rows.x.size() / data.d);
    task = "predicting";
  }
  PredictionWriter::Columns columns =
      output_columns(model, rows.kept_names, cmd.se, rows.y != nullptr, rows.kinds, cmd.derivative);
  columns.band = band_record(cmd, band);
  const std::vector<SlopeColumn> slope_cols = slope_columns(model, cmd.slope_unit);

  // Only predictions, line by line (CSV, TSV, JSON Lines): written in blocks as they are computed
  // (a reader of the pipe sees the first rows at once), blocks growing from 256 rows so the
  // threads stay busy. A JSON document is written once every row is known good.
  if (!weights_file && !plot_file && !heatmap_file && format_def(setup.format).shardable) {
    block_rows = m;
    out.write([&](std::ostream& os) {
      PredictionWriter w(os, setup.format, model, columns, header);
      for (std::size_t size = 256; blocks_done < m; size = std::min<std::size_t>(size * 2, 65536)) {
        const std::size_t count = std::min(size, m - blocks_done);
        write_block(w, rows, data.d, first + blocks_done,
                    answer(fitted, q + blocks_done * data.d, count, data.d, first + blocks_done, loo ? &*loo : nullptr,
                           band, cmd.derivative, {policy, past.past.data() + blocks_done}),
                    slope_cols);
        w.flush();
        blocks_done += count;
      }
      w.finish();
    });
    out.commit();
    report_dropped(fitted, m, model, data);
    report_past(past, m, data, policy, cmd.se);
    return;
  }
  const Block all = answer(fitted, q, m, data.d, first, loo ? &*loo : nullptr, band, cmd.derivative, {policy, past.past.data()});
  const Answers answers{cmd, setup, data, rows, model, fitted, engine, columns, slope_cols, all, q, m, first, header};
  write_outputs(answers, out, weights_file, plot_file, heatmap_file, task);
  report_dropped(fitted, m, model, data);
  report_past(past, m, data, policy, cmd.se);
}

}  // namespace nwreg::cli
