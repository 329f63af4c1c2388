// for_each_nonblank_line (text_lines.h).
#include "dragon/support/text_lines.h"

namespace dragon {

void for_each_nonblank_line(std::string_view text, const std::function<void(std::string_view line, int number)>& visit) {
  size_t start = 0;
  int number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) visit(line, number);
  }
}

}  // namespace dragon
