#include "cli/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
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

namespace {

// Temporary files a signal must remove. A handler may only read this: fixed slots of atomic
// pointers to the OutputFile's own path text, set after it exists and cleared before it goes.
constexpr int max_temps = 8;
std::atomic<const char*> temp_paths[max_temps];

void register_temp(const char* path) {
  for (auto& slot : temp_paths) {
    const char* expected = nullptr;
    if (slot.compare_exchange_strong(expected, path)) return;
  }
}

void unregister_temp(const char* path) {
  for (auto& slot : temp_paths) {
    const char* expected = path;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

extern "C" void on_signal(int sig) {
  for (auto& slot : temp_paths)
    if (const char* p = slot.load()) ::unlink(p);  // async-signal-safe
  ::_exit(128 + sig);
}

[[noreturn]] void cannot_write(const std::string& option, const std::string& path, int e) {
  throw OutputError(option + ": cannot write " + path + ": " + std::strerror(e), e);
}

}  // namespace

void install_signal_cleanup() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

OutputFile::OutputFile(const std::string& path, const std::string& option)
    : path_(path), option_(option) {
  if (path == "-") {
    buf_ = std::make_unique<FdBuf>(STDOUT_FILENO);
    stream_.rdbuf(buf_.get());
    return;
  }
  // A link is followed, so that the file it names is replaced, not the link.
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    path_ = real;
    std::free(real);
  }
  struct stat st;
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw OutputError(option + ": " + path + " is a directory", EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or >(process substitution): no file to replace, so write straight to it.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) cannot_write(option, path, errno);
    buf_ = std::make_unique<FdBuf>(fd_);
    stream_.rdbuf(buf_.get());
    return;
  }
  const auto slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  std::string tmpl = dir + "." + base + ".nwreg-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) cannot_write(option, path, errno);
  temp_ = name.data();
  register_temp(temp_.c_str());
  // mkstemp creates 0600: keep the mode of the file replaced, else what a plain create gives.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, exists ? (st.st_mode & 07777) : (0666 & ~mask));
  buf_ = std::make_unique<FdBuf>(fd_);
  stream_.rdbuf(buf_.get());
}

OutputFile::~OutputFile() {
  if (!buf_) return;  // committed
  if (temp_.empty()) {
    buf_->pubsync();
    buf_.reset();
    if (fd_ >= 0) ::close(fd_);
    return;
  }
  buf_.reset();
  ::close(fd_);
  ::unlink(temp_.c_str());
  unregister_temp(temp_.c_str());
}

void OutputFile::commit() {
  stream_.flush();
  if (!stream_ || buf_->error()) {
    const int e = buf_->error() ? buf_->error() : EIO;
    cannot_write(option_, path_ == "-" ? "standard output" : path_, e);
  }
  stream_.rdbuf(nullptr);
  buf_.reset();
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) {
    const int e = errno;
    if (!temp_.empty()) {
      ::unlink(temp_.c_str());
      unregister_temp(temp_.c_str());
      temp_.clear();
    }
    cannot_write(option_, path_, e);
  }
  if (!temp_.empty() && ::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp_.c_str());
    unregister_temp(temp_.c_str());
    temp_.clear();
    cannot_write(option_, path_, e);
  }
  if (!temp_.empty()) unregister_temp(temp_.c_str());
  temp_.clear();
}

}  // namespace nwreg::cli
