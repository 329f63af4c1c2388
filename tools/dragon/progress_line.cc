#include "progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace dragon::cli {

ProgressLine::ProgressLine(bool quiet) : quiet_(quiet), terminal_(::isatty(STDERR_FILENO)) {}

void ProgressLine::show(const std::string& line) {
  if (quiet_) return;
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::log(const std::string& text) {
  if (terminal_ && !quiet_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s\n", text.c_str());
}

void ProgressLine::finish() {
  if (!quiet_ && terminal_ && shown_) std::fprintf(stderr, "\n");
  shown_ = false;
}

std::string ProgressLine::bar(int64_t done, int64_t total, int width) {
  const int filled = total > 0 ? static_cast<int>(width * std::clamp<int64_t>(done, 0, total) / total) : width;
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

}  // namespace dragon::cli
