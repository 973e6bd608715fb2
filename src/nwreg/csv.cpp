#include "nwreg/csv.h"

// No reader thread: a process that cannot start one (a low pids limit) must still read its input.
#define CSV_IO_NO_THREAD
#include <libfccp/csv.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ios>
#include <system_error>

#include "nwreg/errors.h"
#include "nwreg/numbers.h"

namespace nwreg {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool blank_line(const char* line) {
  for (; *line; ++line)
    if (!is_blank(*line)) return false;
  return true;
}

// A data row: every field a number or a missing-value marker, and at least one a number.
bool all_numbers(const std::vector<std::string_view>& fields) {
  bool any = false;
  for (std::string_view f : fields) {
    if (parse_double(f)) any = true;
    else if (!is_missing(f)) return false;
  }
  return any;
}

// fast-cpp-csv-parser reads C strings, so a NUL byte would silently end its line. The bytes
// are handed over with each NUL turned into this mark (and the fact remembered): a line that
// holds it is refused.
constexpr char nul_mark = '\x01';

// Mark the NUL bytes in buf[0..n); returns whether there were any.
bool mark_nuls(char* buf, std::size_t n) {
  bool any = false;
  for (char* p = buf; (p = static_cast<char*>(std::memchr(p, '\0', static_cast<std::size_t>(buf + n - p))));) {
    *p++ = nul_mark;
    any = true;
  }
  return any;
}

}  // namespace

/// The bytes of a file (a descriptor) or a stream, NUL bytes marked (and `nul_seen` set), read
/// errors thrown as InputError naming the source. The line reader owns it and may drop it once
/// the input is read (a small file: at once), so what it saw lives in the CsvReader.
class CsvReader::Source : public io::ByteSourceBase {
 public:
  Source(int fd, std::string name, bool& nul_seen) : nul_seen_(nul_seen), fd_(fd), name_(std::move(name)) {}
  Source(std::istream& in, std::string name, bool& nul_seen)
      : nul_seen_(nul_seen), in_(&in), name_(std::move(name)) {}
  ~Source() override {
    if (fd_ >= 0) ::close(fd_);
  }
  int read(char* buf, int size) override {
    std::size_t got = 0;
    if (in_) {
      in_->read(buf, size);  // a read error sets badbit (errno tells which)
      if (in_->bad()) fail(errno);
      got = static_cast<std::size_t>(in_->gcount());
    } else {
      ssize_t r;
      do r = ::read(fd_, buf, static_cast<std::size_t>(size));
      while (r < 0 && errno == EINTR);
      if (r < 0) fail(errno);
      got = static_cast<std::size_t>(r);
    }
    if (mark_nuls(buf, got)) nul_seen_ = true;
    return static_cast<int>(got);
  }

 private:
  [[noreturn]] void fail(int e) const {
    throw InputError(name_, 0, "", std::string("cannot read: ") + std::strerror(e ? e : EIO));
  }
  bool& nul_seen_;
  std::istream* in_ = nullptr;
  int fd_ = -1;
  std::string name_;
};

namespace {

// fast-cpp-csv-parser errors carry their own text; ours are reworded to name our source.
[[noreturn]] void rethrow_io(const io::error::base& e, const std::string& source,
                             std::size_t line) {
  if (dynamic_cast<const io::error::line_length_limit_exceeded*>(&e))
    throw InputError(source, line, "", "line longer than 16 MiB");
  throw InputError(source, line, "", e.what());
}

}  // namespace

bool is_missing(std::string_view field) {
  const std::string_view f = trim(field);
  for (std::string_view m : {"", "NA", "N/A", "NaN", "nan", "null", "NULL"})
    if (f == m) return true;
  return false;
}

NaPolicy parse_na(const std::string& text) {
  if (text == "fail") return NaPolicy::fail;
  if (text == "skip") return NaPolicy::skip;
  throw UsageError("--na: unknown policy " + quote(text) + " (known: fail, skip)");
}

