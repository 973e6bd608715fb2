// cli_fuzz: a deterministic fuzz harness for the nwreg command line.
//
// It runs the real nwreg binary many times with random option combinations over degenerate data
// sets (made in a fresh scratch directory) and fails on any broken promise of the README: a crash
// or hang, an exit code other than 0, 1 or 2, a sanitizer report, "terminate called", an error
// that is not exactly one sane line, a NaN or infinity written, a temporary file left behind, a
// failed run that touched a file, and output that depends on --threads (each successful run is
// run again with --threads 1 and --threads 2 and must write the same bytes). One run in ten is a
// property run (property_case): its output must keep a relation with another run's (rows
// reversed, y scaled by 2^200, the model saved and loaded, degree 0 against NW, slopes against
// central differences).
//
//   cli_fuzz --binary PATH --seed S --runs N [--limits] [--keep DIR] [--verbose]
//            [--jobs J] [--timeout SECONDS] [--max-seconds SECONDS]
//
// The same seed gives the same command lines: run i's command depends only on the seed and i (a
// longer run starts with the same commands, and --jobs changes nothing but the speed).
// --limits also makes about one run in 15 resource-limited (RLIMIT_AS 2 GiB and --threads 500 or
// 200): only for a binary without sanitizers (refused otherwise). --keep DIR writes each failing
// case to DIR/run-I[-threadsT]/repro.sh, which runs the exact command in a fresh copy of DIR/data
// and of the case's out/ (the output folder as it was before the run). --jobs J (default 4) runs
// J commands at a time, each in its own work folder; a hang holds its job for --timeout seconds
// (default 30) before it is killed. --max-seconds S starts no run after S seconds (those left
// are counted, not failed): a slow machine runs fewer, and the harness ends in about S plus one
// run's time, inside ctest's limit. --verbose prints every command and its exit status.
// Exit status: 0 when every run passed, 1 when one failed, 2 for bad arguments.
//
// Layout of the scratch directory ($TMPDIR/cli_fuzz-XXXXXX, removed at the end unless a run
// failed and --keep was given): pristine/data (the data, the queries and the model files, made
// once), w<J>/ (job J's work folder: the command's working directory, holding a copy of data/
// and a fresh out/ for each run), io<J>/ (its stdout and stderr).
//
// POSIX and the C++ standard library only: g++ -std=c++20 -O2 -o cli_fuzz cli_fuzz.cpp
// (std::thread needs no library with glibc >= 2.34; older ones want -pthread).

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

constexpr const char* kAsanOptions = "detect_leaks=1:abort_on_error=0:exitcode=99";
constexpr const char* kUbsanOptions = "print_stacktrace=1:halt_on_error=1:exitcode=99";
constexpr rlim_t kAddressLimit = rlim_t{2} << 30;  // 2 GiB, for --limits runs
constexpr rlim_t kFileLimit = rlim_t{1} << 30;     // no output file may grow past 1 GiB
constexpr const char* kExisting = "existing file: a failed run must leave it as it is\n";

// ---------------------------------------------------------------------------------------------
// Small helpers

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream o(p, std::ios::binary | std::ios::trunc);
  o << text;
  o.close();
  if (!o) throw std::runtime_error("cannot write " + p.string());
}

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool safe_shell_char(unsigned char c) {
  return std::isalnum(c) || std::strchr("-_./:,=+@%^", c) != nullptr;
}

// Quotes one word for bash: bare when safe, '...' when printable, $'...' with \xHH otherwise.
std::string shq(const std::string& s) {
  if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return safe_shell_char(static_cast<unsigned char>(c)); }))
    return s;
  const bool ctrl = std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  std::string r;
  if (!ctrl) {
    r = "'";
    for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return r + "'";
  }
  r = "$'";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'') {
      r += "\\'";
    } else if (c == '\\') {
      r += "\\\\";
    } else if (u < 0x20 || u == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", u);
      r += b;
    } else {
      r += c;
    }
  }
  return r + "'";
}

// For messages: control characters as \xHH, cut at `max` bytes.
std::string printable(const std::string& s, std::size_t max = 240) {
  std::string r;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u < 0x20 || u == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", u);
      r += b;
    } else {
      r += s[i];
    }
  }
  if (s.size() > max) r += "... (" + std::to_string(s.size()) + " bytes)";
  return r;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> v;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    v.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return v;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGPIPE: return "SIGPIPE";
    case SIGXFSZ: return "SIGXFSZ (an output file over 1 GiB)";
    case SIGXCPU: return "SIGXCPU";
    case SIGTRAP: return "SIGTRAP";
    default: return "signal";
  }
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Random numbers from mt19937_64 with our own mappings, so the commands are the same with any
// standard library.
struct Rng {
  std::mt19937_64 e;
  explicit Rng(std::uint64_t s) : e(s) {}
  double u() { return static_cast<double>(e() >> 11) * 0x1.0p-53; }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(e() % n); }
  bool chance(double p) { return u() < p; }
};

struct WStr {
  std::string v;
  double w;
};

std::string pick(Rng& r, const std::vector<WStr>& v) {
  double total = 0;
  for (const auto& x : v) total += x.w;
  double t = r.u() * total;
  for (const auto& x : v) {
    if (t < x.w) return x.v;
    t -= x.w;
  }
  return v.back().v;
}

// ---------------------------------------------------------------------------------------------
// Snapshots of a directory tree: names, types, and contents (or stat signatures)

struct Entry {
  char type = '?';   // f file, d directory, l link, o other
  std::string data;  // file contents (when read) or link target
  long long size = 0, mtime_ns = 0;
  unsigned long long ino = 0;
  unsigned mode = 0;
  bool read = false;
};
using Tree = std::map<std::string, Entry>;

// Walks `root`/`rel`; reads file contents when `contents`; skips top-level names in `skip`.
void walk(const std::string& root, const std::string& rel, bool contents, Tree& t, const std::set<std::string>& skip) {
  const std::string dir = rel.empty() ? root : root + "/" + rel;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (rel.empty() && skip.count(name)) continue;
    names.push_back(name);
  }
  closedir(d);
  for (const auto& name : names) {
    const std::string r = rel.empty() ? name : rel + "/" + name;
    const std::string full = root + "/" + r;
    struct stat st {};
    if (lstat(full.c_str(), &st) != 0) continue;
    Entry en;
    en.size = static_cast<long long>(st.st_size);
    en.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
    en.ino = static_cast<unsigned long long>(st.st_ino);
    en.mode = static_cast<unsigned>(st.st_mode);
    if (S_ISDIR(st.st_mode)) {
      en.type = 'd';
      t[r] = en;
      walk(root, r, contents, t, skip);
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      en.type = 'l';
      char b[4096];
      const ssize_t n = readlink(full.c_str(), b, sizeof b);
      if (n > 0) en.data.assign(b, static_cast<std::size_t>(n));
      en.read = true;
    } else if (S_ISREG(st.st_mode)) {
      en.type = 'f';
      if (contents && st.st_size <= (64 << 20)) {
        en.data = read_file(full);
        en.read = true;
      }
    } else {
      en.type = 'o';
    }
    t[r] = en;
  }
}

bool same_content(const Entry& a, const Entry& b) {
  if (a.type != b.type) return false;
  if (a.type == 'd' || a.type == 'o') return true;
  if (a.read && b.read) return a.data == b.data;
  return a.size == b.size && a.mtime_ns == b.mtime_ns && a.ino == b.ino;
}

bool same_signature(const Entry& a, const Entry& b) {
  return a.type == b.type && a.size == b.size && a.mtime_ns == b.mtime_ns && a.ino == b.ino && a.mode == b.mode &&
         a.data == b.data;
}

