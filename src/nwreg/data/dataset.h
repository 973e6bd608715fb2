#pragma once
/// Training data: an n x d table of inputs (keys) and n targets (values).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nwreg/data/csv.h"
#include "nwreg/data/levels.h"

namespace nwreg {

struct Dataset {
  std::size_t n = 0;                   //!< rows
  std::size_t d = 0;                   //!< input columns (1 in the common case)
  std::vector<double> x;               //!< n x d, row-major
  std::vector<double> y;               //!< n targets
  std::vector<std::string> x_names;    //!< d column names ("x" when the file has no header)
  std::vector<ColumnKind> x_kind;      //!< d kinds: numbers, ISO dates/times read as seconds, or categorical
  std::vector<UtcOffset> x_offset;     //!< d entries (or none): a time column's one offset, written back
  std::vector<bool> x_local_time;      //!< d entries (or none): a time column had date-times without a zone
  std::vector<Levels> levels;          //!< d entries (empty for continuous columns), or none at all
  std::string y_name;                  //!< target column name ("y" when the file has no header)
  std::string source;                  //!< file name as given, or "<stdin>"
  std::vector<double> weight;          //!< n sample weights >= 0 (--sample-weight); empty = all 1
  std::string weight_name;             //!< the sample-weight column's name, when there is one
  std::vector<std::string> kept_names;             //!< columns kept as text (--keep)
  std::vector<std::vector<std::string>> kept;      //!< kept[c][i]: column c of row i, as read

