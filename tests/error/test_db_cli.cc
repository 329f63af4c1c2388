// dragon db stats|export|import: a MetaSchedule import, stats, an export and its import
// elsewhere exit 0 and say what they did; bad files and missing flags exit 1 with the
// path and the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_runner.h"

namespace dragon::testing {
namespace {

const std::string kFixture = std::string(DRAGON_SOURCE_DIR) + "/tests/unit/db/metaschedule";

// A fresh path under the test's temporary directory.
std::string fresh(const std::string& name) {
  std::string path = ::testing::TempDir() + "db_cli_" + name;
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return path;
}

void expect_contains(const CliResult& result, const std::string& text) {
  EXPECT_NE(result.output.find(text), std::string::npos) << "expected: " << text << "\noutput:\n" << result.output;
}

TEST(DbCli, ImportStatsExportAndImportBack) {
  const std::string db = fresh("a.db");
  CliResult imported = run_dragon("db import " + db + " --metaschedule " + kFixture +
                                  " --workload 13791209148562378501=matmul:m=64,n=64,k=64,dtype=f32"
                                  " --device 'NVIDIA H200' --driver 580.65.06");
  ASSERT_EQ(imported.status, 0) << imported.output;
  expect_contains(imported, "1 workloads added, 5 records added, 0 already there, 3 skipped");
  expect_contains(imported, "skipped: " + kFixture + "/database_tuning_record.json:5: the trace does not replay");

  CliResult stats = run_dragon("db stats " + db + " --check");
  ASSERT_EQ(stats.status, 0) << stats.output;
  expect_contains(stats, db + ": schema 1, 1 workloads, 5 records");
  expect_contains(stats, "by status: ok 3, run_failed 2");
  expect_contains(stats, "cuda sm_90a on NVIDIA H200 (driver 580.65.06): 1 workloads, 4 records, 2 ok");
  expect_contains(stats, "cpu skylake-avx512 on NVIDIA H200 (driver 580.65.06): 1 workloads, 1 records, 1 ok");
  expect_contains(stats, "integrity: ok");

  const std::string jsonl = fresh("a.jsonl");
  CliResult exported = run_dragon("db export " + db + " -o " + jsonl);
  ASSERT_EQ(exported.status, 0) << exported.output;
  expect_contains(exported, "1 workloads, 5 records");
  const std::string copy = fresh("b.db");
  CliResult back = run_dragon("db import " + copy + " " + jsonl);
  ASSERT_EQ(back.status, 0) << back.output;
  expect_contains(back, "1 workloads added, 5 records added, 0 already there, 0 skipped");
  CliResult again = run_dragon("db import " + copy + " " + jsonl);
  ASSERT_EQ(again.status, 0) << again.output;
  expect_contains(again, "0 workloads added, 0 records added, 5 already there");

  const std::string model_only = fresh("model.jsonl");
  CliResult none = run_dragon("db export " + db + " -o " + model_only + " --origin model");
  ASSERT_EQ(none.status, 0) << none.output;
  expect_contains(none, "0 workloads, 0 records");
}

TEST(DbCli, BadFilesAndMissingFlagsExitOneNamingThePath) {
  const std::string text = write_temp_file("db_cli_notes.txt", std::string(4000, 'n'));
  CliResult not_db = run_dragon("db stats " + text);
  EXPECT_EQ(not_db.status, 1) << not_db.output;
  expect_contains(not_db, "error: " + text + " is not a tuning database");

  const std::string missing = fresh("missing.db");
  CliResult no_file = run_dragon("db export " + missing + " -o " + fresh("x.jsonl"));
  EXPECT_EQ(no_file.status, 1) << no_file.output;
  expect_contains(no_file, "cannot open tuning database " + missing + ": no such file");
  EXPECT_FALSE(std::filesystem::exists(missing)) << "a read-only command created the file";

  const std::string db = fresh("c.db");
  CliResult nothing = run_dragon("db import " + db);
  EXPECT_EQ(nothing.status, 1) << nothing.output;
  expect_contains(nothing, "give either a JSON-lines file or --metaschedule DIR");
  CliResult no_device =
      run_dragon("db import " + db + " --metaschedule " + kFixture + " --workload matmul:m=64,n=64,k=64,dtype=f32");
  EXPECT_EQ(no_device.status, 1) << no_device.output;
  expect_contains(no_device, "--metaschedule needs --device");
  CliResult no_workload = run_dragon("db import " + db + " --metaschedule " + kFixture + " --device H200");
  EXPECT_EQ(no_workload.status, 1) << no_workload.output;
  expect_contains(no_workload, "--metaschedule needs --workload");
  CliResult bad_target = run_dragon("db import " + db + " --metaschedule " + kFixture +
                                    " --workload matmul:m=64,n=64,k=64 --device H200 --target sm_90a");
  EXPECT_EQ(bad_target.status, 1) << bad_target.output;
  expect_contains(bad_target, "bad --target 'sm_90a'");

  const std::string bad_jsonl =
      write_temp_file("db_cli_bad.jsonl", "{\"format\":\"little-dragon-tuning-records\",\"version\":1}\n{\"kind\":\n");
  CliResult malformed = run_dragon("db import " + db + " " + bad_jsonl);
  EXPECT_EQ(malformed.status, 1) << malformed.output;
  expect_contains(malformed, bad_jsonl + ":2: not JSON");
}

}  // namespace
}  // namespace dragon::testing
