// dragon tune, best and space: bad flags and bad files exit 1 with what was wrong, never
// an internal error; a GPU tuning run without a device says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_runner.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::testing {
namespace {

::testing::AssertionResult user_error(const CliResult& r, const std::string& text) {
  if (r.status != 1) return ::testing::AssertionFailure() << "exit " << r.status << ", expected 1:\n" << r.output;
  if (r.output.find(text) == std::string::npos) {
    return ::testing::AssertionFailure() << "expected: " << text << "\noutput:\n" << r.output;
  }
  if (r.output.find("internal error") != std::string::npos) return ::testing::AssertionFailure() << r.output;
  return ::testing::AssertionSuccess();
}

TEST(TuneCliError, FlagsThatCannotWorkAreUserErrors) {
  const std::string db = ::testing::TempDir() + "tune_cli_error.db";
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target cpu"), "give --db FILE"));
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --suite dlrm --target cpu --db " + db),
                         "give an op spec or --suite NAME"));
  EXPECT_TRUE(user_error(run_dragon("tune --target cpu --db " + db), "give an op spec or --suite NAME"));
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target tpu --db " + db), "--target"));
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target cpu --trials -1 --db " + db), "must not be negative"));
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target cpu --batch -2 --db " + db),
                         "dragon tune: --batch must not be negative"));
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target cpu --time-budget -5 --db " + db),
                         "dragon tune: --time-budget must not be negative"));
  // dragon data build takes the same search flags, checked by the same code.
  EXPECT_TRUE(user_error(run_dragon("data build --corpus smoke --out " + db + ".set --target cpu --population -1 --db " + db),
                         "dragon data build: --population must not be negative"));
  EXPECT_TRUE(user_error(run_dragon("tune nosuchop:x=1 --target cpu --db " + db), "nosuchop"));
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target cpu --cost-model oracle --db " + db), "oracle"));
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target cpu --rules /no/such/rules.json --db " + db),
                         "/no/such/rules.json"));
  EXPECT_TRUE(user_error(run_dragon("space relu:shape=4x8 --target tpu"), "--target"));
  EXPECT_TRUE(user_error(run_dragon("best relu:shape=4x8 --target tpu --db " + db), "--target"));
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
}

TEST(TuneCliError, ABadDatabaseFileNamesItsPath) {
  const std::string bad = write_temp_file("tune_cli_not_a_db.db", "this is not an SQLite database\n");
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target cpu --trials 1 --db " + bad), bad));
  EXPECT_TRUE(user_error(run_dragon("best relu:shape=4x8 --db /no/such/dir/tune.db"), "/no/such/dir/tune.db"));
}

TEST(TuneCliError, GpuTuningWithoutADeviceSaysSo) {
  if (runtime::CudaDriver::get().ok()) GTEST_SKIP() << "a CUDA device is here: this checks the machines without one";
  const std::string db = ::testing::TempDir() + "tune_cli_no_gpu.db";
  EXPECT_TRUE(user_error(run_dragon("tune relu:shape=4x8 --target cuda --trials 1 --db " + db), "needs a CUDA GPU"));
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
}

}  // namespace
}  // namespace dragon::testing
