// for_each_nonblank_line: blank lines skipped but counted, a last line without a newline
// kept, carriage returns left in the line.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "dragon/support/text_lines.h"

namespace dragon {
namespace {

std::vector<std::pair<std::string, int>> lines_of(std::string_view text) {
  std::vector<std::pair<std::string, int>> out;
  for_each_nonblank_line(text, [&](std::string_view line, int number) { out.emplace_back(std::string(line), number); });
  return out;
}

TEST(TextLines, BlankLinesAreSkippedButCounted) {
  using Lines = std::vector<std::pair<std::string, int>>;
  EXPECT_EQ(lines_of("a\n\n  \t\nb\n"), (Lines{{"a", 1}, {"b", 4}}));
  EXPECT_EQ(lines_of("a\r\n\r\nc"), (Lines{{"a\r", 1}, {"c", 3}})) << "the last line needs no newline";
  EXPECT_TRUE(lines_of("").empty());
  EXPECT_TRUE(lines_of("\n \n").empty());
}

}  // namespace
}  // namespace dragon
