// The answers of `nwreg predict`: blocks of predictions with their band, the notes on stderr,
// and queries streamed from stdin.
#include "cli/choices.h"
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
#include <set>

#include "nwreg/base/thread_pool.h"
#include "nwreg/io/plot.h"

namespace nwreg::cli {

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
  const std::optional<Interval> given = parse_choice<std::optional<Interval>>(cmd.interval, interval_choices, "--interval", "interval");
  const bool asked = given.has_value();
  const Interval interval = given.value_or(Interval::rbc);
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

namespace {

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

}  // namespace

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

namespace {

// The training range of the column of `p`'s farthest query, as "[lo, hi]".
std::string range_text(const PastRange& p, const Dataset& data) {
  if (!is_time(data.kind(p.column))) return format_interval(p.lo, p.hi);
  auto value = [&](double v) { return format_instant(v, data.kind(p.column) == ColumnKind::date); };
  return "[" + value(p.lo) + ", " + value(p.hi) + "]";
}

}  // namespace

// Under --out-of-reach error, a query past the training range is refused: a QueryError naming
// the first (first + 1 numbers the first query of `p`).
void refuse_past(const PastRange& p, std::size_t first, const Dataset& data, Unsupported policy) {
  if (!p.count || policy != Unsupported::error) return;
  throw QueryError(first + p.first, " lies past the training range " + range_text(p, data) + " of x column " +
                                        quote(data.x_names[p.column]) + "; give --out-of-reach extrapolate (or empty) to answer it");
}

void FarQueries::add(const Fitted& fitted, const Model& model, const double* q, std::size_t m, std::size_t first,
                     const std::vector<char>& past) {
  if (is_compact(model.kernel)) return;
  const std::size_t d = model.x_columns.size(), chunk = 65536;  // (8 bytes a query of them at once)
  for (std::size_t at = 0; at < m; at += chunk) {
    const std::size_t count = std::min(chunk, m - at);
    const std::vector<double> distance = fitted.nearest_distances(q + at * d, count);
    for (std::size_t j = 0; j < count; ++j) {
      if (!(distance[j] > far_bandwidths) || (!past.empty() && past[at + j])) continue;
      ++this->count;
      if (distance[j] > this->distance) this->distance = distance[j], farthest = first + at + j + 1;
    }
  }
}

void report_far(const FarQueries& far, std::size_t total) {
  if (!far.count) return;
  // (Never "3" for a distance just past 3: the shortest digits that read back where 3 would.)
  const std::string distance =
      format_g3(far.distance) == format_g3(far_bandwidths) ? format_double(far.distance) : format_g3(far.distance);
  std::cerr << "nwreg: note: " << far.count << " of " << total << (total == 1 ? " query" : " queries")
            << " not past the training x range " << (total == 1 ? "lies" : "lie") << " more than "
            << format_g3(far_bandwidths) << " bandwidths from every training row (farthest: query " << far.farthest
            << ", " << distance << " bandwidths); their answers rest on rows far from them, where a local fit "
            << "extrapolates and NW repeats the nearest rows' values\n";
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
  // Line by line, a compressed stream too (inflated from what has arrived).
  CsvReader reader(std::cin, "<stdin>", query_csv_options(cmd.input), true);
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
  FarQueries far;
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
        far.add(fitted, model, row.x.data(), 1, queries - 1, p.past);
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
  report_far(far, queries);
}

}  // namespace nwreg::cli