// "created X", "removed X", "changed X" between two trees.
std::vector<std::string> differences(const Tree& before, const Tree& after, bool by_content, const std::string& prefix) {
  std::vector<std::string> v;
  for (const auto& [name, e] : after) {
    auto it = before.find(name);
    if (it == before.end())
      v.push_back("created " + prefix + name);
    else if (!(by_content ? same_content(it->second, e) : same_signature(it->second, e)))
      v.push_back("changed " + prefix + name);
  }
  for (const auto& [name, e] : before)
    if (!after.count(name)) v.push_back("removed " + prefix + name);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Running the binary

struct Outcome {
  bool timed_out = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal killed it
  std::string out, err;
  double seconds = 0;
  bool spawn_failed = false;
};

struct Cmd {
  bool fit = false;
  std::vector<std::vector<std::string>> groups;  // groups[0]: the subcommand; then TRAIN(s); then options
  std::size_t batch = 1;                         // number of TRAIN files
  std::string stdin_path = "/dev/null";          // relative to the work directory, or absolute
  bool limited = false;
  std::vector<std::pair<std::string, std::string>> copies;  // data/NAME -> out/NAME before the run
  std::vector<std::pair<std::string, std::string>> files;   // out/NAME and its contents, written before the run
  std::string property;  // a property run (see property_case): its name; empty for the others

  std::vector<std::string> args() const {
    std::vector<std::string> a;
    for (const auto& g : groups) a.insert(a.end(), g.begin(), g.end());
    return a;
  }
  bool has(const std::string& opt) const {
    return std::any_of(groups.begin() + 1, groups.end(), [&](const auto& g) { return !g.empty() && g[0] == opt; });
  }
  Cmd with_threads(const std::string& n) const {
    Cmd c = *this;
    c.groups.erase(std::remove_if(c.groups.begin() + 1, c.groups.end(),
                                  [](const auto& g) { return !g.empty() && g[0] == "--threads"; }),
                   c.groups.end());
    c.groups.push_back({"--threads", n});
    return c;
  }
};

std::string shell_command(const std::string& binary, const Cmd& c, std::size_t max_word = 0) {
  std::string s;
  if (c.limited) s += "ulimit -v " + std::to_string(kAddressLimit / 1024) + "; ";
  s += shq(binary);
  for (const auto& a : c.args()) {
    if (max_word != 0 && a.size() > max_word)
      s += " " + shq(a.substr(0, 16)) + "...[" + std::to_string(a.size()) + " bytes, exact in --keep]";
    else
      s += " " + shq(a);
  }
  if (c.stdin_path != "/dev/null") s += " < " + shq(c.stdin_path);
  return s;
}

// The children running now (each in its own process group), so that a signal that ends the
// harness (Ctrl-C, a CI timeout) ends them too: a hung child would otherwise stay for ever.
constexpr std::size_t kMaxChildren = 128;
std::atomic<pid_t> g_children[kMaxChildren];

std::size_t register_child(pid_t pid) {
  for (std::size_t i = 0; i < kMaxChildren; ++i) {
    pid_t none = 0;
    if (g_children[i].compare_exchange_strong(none, pid)) return i;
  }
  return kMaxChildren;
}

extern "C" void on_fatal_signal(int sig) {
  for (auto& c : g_children) {
    const pid_t pid = c.load();
    if (pid > 0) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// Runs the binary in `cwd` with stdout/stderr captured in `io`, killing it after `timeout` s.
Outcome execute(const std::string& binary, const Cmd& c, const std::string& cwd, const std::string& io, double timeout,
                const std::vector<std::string>& env) {
  Outcome o;
  std::vector<std::string> argv_s = {binary};
  for (const auto& a : c.args()) argv_s.push_back(a);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = env;
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string in_path = c.stdin_path[0] == '/' ? c.stdin_path : cwd + "/" + c.stdin_path;
  const std::string out_path = io + "/stdout", err_path = io + "/stderr";
  int in = open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const bool limited = c.limited;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = (in < 0 || out < 0 || err < 0) ? -1 : fork();
  if (pid == 0) {
    // Child: only async-signal-safe calls from here to exec.
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, nullptr);
    struct rlimit core {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    struct rlimit fsize {kFileLimit, kFileLimit};
    setrlimit(RLIMIT_FSIZE, &fsize);
    if (limited) {
      struct rlimit as {kAddressLimit, kAddressLimit};
      setrlimit(RLIMIT_AS, &as);
    }
    if (chdir(cwd.c_str()) != 0) _exit(126);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  if (err >= 0) close(err);
  if (pid < 0) {
    o.spawn_failed = true;
    return o;
  }
  setpgid(pid, pid);  // also here, so that the group exists before any kill
  const std::size_t slot = register_child(pid);
  int status = 0;
  long sleep_ns = 50000;
  const auto deadline = t0 + std::chrono::duration<double>(timeout);
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      o.timed_out = true;
      break;
    }
    struct timespec ts {0, sleep_ns};
    nanosleep(&ts, nullptr);
    sleep_ns = std::min(sleep_ns * 2, 1000000L);
  }
  if (slot < kMaxChildren) g_children[slot] = 0;
  o.seconds = seconds_since(t0);
  if (!o.timed_out) {
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  }
  o.out = read_file(out_path);
  o.err = read_file(err_path);
  return o;
}

// ---------------------------------------------------------------------------------------------
// The scratch data: degenerate training sets, queries and model files

// A gzip member holding `text` in stored (uncompressed) deflate blocks: what zlib reads, made
// without it (RFC 1951 section 3.2.4, RFC 1952).
std::string gzip_stored(const std::string& text) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char ch : text) {
    crc ^= ch;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xFFFFFFFFu;
  std::string g = {'\x1f', '\x8b', '\x08', '\0', '\0', '\0', '\0', '\0', '\0', '\x03'};
  std::size_t at = 0;
  do {
    const std::size_t len = std::min<std::size_t>(text.size() - at, 65535);
    const bool last = at + len == text.size();
    g += static_cast<char>(last ? 1 : 0);
    for (std::uint32_t v : {static_cast<std::uint32_t>(len), static_cast<std::uint32_t>(~len & 0xFFFF)})
      g += static_cast<char>(v & 0xFF), g += static_cast<char>((v >> 8) & 0xFF);
    g += text.substr(at, len);
    at += len;
  } while (at < text.size());
  for (std::uint32_t v : {crc, static_cast<std::uint32_t>(text.size())})
    for (int k = 0; k < 4; ++k) g += static_cast<char>((v >> (8 * k)) & 0xFF);
  return g;
}

// The smooth data set of the property runs (row order, save/load, degree 0, slopes, y scale):
// 60 rows, distinct x spread unevenly over [0, 6]; y printed exactly (%.17g) so that the copies
// with y times 2^200 and 2^-200 hold exactly scaled values.
struct SineRow {
  double x, y;
};
std::vector<SineRow> sine_rows() {
  std::vector<SineRow> v;
  for (int i = 0; i < 60; ++i) {
    const double x = 6.0 * std::pow((i + 0.5) / 60.0, 1.3) + 0.01 * ((i * 7) % 3);
    v.push_back({x, std::sin(1.5 * x) + 0.2 * x + 0.15 * (((i * 37) % 11) - 5) / 5.0});
  }
  return v;
}
std::string exact(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}
std::string sine_file(bool reversed, int exponent) {
  auto rows = sine_rows();
  if (reversed) std::reverse(rows.begin(), rows.end());
  std::string s = "x,y\n";
  for (const auto& r : rows) s += exact(r.x) + "," + exact(std::ldexp(r.y, exponent)) + "\n";
  return s;
}

std::map<std::string, std::string> make_data_files() {
  std::map<std::string, std::string> f;
  auto rows = [](int n, auto x, auto y) {
    std::string s;
    for (int i = 0; i < n; ++i) s += fmt(x(i)) + "," + fmt(y(i)) + "\n";
    return s;
  };
  auto gx = [](int i) { return 0.1 + 0.17 * i; };
  auto gy = [](int i) { return std::sin(2 * (0.1 + 0.17 * i)) + 0.1 * ((i * 37) % 11 - 5) / 5.0; };
  f["good.csv"] = "x,y\n" + rows(30, gx, gy);
  f["many.csv"] = "x,y\n" + rows(400, [](int i) { return 0.01 * i + 0.003 * ((i * 7) % 5); },
                                 [](int i) { return std::cos(0.05 * i) + 0.05 * ((i * 13) % 7); });
  f["one_row.csv"] = "x,y\n1.5,2\n";
  f["two_rows.csv"] = "x,y\n1,2\n3,5\n";
  f["x_equal.csv"] = "x,y\n" + rows(12, [](int) { return 2.5; }, [](int i) { return 0.5 * i - 1; });
  f["x_ties.csv"] = "x,y\n" + rows(40, [](int i) { return static_cast<double>(i % 3); },
                                   [](int i) { return ((i * 5) % 7) * 0.5; });
  f["big_scale.csv"] = "x,y\n" + rows(20, [](int i) { return 1e300 * (0.5 + 0.37 * i) * (i % 2 ? 1 : -1); }, gy);
  f["tiny_scale.csv"] = "x,y\n" + rows(20, [](int i) { return 1e-300 * (0.5 + 0.37 * i); }, gy);
  f["huge_y.csv"] = "x,y\n" + rows(15, gx, [](int i) { return (i % 3 - 1) * 1.7e308 + (i % 3 == 1 ? 1e300 * i : 0); });
  f["header_only.csv"] = "x,y\n";
  f["empty.csv"] = "";
  f["bad_abc.csv"] = "x,y\n1,2\n2,abc\n3,4\n4,5\n";
  f["bad_missing1.csv"] = "x,y\n1,2\n2,NaN\n3,4\n4,6\n5,5\n";
  f["bad_missing2.csv"] = "x,y\n1,2\n2,3\nNA,4\n4,6\n5,5\n";
  f["bad_missing3.csv"] = "x,y\n1,2\n2,\n3,4\n4,6\n5,5\n";
  {
    std::string s = "a,b,c\n";
    for (int i = 0; i < 30; ++i) {
      const double a = 0.3 * i, b = ((i * 7) % 11) * 0.5;
      s += fmt(a) + "," + fmt(b) + "," + fmt(std::sin(a) + 0.2 * b) + "\n";
    }
    f["three_cols.csv"] = s;
  }
  auto weighted = [&](auto w) {
    std::string s = "x,y,w\n";
    for (int i = 0; i < 20; ++i) s += fmt(gx(i)) + "," + fmt(gy(i)) + "," + fmt(w(i)) + "\n";
    return s;
  };
  f["weights0.csv"] = weighted([](int i) { return static_cast<double>(i % 3); });
  f["weights_neg.csv"] = weighted([](int i) { return i == 7 ? -1.0 : 1.0 + i % 2; });
  f["weights_zero.csv"] = weighted([](int) { return 0.0; });
  {
    std::string s = "x,y\r\n";
    for (int i = 0; i < 15; ++i) s += fmt(gx(i)) + "," + fmt(gy(i)) + "\r\n";
    f["crlf.csv"] = s;
  }
  {
    std::string s = "\"x\",\"y\"\n";
    for (int i = 0; i < 15; ++i) s += "\"" + fmt(gx(i)) + "\"," + fmt(gy(i)) + "\n";
    f["quoted_header.csv"] = s;
  }
  f["ragged.csv"] = "x,y\n1,2\n2,3,4\n3,5\n4,4\n";
  {
    std::string semi = "x;y\n", tabs = "x\ty\n", bare, blank = "\nx,y\n\n", bom = "\xEF\xBB\xBFx,y\n";
    for (int i = 0; i < 15; ++i) {
      semi += fmt(gx(i)) + ";" + fmt(gy(i)) + "\n";
      tabs += fmt(gx(i)) + "\t" + fmt(gy(i)) + "\n";
      bare += fmt(gx(i)) + "," + fmt(gy(i)) + "\n";
      blank += fmt(gx(i)) + "," + fmt(gy(i)) + "\n\n";
      bom += " " + fmt(gx(i)) + " ,\t" + fmt(gy(i)) + "\n";
    }
    f["semicolon.csv"] = semi;
    f["tabs.tsv"] = tabs;
    f["no_header.csv"] = bare;
    f["blank_lines.csv"] = blank;
    f["bom.csv"] = bom;
  }
  f["long_field.csv"] = "x,y\n1,2\n2," + std::string(3000, 'z') + "\n3,4\n4,3\n";
  f["long_name.csv"] = "x," + std::string(2000, 'q') + "\n1,2\n2,3\n3,5\n4,4\n";
  f["ctrl_field.csv"] = "x,y\n1,2\n2,\x1b[31mred\x07\n3,4\n4,3\n";
  f["ctrl_name.csv"] = "x,\x1b[1my\x01\n1,2\n2,3\n3,5\n4,4\n";
  f["overflow.csv"] = "x,y\n1,2\n2,1e400\n3,4\n";
  // Time as x: a daily series, stamps with offsets and fractions (and a tie), a bad date, a
  // number in a column of dates.
  {
    std::string days = "date,y\n", stamps = "t,y\n";
    for (int i = 0; i < 20; ++i) {
      days += "2024-02-" + std::string(i < 9 ? "0" : "") + std::to_string(i + 1) + "," + fmt(gy(i)) + "\n";
      stamps += "2024-03-31T0" + std::to_string(i % 10) + ":" + std::to_string(10 + i) + ":00" +
                (i % 3 == 0 ? "+02:00" : i % 3 == 1 ? ".25Z" : "") + "," + fmt(gy(i)) + "\n";
    }
    f["dates.csv"] = days;
    f["stamps.csv"] = stamps;
    std::string cet = "t,y\n";  // one offset throughout: written back at it
    for (int i = 0; i < 20; ++i)
      cet += "2024-03-0" + std::to_string(1 + i / 8) + "T" + (i % 8 < 4 ? "0" : "") + std::to_string(i % 8 * 3) +
             ":00+01:00," + fmt(gy(i)) + "\n";
    f["cet.csv"] = cet;
  }
  f["bad_date.csv"] = "date,y\n2024-02-28,1\n2023-02-29,2\n2024-03-01,3\n";
  f["date_number.csv"] = "date,y\n2024-02-28,1\n17,2\n2024-03-01,3\n";
  f["q_dates.csv"] = "date\n2024-02-10\n2024-02-10T12:00:00-05:00\n1999-12-31\n";
  // Categorical and ordered columns; a correlated series (leave-block-out); gzip, padded and cut.
  {
    std::string s = "x,g,o,y\n";
    const char* labels[] = {"a", "b", "c"};
    for (int i = 0; i < 30; ++i)
      s += fmt(gx(i)) + "," + labels[i % 3] + "," + std::to_string((i * 5) % 4) + "," + fmt(gy(i) + (i % 3)) + "\n";
    f["cats.csv"] = s;
    std::string series = "t,y\n";
    double e = 0;
    for (int i = 0; i < 60; ++i) {
      e = 0.9 * e + 0.3 * (((i * 53) % 17) - 8) / 8.0;
      series += std::to_string(1900 + i) + "," + fmt(std::sin(0.1 * i) + e) + "\n";
    }
    f["series.csv"] = series;
    const std::string gz = gzip_stored(f["good.csv"]);
    f["good.csv.gz"] = gz;
    f["padded.csv.gz"] = gz + std::string(512, '\0');
    f["cut.csv.gz"] = gz.substr(0, gz.size() - 9);
    f["trailing.csv.gz"] = gz + "junk";
  }
  f["sine.csv"] = sine_file(false, 0);
  f["sine_rev.csv"] = sine_file(true, 0);
  f["sine_up.csv"] = sine_file(false, 200);
  f["sine_down.csv"] = sine_file(false, -200);
  // Query files.
  f["q_one.csv"] = "x\n0.5\n1.5\n2.5\n";
  f["q_two.csv"] = "a,b\n1,2\n3,0.5\n";
  f["q_bad.csv"] = "x\n1\nabc\n2\n";
  f["q_empty.csv"] = "";
  f["q_far.csv"] = "x\n1e200\n-1e200\n0\n";
  f["q_noheader.csv"] = "0.25\n1\n";
  f["q_missing.csv"] = "x\n1\nNA\n2\n";
  {
    std::string s = "x\n";
    for (int i = 0; i < 300; ++i) s += fmt(-0.5 + 0.02 * i) + "\n";
    f["q_many.csv"] = s;
  }
  return f;
}

// Replaces the value of a top-level field of the model file (one field a line, as fit writes).
std::string set_field(const std::string& model, const std::string& key, const std::string& value) {
  const std::string tag = "\n  \"" + key + "\": ";
  const std::size_t p = model.find(tag);
  if (p == std::string::npos) return model;
  std::size_t e = model.find('\n', p + 1);
  if (e == std::string::npos) e = model.size();
  const bool comma = model[e - 1] == ',';
  return model.substr(0, p) + tag + value + (comma ? "," : "") + model.substr(e);
}

std::string remove_field(const std::string& model, const std::string& key) {
  const std::string tag = "\n  \"" + key + "\": ";
  const std::size_t p = model.find(tag);
  if (p == std::string::npos) return model;
  const std::size_t e = model.find('\n', p + 1);
  return model.substr(0, p) + (e == std::string::npos ? "" : model.substr(e));
}

std::map<std::string, std::string> make_models(const std::string& m, const std::string& ab, const std::string& full) {
  std::map<std::string, std::string> f;
  f["model.json"] = m;
  f["model_ab.json"] = ab;
  f["model_full.json"] = full;
  f["deep_version.json"] =
      "{\"format\":\"nwreg-model\",\"version\":" + std::string(100000, '[') + std::string(100000, ']') + "}\n";
  f["deep_string.json"] =
      set_field(m, "stop_reason", std::string(50000, '[') + "\"tolerance\"" + std::string(50000, ']'));
  f["deep_kernel.json"] = set_field(m, "kernel", std::string(50000, '[') + "\"gaussian\"" + std::string(50000, ']'));
  {
    std::string deep;
    for (int i = 0; i < 50000; ++i) deep += "{\"a\":";
    deep += "1" + std::string(50000, '}');
    f["deep_object.json"] = set_field(m, "history", deep);
  }
  f["bw_zero.json"] = set_field(m, "bandwidth", "[0]");
  f["bw_neg.json"] = set_field(m, "bandwidth", "[-1]");
  f["bw_huge.json"] = set_field(m, "bandwidth", "[1e308]");
  f["bw_over.json"] = set_field(m, "bandwidth", "[1e400]");
  f["bw_denormal.json"] = set_field(m, "bandwidth", "[1e-320]");
  f["bw_string.json"] = set_field(m, "bandwidth", "[\"abc\"]");
  f["bw_scalar.json"] = set_field(m, "bandwidth", "0.3");
  f["bw_empty.json"] = set_field(m, "bandwidth", "[]");
  f["bw_two.json"] = set_field(m, "bandwidth", "[0.3,0.5]");
  f["n_huge.json"] = set_field(m, "n", "1e30");
  f["n_neg.json"] = set_field(m, "n", "-1");
  f["version2.json"] = set_field(m, "version", "2");
  f["version_big.json"] = set_field(m, "version", "1e400");
  f["kernel_bogus.json"] = set_field(m, "kernel", "\"bogus\"");
  f["method_number.json"] = set_field(m, "method", "7");
  f["xcols_unknown.json"] = set_field(m, "x_columns", "[\"zz\"]");
  f["xcols_empty.json"] = set_field(m, "x_columns", "[]");
  f["missing_bw.json"] = remove_field(m, "bandwidth");
  f["missing_format.json"] = remove_field(m, "format");
  f["missing_xcols.json"] = remove_field(m, "x_columns");
  f["metric_short.json"] = set_field(full, "metric", "[[1,0],[0]]");
  f["metric_rows.json"] = set_field(full, "metric", "[[1,0],[0,1],[1,1]]");
  f["metric_zero.json"] = set_field(full, "metric", "[[0,0],[0,0]]");
  f["metric_string.json"] = set_field(full, "metric", "\"abc\"");
  f["not_json.json"] = "this is not json\n";
  f["empty_model.json"] = "";
  f["truncated.json"] = m.substr(0, m.size() / 2);
  f["array_model.json"] = "[1,2,3]\n";
  return f;
}

// ---------------------------------------------------------------------------------------------
// The command generator

const std::vector<WStr> kTrainFiles = {
    {"good.csv", 10},        {"many.csv", 2},         {"one_row.csv", 2},       {"two_rows.csv", 2},
    {"x_equal.csv", 2},      {"x_ties.csv", 3},       {"big_scale.csv", 2},     {"tiny_scale.csv", 2},
    {"huge_y.csv", 2},       {"header_only.csv", 1},  {"empty.csv", 1},         {"bad_abc.csv", 1},
    {"bad_missing1.csv", 1}, {"bad_missing2.csv", 1}, {"bad_missing3.csv", 1},  {"three_cols.csv", 4},
    {"weights0.csv", 2},     {"weights_neg.csv", 1},  {"weights_zero.csv", 1},  {"crlf.csv", 2},
    {"quoted_header.csv", 2}, {"ragged.csv", 1},      {"semicolon.csv", 1},     {"tabs.tsv", 1},
    {"no_header.csv", 1},    {"long_field.csv", 1},   {"long_name.csv", 1},     {"ctrl_field.csv", 1},
    {"ctrl_name.csv", 1},    {"bom.csv", 1},          {"blank_lines.csv", 1},   {"overflow.csv", 1},
    {"dates.csv", 3},        {"stamps.csv", 3},       {"cet.csv", 2},       {"bad_date.csv", 0.5},    {"date_number.csv", 0.5},
    {"cats.csv", 4},         {"series.csv", 2},       {"good.csv.gz", 2},       {"padded.csv.gz", 1},
    {"cut.csv.gz", 0.5},     {"trailing.csv.gz", 0.5}, {"sine.csv", 1},
};

const std::vector<WStr> kModels = {
    {"model.json", 5},        {"model_ab.json", 2},      {"model_full.json", 2},     {"deep_version.json", 3},
    {"deep_string.json", 1.5}, {"deep_kernel.json", 1},  {"deep_object.json", 1},    {"bw_zero.json", 1},
    {"bw_neg.json", 1},       {"bw_huge.json", 1},       {"bw_over.json", 0.5},      {"bw_denormal.json", 1},
    {"bw_string.json", 0.5},  {"bw_scalar.json", 0.5},   {"bw_empty.json", 0.5},     {"bw_two.json", 0.5},
    {"n_huge.json", 1},       {"n_neg.json", 0.5},       {"version2.json", 0.5},     {"version_big.json", 0.5},
    {"kernel_bogus.json", 0.5}, {"method_number.json", 0.5}, {"xcols_unknown.json", 0.5}, {"xcols_empty.json", 0.5},
    {"missing_bw.json", 0.5}, {"missing_format.json", 0.5}, {"missing_xcols.json", 0.5}, {"metric_short.json", 0.7},
    {"metric_rows.json", 0.7}, {"metric_zero.json", 0.7}, {"metric_string.json", 0.5}, {"not_json.json", 0.5},
    {"empty_model.json", 0.5}, {"truncated.json", 0.5},  {"array_model.json", 0.3},  {"@dir", 0.3},
    {"@missing", 0.3},
};

const std::vector<WStr> kQueries = {
    {"q_one.csv", 3},    {"q_two.csv", 2},      {"q_bad.csv", 1},     {"q_empty.csv", 1}, {"q_far.csv", 1},
    {"q_noheader.csv", 1}, {"q_missing.csv", 1}, {"q_many.csv", 1.5}, {"three_cols.csv", 1}, {"-", 2},
    {"q_dates.csv", 1.5},
    {"@missing", 0.3},   {"@dir", 0.3},
};

enum class Out { predictions, model, weights, plot, heatmap };

struct Gen {
  Rng& r;
  Cmd& c;
  std::size_t train_group = 0;  // index of the single TRAIN group (0: none)
  std::string train_file;       // its data file name, when it is one
  std::string shape;            // the single training file's name (also on stdin), for its columns
  std::vector<std::string> outputs;
  std::vector<std::string> out_inputs;  // inputs copied into out/

  Gen(Rng& rng, Cmd& cmd) : r(rng), c(cmd) {}

  std::string copy_to_out(const std::string& name) {
    const std::string dst = "out/in_" + name;
    if (std::none_of(c.copies.begin(), c.copies.end(), [&](const auto& p) { return p.second == dst; }))
      c.copies.push_back({"data/" + name, dst});
    if (std::find(out_inputs.begin(), out_inputs.end(), dst) == out_inputs.end()) out_inputs.push_back(dst);
    return dst;
  }

  std::string output(Out kind) {
    const double u = r.u();
    std::string path;
    if (u < 0.62) {
      static const std::map<Out, std::vector<WStr>> fresh = {
          {Out::predictions, {{"out/p.csv", 3}, {"out/p.json", 2}, {"out/p.jsonl", 2}, {"out/p.txt", 1}}},
          {Out::model, {{"out/model.json", 3}, {"out/m.txt", 1}, {"out/m.csv", 1}}},
          {Out::weights, {{"out/w.csv", 3}, {"out/w.json", 2}, {"out/w.jsonl", 1}}},
          {Out::plot, {{"out/plot.svg", 3}, {"out/plot.png", 1}}},
          {Out::heatmap, {{"out/h.svg", 3}, {"out/h", 1}}},
      };
      path = pick(r, fresh.at(kind));
    } else if (u < 0.72) {
      path = "out/existing.csv";
    } else if (u < 0.80 && !outputs.empty()) {
      path = outputs[r.below(outputs.size())];
    } else if (u < 0.87) {
      if (out_inputs.empty() && train_group != 0 && !train_file.empty()) {
        c.groups[train_group][0] = copy_to_out(train_file);  // the TRAIN becomes a copy in out/
      }
      path = out_inputs.empty() ? "out/p2.csv" : out_inputs[r.below(out_inputs.size())];
    } else if (u < 0.91) {
      path = r.chance(0.5) ? "-" : "/dev/null";
    } else if (u < 0.95) {
      path = pick(r, {{"out/dir", 1}, {"out/", 1}, {"out/nodir/p.csv", 1}, {"data", 0.5}});
    } else if (u < 0.98) {
      path = "out/link.csv";
    } else {
      path = "";
    }
    outputs.push_back(path);
    return path;
  }

  std::string model() {
    std::string m = pick(r, kModels);
    if (m == "@dir") return "data";
    if (m == "@missing") return "data/no_such_model.json";
    if (r.chance(0.1)) return copy_to_out(m);
    return "data/" + m;
  }

  std::string query() {
    std::string q = pick(r, kQueries);
    if (q == "@dir") return "out";
    if (q == "@missing") return "data/no_such_query.csv";
    if (q == "-") {
      if (c.stdin_path == "/dev/null") c.stdin_path = "data/" + pick(r, {{"q_one.csv", 3}, {"q_bad.csv", 1}, {"q_many.csv", 1}, {"q_empty.csv", 1}});
      return "-";
    }
    if (r.chance(0.08)) return copy_to_out(q);
    return "data/" + q;
  }
};

using GroupGen = std::function<std::vector<std::string>(Gen&)>;

struct OptSpec {
  std::string name;
  double weight;
  int scope;  // 1 fit, 2 predict, 3 both
  GroupGen gen;
};

GroupGen values(const std::string& name, std::vector<WStr> v) {
  return [name, v](Gen& g) { return std::vector<std::string>{name, pick(g.r, v)}; };
}
// Column options: mostly a column the training file has, else anything from `other`.
GroupGen columns(const std::string& name, std::vector<WStr> other) {
  return [name, other](Gen& g) {
    const std::string& f = g.shape;
    std::vector<WStr> ok;
    const bool x = name == "-x", y = name == "-y";
    if (f.empty()) {
      ok = other;
    } else if (f == "three_cols.csv") {
      ok = x ? std::vector<WStr>{{"a,b", 3}, {"a", 1}, {"1,2", 1}}
         : y ? std::vector<WStr>{{"c", 3}, {"3", 1}}
             : std::vector<WStr>{{"b", 1}};
    } else if (f.rfind("weights", 0) == 0) {
      ok = x ? std::vector<WStr>{{"x", 3}, {"1", 1}}
         : y ? std::vector<WStr>{{"y", 3}, {"2", 1}}
             : std::vector<WStr>{{"w", 4}, {"3", 1}};
    } else if (f == "cats.csv") {
      ok = x ? std::vector<WStr>{{"x,g", 3}, {"x,g,o", 2}, {"g", 1}, {"x", 1}, {"o", 0.5}}
         : y ? std::vector<WStr>{{"y", 3}, {"4", 1}}
             : other;
    } else if (f == "long_name.csv" || f == "ctrl_name.csv" || f == "no_header.csv") {
      ok = x ? std::vector<WStr>{{"1", 2}, {"x", 1}} : std::vector<WStr>{{"2", 3}};
    } else {
      ok = x ? std::vector<WStr>{{"x", 3}, {"1", 2}} : y ? std::vector<WStr>{{"y", 3}, {"2", 2}} : other;
    }
    return std::vector<std::string>{name, pick(g.r, g.r.chance(0.75) ? ok : other)};
  };
}
GroupGen flag(const std::string& name) {
  return [name](Gen&) { return std::vector<std::string>{name}; };
}
GroupGen spelled(std::vector<WStr> names, std::vector<WStr> v) {
  return [names, v](Gen& g) { return std::vector<std::string>{pick(g.r, names), pick(g.r, v)}; };
}

const std::vector<OptSpec>& options() {
  static const std::string long_name(2000, 'q');
  static const std::vector<OptSpec> o = {
      {"-x", 2, 3,
       columns("-x", {{"x", 3}, {"1", 2}, {"a,b", 2}, {"a", 1}, {"b", 0.5}, {"2", 1}, {"0", 0.5}, {"99", 0.5},
                      {"zz", 0.7}, {"", 0.3}, {long_name, 0.4}, {"\x1b[31mx", 0.4}, {"x,x", 0.3}, {"1,2", 0.5}})},
      {"-y", 1, 3,
       columns("-y", {{"y", 3}, {"2", 2}, {"c", 1.5}, {"1", 1}, {"0", 0.4}, {"99", 0.4}, {"zz", 0.5}, {long_name, 0.3},
                      {"\x1b[1my", 0.3}, {"w", 0.3}})},
      {"--no-header", 0.4, 3, flag("--no-header")},
      {"--delimiter", 0.8, 3,
       values("--delimiter", {{",", 3}, {";", 1}, {"tab", 1}, {"\t", 0.5}, {"ab", 0.5}, {"", 0.5}, {" ", 0.3}})},
      {"--na", 1, 3, values("--na", {{"fail", 2}, {"skip", 3}, {"bogus", 1}})},
      {"--sample-weight", 0.8, 3,
       columns("--sample-weight", {{"w", 3}, {"c", 1}, {"y", 0.5}, {"zz", 0.5}, {"3", 1}, {"", 0.3}})},
      {"--kernel", 1.5, 3,
       values("--kernel", {{"gaussian", 2}, {"laplace", 1.5}, {"epanechnikov", 1.5}, {"tricube", 1.5},
                           {"uniform", 1.5}, {"bogus", 0.5}})},
      {"--method", 1.5, 3,
       values("--method", {{"nw", 2}, {"local-linear", 2}, {"local-polynomial", 1.5}, {"bogus", 0.4}})},
      {"--degree", 0.7, 3, values("--degree", {{"0", 1}, {"1", 0.5}, {"2", 2}, {"3", 1}, {"9", 0.3}, {"-1", 0.2}})},
      {"--derivative", 1, 2, flag("--derivative")},
      {"--slope-unit", 0.5, 2, values("--slope-unit", {{"d", 2}, {"1h", 1}, {"7d", 1}, {"0d", 0.3}, {"xyz", 0.3}})},
      {"--robust", 0.8, 3, values("--robust", {{"1", 2}, {"2", 1}, {"0", 0.5}, {"-1", 0.2}, {"abc", 0.2}})},
      {"--leave-out", 0.8, 3,
       values("--leave-out", {{"0", 1}, {"2", 2}, {"auto", 1}, {"99", 0.5}, {"-1", 0.2}, {"abc", 0.2}})},
      {"--criterion", 0.8, 3,
       values("--criterion", {{"loo", 1}, {"aicc", 2}, {"gcv", 1.5}, {"bogus", 0.3}})},
      {"--min-neighbours", 0.5, 3,
       values("--min-neighbours", {{"0", 1}, {"3", 2}, {"1e9", 0.5}, {"-1", 0.3}})},
      {"--categorical", 0.7, 3,
       values("--categorical", {{"g", 3}, {"x", 1}, {"zz", 0.5}, {"g,o", 1}, {"", 0.2}})},
      {"--ordered", 0.5, 3, values("--ordered", {{"o", 3}, {"g", 1}, {"x", 0.5}})},
      {"--levels", 0.5, 3,
       values("--levels", {{"o=0,1,2,3", 2}, {"o=3,2,1,0", 1}, {"g=c,b,a", 1}, {"o=0,1", 0.5}, {"zz=1", 0.3}, {"g", 0.3}})},
      {"--categorical-kernel", 0.3, 3,
       values("--categorical-kernel", {{"aitchison-aitken", 1}, {"li-racine", 1}, {"bogus", 0.2}})},
      {"--score", 1.2, 3,
       values("--score", {{"gaussian", 1}, {"dot", 1.5}, {"scaled-dot", 1}, {"general", 1.5}, {"additive", 2},
                          {"bogus", 0.3}})},
      {"--hidden", 0.4, 3, values("--hidden", {{"1", 1}, {"3", 2}, {"0", 0.3}, {"5000", 0.2}, {"abc", 0.2}})},
      {"--no-bias", 0.3, 3, flag("--no-bias")},
      {"--seed", 0.4, 3, values("--seed", {{"0", 1}, {"7", 1}, {"-1", 0.3}, {"abc", 0.2}})},
      {"--out-of-reach", 0.8, 3,
       values("--out-of-reach",
              {{"error", 1}, {"nearest", 1}, {"extrapolate", 1}, {"empty", 1}, {"auto", 0.5}, {"bogus", 0.3}})},
      {"-b", 3, 3,
       spelled({{"-b", 1}, {"--bandwidth", 1}},
               {{"0.3", 4}, {"1e-300", 1}, {"1e300", 1}, {"0", 0.5}, {"-1", 0.5}, {"auto", 1}, {"silverman", 1.5},
                {"scott", 1}, {"0.3,0.5", 1}, {"", 0.3}, {"abc", 0.3}, {"1e-320", 0.3}, {"1e-9", 0.5},
                {"1d", 1}, {"6h", 1}, {"90s", 0.5}, {"0h", 0.3}, {"5m", 0.3}, {"1e300w", 0.3}, {"knn:5", 1.5},
                {"knn:auto", 1.5}, {"knn:1", 0.5}, {"knn:0", 0.3}, {"knn:1000000", 0.3}, {"adaptive:3", 1},
                {"adaptive:auto", 1}, {"span:0.3", 1.5}, {"span:auto", 1}, {"span:2", 0.5}, {"span:0", 0.3},
                {"plugin", 0.7}, {"1,0.5", 0.5}})},
      {"--init", 0.6, 3,
       values("--init", {{"0.3", 2}, {"silverman", 1}, {"scott", 1}, {"0", 0.3}, {"-1", 0.3}, {"abc", 0.3},
                         {"1e300", 0.3}})},
      {"--init-w", 0.4, 3, values("--init-w", {{"0.3", 2}, {"0", 0.5}, {"-1", 0.3}, {"1e300", 0.3}, {"abc", 0.3}})},
      {"--optimizer", 0.7, 3,
       values("--optimizer", {{"auto", 1}, {"sgd", 2}, {"adam", 1}, {"line-search", 0.5}, {"bogus", 0.3}})},
      {"--param", 0.5, 3, values("--param", {{"log-h", 1}, {"w", 1.5}, {"bogus", 0.3}})},
      {"--loss", 0.5, 3, values("--loss", {{"mean", 1}, {"sum", 1.5}, {"bogus", 0.3}})},
      {"--epochs", 1, 3, values("--epochs", {{"0", 1}, {"1", 1}, {"5", 2}, {"20", 1}, {"-1", 0.3}, {"", 0.3}})},
      {"--lr", 0.5, 3,
       values("--lr", {{"0.5", 1}, {"0.1", 1}, {"0", 0.3}, {"-1", 0.3}, {"1e300", 0.3}, {"10", 0.5}, {"abc", 0.2}})},
      {"--tol", 0.5, 3, values("--tol", {{"1e-9", 1}, {"0", 0.5}, {"-1", 0.3}, {"1", 0.5}, {"abc", 0.2}})},
      {"--loo-rows", 0.5, 3,
       values("--loo-rows", {{"0", 1}, {"1", 0.5}, {"2", 1}, {"7", 0.5}, {"50000", 0.5}, {"-1", 0.3}, {"abc", 0.2}})},
      {"--metric", 0.7, 3, values("--metric", {{"diagonal", 1}, {"full", 2}, {"bogus", 0.3}})},
      {"--rank", 0.5, 3, values("--rank", {{"0", 1}, {"1", 1}, {"2", 1}, {"3", 0.5}, {"99", 0.3}, {"-1", 0.3}})},
      {"--threads", 1.5, 3, values("--threads", {{"1", 2}, {"2", 2}, {"0", 1}, {"3", 1}, {"", 0.3}})},
      {"--tolerance", 1, 3,
       values("--tolerance", {{"0", 2}, {"1e-16", 1}, {"0.5", 1}, {"1", 1}, {"", 0.3}, {"-1", 0.3}})},
      {"-q", 0.5, 3, [](Gen& g) { return std::vector<std::string>{g.r.chance(0.5) ? "-q" : "--quiet"}; }},
      {"-v", 0.7, 3, [](Gen& g) { return std::vector<std::string>{g.r.chance(0.5) ? "-v" : "--verbose"}; }},
      {"--format", 1.5, 3,
       [](Gen& g) {
         static const std::vector<WStr> fit = {{"text", 2}, {"json", 2}, {"csv", 0.5}, {"jsonl", 0.3}, {"bogus", 0.3}};
         static const std::vector<WStr> batch = {{"csv", 2}, {"json", 2}, {"text", 0.5}, {"bogus", 0.3}};
         static const std::vector<WStr> predict = {
             {"csv", 2}, {"json", 1.5}, {"jsonl", 1.5}, {"text", 0.3}, {"bogus", 0.3}};
         return std::vector<std::string>{"--format", pick(g.r, !g.c.fit ? predict : g.c.batch > 1 ? batch : fit)};
       }},
      {"-o", 2, 3,
       [](Gen& g) {
         return std::vector<std::string>{g.r.chance(0.5) ? "-o" : "--output",
                                         g.output(g.c.fit ? Out::model : Out::predictions)};
       }},
      {"--model", 4, 2, [](Gen& g) { return std::vector<std::string>{"--model", g.model()}; }},
      {"--grid", 2, 2,
       values("--grid", {{"0:5:0.5", 3}, {"1:0:1", 0.5}, {"0:1:0", 0.5}, {"a:b:c", 0.3}, {"0:1:0.25", 1},
                         {"-1e300:1e300:1e299", 0.5}, {"0:1e-300:1e-301", 0.5}, {"1e300:1.5e300:1e299", 0.5},
                         {"2024-02-01/2024-02-21/1d", 1.5}, {"2024-03-31T00:00Z/2024-03-31T12:00+02:00/30min", 1},
                         {"2024-02-21/2024-02-01/1d", 0.3}, {"2024-02-01/2024-02-30/1d", 0.3},
                         {"0001-01-01/9999-12-31/1s", 0.3}, {"2024-02-01/2024-02-01T00:00:01/1ms", 0.3}})},
      {"--grid-n", 2, 2, values("--grid-n", {{"1", 2}, {"3", 2}, {"0", 0.5}, {"", 0.3}, {"200", 1}})},
      {"--query", 2, 2, [](Gen& g) { return std::vector<std::string>{"--query", g.query()}; }},
      {"--weights", 2, 2, [](Gen& g) { return std::vector<std::string>{"--weights", g.output(Out::weights)}; }},
      {"--weights-layout", 1, 2, values("--weights-layout", {{"wide", 1}, {"long", 1.5}, {"bogus", 0.3}})},
      {"--max-weights", 0.8, 2, values("--max-weights", {{"0", 1}, {"10", 1}, {"", 0.3}, {"100000", 0.5}})},
      {"--plot", 2, 2, [](Gen& g) { return std::vector<std::string>{"--plot", g.output(Out::plot)}; }},
      {"--heatmap", 3, 2, [](Gen& g) { return std::vector<std::string>{"--heatmap", g.output(Out::heatmap)}; }},
      {"--shard", 3, 2,
       values("--shard", {{"1/1", 1}, {"2/3", 1.5}, {"2/1000", 3}, {"3/2", 0.5}, {"0/1", 0.5},
                          {"368934881474191033/1152921504606846976", 1},
                          {"18446744073709551615/18446744073709551615", 1}, {"1/2", 1}, {"2/2", 1}, {"a/b", 0.2},
                          {"1/0", 0.3}, {"", 0.2}})},
      {"--se", 1, 2, flag("--se")},
      {"--interval", 0.6, 2, values("--interval", {{"rbc", 2}, {"plain", 1}, {"auto", 1}, {"bogus", 0.2}})},
      {"--simultaneous", 0.6, 2, flag("--simultaneous")},
      {"--keep", 1, 2, values("--keep", {{"1", 1}, {"y", 1}, {"x,y", 1}, {"nope", 0.3}, {"", 0.2}})},
      {"--heatmap-scale", 0.5, 2, values("--heatmap-scale", {{"linear", 1}, {"log", 2}, {"bogus", 0.2}})},
      {"--level", 0.7, 2,
       values("--level", {{"0.95", 1}, {"0.5", 1}, {"0", 0.5}, {"1", 0.5}, {"2", 0.3}, {"-1", 0.3}, {"abc", 0.2}})},
  };
  return o;
}

struct Companion {
  std::string when, value;          // an option (with this value, unless empty) in the command
  double p;                         // adds this group with probability p
  std::vector<std::string> unless;  // unless one of these is there already
  GroupGen gen;
};

const std::vector<Companion>& companions() {
  static const std::vector<WStr> shards = {{"2/1000", 2}, {"2/3", 1}, {"1/2", 1}, {"2/2", 1},
                                           {"18446744073709551615/18446744073709551615", 1}};
  static const std::vector<Companion> v = {
      {"--param", "w", 0.7, {"--optimizer"}, values("--optimizer", {{"sgd", 1}})},
      {"--optimizer", "sgd", 0.8, {"--init", "--init-w"}, values("--init-w", {{"0.3", 1}, {"1", 1}})},
      {"--rank", "", 0.7, {"--metric", "--model"}, values("--metric", {{"full", 1}})},
      {"--hidden", "", 0.8, {"--score", "--model"}, values("--score", {{"additive", 1}})},
      {"--seed", "", 0.6, {"--score", "--model"}, values("--score", {{"additive", 1}})},
      {"--heatmap", "", 0.3, {"--shard"}, values("--shard", shards)},
      {"--weights", "", 0.15, {"--shard"}, values("--shard", shards)},
      {"--simultaneous", "", 0.8, {"--se"}, flag("--se")},
      {"--interval", "", 0.8, {"--se"}, flag("--se")},
  };
  return v;
}

// Options that --model excludes, and the query sources that exclude each other.
const std::set<std::string> kModelExcludes = {"-b",      "--kernel",  "--method", "--metric",
                                              "--rank",  "--score",   "--hidden", "--no-bias", "--seed"};
const std::set<std::string> kQuerySources = {"--grid", "--grid-n", "--query"};

// A property run: `predict data/sine.csv` with a random kernel, method and bandwidth on a
// grid, whose output must relate exactly to another run's (Worker::check_property):
//   row-order  the same with the rows reversed (sine_rev.csv): the same numbers (1e-9; 1e-6
//              where a bandwidth is learned, to the descent's tolerance);
//   y-scale    y times 2^200 and 2^-200: predictions, se, bands and slopes scale by the factor,
//              x and the bandwidth do not (1e-9);
//   save-load  fit -o MODEL, then predict --model MODEL: the same bytes;
//   degree-0   --method local-polynomial --degree 0 against --method nw (1e-9);
//   slopes     NW's --derivative against central differences of predictions at x +- 1e-5.
const std::set<std::string> kPredictOnly = {"--se", "--grid", "--derivative", "--level", "--interval", "--simultaneous"};

Cmd property_case(Rng& r) {
  Cmd c;
  c.property = pick(r, {{"row-order", 2}, {"y-scale", 2}, {"save-load", 2}, {"degree-0", 1}, {"slopes", 1.5}});
  c.groups = {{"predict"}, {"data/sine.csv"}};
  const bool smooth = c.property == "slopes" || c.property == "degree-0";
  const std::string kernel = c.property == "slopes" ? "gaussian"
                             : pick(r, {{"gaussian", 3}, {"epanechnikov", 1}, {"tricube", 1}, {"uniform", 0.5}, {"laplace", 1}});
  c.groups.push_back({"--kernel", kernel});
  if (c.property == "degree-0") {
    c.groups.push_back({"--method", "local-polynomial"});
    c.groups.push_back({"--degree", "0"});
  } else if (c.property == "slopes") {
    // NW's slope is the derivative of its curve; a local polynomial's is its fitted line's
    // slope at the query (the local estimate of f'), not the derivative of its curve.
    c.groups.push_back({"--method", "nw"});
  } else {
    const std::string m = pick(r, {{"nw", 2}, {"local-linear", 2}, {"local-polynomial", 1}});
    c.groups.push_back({"--method", m});
    if (m == "local-polynomial") c.groups.push_back({"--degree", pick(r, {{"2", 2}, {"3", 1}})});
  }
  const std::string b = smooth ? pick(r, {{"0.6", 2}, {"1.2", 2}, {"learn", 2}})
                               : pick(r, {{"0.6", 2}, {"1.2", 2}, {"learn", 3}, {"plugin", 1}, {"knn:8", 1},
                                          {"knn:auto", 1}, {"span:0.5", 1}, {"adaptive:5", 1}, {"aicc", 1}});
  if (b == "aicc") {
    c.groups.push_back({"--criterion", "aicc"});
  } else if (b != "learn") {
    c.groups.push_back({"-b", b});
  }
  if (r.chance(0.4)) {
    c.groups.push_back({"--se"});
    if (r.chance(0.3)) c.groups.push_back({"--interval", "plain"});
    if (r.chance(0.3) && c.property != "y-scale") c.groups.push_back({"--simultaneous"});
  }
  if (c.property == "slopes") c.groups.push_back({"--derivative"});
  c.groups.push_back({"--grid", "0.25:5.75:0.5"});
  return c;
}

// nwreg test: a training file (or stdin) and the test's own options, the bandwidth options
// fit takes, and a batch at times; permutations kept few so that a run stays short under the
// sanitizers.
Cmd test_case(Rng& r) {
  Cmd c;
  c.groups.push_back({"test"});
  if (r.chance(0.15)) {
    c.batch = 2;
    c.groups.push_back({"data/" + pick(r, kTrainFiles)});
    c.groups.push_back({"data/" + pick(r, kTrainFiles)});
  } else if (r.chance(0.1)) {
    c.stdin_path = "data/" + pick(r, kTrainFiles);
    c.groups.push_back({"-"});
  } else {
    c.groups.push_back({"data/" + pick(r, kTrainFiles)});
  }
  if (r.chance(0.6)) c.groups.push_back({"--null", pick(r, {{"constant", 3}, {"linear", 3}, {"quadratic", 0.3}})});
  if (r.chance(0.5)) {
    const std::string m = pick(r, {{"nw", 2}, {"local-linear", 2}, {"local-polynomial", 1}});
    c.groups.push_back({"--method", m});
    if (m == "local-polynomial" && r.chance(0.7)) c.groups.push_back({"--degree", pick(r, {{"2", 2}, {"3", 1}})});
  }
  if (r.chance(0.3))
    c.groups.push_back({"--kernel", pick(r, {{"gaussian", 2}, {"epanechnikov", 1}, {"tricube", 1}, {"laplace", 1}})});
  const std::string b = pick(r, {{"", 4}, {"auto", 2}, {"plugin", 0.5}, {"0.5", 1}, {"2", 1}, {"df:3", 1}, {"df:12", 1},
                                 {"df:0.5", 0.3}, {"df:1e6", 0.3}, {"knn:5", 0.5}, {"span:0.6", 0.5}, {"1e-9", 0.3}});
  if (!b.empty()) c.groups.push_back({"-b", b});
  if (b == "auto" || b == "plugin" || r.chance(0.2))
    c.groups.push_back({"--permutations", pick(r, {{"0", 2}, {"5", 2}, {"19", 1}, {"-1", 0.2}, {"x", 0.2}})});
  if (r.chance(0.2)) c.groups.push_back({"--seed", pick(r, {{"0", 1}, {"7", 1}, {"123456789", 1}})});
  if (r.chance(0.4)) c.groups.push_back({"--format", pick(r, {{"text", 1}, {"json", 2}, {"csv", 1}, {"tsv", 0.2}})});
  if (r.chance(0.2)) c.groups.push_back({"--sample-weight", pick(r, {{"w", 2}, {"y", 0.5}, {"nope", 0.3}})});
  if (r.chance(0.15)) c.groups.push_back({"--categorical", pick(r, {{"g", 2}, {"x", 1}})});
  if (r.chance(0.15)) c.groups.push_back({"-x", pick(r, {{"x", 2}, {"a,b", 1}, {"x,g", 1}, {"1", 1}})});
  if (r.chance(0.1)) c.groups.push_back({"--robust", "1"});
  c.groups.push_back({"--quiet"});
  return c;
}

Cmd generate(std::uint64_t seed, std::size_t index, bool limits) {
  Rng r(splitmix64(seed ^ splitmix64(index + 1)));
  Cmd c;
  const bool limited = r.chance(1.0 / 15);  // drawn always, so --limits changes nothing else
  const bool big_threads = r.chance(0.8);
  if (r.chance(0.1)) return property_case(r);
  if (r.chance(0.08)) {
    Cmd t = test_case(r);
    if (limits && limited) {
      t = t.with_threads(big_threads ? "500" : "200");
      t.limited = true;
    }
    return t;
  }
  c.fit = r.chance(0.45);
  c.groups.push_back({c.fit ? "fit" : "predict"});
  Gen g(r, c);
  std::set<std::string> taken;  // option names already in the command

  // TRAIN
  if (c.fit && r.chance(0.2)) {
    const std::size_t k = 2 + r.below(2);
    std::vector<std::string> files;
    while (files.size() < k) {
      std::string f = r.chance(0.08) ? "data/no_such.csv" : "data/" + pick(r, kTrainFiles);
      if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
    }
    for (const auto& f : files) c.groups.push_back({f});
    c.batch = k;
  } else {
    const double u = r.u();
    std::string file;
    if (u < 0.10) {
      file = pick(r, kTrainFiles);
      c.stdin_path = "data/" + file;
      c.groups.push_back({"-"});
      g.shape = file;
    } else if (u < 0.13) {
      c.groups.push_back({"data/no_such.csv"});
    } else if (u < 0.15) {
      c.groups.push_back({pick(r, {{"data", 2}, {".", 1}, {"out", 1}})});
    } else {
      file = pick(r, kTrainFiles);
      g.train_file = file;
      g.shape = file;
      g.train_group = c.groups.size();
      c.groups.push_back({r.chance(0.08) ? g.copy_to_out(file) : "data/" + file});
    }
    // Options that make a file readable at all, often.
    auto add = [&](std::vector<std::string> grp, double p) {
      if (!r.chance(p)) return;
      taken.insert(grp[0]);
      c.groups.push_back(std::move(grp));
    };
    if (file == "three_cols.csv") {
      if (r.chance(0.6)) {
        taken.insert("-x");
        taken.insert("-y");
        c.groups.push_back({"-x", "a,b"});
        c.groups.push_back({"-y", "c"});
      }
    } else if (file.rfind("weights", 0) == 0) {
      add({"--sample-weight", "w"}, 0.6);
    } else if (file == "semicolon.csv") {
      add({"--delimiter", ";"}, 0.7);
    } else if (file == "tabs.tsv") {
      add({"--delimiter", "tab"}, 0.7);
    } else if (file == "no_header.csv") {
      add({"--no-header"}, 0.6);
    } else if (file.rfind("bad_missing", 0) == 0) {
      add({"--na", "skip"}, 0.4);
    } else if (file == "long_name.csv" || file == "ctrl_name.csv") {
      add({"-y", "2"}, 0.5);
    } else if (file == "cats.csv") {
      if (r.chance(0.7)) {
        taken.insert("-x");
        taken.insert("-y");
        c.groups.push_back({"-x", r.chance(0.5) ? "x,g" : "x,g,o"});
        c.groups.push_back({"-y", "y"});
        add({"--categorical", "g"}, 0.8);
        add({"--ordered", "o"}, 0.5);
      }
    }
  }

  // Options, drawn without replacement by weight.
  std::vector<const OptSpec*> pool;
  for (const auto& o : options())
    if ((o.scope & (c.fit ? 1 : 2)) && !taken.count(o.name)) pool.push_back(&o);
  const std::size_t n = r.below(9);
  std::vector<const OptSpec*> chosen;
  for (std::size_t i = 0; i < n && !pool.empty(); ++i) {
    double total = 0;
    for (auto* o : pool) total += o->weight;
    double t = r.u() * total;
    std::size_t j = 0;
    while (j + 1 < pool.size() && t >= pool[j]->weight) t -= pool[j++]->weight;
    chosen.push_back(pool[j]);
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(j));
  }
  // Mostly keep to combinations the parser accepts, so that runs get past it.
  const bool has_model = std::any_of(chosen.begin(), chosen.end(), [](auto* o) { return o->name == "--model"; });
  bool has_source = false;
  std::vector<const OptSpec*> kept;
  for (auto* o : chosen) {
    if (has_model && kModelExcludes.count(o->name) && r.chance(0.9)) continue;
    if (c.batch > 1 && o->name == "-o" && r.chance(0.7)) continue;  // a batch has no model file
    if (kQuerySources.count(o->name)) {
      if (has_source && r.chance(0.8)) continue;
      has_source = true;
    }
    kept.push_back(o);
  }
  for (auto* o : kept) c.groups.push_back(o->gen(g));
  // Companions: options that another one needs (or that make it more interesting), often.
  for (const auto& comp : companions()) {
    if (!r.chance(comp.p)) continue;
    const bool trigger = std::any_of(c.groups.begin() + 1, c.groups.end(), [&](const auto& grp) {
      return grp[0] == comp.when && (comp.value.empty() || (grp.size() > 1 && grp[1] == comp.value));
    });
    if (!trigger || std::any_of(comp.unless.begin(), comp.unless.end(), [&](const auto& u) { return c.has(u); }))
      continue;
    c.groups.push_back(comp.gen(g));
  }

  if (limits && limited) {
    c = c.with_threads(big_threads ? "500" : "200");
    c.limited = true;
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Checks

struct Finding {
  std::string cls, detail;
};

bool letter(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }

// The first nan/inf/infinity token (delimited by non-letters, any case), with its surroundings.
std::string find_nan_inf(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (!letter(s[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && letter(s[j])) ++j;
    if (j - i == 3 || j - i == 8) {
      std::string t = s.substr(i, j - i);
      for (auto& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (t == "nan" || t == "inf" || t == "infinity") {
        const std::size_t a = i >= 30 ? i - 30 : 0;
        return printable(s.substr(a, j + 30 - a), 80);
      }
    }
    i = j;
  }
  return "";
}

// A fit batch's stdout without its error messages: quoted strings dropped, and in CSV what
// follows the six number columns.
std::string batch_numbers(const std::string& out) {
  std::string r;
  for (const auto& line : split_lines(out)) {
    std::string s;
    bool q = false, esc = false;
    for (char ch : line) {
      if (q) {
        if (esc)
          esc = false;
        else if (ch == '\\')
          esc = true;
        else if (ch == '"')
          q = false;
        continue;
      }
      if (ch == '"') {
        q = true;
        continue;
      }
      s += ch;
    }
    const bool json = !s.empty() && (s[0] == '[' || s[0] == '{' || s[0] == ' ' || s[0] == ']');
    if (!json) {
      std::size_t commas = 0, k = 0;
      for (; k < s.size(); ++k)
        if (s[k] == ',' && ++commas == 6) break;
      s = s.substr(0, k);
    }
    r += s + "\n";
  }
  return r;
}

std::string sanitizer_kind(const std::string& err) {
  for (const auto& line : split_lines(err)) {
    const auto p = line.find("SUMMARY: ");
    if (p != std::string::npos && line.find(" leaked in ") != std::string::npos) return "LeakSanitizer leak";
    if (p != std::string::npos) {
      std::istringstream s(line.substr(p + 9));
      std::string tool, kind;
      s >> tool >> kind;
      if (!tool.empty() && tool.back() == ':') tool.pop_back();
      return tool + " " + kind;
    }
  }
  for (const char* t : {"AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer"})
    if (err.find(t) != std::string::npos) return t;
  if (err.find("runtime error:") != std::string::npos) return "UndefinedBehaviorSanitizer runtime error";
  return "";
}

// What a file-independent option error looks like in a batch: "FILE: --opt: ...".
std::string after_file_prefix(const std::string& msg) {
  const auto p = msg.find(": ");
  return p == std::string::npos ? msg : msg.substr(p + 2);
}

std::vector<Finding> check_run(const Cmd& c, const Outcome& o, const Tree& pre, const Tree& post,
                               const std::vector<std::string>& data_changes, const std::vector<std::string>& temps) {
  std::vector<Finding> f;
  if (o.spawn_failed) {
    f.push_back({"harness: cannot start the binary", ""});
    return f;
  }
  const std::string san = sanitizer_kind(o.err);
  if (o.timed_out) {
    f.push_back({"hang", "no exit after the timeout; killed"});
  } else if (o.signal != 0) {
    f.push_back({std::string("killed by ") + signal_name(o.signal), "signal " + std::to_string(o.signal)});
  } else if (o.exit_code != 0 && o.exit_code != 1 && o.exit_code != 2 && san.empty()) {
    f.push_back({"exit code " + std::to_string(o.exit_code), ""});
  }
  if (!san.empty()) f.push_back({"sanitizer: " + san, "exit code " + std::to_string(o.exit_code)});
  if (o.err.find("terminate called") != std::string::npos) f.push_back({"terminate called", ""});

  const bool clean_exit = !o.timed_out && o.signal == 0 && san.empty() && o.exit_code >= 0 && o.exit_code <= 2;
  if (clean_exit) {
    std::vector<std::string> errors;
    for (const auto& line : split_lines(o.err))
      if (line.rfind("nwreg: error:", 0) == 0) errors.push_back(line);
    if (o.exit_code == 0 && !errors.empty()) {
      f.push_back({"error line on exit 0", printable(errors[0])});
    } else if (o.exit_code != 0 && errors.empty()) {
      f.push_back({"no error line on exit " + std::to_string(o.exit_code), ""});
    } else if (errors.size() > 1) {
      if (c.batch < 2 || o.exit_code != 1 || errors.size() > c.batch) {
        f.push_back({"several error lines", std::to_string(errors.size()) + " lines"});
      } else {
        // A batch may fail file by file, but an option error that does not depend on the file is a
        // usage error: one line, exit 2, as for a single file. Column options (-x, -y,
        // --sample-weight, --categorical, --ordered, --levels) resolve against each file's header,
        // so they may fail file by file.
        std::map<std::string, int> seen;
        for (const auto& e : errors) {
          const std::string rest = after_file_prefix(e.substr(std::strlen("nwreg: error: ")));
          const bool column = rest.rfind("-x:", 0) == 0 || rest.rfind("-y:", 0) == 0 ||
                              rest.rfind("--sample-weight:", 0) == 0 || rest.rfind("--categorical:", 0) == 0 ||
                              rest.rfind("--ordered:", 0) == 0 || rest.rfind("--levels:", 0) == 0;
          if (!rest.empty() && rest[0] == '-' && !column && ++seen[rest] == 2) {
            f.push_back({"option error repeated for each file of a batch", printable(rest)});
            break;
          }
        }
      }
    }
    for (const auto& e : errors) {
      if (e.size() > 1000) {
        f.push_back({"error line over 1000 characters", std::to_string(e.size()) + " bytes"});
        break;
      }
    }
    for (const auto& e : errors) {
      if (std::any_of(e.begin(), e.end(), [](char ch) {
            const auto u = static_cast<unsigned char>(ch);
            return u < 0x20 || u == 0x7f;
          })) {
        f.push_back({"control character in error line", printable(e, 160)});
        break;
      }
    }
    for (const auto& e : errors) {
      for (const char* t : {"std::", "bad_alloc", "max_size()", "basic_string", "stoi", "stod", "what()"}) {
        if (e.find(t) != std::string::npos) {
          f.push_back({"C++ library text in error line", printable(e, 160)});
          break;
        }
      }
    }
  }

  if (!o.timed_out) {
    if (!temps.empty()) f.push_back({"temporary file left behind", temps[0]});
    if (!data_changes.empty()) f.push_back({"data directory changed", data_changes[0]});
    const auto changes = differences(pre, post, true, "");
    if (o.exit_code != 0 && !changes.empty()) {
      std::string d;
      for (std::size_t i = 0; i < changes.size() && i < 3; ++i) d += (i ? ", " : "") + changes[i];
      f.push_back({"failed run changed files", d});
    }
    if (o.exit_code == 0) {
      std::string hit = find_nan_inf(o.out);
      std::string where = "stdout";
      if (hit.empty()) {
        for (const auto& [name, e] : post) {
          if (e.type != 'f' || !e.read) continue;
          auto it = pre.find(name);
          if (it != pre.end() && same_content(it->second, e)) continue;
          hit = find_nan_inf(e.data);
          if (!hit.empty()) {
            where = name;
            break;
          }
        }
      }
      if (!hit.empty()) f.push_back({"nan or inf written", where + ": " + hit});
    } else if (o.exit_code == 1 && c.batch >= 2) {
      const std::string hit = find_nan_inf(batch_numbers(o.out));
      if (!hit.empty()) f.push_back({"nan or inf written", "stdout: " + hit});
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// Properties: CSV outputs compared number by number

std::vector<std::vector<std::string>> csv_cells(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : split_lines(text)) {
    std::vector<std::string> cells;
    std::size_t a = 0;
    for (std::size_t b; (b = line.find(',', a)) != std::string::npos; a = b + 1) cells.push_back(line.substr(a, b - a));
    cells.push_back(line.substr(a));
    rows.push_back(std::move(cells));
  }
  return rows;
}

bool number(const std::string& cell, double& v) {
  if (cell.empty()) return false;
  char* end = nullptr;
  v = std::strtod(cell.c_str(), &end);
  return end == cell.c_str() + cell.size() && std::isfinite(v);
}

// "" when `b` is `a` with every number outside column "x" times `factor`, to a relative `tol`;
// else where they differ.
std::string compare_numbers(const std::string& a, const std::string& b, double tol, double factor = 1) {
  const auto ra = csv_cells(a), rb = csv_cells(b);
  if (ra.size() != rb.size()) return std::to_string(ra.size()) + " against " + std::to_string(rb.size()) + " lines";
  for (std::size_t i = 0; i < ra.size(); ++i) {
    if (ra[i].size() != rb[i].size()) return "line " + std::to_string(i + 1) + ": fields differ in number";
    for (std::size_t k = 0; k < ra[i].size(); ++k) {
      double x, y;
      if (i == 0 || !number(ra[i][k], x) || !number(rb[i][k], y)) {
        if (ra[i][k] != rb[i][k]) return "line " + std::to_string(i + 1) + ": " + printable(ra[i][k], 40) + " against " + printable(rb[i][k], 40);
        continue;
      }
      const double want = ra[0][k] == "x" ? x : x * factor;
      if (!(std::abs(want - y) <= tol * std::max(std::abs(want), std::abs(y)) + 1e-300))
        return "line " + std::to_string(i + 1) + ", " + printable(ra[0][k], 20) + ": " + exact(want) + " against " + exact(y);
    }
  }
  return "";
}

// The values of column `name` of a CSV output (empty when it has none).
std::vector<double> column(const std::string& text, const std::string& name) {
  const auto rows = csv_cells(text);
  std::vector<double> out;
  if (rows.empty()) return out;
  const auto k = static_cast<std::size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  if (k == rows[0].size()) return out;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    double v = 0;
    if (k < rows[i].size() && number(rows[i][k], v)) out.push_back(v);
  }
  return out;
}

Cmd replaced(const Cmd& c, const std::string& from, const std::string& to) {
  Cmd d = c;
  for (auto& g : d.groups)
    for (auto& a : g)
      if (a == from) a = to;
  return d;
}

// ---------------------------------------------------------------------------------------------
// Workers

struct Options {
  std::string binary;
  std::uint64_t seed = 0;
  long long runs = -1;
  bool limits = false;
  std::string keep;
  bool verbose = false;
  int jobs = 4;
  double timeout = 30;
  double max_seconds = 0;  // stop handing out runs after this long (0: none)
  bool seed_given = false;
};

struct Shared {
  Options opt;
  fs::path scratch, pristine;
  std::vector<std::string> env;
  std::mutex keep_mutex;
  bool keep_data_written = false;
};

struct Execution {
  Outcome o;
  Tree pre, post;
  std::vector<Finding> findings;
};

struct RunResult {
  std::string text;  // what to print
  bool failed = false;
  bool skipped = false;  // not run: --max-seconds had passed
  std::vector<std::string> classes;
  std::size_t reruns = 0;
  std::size_t executions = 0;
  std::string first_command;
};

class Worker {
 public:
  Worker(Shared& s, std::size_t id) : s_(s) {
    work_ = s.scratch / ("w" + std::to_string(id));
    io_ = s.scratch / ("io" + std::to_string(id));
    fs::create_directories(work_);
    fs::create_directories(io_);
    restore_data();
  }

  RunResult run(std::size_t index, const Cmd& cmd) {
    RunResult rr;
    Execution first = execute_checked(cmd);
    ++rr.executions;
    report(rr, index, "", cmd, first);
    // A successful run, again with --threads 1 and 2: the same stdout and files, byte for byte.
    // (Not after a failure already reported: its reruns would only repeat it.)
    if (!first.o.timed_out && first.o.signal == 0 && first.o.exit_code == 0 && first.findings.empty()) {
      for (const char* t : {"1", "2"}) {
        const Cmd again = cmd.with_threads(t);
        Execution e = execute_checked(again);
        ++rr.executions;
        ++rr.reruns;
        if (e.o.exit_code != 0 || e.o.timed_out || e.o.signal != 0) {
          e.findings.push_back({"thread nondeterminism", std::string("--threads ") + t + ": exit status differs"});
        } else if (e.o.out != first.o.out) {
          e.findings.push_back({"thread nondeterminism", std::string("--threads ") + t + ": stdout differs"});
        } else {
          const auto d = differences(first.post, e.post, true, "");
          if (!d.empty())
            e.findings.push_back({"thread nondeterminism", std::string("--threads ") + t + ": output " + d[0]});
        }
        report(rr, index, std::string("-threads") + t, again, e);
      }
    }
    if (!cmd.property.empty() && !rr.failed) check_property(rr, index, cmd, first);
    return rr;
  }

  // A property run's second (and third) command, and the relation its output must keep with
  // the first's (property_case).
  void check_property(RunResult& rr, std::size_t index, const Cmd& cmd, const Execution& first) {
    auto run_other = [&](const Cmd& other, const std::string& suffix, const std::function<std::string(const Execution&)>& relation) {
      Execution e = execute_checked(other);
      ++rr.executions;
      if (e.findings.empty()) {
        std::string why;
        if (e.o.exit_code != first.o.exit_code && cmd.property != "save-load")
          why = "exit " + std::to_string(first.o.exit_code) + " against " + std::to_string(e.o.exit_code);
        else if (first.o.exit_code == 0)
          why = relation(e);
        if (!why.empty()) e.findings.push_back({"property " + cmd.property, why});
      }
      report(rr, index, "-" + suffix, other, e);
      return e;
    };
    const bool learned = !cmd.has("-b") || cmd.has("--criterion");
    if (cmd.property == "row-order") {
      run_other(replaced(cmd, "data/sine.csv", "data/sine_rev.csv"), "reversed",
                [&](const Execution& e) { return compare_numbers(first.o.out, e.o.out, learned ? 1e-6 : 1e-9); });
    } else if (cmd.property == "y-scale") {
      for (int k : {200, -200})
        run_other(replaced(cmd, "data/sine.csv", k > 0 ? "data/sine_up.csv" : "data/sine_down.csv"), "y-scaled",
                  [&](const Execution& e) { return compare_numbers(first.o.out, e.o.out, 1e-9, std::ldexp(1.0, k)); });
    } else if (cmd.property == "degree-0") {
      Cmd nw = cmd;
      nw.groups.erase(std::remove_if(nw.groups.begin(), nw.groups.end(), [](const auto& g) { return g[0] == "--degree"; }),
                      nw.groups.end());
      run_other(replaced(nw, "local-polynomial", "nw"), "nw",
                [&](const Execution& e) { return compare_numbers(first.o.out, e.o.out, 1e-9); });
    } else if (cmd.property == "save-load") {
      Cmd fit;
      fit.fit = true;
      fit.groups = {{"fit"}, {"data/sine.csv"}};
      for (std::size_t i = 2; i < cmd.groups.size(); ++i)
        if (!kPredictOnly.count(cmd.groups[i][0])) fit.groups.push_back(cmd.groups[i]);
      fit.groups.push_back({"-o", "out/m.json"});
      const Execution saved = run_other(fit, "fit", [](const Execution&) { return std::string(); });
      const auto model = saved.post.find("out/m.json");
      if (saved.o.exit_code != 0 || first.o.exit_code != 0 || model == saved.post.end()) return;
      Cmd load;
      load.groups = {{"predict"}, {"data/sine.csv"}, {"--model", "out/m.json"}};
      for (std::size_t i = 2; i < cmd.groups.size(); ++i)
        if (kPredictOnly.count(cmd.groups[i][0])) load.groups.push_back(cmd.groups[i]);
      load.files.push_back({"out/m.json", model->second.data});
      run_other(load, "model", [&](const Execution& e) {
        return e.o.out == first.o.out ? std::string() : "stdout differs from the run that learned it: " + compare_numbers(first.o.out, e.o.out, 0);
      });
    } else if (cmd.property == "slopes") {
      constexpr double eps = 1e-5;
      const auto f = column(first.o.out, "prediction"), d = column(first.o.out, "d_x");
      std::vector<double> side[2];
      for (int s = 0; s < 2; ++s) {
        Cmd at = cmd;
        at.groups.erase(std::remove_if(at.groups.begin(), at.groups.end(),
                                       [](const auto& g) {
                                         return g[0] == "--derivative" || g[0] == "--se" || g[0] == "--interval" ||
                                                g[0] == "--simultaneous";
                                       }),
                        at.groups.end());
        const double o = s ? eps : -eps;
        at = replaced(at, "0.25:5.75:0.5", exact(0.25 + o) + ":" + exact(5.75 + o) + ":0.5");
        const Execution e = run_other(at, s ? "plus" : "minus", [](const Execution&) { return std::string(); });
        side[s] = column(e.o.out, "prediction");
      }
      if (first.o.exit_code != 0) return;
      std::string why;
      double top = 1;
      for (std::size_t i = 0; i < d.size(); ++i) top = std::max({top, std::abs(d[i]), std::abs(f[i])});
      if (d.size() != f.size() || side[0].size() != d.size() || side[1].size() != d.size()) {
        why = "the outputs have different numbers of rows";
      } else {
        for (std::size_t i = 0; i < d.size() && why.empty(); ++i) {
          const double fd = (side[1][i] - side[0][i]) / (2 * eps);
          if (!(std::abs(fd - d[i]) <= 1e-5 * top))
            why = "row " + std::to_string(i + 1) + ": d_x " + exact(d[i]) + ", central difference " + exact(fd);
        }
      }
      if (!why.empty()) {
        Execution e = first;
        e.findings = {{"property slopes", why}};
        report(rr, index, "-slopes", cmd, e);
      }
    }
  }

 private:
  Shared& s_;
  fs::path work_, io_;
  Tree data_sig_;

  void restore_data() {
    std::error_code ec;
    fs::remove_all(work_ / "data", ec);
    fs::copy(s_.pristine / "data", work_ / "data", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    data_sig_.clear();
    walk((work_ / "data").string(), "", false, data_sig_, {});
  }

  void reset_out(const Cmd& c) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(work_))
      if (e.path().filename() != "data") fs::remove_all(e.path(), ec);
    const fs::path out = work_ / "out";
    fs::create_directories(out / "dir");
    write_file(out / "existing.csv", kExisting);
    write_file(out / "dir" / "inner.txt", "inside a directory\n");
    fs::create_symlink("existing.csv", out / "link.csv", ec);
    for (const auto& [src, dst] : c.copies) fs::copy_file(work_ / src, work_ / dst, fs::copy_options::overwrite_existing, ec);
    for (const auto& [name, text] : c.files) write_file(work_ / name, text);
  }

  Execution execute_checked(const Cmd& c) {
    Execution e;
    reset_out(c);
    walk(work_.string(), "", true, e.pre, {"data"});
    e.o = execute(s_.opt.binary, c, work_.string(), io_.string(), s_.opt.timeout, s_.env);
    walk(work_.string(), "", true, e.post, {"data"});
    Tree data_now;
    walk((work_ / "data").string(), "", false, data_now, {});
    const auto data_changes = differences(data_sig_, data_now, false, "data/");
    std::vector<std::string> temps;
    for (const auto* t : {&e.post, &data_now})
      for (const auto& [name, en] : *t)
        if (fs::path(name).filename().string().find(".nwreg-") != std::string::npos)
          temps.push_back((t == &data_now ? "data/" : "") + name);
    e.findings = check_run(c, e.o, e.pre, e.post, data_changes, temps);
    if (!data_changes.empty()) restore_data();
    return e;
  }

  void report(RunResult& rr, std::size_t index, const std::string& suffix, const Cmd& c, const Execution& e) {
    const std::string cmdline = shell_command(s_.opt.binary, c, 120);
    if (s_.opt.verbose) {
      std::string status = e.o.timed_out ? "timeout"
                           : e.o.signal ? std::string("signal ") + std::to_string(e.o.signal)
                                        : "exit " + std::to_string(e.o.exit_code);
      char t[32];
      std::snprintf(t, sizeof t, "%.3f", e.o.seconds);
      rr.text += "cli_fuzz: run " + std::to_string(index) + suffix + ": " + status + " in " + t + " s: " + cmdline + "\n";
      for (const auto& line : split_lines(e.o.err))
        if (line.rfind("nwreg: error:", 0) == 0) {
          rr.text += "    " + printable(line, 200) + "\n";
          break;
        }
    }
    if (e.findings.empty()) return;
    rr.failed = true;
    std::string reasons;
    for (const auto& f : e.findings) {
      reasons += (reasons.empty() ? "" : "; ") + f.cls + (f.detail.empty() ? "" : " (" + f.detail + ")");
      rr.classes.push_back(f.cls);
    }
    if (rr.first_command.empty()) rr.first_command = cmdline;
    rr.text += "cli_fuzz: FAIL run " + std::to_string(index) + suffix + ": " + reasons + ": " + cmdline + "\n";
    const auto lines = split_lines(e.o.err);
    for (std::size_t i = 0; i < lines.size() && i < 3; ++i) rr.text += "    " + printable(lines[i]) + "\n";
    if (!s_.opt.keep.empty()) keep_case(index, suffix, c, e, reasons);
  }

  void keep_case(std::size_t index, const std::string& suffix, const Cmd& c, const Execution& e,
                 const std::string& reasons) {
    std::lock_guard<std::mutex> lock(s_.keep_mutex);
    std::error_code ec;
    const fs::path keep = s_.opt.keep;
    fs::create_directories(keep, ec);
    if (!s_.keep_data_written) {
      fs::remove_all(keep / "data", ec);
      fs::copy(s_.pristine / "data", keep / "data", fs::copy_options::recursive, ec);
      s_.keep_data_written = true;
    }
    const fs::path dir = keep / ("run-" + std::to_string(index) + suffix);
    fs::remove_all(dir, ec);
    fs::create_directories(dir / "out", ec);
    for (const auto& [name, en] : e.pre) {  // the output folder as it was before the run
      const fs::path p = dir / name;
      if (en.type == 'd') fs::create_directories(p, ec);
      if (en.type == 'f') {
        fs::create_directories(p.parent_path(), ec);
        write_file(p, en.data);
      }
      if (en.type == 'l') fs::create_symlink(en.data, p, ec);
    }
    std::string sh = "#!/usr/bin/env bash\n";
    sh += "# cli_fuzz --seed " + std::to_string(s_.opt.seed) + ", run " + std::to_string(index) + suffix + "\n";
    sh += "# FAIL: " + printable(reasons, 2000) + "\n";
    const auto lines = split_lines(e.o.err);
    if (!lines.empty()) sh += "# stderr began:\n";
    for (std::size_t i = 0; i < lines.size() && i < 5; ++i) sh += "#   " + printable(lines[i], 400) + "\n";
    sh += "# Runs the command in a fresh copy of ../data and of out/ (left there afterwards).\n";
    sh += "# NWREG=/path/to/nwreg bash repro.sh tries another binary.\n";
    sh += "set -u\n";
    sh += "here=$(cd \"$(dirname \"$0\")\" && pwd)\n";
    sh += "work=$(mktemp -d \"${TMPDIR:-/tmp}/cli_fuzz_repro-XXXXXX\")\n";
    sh += "cp -RP \"$here/../data\" \"$work/data\" && cp -RP \"$here/out\" \"$work/out\" || exit 2\n";
    sh += "cd \"$work\" || exit 2\n";
    sh += "echo \"repro: in $work\" >&2\n";
    sh += std::string("export ASAN_OPTIONS=") + kAsanOptions + " UBSAN_OPTIONS=" + kUbsanOptions + "\n";
    sh += "NWREG=${NWREG:-" + shq(s_.opt.binary) + "}\n";
    if (c.limited) sh += "ulimit -v " + std::to_string(kAddressLimit / 1024) + "\n";
    sh += "ulimit -c 0\n";
    std::string line = "timeout -s KILL " + std::to_string(static_cast<long>(s_.opt.timeout)) + " \"$NWREG\"";
    for (const auto& a : c.args()) line += " " + shq(a);
    if (c.stdin_path != "/dev/null") line += " < " + shq(c.stdin_path);
    sh += line + "\n";
    sh += "status=$?\necho \"repro: exit status $status\" >&2\nexit $status\n";
    write_file(dir / "repro.sh", sh);
    fs::permissions(dir / "repro.sh", fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read, ec);
  }
};

// ---------------------------------------------------------------------------------------------
// Set-up

int usage(const std::string& why) {
  if (!why.empty()) std::fprintf(stderr, "cli_fuzz: %s\n", why.c_str());
  std::fprintf(stderr,
               "usage: cli_fuzz --binary PATH --seed S --runs N [--limits] [--keep DIR] [--verbose] [--jobs J] "
               "[--timeout SECONDS] [--max-seconds SECONDS]\n");
  return 2;
}

bool parse_u64(const std::string& s, std::uint64_t& v) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  v = x;
  return true;
}

// Runs the binary once during set-up (making the valid models); returns its stdout or throws.
void setup_fit(Shared& s, const std::vector<std::string>& args) {
  Cmd c;
  c.fit = true;
  for (const auto& a : args) c.groups.push_back({a});
  const fs::path io = s.scratch / "io-setup";
  fs::create_directories(io);
  const Outcome o = execute(s.opt.binary, c, s.pristine.string(), io.string(), s.opt.timeout, s.env);
  if (o.timed_out || o.signal != 0 || o.exit_code != 0) {
    throw std::runtime_error("set-up run failed (" +
                             (o.timed_out ? std::string("timeout") : o.signal ? "signal " + std::to_string(o.signal)
                                                                              : "exit " + std::to_string(o.exit_code)) +
                             "): " + shell_command(s.opt.binary, c) + "\n    " + printable(o.err, 400));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Shared s;
  Options& opt = s.opt;
  bool runs_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v;
    const auto eq = a.find('=');
    bool inline_value = false;
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
      inline_value = true;
    }
    auto value = [&]() -> bool {
      if (inline_value) return true;
      if (i + 1 >= argc) return false;
      v = argv[++i];
      return true;
    };
    std::uint64_t n = 0;
    if (a == "--binary") {
      if (!value() || v.empty()) return usage("--binary needs a path");
      opt.binary = v;
    } else if (a == "--seed") {
      if (!value() || !parse_u64(v, opt.seed)) return usage("--seed needs a non-negative integer");
      opt.seed_given = true;
    } else if (a == "--runs") {
      if (!value() || !parse_u64(v, n) || n > 100000000) return usage("--runs needs an integer from 0 to 1e8");
      opt.runs = static_cast<long long>(n);
      runs_given = true;
    } else if (a == "--jobs") {
      if (!value() || !parse_u64(v, n) || n < 1 || n > 64) return usage("--jobs needs an integer from 1 to 64");
      opt.jobs = static_cast<int>(n);
    } else if (a == "--max-seconds") {
      if (!value() || !parse_u64(v, n) || n < 1 || n > 86400) return usage("--max-seconds needs seconds from 1 to 86400");
      opt.max_seconds = static_cast<double>(n);
    } else if (a == "--timeout") {
      if (!value() || !parse_u64(v, n) || n < 1 || n > 3600) return usage("--timeout needs seconds from 1 to 3600");
      opt.timeout = static_cast<double>(n);
    } else if (a == "--keep") {
      if (!value() || v.empty()) return usage("--keep needs a directory");
      opt.keep = fs::absolute(v).string();
    } else if (a == "--limits" && !inline_value) {
      opt.limits = true;
    } else if (a == "--verbose" && !inline_value) {
      opt.verbose = true;
    } else if (a == "--help" || a == "-h") {
      usage("");
      return 0;
    } else {
      return usage("unknown argument " + shq(argv[i]));
    }
  }
  if (opt.binary.empty() || !opt.seed_given || !runs_given) return usage("--binary, --seed and --runs are required");
  opt.binary = fs::absolute(opt.binary).string();
  if (access(opt.binary.c_str(), X_OK) != 0) return usage("not an executable: " + opt.binary);
  if (opt.limits) {
    const std::string bin = read_file(opt.binary);
    if (bin.find("__asan_init") != std::string::npos || bin.find("AddressSanitizer") != std::string::npos)
      return usage("--limits needs a binary without AddressSanitizer (it cannot run under RLIMIT_AS)");
  }

  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("ASAN_OPTIONS=", 0) == 0 || kv.rfind("UBSAN_OPTIONS=", 0) == 0) continue;
    s.env.push_back(kv);
  }
  s.env.push_back(std::string("ASAN_OPTIONS=") + kAsanOptions);
  s.env.push_back(std::string("UBSAN_OPTIONS=") + kUbsanOptions);

  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::string tmpl = (fs::temp_directory_path() / "cli_fuzz-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "cli_fuzz: cannot create a scratch directory: %s\n", std::strerror(errno));
    return 2;
  }
  s.scratch = tmpl;
  s.pristine = s.scratch / "pristine";
  try {
    fs::create_directories(s.pristine / "data");
    for (const auto& [name, text] : make_data_files()) write_file(s.pristine / "data" / name, text);
    setup_fit(s, {"fit", "data/good.csv", "-o", "data/model.json", "--quiet"});
    setup_fit(s, {"fit", "data/three_cols.csv", "-x", "a,b", "-y", "c", "-o", "data/model_ab.json", "--quiet"});
    setup_fit(s, {"fit", "data/three_cols.csv", "-x", "a,b", "-y", "c", "--metric", "full", "--epochs", "20", "-o",
                  "data/model_full.json", "--quiet"});
    const auto models = make_models(read_file(s.pristine / "data" / "model.json"),
                                    read_file(s.pristine / "data" / "model_ab.json"),
                                    read_file(s.pristine / "data" / "model_full.json"));
    for (const auto& [name, text] : models) write_file(s.pristine / "data" / name, text);
  } catch (const std::exception& e) {
    std::printf("cli_fuzz: FAIL set-up: %s\n", e.what());
    std::printf("cli_fuzz: scratch directory kept: %s\n", s.scratch.string().c_str());
    return 1;
  }

  const std::size_t runs = static_cast<std::size_t>(opt.runs);
  std::vector<Cmd> cmds;
  cmds.reserve(runs);
  for (std::size_t i = 0; i < runs; ++i) cmds.push_back(generate(opt.seed, i, opt.limits));

  std::vector<RunResult> results(runs);
  std::vector<char> done(runs, 0);
  std::mutex m;
  std::condition_variable cv;
  std::atomic<std::size_t> next{0};
  std::string worker_error;
  const std::size_t jobs = std::min<std::size_t>(static_cast<std::size_t>(opt.jobs), std::max<std::size_t>(runs, 1));
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < jobs; ++w) {
    threads.emplace_back([&, w] {
      try {
        Worker worker(s, w);
        for (std::size_t i; (i = next.fetch_add(1)) < runs;) {
          if (opt.max_seconds > 0 && seconds_since(t0) > opt.max_seconds) {
            std::lock_guard<std::mutex> lock(m);
            results[i].skipped = true;
            done[i] = 1;
            cv.notify_all();
            continue;
          }
          RunResult r = worker.run(i, cmds[i]);
          std::lock_guard<std::mutex> lock(m);
          results[i] = std::move(r);
          done[i] = 1;
          cv.notify_all();
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(m);
        worker_error = e.what();
        next = runs;  // stop handing out runs
        cv.notify_all();
      }
    });
  }
  std::size_t passed = 0, failed = 0, skipped = 0, reruns = 0, executions = 0;
  std::map<std::string, std::pair<std::size_t, std::string>> classes;  // class -> runs, first example
  for (std::size_t i = 0; i < runs; ++i) {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return done[i] || !worker_error.empty(); });
    if (!done[i]) break;
    const RunResult& r = results[i];
    lock.unlock();
    if (r.skipped) {
      ++skipped;
      continue;
    }
    std::fputs(r.text.c_str(), stdout);
    std::fflush(stdout);
    (r.failed ? failed : passed) += 1;
    reruns += r.reruns;
    executions += r.executions;
    std::set<std::string> once(r.classes.begin(), r.classes.end());
    for (const auto& cl : once) {
      auto& entry = classes[cl];
      if (entry.first++ == 0) entry.second = "run " + std::to_string(i) + ": " + r.first_command;
    }
  }
  for (auto& t : threads) t.join();
  if (!worker_error.empty()) {
    std::printf("cli_fuzz: harness error: %s\n", worker_error.c_str());
    std::printf("cli_fuzz: scratch directory kept: %s\n", s.scratch.string().c_str());
    return 1;
  }
  const double secs = seconds_since(t0);
  for (const auto& [cl, entry] : classes)
    std::printf("cli_fuzz: class \"%s\": %zu run%s, first %s\n", cl.c_str(), entry.first, entry.first == 1 ? "" : "s",
                entry.second.c_str());
  if (failed != 0 && !opt.keep.empty()) {
    std::printf("cli_fuzz: failing cases written to %s (run-*/repro.sh); scratch directory kept: %s\n",
                opt.keep.c_str(), s.scratch.string().c_str());
  } else {
    std::error_code ec;
    fs::remove_all(s.scratch, ec);
  }
  std::printf("cli_fuzz: seed %llu, %zu runs (+ %zu thread reruns) in %.1f s, %.1f executions/s\n",
              static_cast<unsigned long long>(opt.seed), runs, reruns, secs, secs > 0 ? static_cast<double>(executions) / secs : 0.0);
  if (skipped)
    std::printf("cli_fuzz: %zu runs not started: --max-seconds %.0f had passed (a slow machine: the runs made still count)\n",
                skipped, opt.max_seconds);
  std::printf("cli_fuzz: %zu passed, %zu failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