char parse_delimiter(const std::string& text) {
  if (text == "tab" || text == "\\t" || text == "\t") return '\t';
  if (text.size() != 1)
    throw UsageError("--delimiter: must be one character or \"tab\", got " + quote(text));
  const char c = text[0];
  if (c == '"' || c == '\n' || c == '\r' || c == ' ')
    throw UsageError(std::string("--delimiter: cannot be ") +
                     (c == '"' ? "a quote" : "a space or a line break"));
  return c;
}

void split_fields(char* line, char delimiter, std::vector<std::string_view>& fields,
                  const std::string& source, std::size_t line_number) {
  fields.clear();
  char* p = line;
  for (;;) {
    while (is_blank(*p) && *p != delimiter) ++p;
    if (*p == '"') {
      // Quoted field: "" stands for one quote; the text is unescaped in place.
      char* out = ++p;
      char* begin = out;
      for (;;) {
        if (*p == '\0')
          throw InputError(source, line_number, "",
                           "unterminated quoted field (a field cannot span lines)");
        if (*p == '"') {
          if (p[1] == '"') {
            *out++ = '"';
            p += 2;
            continue;
          }
          ++p;
          break;
        }
        *out++ = *p++;
      }
      fields.emplace_back(begin, static_cast<std::size_t>(out - begin));
      while (is_blank(*p) && *p != delimiter) ++p;
      if (*p != delimiter && *p != '\0')
        throw InputError(source, line_number, "", "unexpected text after a closing quote");
    } else {
      char* begin = p;
      while (*p != delimiter && *p != '\0') ++p;
      char* end = p;
      while (end > begin && is_blank(end[-1])) --end;
      fields.emplace_back(begin, static_cast<std::size_t>(end - begin));
    }
    if (*p == '\0') return;
    ++p;  // past the delimiter; a delimiter at the end of the line leaves one empty field
  }
}

CsvReader::CsvReader(std::istream& in, std::string source, CsvOptions options, bool line_by_line)
    : source_(std::move(source)), options_(options) {
  if (line_by_line) {
    stream_ = &in;
  } else {
    reader_ = std::make_unique<io::LineReader>(source_, std::make_unique<Source>(in, source_, nul_seen_));
  }
  start();
}

CsvReader::CsvReader(const std::string& path, CsvOptions options)
    : source_(path), options_(options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(source_, 0, "", std::string("cannot open: ") + std::strerror(errno));
  auto bytes = std::make_unique<Source>(fd, source_, nul_seen_);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(source_, 0, "", "is a directory, not a file");
  reader_ = std::make_unique<io::LineReader>(source_, std::move(bytes));
  start();
}

CsvReader::~CsvReader() = default;

char* CsvReader::next_line() {
  if (!stream_) {
    char* line = reader_->next_line();
    if (line) line_ = reader_->get_file_line();
    return line;
  }
  // One line from a stream, as soon as it is complete, at most max_line_bytes long.
  line_buf_.clear();
  std::streambuf* in = stream_->rdbuf();
  bool any = false;
  try {
    for (int c; (c = in->sbumpc()) != std::char_traits<char>::eof();) {
      any = true;
      if (c == '\n') break;
      if (line_buf_.size() >= max_line_bytes)
        throw InputError(source_, line_ + 1, "", "line longer than 16 MiB");  // max_line_bytes
      line_buf_.push_back(static_cast<char>(c));
    }
  } catch (const std::ios_base::failure& e) {
    throw InputError(source_, 0, "", std::string("cannot read: ") + std::strerror(e.code().value() ? e.code().value() : EIO));
  }
  if (!any) return nullptr;
  ++line_;
  if (!line_buf_.empty() && line_buf_.back() == '\r') line_buf_.pop_back();
  if (line_ == 1 && line_buf_.rfind("\xEF\xBB\xBF", 0) == 0) line_buf_.erase(0, 3);
  if (mark_nuls(line_buf_.data(), line_buf_.size())) nul_seen_ = true;
  return line_buf_.data();
}

