// Bad database files are user errors that name the path and say what is wrong: not SQLite,
// another program's SQLite file, a schema version this build does not know, an empty file
// opened read-only, a directory, a truncated or overwritten file.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "dragon/db/database.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "unit/db/db_test_util.h"

namespace dragon::db {
namespace {

using testing::TempDir;

// Runs raw SQL on `path` with SQLite itself (to make files our code would never write).
void raw_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

// Expects `action` to throw a UserError whose message holds `path` and `expected`.
template <typename Action>
void expect_user_error(Action&& action, const std::string& path, std::string_view expected) {
  try {
    action();
    ADD_FAILURE() << "no error; expected: " << expected;
  } catch (const UserError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST(OpenErrors, AFileThatIsNotSqlite) {
  TempDir dir;
  const std::string path = dir.file("notes.jsonl");
  write_text_file(path, "{\"format\":\"little-dragon-tuning-records\",\"version\":1}\n" + std::string(5000, 'x'));
  expect_user_error([&] { Database::open(path); }, path, "is not a tuning database (not an SQLite file");
  expect_user_error([&] { Database::open(path, OpenOptions{.read_only = true}); }, path, "is not a tuning database");
  std::string bytes(8192, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + 7);
  write_text_file(path, bytes);
  expect_user_error([&] { Database::open(path); }, path, "is not a tuning database");
}

TEST(OpenErrors, AnotherProgramsSqliteFile) {
  TempDir dir;
  const std::string path = dir.file("other.sqlite");
  raw_sql(path, "CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('a');");
  expect_user_error([&] { Database::open(path); }, path,
                    "is an SQLite database of another program, not a Little Dragon tuning database");
  raw_sql(path, "PRAGMA application_id = 1234;");
  expect_user_error([&] { Database::open(path); }, path, "application_id 0x4d2");
}

TEST(OpenErrors, UnknownSchemaVersions) {
  TempDir dir;
  const std::string path = dir.file("t.db");
  { Database::open(path); }
  raw_sql(path, "PRAGMA user_version = 99;");
  expect_user_error([&] { Database::open(path); }, path,
                    "has schema version 99, newer than this build of Little Dragon reads (1)");
  expect_user_error([&] { Database::open(path, OpenOptions{.read_only = true}); }, path, "schema version 99");
  raw_sql(path, "PRAGMA user_version = 0;");
  expect_user_error([&] { Database::open(path); }, path, "has an unknown schema version 0");
  raw_sql(path, "PRAGMA user_version = 1;");
  EXPECT_NO_THROW(Database::open(path));
}

TEST(OpenErrors, EmptyFilesMissingFilesAndDirectories) {
  TempDir dir;
  const std::string empty = dir.file("empty.db");
  write_text_file(empty, "");
  expect_user_error([&] { Database::open(empty, OpenOptions{.read_only = true}); }, empty, "is empty");
  EXPECT_NO_THROW(Database::open(empty)) << "read-write, an empty file becomes a new database";
  const std::string missing = dir.file("missing.db");
  expect_user_error([&] { Database::open(missing, OpenOptions{.read_only = true}); }, missing, "no such file");
  expect_user_error([&] { Database::open(dir.path()); }, dir.path(), "cannot open tuning database");
  expect_user_error([&] { Database::open(dir.file("no/such/dir.db")); }, dir.file("no/such/dir.db"), "cannot open");
}

// A database of a few hundred pages, closed (so everything is in the main file).
std::string filled_database(const TempDir& dir) {
  const std::string path = dir.file("t.db");
  Workload w = testing::workload_of_spec("matmul:m=32,n=32,k=16,dtype=f32");
  Database db = Database::open(path);
  db.add_workload(w);
  std::vector<Record> batch;
  for (int i = 0; i < 3000; ++i) {
    Record r = testing::ok_record(TuningKey{w.hash, testing::cuda_sm90a(), testing::h200()}, "",
                                  std::vector<float>(20, 0.5f + 0.001f * static_cast<float>(i)));
    r.kernel_hash = "kernel-" + std::to_string(i);
    batch.push_back(std::move(r));
  }
  db.commit(batch);
  return path;
}

// Reads everything a user would (open, scan, integrity check) and expects a UserError
// naming the path, and no other exception.
void expect_damage_reported(const std::string& path) {
  try {
    Database db = Database::open(path);
    db.records();
    std::vector<std::string> problems = db.integrity_problems();
    EXPECT_FALSE(problems.empty()) << "a damaged file passed the integrity check";
  } catch (const UserError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_TRUE(message.find("corrupt") != std::string::npos || message.find("not a tuning database") != std::string::npos)
        << message;
  }
}

TEST(OpenErrors, ATruncatedFile) {
  TempDir dir;
  const std::string path = filled_database(dir);
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 100'000u);
  std::filesystem::resize_file(path, size / 2);
  expect_damage_reported(path);
}

TEST(OpenErrors, AnOverwrittenPage) {
  TempDir dir;
  const std::string path = filled_database(dir);
  const auto size = std::filesystem::file_size(path);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
    const std::string garbage(4096, '\xA5');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  expect_damage_reported(path);
}

}  // namespace
}  // namespace dragon::db
