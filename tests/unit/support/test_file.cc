// write_text_file / write_file: a regular file replaced atomically, a device or pipe written
// in place (as root, `dragon build -o /dev/null` had renamed a file over /dev/null), a link
// kept while the file it names is replaced, and writers of one path that never share a
// temporary (a shared PATH.tmp made one of two writers fail with "No such file").
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon {
namespace {

namespace fs = std::filesystem;

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dragon-file-test-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The names in the folder (a temporary left behind shows here).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

TEST_F(FileTest, ARegularFileIsReplacedWholeAndNoTemporaryIsLeft) {
  const std::string path = (dir_ / "a.txt").string();
  write_text_file(path, "first, and longer");
  write_text_file(path, "second");
  EXPECT_EQ(read_text_file(path), "second");
  EXPECT_EQ(names(), std::vector<std::string>{"a.txt"});
}

TEST_F(FileTest, DevNullStaysADevice) {
  struct stat before {};
  if (::stat("/dev/null", &before) != 0 || !S_ISCHR(before.st_mode)) GTEST_SKIP() << "/dev/null is not a device here";
  write_text_file("/dev/null", "nothing to keep");
  struct stat after {};
  ASSERT_EQ(::stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_rdev, before.st_rdev);
}

TEST_F(FileTest, APipeIsWrittenInPlace) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_text_file(fifo.string()); });
  write_text_file(fifo.string(), "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
}

TEST_F(FileTest, ALinkIsKeptAndTheFileItNamesReplaced) {
  const fs::path target = dir_ / "target.txt", link = dir_ / "link.txt";
  write_text_file(target.string(), "old");
  fs::create_symlink(target, link);
  write_text_file(link.string(), "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read_text_file(target.string()), "new");
  EXPECT_EQ(names(), (std::vector<std::string>{"link.txt", "target.txt"}));
}

TEST_F(FileTest, WritersOfOnePathNeverShareATemporary) {
  const std::string path = (dir_ / "shared.txt").string();
  auto writer = [&](const std::string& text) {
    for (int i = 0; i < 100; ++i) write_text_file(path, text);
  };
  std::thread a(writer, std::string(1000, 'a')), b(writer, std::string(1000, 'b'));
  a.join();
  b.join();
  const std::string last = read_text_file(path);
  EXPECT_TRUE(last == std::string(1000, 'a') || last == std::string(1000, 'b'));
  EXPECT_EQ(names(), std::vector<std::string>{"shared.txt"});
}

TEST_F(FileTest, ADirectoryOrAMissingFolderIsAUserErrorNamingThePath) {
  try {
    write_text_file(dir_.string(), "x");
    FAIL() << "wrote over a directory";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  const std::string missing = (dir_ / "no" / "such" / "file.txt").string();
  try {
    write_text_file(missing, "x");
    FAIL() << "wrote into a missing folder";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dragon