bool CsvReader::next_row() {
  try {
    for (;;) {
      char* line = next_line();
      if (!line) return false;
      if (nul_seen_ && std::strchr(line, nul_mark))
        throw InputError(source_, line_, "", "holds a NUL byte: not a text file");
      if (blank_line(line)) continue;
      split_fields(line, options_.delimiter, fields_, source_, line_);
      return true;
    }
  } catch (const io::error::base& e) {
    rethrow_io(e, source_, line_ + 1);
  }
}

void CsvReader::start() {
  if (!next_row()) throw InputError(source_, 0, "", "the file is empty");
  column_count_ = fields_.size();
  const bool header = options_.header == HeaderMode::present ||
                      (options_.header == HeaderMode::detect && !all_numbers(fields_));
  if (header) {
    names_.assign(fields_.begin(), fields_.end());
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i].empty()) names_[i] = std::to_string(i + 1);  // unnamed column: its number
  } else {
    pending_ = true;
  }
}

std::string CsvReader::column_label(std::size_t index) const {
  if (has_header()) return quote(names_[index]);
  return std::to_string(index + 1);
}

std::size_t CsvReader::resolve(const std::string& spec, const std::string& option) const {
  auto it = std::find(names_.begin(), names_.end(), spec);
  if (it != names_.end()) return static_cast<std::size_t>(it - names_.begin());
  if (!spec.empty() && std::all_of(spec.begin(), spec.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const std::size_t index = spec.size() > 9 ? 0 : std::stoul(spec);
    if (index >= 1 && index <= column_count_) return index - 1;
    throw UsageError(option + ": column " + spec + " does not exist: " + escape_excerpt(source_, 200) + " has " +
                     std::to_string(column_count_) + " column" + (column_count_ == 1 ? "" : "s"));
  }
  std::string known;
  for (std::size_t i = 0; i < names_.size() && i < 12; ++i) known += (i ? ", " : "") + escape_excerpt(names_[i], 30);
  if (names_.size() > 12) known += ", ... (" + std::to_string(names_.size()) + " in all)";
  throw UsageError(option + ": no column named " + quote(spec) + " in " + escape_excerpt(source_, 200) +
                   (has_header() ? " (columns: " + known + ")" : " (it has no header row)"));
}

bool CsvReader::parse_row(const std::vector<std::size_t>& columns, double* out) {
  if (fields_.size() != column_count_)
    throw InputError(source_, line_, "",
                     "expected " + std::to_string(column_count_) + " fields, found " + std::to_string(fields_.size()));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const std::string_view field = fields_[columns[c]];
    ParseFailure why{};
    const auto v = parse_double(field, &why);
    if (v) {
      out[c] = *v;
      continue;
    }
    if (is_missing(field)) {
      if (options_.na == NaPolicy::skip) {
        if (skipped_++ == 0) first_skipped_ = line_;
        return false;
      }
      throw InputError(source_, line_, column_label(columns[c]),
                       (field.empty() ? std::string("missing value (empty field)")
                                      : "missing value " + quote(field)) +
                           "; give --na skip to drop rows with missing values");
    }
    throw InputError(source_, line_, column_label(columns[c]), describe(why, field));
  }
  return true;
}

bool CsvReader::next_numeric(const std::vector<std::size_t>& columns, double* out) {
  for (;;) {
    if (!pending_ && !next_row()) return false;
    pending_ = false;
    if (parse_row(columns, out)) return true;
  }
}

std::vector<std::vector<double>> CsvReader::read_numeric(const std::vector<std::size_t>& columns) {
  std::vector<std::vector<double>> out(columns.size());
  std::vector<double> row(columns.size());
  while (next_numeric(columns, row.data()))
    for (std::size_t c = 0; c < columns.size(); ++c) out[c].push_back(row[c]);
  if (out.empty() || out[0].empty())
    throw InputError(source_, 0, "",
                     std::string(has_header() ? "no data rows after the header" : "no data rows") +
                         (skipped_ ? " (" + std::to_string(skipped_) + " dropped for missing values)" : ""));
  return out;
}

}  // namespace nwreg
