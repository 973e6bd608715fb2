#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace nwreg::cli {

Progress::Progress(bool enabled)
    : active_(enabled && ::isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
  if (shown_) std::fputs("\r\033[K", stderr);
}

void Progress::line(const std::string& text, bool force) {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (!force && shown_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  shown_ = true;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
}

void Progress::bar(const char* what, std::size_t done, std::size_t total) {
  if (!active_ || total == 0) return;
  if (std::chrono::steady_clock::now() - start_ < std::chrono::milliseconds(200)) return;
  constexpr int width = 30;
  const double share = static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(share * width);
  char text[128];
  std::snprintf(text, sizeof text, "nwreg: %s [%s%s] %3d%%", what, std::string(filled, '#').c_str(),
                std::string(width - filled, '.').c_str(), static_cast<int>(share * 100));
  line(text, done == total);
}

}  // namespace nwreg::cli
