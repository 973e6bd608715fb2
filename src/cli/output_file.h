#pragma once
/// An output that never leaves a partial file: a regular file (or a path that does not exist
/// yet) is written to a temporary file in the same directory and renamed into place by commit().
/// Everything else is written in place, never resolved and renamed over: "-" is standard
/// output; /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N write to that open
/// descriptor (so `-o /dev/stdout >> log` appends to log); a device or FIFO (/dev/null,
/// >(gzip > f)) is opened and written directly.

#include <cstring>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "nwreg/base/errors.h"
#include "nwreg/io/writers.h"

namespace nwreg::cli {

/// A buffered stream buffer over a file descriptor that keeps the errno of a failed write.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd);
  ~FdBuf() override;
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool flush_buffer();
  int fd_;
  int error_ = 0;
  char buf_[1 << 16];
};

/// Installs SIGINT/SIGTERM/SIGHUP handlers that remove every temporary output file and exit
/// with 128 + the signal number (130 for Ctrl-C, 143 for kill).
void install_signal_cleanup();

class OutputFile {
 public:
  /// Opens `path` ("-" = stdout). `option` names the option in messages (e.g. "-o").
  /// Throws OutputError if the directory is not writable or the path is a directory.
  OutputFile(const std::string& path, const std::string& option);
  /// Removes the temporary file unless committed.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return stream_; }
  /// Whether this output is written in place (standard output, a descriptor, a device): what
  /// is written there cannot be taken back.
  bool in_place() const { return temp_.empty(); }
  /// Runs `write` on the stream and flushes it; a failed write (OutputError) is reworded to
  /// name the option and the path, keeping its errno (so a closed pipe is still seen as one).
  template <class F>
  void write(F&& write_fn) {
    try {
      write_fn(stream_);
      stream_.flush();
      check_stream(stream_);
    } catch (const OutputError& e) {
      throw OutputError(option_ + ": cannot write " + (path_ == "-" ? std::string("standard output") : path_) +
                            ": " + std::strerror(e.errno_value()),
                        e.errno_value());
    }
  }
  /// Flushes, closes and renames the temporary file onto the target path.
  void commit() { commit_all({this}); }
  /// Commits several outputs together: each is flushed and closed first (any failure throws
  /// and commits none), then every rename happens with SIGINT, SIGTERM and SIGHUP blocked, so
  /// the files change together or not at all.
  static void commit_all(std::initializer_list<OutputFile*> outputs);

 private:
  void finish();   // flush and close; throws OutputError
  void publish();  // rename the temporary file into place
  std::string path_, option_, temp_;
  int fd_ = -1;  // owned descriptor, if any (not standard output)
  std::unique_ptr<FdBuf> buf_;
  std::ostream stream_{nullptr};
};

/// A file a command reads or writes, named by its option: "-" is standard input (an input) or
/// standard output (an output).
struct FileUse {
  std::string path;
  std::string option;  //!< an output's option ("-o", "--weights"); an input's role ("the training data")
  bool output = false;
};

/// Throws UsageError when an output is the same file as another output or as an input,
/// compared by device and inode (a path that does not exist yet by its absolute name). Two
/// outputs may share a character device (/dev/null, a terminal); an input and an output clash
/// only when they are the same regular file.
void check_distinct(const std::vector<FileUse>& uses);

}  // namespace nwreg::cli
