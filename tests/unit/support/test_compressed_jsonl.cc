// zstd-compressed JSON lines (support/compressed_jsonl.h): lines round-trip byte for byte,
// Debian's zstd reads what is written, the write replaces the file whole, and a truncated
// or damaged file is a user error naming it.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "dragon/support/compressed_jsonl.h"
#include "dragon/support/error.h"
#include "unit/db/db_test_util.h"

namespace dragon::support {
namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string error_of(const std::string& path) {
  try {
    read_compressed_jsonl(path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> sample_lines() {
  std::vector<std::string> lines;
  for (int i = 0; i < 500; ++i) {
    lines.push_back("{\"task\":\"construction\",\"n\":" + std::to_string(i) + ",\"script\":\"b0 = get_block \\\"T\\\"\\n\"}");
  }
  lines.push_back("");                          // an empty line survives
  lines.push_back("{\"text\":\"\xc3\xa9\\t\"}");  // non-ASCII bytes too
  return lines;
}

TEST(CompressedJsonl, LinesRoundTripAndCompress) {
  db::testing::TempDir dir;
  const std::string path = dir.file("shard-0-of-1.jsonl.zst");
  const std::vector<std::string> lines = sample_lines();
  write_compressed_jsonl(path, lines);
  EXPECT_EQ(read_compressed_jsonl(path), lines);
  size_t raw = 0;
  for (const std::string& l : lines) raw += l.size() + 1;
  EXPECT_LT(std::filesystem::file_size(path), raw / 10) << "repetitive JSON lines compress well";
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  write_compressed_jsonl(path, {});
  EXPECT_TRUE(read_compressed_jsonl(path).empty()) << "an empty shard is a valid file";
}

TEST(CompressedJsonl, DebiansZstdReadsIt) {
  if (std::system("zstd --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "[SKIP] no zstd program on this machine";
  db::testing::TempDir dir;
  const std::string path = dir.file("lines.jsonl.zst");
  const std::vector<std::string> lines = sample_lines();
  write_compressed_jsonl(path, lines);
  ASSERT_EQ(std::system(("zstd -q -t " + path).c_str()), 0) << "zstd's own integrity test";
  ASSERT_EQ(std::system(("zstd -q -d -c " + path + " > " + dir.file("lines.jsonl")).c_str()), 0);
  std::string expected;
  for (const std::string& l : lines) expected += l + "\n";
  EXPECT_EQ(bytes_of(dir.file("lines.jsonl")), expected);
  // And what zstd writes reads back here.
  ASSERT_EQ(std::system(("zstd -q -f -3 " + dir.file("lines.jsonl") + " -o " + dir.file("again.zst")).c_str()), 0);
  EXPECT_EQ(read_compressed_jsonl(dir.file("again.zst")), lines);
}

TEST(CompressedJsonl, DamagedFilesAreUserErrorsNamingThem) {
  db::testing::TempDir dir;
  const std::string path = dir.file("shard-3-of-4.jsonl.zst");
  write_compressed_jsonl(path, sample_lines());
  const std::string good = bytes_of(path);

  write_bytes(path, good.substr(0, good.size() / 2));
  EXPECT_NE(error_of(path).find(path + ": truncated"), std::string::npos) << error_of(path);

  std::string flipped = good;
  flipped[flipped.size() - 6] = static_cast<char>(flipped[flipped.size() - 6] ^ 0x55);
  write_bytes(path, flipped);
  EXPECT_NE(error_of(path).find(path + ": not a sound zstd file"), std::string::npos) << error_of(path);

  write_bytes(path, "{\"task\":\"construction\"}\n");
  EXPECT_NE(error_of(path).find(path + ": not a sound zstd file"), std::string::npos) << "plain JSONL is not a shard";

  write_bytes(path, "");
  EXPECT_NE(error_of(path).find("empty file"), std::string::npos);

  EXPECT_NE(error_of(dir.file("missing.zst")).find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace dragon::support
