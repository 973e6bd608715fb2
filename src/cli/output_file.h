#pragma once
/// An output that never leaves a partial file: a named file is written to a temporary file in
/// the same directory and renamed into place by commit(). "-" writes to standard output; a
/// path that names a device or FIFO (/dev/null, >(gzip > f)) is written directly.

#include <cstring>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include "nwreg/errors.h"
#include "nwreg/writers.h"

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
  void commit();

 private:
  std::string path_, option_, temp_;
  int fd_ = -1;
  std::unique_ptr<FdBuf> buf_;
  std::ostream stream_{nullptr};
};

}  // namespace nwreg::cli
