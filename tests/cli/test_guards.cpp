// Guards for unattended use: determinism across threads and runs, signals, size limits, model
// mismatches, memory at 1e7 rows. Runs the real binary.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <memory>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "cli_helpers.h"
#include "helpers.h"
#include "nwreg/base/numbers.h"

namespace fs = std::filesystem;
using namespace clitest;

extern char** environ;

namespace {

// Starts nwreg with stdin on a pipe that stays open, so it blocks reading it.
struct Blocked {
  pid_t pid = -1;
  int stdin_write = -1;
};

Blocked start_blocked(const std::vector<std::string>& args, const fs::path& err) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Blocked b;
  b.pid = spawn_nwreg(args, &fa);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[0]);
  b.stdin_write = fds[1];
  return b;
}


}  // namespace

TEST_CASE("guards: output is byte for byte the same whatever --threads, and run after run") {
  Scratch s;
  std::string train = "x,y\n";
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> u(0, 5);
  for (int i = 0; i < 3000; ++i) {
    const double x = u(g);
    train += nwreg::format_double(x) + "," + nwreg::format_double(std::sin(x) + u(g) / 5) + "\n";
  }
  spit(s / "t.csv", train);
  std::string first_pred, first_weights, first_fit;
  for (const char* threads : {"1", "2", "3", "1"}) {
    Result p = run_nwreg({"predict", (s / "t.csv").string(), "--grid", "-1:6:0.01", "--threads", threads,
                          "--weights", (s / "w.csv").string(), "--format", "json"});
    Result f = run_nwreg({"fit", (s / "t.csv").string(), "--threads", threads, "--format", "json"});
    REQUIRE(p.exit_code == 0);
    REQUIRE(f.exit_code == 0);
    if (first_pred.empty()) {
      first_pred = p.out;
      first_weights = slurp(s / "w.csv");
      first_fit = f.out;
      continue;
    }
    CAPTURE(threads);
    CHECK(p.out == first_pred);
    CHECK(slurp(s / "w.csv") == first_weights);
    CHECK(f.out == first_fit);
  }
}

TEST_CASE("guards: SIGTERM and SIGINT remove the temporary output and exit 143 and 130") {
  for (const auto& signal_and_code : {std::pair{SIGTERM, 143}, std::pair{SIGINT, 130}}) {
    const int sig = signal_and_code.first, code = signal_and_code.second;
    Scratch s;
    spit(s / "keep.csv", "old\n");
    const Blocked b = start_blocked({"predict", data("synthetic.csv"), "-b", "1", "--query", "-", "-o",
                                     (s / "keep.csv").string(), "--weights", (s / "w.csv").string()},
                                    s / "err");
    // Wait until both temporary files exist: nwreg is then blocked reading the queries.
    for (int i = 0; i < 1000 && temp_files(s.dir) < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(temp_files(s.dir) == 2);
    kill(b.pid, sig);
    int status = 0;
    waitpid(b.pid, &status, 0);
    close(b.stdin_write);
    CAPTURE(sig);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == code);
    CHECK(temp_files(s.dir) == 0);
    CHECK(slurp(s / "keep.csv") == "old\n");
    CHECK_FALSE(fs::exists(s / "w.csv"));
  }
}