  const double* row(std::size_t i) const { return x.data() + i * d; }
  /// Column k's kind (numbers when x_kind was left empty, as data built in code leave it).
  ColumnKind kind(std::size_t k) const { return k < x_kind.size() ? x_kind[k] : ColumnKind::number; }
};

/// Which columns hold x and y: header names or 1-based indices.
struct ColumnChoice {
  std::vector<std::string> x;       //!< input columns; empty = the column at x_position
  std::string y;                    //!< target column; empty = the column at y_position
  std::size_t x_position = 0;       //!< the default x: by position, whatever the header names
  std::size_t y_position = 1;       //!< the default y (0-based; R's row names shift both by one)
  std::string weight;               //!< sample-weight column (--sample-weight); empty = none
  std::vector<std::string> keep;    //!< columns kept as text for the output (--keep)
  std::vector<std::string> unordered;  //!< x columns of unordered labels (--categorical)
  std::vector<std::string> ordered;    //!< x columns of ordered labels (--ordered)
  /// A categorical column's levels in order (--levels COL=a,b,c): column, labels.
  std::vector<std::pair<std::string, std::vector<std::string>>> levels;
};

/// Parses one --levels value, `COLUMN=label,label,...` (blanks around each trimmed). Throws
/// UsageError naming --levels.
std::pair<std::string, std::vector<std::string>> parse_levels(const std::string& text);

/// Splits a column list given to -x: names or 1-based indices separated by commas, blanks
/// around each trimmed ("lstat, rm" or "1,2"). Throws UsageError naming `option` for an empty
/// name.
std::vector<std::string> parse_column_list(const std::string& text, const std::string& option);

/// Reads a training set. An x column named categorical (ColumnChoice::unordered, ordered) is
/// read as labels (levels.h); else one whose first value is an ISO 8601 date or date-time is
/// read as time (seconds since the epoch; see timestamp.h), else as numbers; y and sample
/// weights are numbers. A categorical or --levels column that is not an x column is a
/// UsageError. Throws UsageError for a column that does not exist (naming -x, -y or
/// --sample-weight) and InputError for bad content (a negative sample weight included).
Dataset read_dataset(CsvReader& reader, const ColumnChoice& columns);

/// Reads query points for a model over `train`'s columns: each x column is found by name when
/// the query file has a header that names it, else the query file's first columns are used.
/// A column that is time in `train` takes time stamps only. Returns m x d values, row-major,
/// and in `kinds` (when given) each column's kind as read.
std::vector<double> read_queries(CsvReader& reader, const Dataset& train, std::vector<ColumnKind>* kinds = nullptr,
                                 CsvReader::TextColumns* text = nullptr);

/// Query points with the columns --keep copies from each query row.
struct QueryRows {
  std::vector<double> x;                       //!< m x d, row-major
  std::vector<ColumnKind> kinds;               //!< per column, as read
  std::vector<std::string> kept_names;         //!< the kept columns' names
  std::vector<std::vector<std::string>> kept;  //!< kept[c][i], as read
};
QueryRows read_query_rows(CsvReader& reader, const Dataset& train, const std::vector<std::string>& keep);

/// The columns `keep` names (names or 1-based indices) and their names in the output. Throws
/// UsageError naming --keep for a column that does not exist.
CsvReader::TextColumns kept_columns(const CsvReader& reader, const std::vector<std::string>& keep,
                                    std::vector<std::string>& names);

/// How the query reader is to read `train`'s x columns: numbers as numbers, dates and times as
/// time stamps only (a date column's queries may be date-times; a number is refused).
CsvReader::Kinds query_kinds(const Dataset& train);
/// The label maps the query reader reads `train`'s categorical columns with: their levels only.
CsvReader::Labels query_labels(const Dataset& train);

/// The columns read_queries reads: with a header, each x column by its name (exactly), an
/// InputError naming a missing one; without, the first columns in order (after a row-names
/// column), an InputError when there are too few.
std::vector<std::size_t> query_columns(const CsvReader& reader, const Dataset& train);

/// The data with row i's sample weight multiplied by factor[i] (n entries; without sample
/// weights the factors become them). The name of the weight column stays.
Dataset reweighted(const Dataset& data, const std::vector<double>& factor);

/// The training rows as robustness weights weigh them (each row's sample weight times its
/// robustness weight), made once where a fit, its error or its criteria need them; the rows
/// themselves, not copied, where there are no robustness weights. `data` must outlive it.
class WeighedRows {
 public:
  WeighedRows(const Dataset& data, const std::vector<double>& robustness)
      : own_(robustness.empty() ? std::nullopt : std::optional<Dataset>(reweighted(data, robustness))),
        rows_(own_ ? &*own_ : &data) {}
  WeighedRows(const WeighedRows&) = delete;  // rows_ may point into own_
  WeighedRows& operator=(const WeighedRows&) = delete;
  const Dataset& operator*() const { return *rows_; }
  const Dataset* operator->() const { return rows_; }
  /// Whether robustness weights weigh the rows.
  bool reweighed() const { return own_.has_value(); }

 private:
  std::optional<Dataset> own_;
  const Dataset* rows_;
};

/// One x column: the rows put in x order, in place, equal x keeping their order (x, y, and the
/// sample weights and kept columns where there are some). Besides the data it holds 12 bytes a
/// row at most while it sorts (each x with its row, then one column's copy). Data of more
/// columns, or of 2^32 rows or more, stay as they are.
void put_in_x_order(Dataset& data);

/// A 64-bit FNV-1a digest of n, d and the bits of every x and y, as `fnv1a64:<16 hex digits>`.
/// Row order counts: a model fitted on the same rows in the same order matches.
std::string checksum(const Dataset& data);

/// Per-column summaries used by rules of thumb and the bandwidth scan.
struct ColumnStats {
  double sd = 0;        //!< sample standard deviation (n - 1)
  double iqr = 0;       //!< interquartile range, linear interpolation (R type 7, numpy default)
  double range = 0;     //!< max - min
  double min_gap = 0;   //!< smallest positive distance between two values (0 if all equal)
};
ColumnStats column_stats(const Dataset& data, std::size_t column);

/// The typical spacing of a column: the median positive distance between neighbouring distinct
/// values (0 if all are equal).
double typical_spacing(const Dataset& data, std::size_t column);

}  // namespace nwreg
