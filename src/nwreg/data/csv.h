#pragma once
/// Delimited-text input: a header row detected or declared, columns picked by name or 1-based
/// index, numbers parsed strictly. Line I/O (files, streams, UTF-8 BOM) is fast-cpp-csv-parser's
/// io::LineReader, fed by a byte source that inflates gzip input and turns CR and CRLF line ends
/// into LF; fields are split here because the column count is only known at run time and quoted
/// fields must be honoured.

#include <cstddef>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include "nwreg/base/choice.h"
#include "nwreg/base/timestamp.h"

namespace io {
class LineReader;
}

namespace nwreg {

class LabelMap;

enum class HeaderMode {
  detect,   //!< the first row is a header unless every field parses as a number
  present,  //!< the first row is a header
  absent,   //!< there is no header (--no-header)
};

/// What a missing value in a chosen column does (--na).
enum class NaPolicy {
  fail,  //!< InputError naming file, line and column
  skip,  //!< the row is dropped and counted (CsvReader::skipped)
  keep   //!< the value reads as NaN and the row stays (query rows keep their place: --na skip)
};

/// Whether a field marks a missing value: empty, NA, N/A, NaN, nan, null, NULL or NaT (blanks
/// around it ignored).
bool is_missing(std::string_view field);
/// A space or a tab: what pads a field.
inline bool is_blank(char c) { return c == ' ' || c == '\t'; }
/// How a message names a delimiter: "tab", or the character quoted.
std::string delimiter_name(char c);

/// --na: "fail" or "skip". Throws UsageError naming --na otherwise.
inline constexpr Choice<NaPolicy> na_choices[] = {{"fail", NaPolicy::fail}, {"skip", NaPolicy::skip}};
NaPolicy parse_na(const std::string& text);

struct CsvOptions {
  /// Field separator; 0 = detect it from the first line (detect_delimiter).
  char delimiter = 0;
  /// Decimal mark of numbers: '.' or ',' (--decimal). With ',' a point in a number is an error
  /// (it would be a thousands separator), and a comma is not taken for a delimiter.
  char decimal = '.';
  HeaderMode header = HeaderMode::detect;  //!< how the first row is read
  NaPolicy na = NaPolicy::fail;           //!< missing values in the columns read
  /// Dates and times written otherwise than ISO 8601 (--date-format, parse_with_format); an x
  /// column whose first value fits it is read as time, as an ISO one is. Empty: ISO only.
  std::string date_format;
};

/// Parses a delimiter given on the command line: one character, or `tab` / `\t`; "" (not given)
/// is 0, detect. Throws UsageError naming `--delimiter`.
char parse_delimiter(const std::string& text);

/// --decimal: "." or ",". Throws UsageError naming --decimal otherwise.
char parse_decimal(const std::string& text);

/// The delimiter of a line: the most frequent of , ; tab | outside double quotes; ',' when
/// none occurs (ties: in that order). With decimal commas (`decimal` ','), the most frequent of
/// ; tab |, and ';' when none occurs.
char detect_delimiter(std::string_view line, char decimal = '.');

/// Splits one line into fields in place (quotes removed, "" unescaped, surrounding blanks
/// trimmed). Throws InputError for an unterminated quote or text after a closing quote.
void split_fields(char* line, char delimiter, std::vector<std::string_view>& fields,
                  const std::string& source, std::size_t line_number);

/// Longest line any reader accepts (fast-cpp-csv-parser's block size).
inline constexpr std::size_t max_line_bytes = std::size_t{1} << 24;

/// One CSV input, read row by row. Opening reads up to the first data row, so the header and
/// the column count are known before the columns are chosen.
class CsvReader {
 public:
  /// Reads from a stream (stdin); `source` names it in messages, e.g. `<stdin>`. With
  /// `line_by_line`, each line is read as soon as it arrives instead of in 16 MiB blocks, gzip
  /// too (inflated from what has arrived): for streams answered one query at a time.
  CsvReader(std::istream& in, std::string source, CsvOptions options, bool line_by_line = false);
  /// Opens a file. Throws InputError if it cannot be opened or is a directory. A read error or
  /// a NUL byte in a line is an InputError naming the source (and line) too.
  CsvReader(const std::string& path, CsvOptions options);
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  const std::string& source() const { return source_; }
  bool has_header() const { return !names_.empty(); }
  /// The first column holds row names: its header name is empty and there are more columns (R's
  /// write.csv). Such a column is left out of the default column choice.
  bool row_names() const { return row_names_; }
  /// The field separator in use (given, or detected from the first line).
  char delimiter() const { return options_.delimiter; }
  /// Header names (empty without a header).
  const std::vector<std::string>& names() const { return names_; }
  /// Fields per row, fixed by the first row.
  std::size_t column_count() const { return column_count_; }
  /// `"name"` with a header, else the 1-based column number: how messages name a column.
  std::string column_label(std::size_t index) const;

