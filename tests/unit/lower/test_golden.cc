// Golden lowering tests (tests/golden/lower/*.ir): each file holds a scheduled function
// and "# CHECK: <line>" comments; the function lowered for the CPU must print every CHECK
// line (trimmed, exact) in order, and compute the same bytes as the scheduled function.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "lower_test_util.h"

namespace dragon::lower {
namespace {

const std::filesystem::path kGoldenDir = DRAGON_SOURCE_DIR "/tests/golden/lower";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> check_lines(const std::string& text) {
  const std::string marker = "# CHECK: ";
  std::vector<std::string> checks;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(marker, 0) == 0) checks.push_back(line.substr(marker.size()));
  }
  return checks;
}

std::vector<std::string> trimmed_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t start = line.find_first_not_of(' ');
    lines.push_back(start == std::string::npos ? "" : line.substr(start));
  }
  return lines;
}

// FileCheck's CHECK: each line found after the previous one's match.
::testing::AssertionResult checks_in_order(const std::vector<std::string>& checks, const std::string& printed) {
  std::vector<std::string> lines = trimmed_lines(printed);
  auto at = lines.begin();
  for (const std::string& check : checks) {
    auto found = std::find(at, lines.end(), check);
    if (found == lines.end()) {
      return ::testing::AssertionFailure() << "CHECK not found (in order): " << check << "\nin:\n" << printed;
    }
    at = found + 1;
  }
  return ::testing::AssertionSuccess();
}

TEST(GoldenLower, EachFileLowersToItsCheckedLines) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kGoldenDir)) {
    if (entry.path().extension() == ".ir") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 3u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::string text = read_file(path);
    std::vector<std::string> checks = check_lines(text);
    EXPECT_GE(checks.size(), 3u) << "a golden file must check the lines that matter";
    ir::PrimFunc scheduled = ir::parse_function(text, path.filename().string());
    ir::PrimFunc lowered = lower(scheduled, Target::cpu()).func;
    EXPECT_TRUE(checks_in_order(checks, ir::print_function(lowered)));
    EXPECT_TRUE(testing::computes_the_same(scheduled, lowered));
  }
}

TEST(GoldenLower, TheRequiredFilesExist) {
  for (const char* name : {"matmul_cache_read.ir", "softmax.ir", "split_non_divisible.ir", "storage_align.ir"}) {
    EXPECT_TRUE(std::filesystem::exists(kGoldenDir / name)) << name;
  }
}

}  // namespace
}  // namespace dragon::lower
