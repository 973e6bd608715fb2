#pragma once
// Helpers for tests that run the real nwreg binary: run it with arguments and stdin, capture
// stdout, stderr and the exit code; scratch directories; exact error-line checks.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "helpers.h"

extern char** environ;

namespace clitest {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;  // -signal when killed by a signal
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A scratch directory per test, removed afterwards.
struct Scratch {
  fs::path dir;
  Scratch() {
    std::string t = (fs::temp_directory_path() / "nwreg-test-XXXXXX").string();
    dir = mkdtemp(t.data());
  }
  ~Scratch() { fs::remove_all(dir); }
  fs::path operator/(const std::string& name) const { return dir / name; }
  std::size_t files() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {})); }
};

// Starts nwreg with `args`; `actions` (may be null) set up its file descriptors.
inline pid_t spawn_nwreg(const std::vector<std::string>& args, const posix_spawn_file_actions_t* actions) {
  std::vector<std::string> argv_s = {NWREG_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  REQUIRE(posix_spawn(&pid, argv[0], actions, nullptr, argv.data(), environ) == 0);
  return pid;
}

// Runs nwreg with `args`, feeding `input` on stdin.
inline Result run_nwreg(const std::vector<std::string>& args, const std::string& input = "") {
  Scratch io;
  spit(io / "in", input);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, (io / "in").c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, (io / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (io / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const pid_t pid = spawn_nwreg(args, &fa);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  waitpid(pid, &status, 0);
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  r.out = slurp(io / "out");
  r.err = slurp(io / "err");
  return r;
}

inline std::string data(const std::string& name) { return testing::source_path("data/" + name); }

// Expects a failure: the exit code and exactly one stderr line.
inline void check_error(const Result& r, int code, const std::string& line) {
  CHECK(r.exit_code == code);
  CHECK(r.err == "nwreg: error: " + line + "\n");
  CHECK(r.out.empty());
}

// Temporary output files (names holding ".nwreg-") in a directory.
inline std::size_t temp_files(const fs::path& dir) {
  std::size_t k = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".nwreg-") != std::string::npos) ++k;
  return k;
}

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream s(text);
  for (std::string l; std::getline(s, l);) v.push_back(l);
  return v;
}

// The fields of a line of nwreg's output (no quoting in these outputs).
inline std::vector<std::string> split(const std::string& line, char sep = ',') {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t at; (at = line.find(sep, from)) != std::string::npos; from = at + 1) out.push_back(line.substr(from, at - from));
  out.push_back(line.substr(from));
  return out;
}

// nwreg with stdin and stdout on pipes, for a conversation: write a line, read the answer, and
// only then write the next (a reader that waited for the end of its input would hang).
class Conversation {
 public:
  explicit Conversation(const std::vector<std::string>& args) {
    int to_child[2], from_child[2];
    REQUIRE(pipe(to_child) == 0);
    REQUIRE(pipe(from_child) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
    posix_spawn_file_actions_addclose(&fa, to_child[1]);
    posix_spawn_file_actions_addclose(&fa, from_child[0]);
    pid_ = spawn_nwreg(args, &fa);
    posix_spawn_file_actions_destroy(&fa);
    close(to_child[0]);
    close(from_child[1]);
    to_ = to_child[1];
    answers_ = fdopen(from_child[0], "r");
  }
  ~Conversation() { finish(); }
  // Writes `text` (without waiting), then reads one line of the answer: blocks until it comes.
  std::string ask(const std::string& text) {
    if (!text.empty()) REQUIRE(write(to_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    char buf[4096];
    REQUIRE(fgets(buf, sizeof buf, answers_) != nullptr);
    return buf;
  }
  // Writes `text` and reads nothing.
  void ask_nothing(const std::string& text) {
    REQUIRE(write(to_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  // Closes stdin and waits: the exit code, or -1 if it did not exit normally.
  int finish() {
    if (pid_ < 0) return status_;
    close(to_);
    int status = 0;
    waitpid(pid_, &status, 0);
    fclose(answers_);
    pid_ = -1;
    return status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, status_ = -1;
  FILE* answers_ = nullptr;
};

}  // namespace clitest