  /// Finds a column by header name, else by 1-based index. Throws UsageError that starts with
  /// `option` when there is no such column.
  std::size_t resolve(const std::string& spec, const std::string& option) const;

  /// How each chosen column is read, when not all are numbers: ColumnKind::number takes numbers
  /// only; date or time takes ISO 8601 stamps only, as seconds since the epoch (a date-time in
  /// a date column makes it time); nullopt is decided by the column's first value that is not
  /// missing, and then fixed. A number column is refused a stamp and a stamp column a number.
  /// ColumnKind::unordered or ordered reads labels: each field's value is its code in the
  /// column's LabelMap (labels, one per chosen column; levels.h), and a label the map does not
  /// know is an InputError naming it.
  using Kinds = std::vector<std::optional<ColumnKind>>;
  using Labels = std::vector<LabelMap>;

  /// Columns kept as text, row by row, alongside those read as numbers (--keep): values[c][i]
  /// is column columns[c] of the i-th row read (rows dropped for missing values left out).
  struct TextColumns {
    std::vector<std::size_t> columns;
    std::vector<std::vector<std::string>> values;
  };

  /// Reads every data row and returns the chosen columns as numbers, one vector per column.
  /// Blank lines are skipped. Throws InputError naming file, line and column for a field that
  /// is not a finite number (or a time stamp, as `kinds` allow) or a row with the wrong number
  /// of fields, and for a file with no data rows.
  std::vector<std::vector<double>> read_numeric(const std::vector<std::size_t>& columns, Kinds* kinds = nullptr,
                                                TextColumns* text = nullptr, Labels* labels = nullptr);

  /// Reads the next data row's chosen columns into out[0..columns.size()); false at the end.
  /// Same checks as read_numeric, except that no rows at all is not an error.
  bool next_numeric(const std::vector<std::size_t>& columns, double* out, Kinds* kinds = nullptr,
                    Labels* labels = nullptr);

  /// The fields of the row last read by next_numeric or read_numeric's rows (quotes removed),
  /// valid until the next read: for columns copied to the output as text.
  const std::vector<std::string_view>& fields() const { return fields_; }
  /// The physical line (1-based) of the row last read.
  std::size_t line() const { return line_; }

  /// Rows dropped for a missing value (NaPolicy::skip), and the line of the first.
  std::size_t skipped() const { return skipped_; }
  std::size_t first_skipped_line() const { return first_skipped_; }

  /// A time column's zones over the rows read: the one offset every stamp gave (each a
  /// date-time with +hh:mm; none with 'Z', a date or no zone), and whether some date-time had
  /// no zone at all (a local clock, read as UTC).
  UtcOffset common_offset(std::size_t column) const;
  bool local_times(std::size_t column) const;

 private:
  void start();
  bool next_row();  // fills fields_ and line_; false at end of input
  char* next_line();  // the next physical line, without its line end; nullptr at the end
  bool parse_row(const std::vector<std::size_t>& columns, double* out, Kinds* kinds, Labels* labels);  // false: skipped
  bool missing(std::size_t column, std::string_view field);  // skips the row (false), keeps it (true) or throws
  double parse_instant_field(std::size_t column, std::string_view field, std::optional<ColumnKind>& kind);
  std::string hint(std::string_view field) const;  // what a field that is not a number may mean
  std::string separator_hint(std::string_view field) const;  // another delimiter in a field

  class Source;
  class LineSource;
  std::string source_;
  CsvOptions options_;
  std::unique_ptr<io::LineReader> reader_;
  std::unique_ptr<LineSource> lines_;  // line-by-line mode
  bool nul_seen_ = false;           // a NUL byte was read (and marked)
  bool skip_lf_ = false;            // line-by-line: the last line ended with CR; skip an LF next
  std::string line_buf_;
  std::vector<std::string> names_;
  std::vector<std::string_view> fields_;
  std::size_t column_count_ = 0;
  std::size_t line_ = 0;
  bool pending_ = false;  // fields_ holds a data row already read (no header, or the one after it)
  bool row_names_ = false;
  std::string number_buf_;  // a field with its decimal comma made a point
  std::size_t skipped_ = 0, first_skipped_ = 0;
  struct Zones {
    UtcOffset common;      // the offset of every stamp so far
    bool mixed = false;    // stamps without that offset seen
    bool local = false;    // a date-time without a zone seen
  };
  std::map<std::size_t, Zones> zones_;  // per time column read
};

}  // namespace nwreg
