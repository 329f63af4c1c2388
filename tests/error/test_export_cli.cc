// dragon export kernelbench: a problem the committed H200 database holds a kernel of exports
// (exit 0, both files written, what was written said); a problem without a verified record,
// an unknown problem and a missing database exit 1 with the reason and write nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "cli_runner.h"

namespace dragon::testing {
namespace {

const std::string kCommittedDb = std::string(DRAGON_SOURCE_DIR) + "/bench/tuning/h200.jsonl.zst";

// A fresh temporary file of this test alone: ctest runs the tests of this file side by
// side, and other trees' runs share the temporary folder, so the name carries the test's
// name and the process id.
std::string export_temp_path(const std::string& name) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::string path = ::testing::TempDir() + "export_cli_" + test + "_" + std::to_string(::getpid()) + "_" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "expected: " << part << "\nin:\n" << text.substr(0, 2000);
}

// The committed database (bench/tuning/h200.jsonl.zst) imported into a fresh file.
std::string committed_database() {
  const std::string db = export_temp_path("h200.db");
  CliResult imported = run_dragon("db import " + db + " " + kCommittedDb);
  EXPECT_EQ(imported.status, 0) << imported.output;
  return db;
}

TEST(ExportCli, SoftmaxFromTheCommittedDatabase) {
  const std::string db = committed_database();
  const std::string out = export_temp_path("23_new.py"), ref = export_temp_path("23_ref.py");
  CliResult exported = run_dragon("export kernelbench 23_Softmax --db " + db + " -o " + out + " --reference " + ref);
  ASSERT_EQ(exported.status, 0) << exported.output;
  expect_contains(exported.output, "wrote " + out + ": problem 23_Softmax, ");
  expect_contains(exported.output, "cuda sm_90a on NVIDIA H200");
  const std::string py = read(out);
  expect_contains(py, "class ModelNew(nn.Module):");
  expect_contains(py, "    def forward(self, X):\n        return _extension.forward(X)\n");
  expect_contains(py, "dragon_check_tensor(p_X, \"X\", at::kFloat, {4096, 393216});");
  expect_contains(read(ref), "        return torch.softmax(X, dim=1)\n");
}

TEST(ExportCli, NoVerifiedRecordUnknownProblemAndMissingDatabaseWriteNothing) {
  const std::string db = committed_database();
  const std::string out = export_temp_path("none.py");
  CliResult none = run_dragon("export kernelbench 19 --db " + db + " -o " + out);
  EXPECT_EQ(none.status, 1) << none.output;
  expect_contains(none.output, "has 0 CUDA records of problem 19_ReLU");
  EXPECT_FALSE(std::filesystem::exists(out));

  CliResult unknown = run_dragon("export kernelbench 1234 --db " + db + " -o " + out);
  EXPECT_EQ(unknown.status, 1) << unknown.output;
  expect_contains(unknown.output, "no problem '1234' in suite kernelbench-l1");

  CliResult missing = run_dragon("export kernelbench 23 --db " + export_temp_path("missing.db") + " -o " + out);
  EXPECT_EQ(missing.status, 1) << missing.output;
  expect_contains(missing.output, "no such file");
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace dragon::testing
