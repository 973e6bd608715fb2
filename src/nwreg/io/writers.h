#pragma once
/// Output formats: predictions and attention weights as CSV or JSON, written to any stream.
/// Every number is written in its shortest round-trip form; rows are formatted into a buffer
/// and written whole, and the stream is checked after each so a failed write stops at once.

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include <optional>


#include "nwreg/base/choice.h"
#include "nwreg/base/json_writer.h"
#include "nwreg/data/dataset.h"
#include "nwreg/base/timestamp.h"

namespace nwreg {

struct Model;

enum class Format {
  csv,   //!< a header row, then one row per query
  tsv,   //!< as csv, tab-separated
  json,  //!< one object: the model's fields and the predictions as records
  jsonl  //!< one compact JSON object per query and line, nothing else (streams, shards)
};

/// The output formats' registry: one row per format. The writers below act on its layout,
/// never on the format itself, so a format of an existing layout is one row here.
struct FormatDef {
  enum class Layout {
    table,     //!< a header, then a row per record, fields split by `separator`
    document,  //!< one JSON object holding every record
    lines      //!< one JSON object per record and line
  };
  Format id;
  const char* name;
  Layout layout;
  char separator;                //!< table: between fields
  const char* extensions[2];     //!< file names that ask for it (any case); nullptr: unused
  bool shardable;                //!< pieces written apart join into one (no enclosing document)
};
inline constexpr FormatDef format_table[] = {
    {Format::csv, "csv", FormatDef::Layout::table, ',', {".csv", nullptr}, true},
    {Format::tsv, "tsv", FormatDef::Layout::table, '\t', {".tsv", nullptr}, true},
    {Format::json, "json", FormatDef::Layout::document, 0, {".json", nullptr}, false},
    {Format::jsonl, "jsonl", FormatDef::Layout::lines, 0, {".jsonl", ".ndjson"}, true},
};
/// The format's row.
const FormatDef& format_def(Format format);
/// The formats' names ("csv, tsv, json, jsonl") and their file endings (".csv, .tsv, ...").
std::string format_names();
std::string format_extensions();

enum class WeightsLayout {
  wide,  //!< one row per query: its coordinates, then one weight per training point
  long_  //!< one (query, key, weight) row per pair
};

/// A format by name (format_table); throws UsageError naming `option` otherwise.
Format parse_format(const std::string& text, const std::string& option);
/// Whether `path` ends in `ext` (".svg"), any case.
bool has_extension(std::string_view path, std::string_view ext);
/// The format a path's name asks for (any case; format_table's extensions), else `fallback`.
Format format_for_path(const std::string& path, Format fallback);
/// The field separator of csv (',') and tsv ('\t').
char separator(Format format);
inline constexpr Choice<WeightsLayout> layout_choices[] = {{"wide", WeightsLayout::wide}, {"long", WeightsLayout::long_}};
WeightsLayout parse_layout(const std::string& text);

/// One CSV field, quoted when it holds the separator, a quote, a line break or outer blanks.
std::string csv_field(const std::string& text, char sep = ',');



/// Writes predictions row by row, as they are computed. CSV/TSV: a header, then a row per
/// query; JSON: the model's fields, then "predictions": [records]; JSONL: one record per line.
/// Each row holds the kept columns (text copied from the input, --keep), the query's x (an ISO
/// 8601 stamp for a time column, a JSON string) and the value columns (prediction; se, lower,
/// upper; y and residual for fitted values).
class PredictionWriter {
 public:
  struct Columns {
    std::vector<std::string> kept;    //!< names of columns copied from the input
    std::vector<std::string> x;       //!< x column names
    std::vector<ColumnKind> kinds;    //!< how each x is written (empty = numbers); a date column
                                      //!< writes whole days as dates, other instants as date-times
    std::vector<std::string> values;  //!< value column names
    std::vector<Levels> levels;       //!< categorical columns' levels, written as labels (empty = none)
    std::vector<UtcOffset> offsets;   //!< time columns written at an offset (empty or none = UTC)
    /// With --se: how the band was made, written as JSON's "band" object before the predictions
    /// (level, interval, and a simultaneous band's critical value).
    struct Band {
      double level = 0.95;
      std::string interval;            //!< "rbc" or "plain"
      std::optional<double> critical;  //!< a simultaneous band's multiplier
    };
    std::optional<Band> band;
  };
  /// `header` = false leaves out the CSV/TSV header (for shards after the first); JSON always
  /// has its fields.
  PredictionWriter(std::ostream& out, Format format, const Model& model, Columns columns, bool header = true);
  /// One row: kept[0..kept columns), x[0..d), values[0..value columns). `blank`, when given,
  /// marks the x and value cells (d + value columns, in that order) that have no value: an empty
  /// field in CSV and TSV, null in JSON (a query row's missing x, a prediction not made). Throws
  /// DataError for any other value that is not finite, naming its column and row.
  void row(const std::string_view* kept, const double* x, const double* values, const char* blank = nullptr);
  /// Writes out the rows buffered so far and flushes the stream (for readers waiting on a pipe).
  void flush();
  /// Ends the output (JSON's closing brackets) and flushes.
  void finish();

 private:
  void append_kept(std::string_view text);
  std::ostream& out_;
  Format format_;
  FormatDef::Layout format_layout() const { return format_def(format_).layout; }
  Columns columns_;
  std::optional<JsonObjectWriter> json_;
  std::vector<std::string> keys_;  // JSON and JSONL: each column's "name": text
  std::string buf_;
  std::size_t rows_ = 0;
};

/// Every output name once, so that JSON keys and CSV headers stay unambiguous: in order, a name
/// that an earlier one holds, or that `taken` says is the output's own, gets ".1", ".2", ... (as
/// pandas names repeated columns).
void make_unique(const std::vector<std::string*>& names, const std::function<bool(const std::string&)>& taken = nullptr);

/// Streams the m x n attention-weight matrix row by row (see docs/output.md, "Attention weights").
class WeightsWriter {
 public:
  /// csv and tsv write a table, json one object, jsonl a line per query (wide: its coordinates
  /// and "weights") or per pair (long: "query", the query's x by column name, "key", the key's
  /// x as "key_<name>", "weight"); an x name that repeats one of those, or another, takes
  /// make_unique's suffix. `first` numbers the queries
  /// from first + 1 in the long layout, and `header` = false leaves out the CSV/TSV header: for
  /// the second and later shards. `kinds` say how the queries' x are written (as in
  /// PredictionWriter; empty = numbers); the keys' follow the training data.
  WeightsWriter(std::ostream& out, Format format, WeightsLayout layout, const Dataset& train,
                const double* queries, std::size_t m, std::size_t first = 0, bool header = true,
                std::vector<ColumnKind> kinds = {});
  /// Row i of the matrix (n weights); rows must come in order 0..m-1.
  void row(std::size_t i, const double* a);
  void finish();

 private:
  std::ostream& out_;
  Format format_;
  FormatDef::Layout format_layout() const { return format_def(format_).layout; }
  WeightsLayout layout_;
  const Dataset& train_;
  const double* queries_;
  std::size_t m_;
  std::size_t first_;
  std::string buf_;
  std::vector<std::string> x_keys_;  // jsonl: "<x column>": per column
  std::vector<ColumnKind> kinds_;    // the queries' x
  // The long layout: each key's x as its fields ("key_<name>" ones in JSON), written once.
  std::vector<std::string> key_text_;
  // The long layout: query j's x as its fields.
  std::string query_text(std::size_t j) const;
};

}  // namespace nwreg
