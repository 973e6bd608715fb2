#include "cli/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "nwreg/base/errors.h"
#include "nwreg/base/numbers.h"
#include "nwreg/base/signals.h"
#include "nwreg/io/writers.h"

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
  throw OutputError(option + ": cannot write " + escape_excerpt(path, 200) + ": " + std::strerror(e), e);
}

// The descriptor a path names directly: /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N or
// /proc/self/fd/N; -1 for any other path.
int standard_descriptor(const std::string& path) {
  if (path == "/dev/stdin") return 0;
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::size_t len = std::strlen(prefix);
    if (path.compare(0, len, prefix) != 0 || path.size() == len) continue;
    int fd = -1;
    const auto [end, ec] = std::from_chars(path.data() + len, path.data() + path.size(), fd);
    if (ec == std::errc() && end == path.data() + path.size() && fd >= 0) return fd;
  }
  return -1;
}

}  // namespace

void install_signal_cleanup() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal inherited as ignored (nohup, a shell's background job) stays ignored.
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

OutputFile::OutputFile(const std::string& path, const std::string& option)
    : path_(path), option_(option) {
  if (path.empty()) throw UsageError(option + ": empty file name");
  // A name that promises what nwreg does not write (compressed, or a binary format) is refused,
  // not answered with plain text under that name.
  for (const char* ext : {".gz", ".bz2", ".xz", ".zst", ".zip", ".xlsx", ".xls", ".parquet", ".feather"})
    if (has_extension(path, ext))
      throw UsageError(option + ": nwreg writes plain text; " + quote(path) + " asks for " + (ext + 1) +
                       " (write the plain file and compress or convert it, e.g. -o - | gzip > FILE)");
  if (path == "-") {
    buf_ = std::make_unique<FdBuf>(STDOUT_FILENO);
    stream_.rdbuf(buf_.get());
    return;
  }
  if (const int fd = standard_descriptor(path); fd >= 0) {
    // The open descriptor itself (its offset and O_APPEND): reopening /proc/self/fd/1 would
    // start a new description at offset 0, and resolving it would rename over the file.
    fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0) cannot_write(option, path, errno);
    buf_ = std::make_unique<FdBuf>(fd_);
    stream_.rdbuf(buf_.get());
    return;
  }
  // A link is followed, so that the file it names is replaced, not the link; a dangling one too
  // (the file it names is made), hop by hop, each relative target read from its link's folder.
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    path_ = real;
    std::free(real);
  } else {
    for (int hops = 0;; ++hops) {
      struct stat ls;
      if (::lstat(path_.c_str(), &ls) != 0 || !S_ISLNK(ls.st_mode)) break;
      if (hops == 40) throw OutputError(option + ": " + path + ": a loop of symbolic links", ELOOP);
      std::string target(4096, '\0');
      const ssize_t len = ::readlink(path_.c_str(), target.data(), target.size());
      if (len < 0) cannot_write(option, path, errno);
      target.resize(static_cast<std::size_t>(len));
      const auto cut = path_.rfind('/');
      path_ = target.empty() || target[0] == '/' || cut == std::string::npos ? target : path_.substr(0, cut + 1) + target;
    }
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
  {
    // A signal between creating the file and registering it would leave the file behind.
    const SignalsBlocked quiet{SIGINT, SIGTERM, SIGHUP};  // (this thread: the pool's workers block them)
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) cannot_write(option, path, errno);
    temp_ = name.data();
    register_temp(temp_.c_str());
  }
  // mkstemp creates 0600: keep the mode of the file replaced, else what a plain create gives.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, exists ? (st.st_mode & 07777) : (0666 & ~mask));
  buf_ = std::make_unique<FdBuf>(fd_);
  stream_.rdbuf(buf_.get());
}

OutputFile::~OutputFile() {
  if (buf_) {
    if (temp_.empty()) buf_->pubsync();  // in place: what was written stays written
    stream_.rdbuf(nullptr);
    buf_.reset();
  }
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) {  // not published: the target keeps what it held
    ::unlink(temp_.c_str());
    unregister_temp(temp_.c_str());
  }
}

void OutputFile::commit_all(std::initializer_list<OutputFile*> outputs) {
  for (OutputFile* o : outputs)
    if (o) o->finish();
  const SignalsBlocked block{SIGINT, SIGTERM, SIGHUP};
  for (OutputFile* o : outputs)
    if (o) o->publish();
}

void OutputFile::finish() {
  if (!buf_) return;  // already committed
  stream_.flush();
  if (!stream_ || buf_->error()) {
    const int e = buf_->error() ? buf_->error() : EIO;
    cannot_write(option_, path_ == "-" ? "standard output" : path_, e);
  }
  stream_.rdbuf(nullptr);
  buf_.reset();
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) cannot_write(option_, path_, errno);  // the destructor removes the temporary file
}

void OutputFile::publish() {
  if (temp_.empty()) return;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) cannot_write(option_, path_, errno);
  unregister_temp(temp_.c_str());
  temp_.clear();
}

}  // namespace nwreg::cli

namespace nwreg::cli {
namespace {

// What a FileUse names: an open object (device and inode) or, not existing yet, an absolute path.
struct Identity {
  int fd = -1;  // a standard descriptor it writes or reads
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t mode = 0;
  std::string name;
};

Identity identify(const FileUse& u) {
  Identity id;
  struct stat st;
  int fd = u.path == "-" ? (u.output ? STDOUT_FILENO : STDIN_FILENO) : standard_descriptor(u.path);
  id.fd = fd;
  const bool found = fd >= 0 ? ::fstat(fd, &st) == 0 : ::stat(u.path.c_str(), &st) == 0;
  if (found) {
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.mode = st.st_mode;
    return id;
  }
  std::error_code ec;
  id.name = std::filesystem::weakly_canonical(std::filesystem::absolute(u.path, ec), ec).string();
  if (ec) id.name = u.path;
  return id;
}

std::string describe(const FileUse& u) {
  if (u.path == "-") return u.output ? "standard output" : "standard input";
  return escape_excerpt(u.path, 200);
}

// How a message names what a use already is: "the -o file", "the training data".
std::string role(const FileUse& u) {
  if (!u.output) return u.option;
  return u.path == "-" ? "standard output" : "the " + u.option + " file";
}

}  // namespace

void check_distinct(const std::vector<FileUse>& uses) {
  std::vector<Identity> ids;
  for (const auto& u : uses) ids.push_back(identify(u));
  for (std::size_t b = 0; b < uses.size(); ++b) {
    if (!uses[b].output) continue;
    for (std::size_t a = 0; a < uses.size(); ++a) {
      if (a == b || (uses[a].output && a > b)) continue;  // each pair of outputs once
      const Identity &x = ids[a], &y = ids[b];
      bool same;
      if (uses[a].output && x.fd >= 0 && x.fd == y.fd) {
        same = true;  // two outputs on one descriptor interleave, whatever it is
      } else if (x.exists && y.exists) {
        same = x.dev == y.dev && x.ino == y.ino &&
               (uses[a].output ? !S_ISCHR(y.mode) : S_ISREG(y.mode));
      } else {
        same = !x.exists && !y.exists && x.name == y.name;
      }
      if (!same) continue;
      if (uses[a].output && uses[a].path == "-" && uses[b].path == "-")
        throw UsageError(uses[b].option + " -: standard output already carries the " + uses[a].option +
                         " output; give " + uses[b].option + " FILE");
      throw UsageError(uses[b].option + ": " + describe(uses[b]) + " is also " + role(uses[a]) + "; give another file");
    }
  }
}

}  // namespace nwreg::cli
