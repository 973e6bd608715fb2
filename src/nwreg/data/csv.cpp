#include "nwreg/data/csv.h"
#include "nwreg/data/levels.h"

// No reader thread: a process that cannot start one (a low pids limit) must still read its input.
#define CSV_IO_NO_THREAD
#include <libfccp/csv.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ios>
#include <limits>
#include <system_error>
#include <vector>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/timestamp.h"

namespace nwreg {
namespace {

bool blank_line(const char* line) {
  for (; *line; ++line)
    if (!is_blank(*line)) return false;
  return true;
}

// A data row: every field a number, an ISO time stamp or a missing-value marker, and at least
// one a number or stamp.
bool all_numbers(const std::vector<std::string_view>& fields) {
  bool any = false;
  for (std::string_view f : fields) {
    if (parse_double(f) || parse_instant(f)) any = true;
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

/// The text of a file (a descriptor) or a stream, as the line reader wants it: inflated when it
/// starts with gzip's magic bytes (zlib; concatenated members too), line ends LF (a bare CR, as
/// old Mac files and some exports end lines, becomes LF; CRLF becomes LF), NUL bytes marked
/// (and `nul_seen` set). Read and inflate errors are thrown as InputError naming the source. The
/// line reader owns it and may drop it once the input is read (a small file: at once), so what
/// it saw lives in the CsvReader. A stream read line by line takes its text through `some`
/// (`partial`): whatever the input holds now, inflated, without waiting for a block to fill.
class CsvReader::Source : public io::ByteSourceBase {
 public:
  Source(int fd, std::string name, bool& nul_seen) : nul_seen_(nul_seen), fd_(fd), name_(std::move(name)) {}
  Source(std::istream& in, std::string name, bool& nul_seen, bool partial = false)
      : nul_seen_(nul_seen), in_(&in), name_(std::move(name)), partial_(partial) {}
  ~Source() override {
    if (fd_ >= 0) ::close(fd_);
    if (gzip_) inflateEnd(&z_);
  }
  // Exactly `size` bytes unless the input ends first: the line reader takes a short block for
  // the end of the input (a pipe's partial reads must not look like one).
  int read(char* buf, int size) override {
    const auto want = static_cast<std::size_t>(size);
    while (text_.size() - text_pos_ < want && !ended_) produce();
    const std::size_t n = take(buf, want);
    if (mark_nuls(buf, n)) nul_seen_ = true;
    return static_cast<int>(n);
  }
  // At least one byte of text unless the input has ended (0), at most `size`: what the input
  // holds now, waiting only while it holds nothing (a partial source: a stream read line by line).
  std::size_t some(char* buf, std::size_t size) {
    while (text_pos_ == text_.size() && !ended_) produce();
    return take(buf, size);
  }

 private:
  // Up to `size` bytes of the text produced so far into buf.
  std::size_t take(char* buf, std::size_t size) {
    const std::size_t n = std::min(size, text_.size() - text_pos_);
    if (n > 0) std::memcpy(buf, text_.data() + text_pos_, n);  // text_ may be empty (no data())
    text_pos_ += n;
    if (text_pos_ == text_.size()) text_.clear(), text_pos_ = 0;
    return n;
  }
  // Appends the next chunk of text to text_, CR and CRLF line ends as LF; sets ended_ at the end.
  void produce() {
    if (text_pos_ > 0) {  // drop what was handed out
      text_.erase(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(text_pos_));
      text_pos_ = 0;
    }
    chunk_.resize(1 << 16);
    const std::size_t got = bytes(chunk_.data(), chunk_.size());
    if (got == 0) {
      ended_ = true;
      if (cr_pending_) text_.push_back('\n');
      return;
    }
    const char* in = chunk_.data();
    const char* end = in + got;
    if (cr_pending_) {  // the CR that ended the last chunk: CRLF or a bare CR, one LF either way
      cr_pending_ = false;
      text_.push_back('\n');
      if (*in == '\n') ++in;
    }
    while (in < end) {
      const char* cr = static_cast<const char*>(std::memchr(in, '\r', static_cast<std::size_t>(end - in)));
      text_.insert(text_.end(), in, cr ? cr : end);
      if (!cr) break;
      in = cr + 1;
      if (in == end) {
        cr_pending_ = true;  // decided by the next chunk
      } else {
        text_.push_back('\n');
        if (*in == '\n') ++in;
      }
    }
  }

  // Up to `size` bytes: inflated after gzip's magic bytes, else as read. 0 at the end.
  std::size_t bytes(char* buf, std::size_t size) {
    if (!started_) {
      started_ = true;
      raw_.resize(1 << 16);
      raw_len_ = fill(raw_.data(), raw_.size());
      if (raw_len_ == 1) raw_len_ += fill(raw_.data() + 1, raw_.size() - 1);  // gzip's magic is two bytes
      gzip_ = raw_len_ >= 2 && static_cast<unsigned char>(raw_[0]) == 0x1f && static_cast<unsigned char>(raw_[1]) == 0x8b;
      if (gzip_ && inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) gzip_fail("cannot start zlib");
      z_.next_in = reinterpret_cast<Bytef*>(raw_.data());
      z_.avail_in = static_cast<uInt>(raw_len_);
      raw_pos_ = 0;
    }
    if (!gzip_) {  // what the first fill read, then straight from the source
      if (raw_pos_ < raw_len_) {
        const std::size_t n = std::min(size, raw_len_ - raw_pos_);
        std::memcpy(buf, raw_.data() + raw_pos_, n);
        raw_pos_ += n;
        return n;
      }
      return fill(buf, size);
    }
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(size);
    while (z_.avail_out == size) {
      if (z_.avail_in == 0) {
        raw_len_ = fill(raw_.data(), raw_.size());
        if (raw_len_ == 0) {
          if (member_ended_) break;  // a whole number of members (and padding): the end
          gzip_fail("the compressed data end early (a truncated file)");
        }
        z_.next_in = reinterpret_cast<Bytef*>(raw_.data());
        z_.avail_in = static_cast<uInt>(raw_len_);
        if (member_ended_) {
          after_member();
          if (z_.avail_in == 0) continue;  // padding so far: read on
        }
      }
      member_ended_ = false;
      const int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        member_ended_ = true;  // another member may follow (cat a.gz b.gz)
        if (inflateReset(&z_) != Z_OK) gzip_fail("cannot restart zlib");
        after_member();  // on what is read already: a stream is answered before more arrives
      } else if (r != Z_OK && r != Z_BUF_ERROR) {
        gzip_fail(std::string("the compressed data are corrupt (") + (z_.msg ? z_.msg : "zlib error") + ")");
      }
    }
    return size - z_.avail_out;
  }
  // After a member, on the input read so far: zero bytes to the end are padding (tape, some
  // archivers), as zcat reads them; anything else must be the next member's magic bytes.
  void after_member() {
    while (z_.avail_in > 0 && *z_.next_in == 0) ++z_.next_in, --z_.avail_in, zeros_ = true;
    if (z_.avail_in > 0 && (zeros_ || *z_.next_in != 0x1f))
      gzip_fail("bytes after the compressed data that are neither zero padding nor another gzip member");
  }
  std::size_t fill(char* buf, std::size_t size) {
    if (in_) {
      // Partial: what the stream's buffer and the pipe under it hold (at least one byte, the
      // only wait), so that a compressed stream's lines are answered as they arrive.
      if (partial_)
        size = static_cast<std::size_t>(
            std::clamp<std::streamsize>(in_->rdbuf()->in_avail(), 1, static_cast<std::streamsize>(size)));
      in_->read(buf, static_cast<std::streamsize>(size));  // a read error sets badbit (errno tells which)
      if (in_->bad()) fail(errno);
      return static_cast<std::size_t>(in_->gcount());
    }
    ssize_t r;
    do r = ::read(fd_, buf, size);
    while (r < 0 && errno == EINTR);
    if (r < 0) fail(errno);
    return static_cast<std::size_t>(r);
  }
  [[noreturn]] void fail(int e) const {
    throw InputError(name_, 0, "", std::string("cannot read: ") + std::strerror(e ? e : EIO));
  }
  [[noreturn]] void gzip_fail(const std::string& why) const { throw InputError(name_, 0, "", "gzip input: " + why); }
  bool& nul_seen_;
  std::istream* in_ = nullptr;
  int fd_ = -1;
  std::string name_;
  bool partial_ = false;
  bool started_ = false, gzip_ = false, member_ended_ = false, zeros_ = false, cr_pending_ = false, ended_ = false;
  z_stream z_{};
  std::vector<char> raw_, chunk_, text_;
  std::size_t raw_len_ = 0, raw_pos_ = 0, text_pos_ = 0;
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

// A partial Source as a stream buffer: the line-by-line reader takes its characters one by one,
// each line as soon as its text (inflated, if the stream is compressed) has arrived.
class CsvReader::LineSource : public std::streambuf {
 public:
  LineSource(std::istream& in, const std::string& name, bool& nul_seen) : source_(in, name, nul_seen, true) {}

 private:
  int_type underflow() override {
    const std::size_t n = source_.some(buf_, sizeof buf_);
    if (n == 0) return traits_type::eof();
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }
  Source source_;
  char buf_[1 << 16];
};

CsvReader::CsvReader(std::istream& in, std::string source, CsvOptions options, bool line_by_line)
    : source_(std::move(source)), options_(options) {
  if (line_by_line) {
    lines_ = std::make_unique<LineSource>(in, source_, nul_seen_);
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
  if (!lines_) {
    char* line = reader_->next_line();
    if (line) line_ = reader_->get_file_line();
    return line;
  }
  // One line from a stream, as soon as it is complete, at most max_line_bytes long.
  line_buf_.clear();
  std::streambuf* in = lines_.get();
  bool any = false;
  try {
    for (int c; (c = in->sbumpc()) != std::char_traits<char>::eof();) {
      if (c == '\n' && skip_lf_) {  // the LF of a CRLF whose CR ended the last line
        skip_lf_ = false;
        continue;
      }
      skip_lf_ = false;
      any = true;
      if (c == '\n') break;
      if (c == '\r') {  // CR or CRLF: the line ends here, without waiting for the next byte
        skip_lf_ = true;
        break;
      }
      if (line_buf_.size() >= max_line_bytes)
        throw InputError(source_, line_ + 1, "", "line longer than 16 MiB");  // max_line_bytes
      line_buf_.push_back(static_cast<char>(c));
    }
  } catch (const std::ios_base::failure& e) {
    throw InputError(source_, 0, "", std::string("cannot read: ") + std::strerror(e.code().value() ? e.code().value() : EIO));
  }
  if (!any) return nullptr;
  ++line_;
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
      if (options_.delimiter == 0) options_.delimiter = detect_delimiter(line, options_.decimal);
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
    row_names_ = fields_.size() > 1 && fields_[0].empty();
    names_.assign(fields_.begin(), fields_.end());
    // R's write.table: the row names under a header one field short. The first row tells (it
    // stays pending, as a data row); a row whose extra field is an empty last one (a trailing
    // delimiter) is no such row. Not in a stream read line by line, which answers the header
    // before any row arrives.
    if (!row_names_ && !lines_ && next_row()) {
      pending_ = true;
      if (fields_.size() == column_count_ + 1 && !fields_.back().empty()) {
        names_.insert(names_.begin(), std::string());
        ++column_count_;
        row_names_ = true;
      }
    }
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
  if (it != names_.end()) {
    const auto again = std::find(it + 1, names_.end(), spec);
    if (again != names_.end())
      throw UsageError(option + ": " + escape_excerpt(source_, 200) + " has two columns named " + quote(spec) + " (" +
                       std::to_string(it - names_.begin() + 1) + " and " + std::to_string(again - names_.begin() + 1) +
                       "); give the one meant by its number");
    return static_cast<std::size_t>(it - names_.begin());
  }
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

double CsvReader::parse_instant_field(std::size_t column, std::string_view field,
                                      std::optional<ColumnKind>& kind) {
  bool date_only = false;
  StampZone zone;
  auto t = parse_instant(field, &date_only, &zone);
  if (!t && !options_.date_format.empty()) {  // in the format given: UTC, its time of day if any
    bool has_time = false;
    t = parse_with_format(field, options_.date_format, &has_time);
    date_only = !has_time;
    zone.kind = StampZone::utc;
  }
  if (!t)
    throw InputError(source_, line_, column_label(column),
                     "cannot parse " + quote(field) + " as a date or time (" +
                         (options_.date_format.empty() ? std::string()
                                                       : "`date_format` " + escape_excerpt(options_.date_format, 40) + ", or ") +
                         "ISO 8601: 2024-03-01, 2024-03-01T06:30:00Z, 2024-03-01 06:30+01:00)");
  if (!kind || *kind == ColumnKind::date) kind = date_only && kind != ColumnKind::time ? ColumnKind::date : ColumnKind::time;
  const bool first = !zones_.count(column);
  Zones& z = zones_[column];
  if (zone.kind == StampZone::offset && (first || (z.common && *z.common == zone.minutes))) {
    z.common = zone.minutes;
  } else {
    z.mixed = true;
    z.common.reset();
  }
  if (z.mixed) z.common.reset();
  z.local = z.local || (zone.kind == StampZone::none && !date_only);
  return *t;
}

UtcOffset CsvReader::common_offset(std::size_t column) const {
  const auto z = zones_.find(column);
  return z == zones_.end() || z->second.mixed ? std::nullopt : z->second.common;
}

bool CsvReader::local_times(std::size_t column) const {
  const auto z = zones_.find(column);
  return z != zones_.end() && z->second.local;
}

bool CsvReader::missing(std::size_t column, std::string_view field) {
  if (options_.na == NaPolicy::keep) return true;
  if (options_.na == NaPolicy::skip) {
    if (skipped_++ == 0) first_skipped_ = line_;
    return false;
  }
  throw InputError(source_, line_, column_label(column),
                   (field.empty() ? std::string("missing value (empty field)") : "missing value " + quote(field)) +
                       "; give `na` skip to drop rows with missing values");
}

bool CsvReader::parse_row(const std::vector<std::size_t>& columns, double* out, Kinds* kinds, Labels* labels) {
  if (fields_.size() != column_count_) {
    std::string why;
    for (std::string_view f : fields_)
      if ((why = separator_hint(f)).size()) break;
    throw InputError(source_, line_, "",
                     "expected " + std::to_string(column_count_) + " fields, found " + std::to_string(fields_.size()) + why);
  }
  for (std::size_t c = 0; c < columns.size(); ++c) {
    std::string_view field = fields_[columns[c]];
    if (kinds && (*kinds)[c] && is_categorical(*(*kinds)[c])) {
      if (is_missing(field)) {
        if (!missing(columns[c], field)) return false;
        out[c] = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      LabelMap& map = labels->at(c);
      const auto v = map.code(field);
      if (!v)
        throw InputError(source_, line_, column_label(columns[c]),
                         "level " + quote(field) + " was not seen in training (its levels: " + map.known()->list() + ")");
      out[c] = *v;
      continue;
    }
    if (kinds && (*kinds)[c] != ColumnKind::number && !is_missing(field)) {
      std::optional<ColumnKind>& kind = (*kinds)[c];
      const bool formatted = !options_.date_format.empty() && parse_with_format(field, options_.date_format);
      if (kind || looks_like_instant(field) || formatted) {
        if (kind && !looks_like_instant(field) && !formatted && parse_double(field))
          throw InputError(source_, line_, column_label(columns[c]),
                           "the column holds dates and times, found the number " + quote(field));
        out[c] = parse_instant_field(columns[c], field, kind);
        continue;
      }
      kind = ColumnKind::number;
    }
    if (options_.decimal == ',' && field.find('.') != std::string_view::npos)
      throw InputError(source_, line_, column_label(columns[c]),
                       "cannot parse " + quote(field) + " as a number: with `decimal` , a point is not a decimal mark");
    if (options_.decimal == ',' && field.find(',') != std::string_view::npos) {
      number_buf_.assign(field);
      std::replace(number_buf_.begin(), number_buf_.end(), ',', '.');
      field = number_buf_;
    }
    ParseFailure why{};
    const auto v = parse_double(field, &why);
    if (v) {
      out[c] = *v;
      continue;
    }
    if (is_missing(field)) {
      if (!missing(columns[c], field)) return false;
      out[c] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    throw InputError(source_, line_, column_label(columns[c]), describe(why, fields_[columns[c]]) + hint(fields_[columns[c]]));
  }
  return true;
}

std::string CsvReader::hint(std::string_view field) const {
  if (looks_like_instant(field))
    return " (a date or time: only an x column whose values are all dates or times holds them, from its first)";
  // 05/01/1973, 1.5.1973, 1973/05/01: a date in a local form.
  std::size_t groups = 0, digits_in = 0, widest = 0;
  char sep = 0;
  bool date_like = !field.empty();
  for (char c : field) {
    if (c >= '0' && c <= '9') {
      widest = std::max(widest, ++digits_in);
    } else if ((c == '/' || c == '.' || c == '-') && digits_in > 0 && (!sep || c == sep)) {
      sep = c, ++groups, digits_in = 0;
    } else {
      date_like = false;
    }
  }
  if (date_like && groups == 2 && digits_in > 0 && widest <= 4 && options_.date_format.empty())
    return " (a date? give `date_format`, e.g. %m" + std::string(1, sep) + "%d" + std::string(1, sep) +
           "%Y, or write dates in ISO 8601, 1973-05-01)";
  // "2,4": a number with a decimal comma (R's write.csv2, spreadsheets in many locales).
  const auto comma = field.find(',');
  if (options_.decimal == '.' && comma != std::string_view::npos && field.find(',', comma + 1) == std::string_view::npos) {
    std::string point(field);
    point[comma] = '.';
    if (parse_double(point)) return " (a decimal comma? give `decimal` ,)";
  }
  return separator_hint(field);
}

std::string CsvReader::separator_hint(std::string_view field) const {
  for (char c : {',', ';', '\t', '|'})
    if (c != options_.delimiter && !(c == ',' && options_.decimal == ',') && field.find(c) != std::string_view::npos)
      return " (the fields look separated by " + delimiter_name(c) + ": give `delimiter` " + delimiter_name(c) + ")";
  return "";
}

bool CsvReader::next_numeric(const std::vector<std::size_t>& columns, double* out, Kinds* kinds, Labels* labels) {
  for (;;) {
    if (!pending_ && !next_row()) return false;
    pending_ = false;
    if (parse_row(columns, out, kinds, labels)) return true;
  }
}

std::vector<std::vector<double>> CsvReader::read_numeric(const std::vector<std::size_t>& columns, Kinds* kinds,
                                                         TextColumns* text, Labels* labels) {
  // Each column is gathered in blocks of 2^22 values (32 MB), then copied into one vector of
  // its size a block at a time, each block freed once copied: the column and a block at most.
  // (A vector grown by doubling held the old and the new copy at each growth, and a third to
  // shrink to its size: up to 40 bytes a row for the 16 of two doubles.) The first block grows
  // as rows come (a few rows, or many columns, hold little); the others are sized at once, each
  // then its own mapping that the allocator returns when freed (blocks below its threshold for
  // that, up to 32 MB, it would keep).
  constexpr std::size_t block = std::size_t{1} << 22;
  std::vector<std::vector<std::vector<double>>> blocks(columns.size());
  std::vector<double> row(columns.size());
  std::size_t rows = 0;
  if (text) text->values.assign(text->columns.size(), {});
  while (next_numeric(columns, row.data(), kinds, labels)) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (rows % block == 0) blocks[c].emplace_back().reserve(rows == 0 ? 0 : block);
      blocks[c].back().push_back(row[c]);
    }
    ++rows;
    if (text)
      for (std::size_t c = 0; c < text->columns.size(); ++c) text->values[c].emplace_back(fields_[text->columns[c]]);
  }
  if (columns.empty() || rows == 0)
    throw InputError(source_, 0, "",
                     std::string(has_header() ? "no data rows after the header" : "no data rows") +
                         (skipped_ ? " (" + std::to_string(skipped_) + " dropped for missing values)" : ""));
  std::vector<std::vector<double>> out(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    out[c].reserve(rows);
    for (std::vector<double>& b : blocks[c]) {
      out[c].insert(out[c].end(), b.begin(), b.end());
      std::vector<double>().swap(b);
    }
  }
  return out;
}

}  // namespace nwreg
