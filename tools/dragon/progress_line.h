// One progress line on stderr for long commands (dragon tune, dragon data build): redrawn
// in place on a terminal, one line per update otherwise (logs, CI), with log lines printed
// above it. Printing only.
#pragma once

#include <cstdint>
#include <string>

namespace dragon::cli {

class ProgressLine {
 public:
  explicit ProgressLine(bool quiet);
  // Replaces the line (nothing when quiet).
  void show(const std::string& line);
  // Prints `text` on a line of its own, even when quiet.
  void log(const std::string& text);
  // Ends the line (call once the progress is over).
  void finish();
  // "[#########...............]": `done` of `total` in `width` characters.
  static std::string bar(int64_t done, int64_t total, int width = 24);

 private:
  bool quiet_, terminal_;
  bool shown_ = false;
};

}  // namespace dragon::cli