TEST_CASE("guards: a hang-up inherited as ignored (nohup) stays ignored") {
  Scratch s;
  // The child inherits SIGHUP ignored, as under nohup.
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGHUP, &ignore, &old);
  const Blocked b = start_blocked({"predict", data("synthetic.csv"), "-b", "1", "--query", "-", "-o",
                                   (s / "p.csv").string()},
                                  s / "err");
  sigaction(SIGHUP, &old, nullptr);
  for (int i = 0; i < 1000 && temp_files(s.dir) < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(temp_files(s.dir) == 1);
  kill(b.pid, SIGHUP);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(waitpid(b.pid, nullptr, WNOHANG) == 0);  // still running
  REQUIRE(write(b.stdin_write, "x\n1\n", 4) == 4);
  close(b.stdin_write);
  int status = 0;
  waitpid(b.pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(slurp(s / "p.csv") == run_nwreg({"predict", data("synthetic.csv"), "-b", "1", "--grid", "1:2:1"}).out);
}

TEST_CASE("guards: a weights matrix over the limit is refused before any work, naming the option") {
  Scratch s;
  check_error(run_nwreg({"predict", data("mcycle.csv"), "-b", "1", "--grid-n", "800000", "--weights",
                         (s / "w.csv").string()}),
              2,
              "--weights: 800000 queries x 133 keys = 106400000 entries (about 2.1 GB as text), over the limit of "
              "100000000; raise it with --max-weights");
  CHECK(s.files() == 0);
  Result ok = run_nwreg({"predict", data("mcycle.csv"), "-b", "1", "--grid-n", "10", "--weights",
                         (s / "w.csv").string(), "--max-weights", "1330"});
  CHECK(ok.exit_code == 0);
  check_error(run_nwreg({"predict", data("mcycle.csv"), "-b", "1", "--grid-n", "11", "--weights",
                         (s / "w.csv").string(), "--max-weights", "1330"}),
              2,
              "--weights: 11 queries x 133 keys = 1463 entries (about 29 kB as text), over the limit of 1330; raise it "
              "with --max-weights");
  check_error(run_nwreg({"predict", data("mcycle.csv"), "-b", "1", "-o", (s / "p.csv").string(), "--weights",
                         (s / "p.csv").string()}),
              2, "--weights: " + (s / "p.csv").string() + " is also the -o file; give another file");
  // Checked before learning: with -v a scan that had started would have said so on stderr.
  std::string big = "x,y\n";
  for (int i = 0; i < 100000; ++i) big += std::to_string(i) + "," + std::to_string(i % 7) + "\n";
  spit(s / "big.csv", big);
  check_error(run_nwreg({"predict", (s / "big.csv").string(), "-v", "--weights", (s / "w.csv").string()}), 2,
              "--weights: 100000 queries x 100000 keys = 10000000000 entries (about 200 GB as text), over the limit "
              "of 100000000; raise it with --max-weights");
}

TEST_CASE("guards: a model fitted on other columns is refused") {
  Scratch s;
  const std::string model = (s / "m.json").string();
  REQUIRE(run_nwreg({"fit", data("faithful.csv"), "-x", "waiting", "-y", "eruptions", "-o", model}).exit_code == 0);
  check_error(run_nwreg({"predict", data("faithful.csv"), "--model", model, "-x", "eruptions", "-y", "waiting"}), 1,
              model + ": fitted on x column \"waiting\" and y column \"eruptions\", not on x column \"eruptions\" and "
                      "y column \"waiting\" of " + data("faithful.csv"));
  // Without -x/-y the model's own columns are used.
  CHECK(run_nwreg({"predict", data("faithful.csv"), "--model", model, "--grid", "50:90:20"}).exit_code == 0);
}

#ifndef NWREG_ASAN  // AddressSanitizer's shadow memory would dwarf the figure
TEST_CASE("guards: 1e7 training rows work within about 3x the raw data size in memory") {
  Scratch s;
  const std::size_t n = 10'000'000;
  {
    std::ofstream f(s / "big.csv", std::ios::binary);
    std::string buf = "x,y\n";
    std::mt19937_64 g(1);
    std::uniform_real_distribution<double> u(0, 5);
    for (std::size_t i = 0; i < n; ++i) {
      const double x = u(g);
      nwreg::append_double(buf, x);
      buf += ',';
      nwreg::append_double(buf, x * 0.5 + u(g));
      buf += '\n';
      if (buf.size() > (1 << 20)) {
        f << buf;
        buf.clear();
      }
    }
    f << buf;
  }
  const pid_t pid =
      spawn_nwreg({"predict", (s / "big.csv").string(), "-b", "0.01", "--grid-n", "10", "-o", (s / "p.csv").string()},
                  nullptr);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const double raw_mb = static_cast<double>(n) * 16 / 1e6;
  const double peak_mb = static_cast<double>(ru.ru_maxrss) * 1024 / 1e6;
  MESSAGE("peak RSS " << peak_mb << " MB for " << raw_mb << " MB of raw data");
  CHECK(peak_mb <= 3 * raw_mb);
  CHECK(std::count(std::istreambuf_iterator<char>(*std::make_unique<std::ifstream>(s / "p.csv")), {}, '\n') == 11);
}
#endif
