// Golden IR texts (tests/golden/ir/*.ir): each parses and prints back byte for byte, so
// the canonical format cannot drift without a golden file changing with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/ir/structural_hash.h"

namespace dragon::ir {
namespace {

const std::filesystem::path kGoldenDir = DRAGON_SOURCE_DIR "/tests/golden/ir";

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::filesystem::path> golden_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(kGoldenDir)) {
    if (entry.path().extension() == ".ir") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Golden, TheRequiredFilesExist) {
  for (const char* name :
       {"matmul.ir", "conv_pad.ir", "reduce_sum.ir", "cumsum_scan.ir", "embedding_bag.ir", "scheduled.ir"}) {
    EXPECT_TRUE(std::filesystem::exists(kGoldenDir / name)) << name;
  }
}

TEST(Golden, EveryFileParsesAndPrintsBackByteForByte) {
  std::vector<std::filesystem::path> files = golden_files();
  ASSERT_GE(files.size(), 6u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::string text = read_file(path);
    PrimFunc f = parse_function(text, path.filename().string());
    EXPECT_EQ(print_function(f), text);
    // A second parse builds new nodes that are equal to the first.
    PrimFunc again = parse_function(text);
    EXPECT_FALSE(again.same_as(f));
    EXPECT_TRUE(structural_equal(f, again));
    EXPECT_EQ(structural_hash(f), structural_hash(again));
  }
}

TEST(Golden, FilesHoldTheConstructsTheyStandFor) {
  auto has = [](const char* file, const char* line) {
    return read_file(kGoldenDir / file).find(line) != std::string::npos;
  };
  EXPECT_TRUE(has("conv_pad.ir", "alloc X_pad: f32[1, 3, 10, 10]"));
  EXPECT_TRUE(has("reduce_sum.ir", "block S [vr0: R 128 = r0, vr1: R 64 = r1] {"));
  EXPECT_TRUE(has("cumsum_scan.ir", "vi1: O 100 = 99 - i1"));
  EXPECT_TRUE(has("embedding_bag.ir", "in offsets: i64[5] offsets(16, 8)"));
  EXPECT_TRUE(has("scheduled.ir", "for i0_1 in 32 bind threadIdx.x {"));
  EXPECT_TRUE(has("scheduled.ir", "if (i0_0 * 32 + i0_1 < 100)"));
  EXPECT_TRUE(has("scheduled.ir", "alloc B_shared: f32[64, 128] shared"));
  EXPECT_TRUE(has("scheduled.ir", "v0: S 64 = ax0_ax1_fused // 128, v1: S 128 = ax0_ax1_fused % 128"));
}

}  // namespace
}  // namespace dragon::ir
