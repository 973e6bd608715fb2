#include "cli/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "nwreg/errors.h"

namespace nwreg::cli {

FdBuf::FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }

FdBuf::~FdBuf() { flush_buffer(); }

bool FdBuf::flush_buffer() {
  const char* p = pbase();
  std::size_t left = static_cast<std::size_t>(pptr() - pbase());
  while (left > 0 && error_ == 0) {
    const ssize_t w = ::write(fd_, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      break;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  setp(buf_, buf_ + sizeof buf_);
  if (error_) errno = error_;
  return error_ == 0;
}

FdBuf::int_type FdBuf::overflow(int_type c) {
  if (!flush_buffer()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize FdBuf::xsputn(const char* s, std::streamsize n) {
  std::streamsize done = 0;
  while (done < n) {
    if (pptr() == epptr() && !flush_buffer()) return done;
    const std::streamsize room = epptr() - pptr();
    const std::streamsize take = std::min(room, n - done);
    std::memcpy(pptr(), s + done, static_cast<std::size_t>(take));
    pbump(static_cast<int>(take));
    done += take;
  }
  return done;
}

int FdBuf::sync() { return flush_buffer() ? 0 : -1; }

OutputFile::OutputFile(const std::string& path, const std::string& option)
    : path_(path), option_(option) {
  if (path == "-") {
    buf_ = std::make_unique<FdBuf>(STDOUT_FILENO);
  } else {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      throw OutputError(option + ": " + path + " is a directory", EISDIR);
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmpl = dir + "." + base + ".nwreg-XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) {
      const int e = errno;
      throw OutputError(option + ": cannot write " + path + ": " + std::strerror(e), e);
    }
    temp_ = name.data();
    // mkstemp creates 0600; give the file the mode a plain create would (0666 less umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
    buf_ = std::make_unique<FdBuf>(fd_);
  }
  stream_.rdbuf(buf_.get());
}

OutputFile::~OutputFile() {
  if (!temp_.empty()) {
    buf_.reset();
    if (fd_ >= 0) ::close(fd_);
    ::unlink(temp_.c_str());
  } else if (buf_) {
    buf_->pubsync();
  }
}

void OutputFile::commit() {
  stream_.flush();
  if (!stream_ || buf_->error()) {
    const int e = buf_->error() ? buf_->error() : EIO;
    throw OutputError(option_ + ": cannot write " + (temp_.empty() ? "standard output" : path_) +
                          ": " + std::strerror(e), e);
  }
  if (temp_.empty()) return;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int e = errno;
    throw OutputError(option_ + ": cannot write " + path_ + ": " + std::strerror(e), e);
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    throw OutputError(option_ + ": cannot write " + path_ + ": " + std::strerror(e), e);
  }
  temp_.clear();
  stream_.rdbuf(nullptr);
  buf_.reset();
}

}  // namespace nwreg::cli
