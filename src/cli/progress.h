#pragma once
/// Progress on stderr for a person at a terminal: one status line, rewritten in place and
/// cleared at the end. Silent when stderr is not a terminal or with --quiet.

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace nwreg::cli {

class Progress {
 public:
  /// Shows progress when `enabled` and stderr is a terminal.
  explicit Progress(bool enabled);
  /// Clears the status line.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool active() const { return active_; }
  /// Replaces the status line with `text` (at most ten times a second unless `force`).
  void line(const std::string& text, bool force = false);
  /// A bar for `what`, shown once the work has taken 0.2 s. Safe from any thread.
  void bar(const char* what, std::size_t done, std::size_t total);

 private:
  bool active_;
  bool shown_ = false;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace nwreg::cli
