// The dragon CLI: bad input exits with status 1 and a message saying what was wrong;
// good input exits 0. Runs the built binary as a user would.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"

namespace dragon::testing {
namespace {

TEST(Cli, HelpAndListingSucceed) {
  EXPECT_EQ(run_dragon("--help").status, 0);
  EXPECT_EQ(run_dragon("run --help").status, 0);
  CliResult ops = run_dragon("ops");
  EXPECT_EQ(ops.status, 0);
  EXPECT_NE(ops.output.find("matmul"), std::string::npos);
  EXPECT_EQ(run_dragon("ops --json").status, 0);
}

TEST(Cli, NoOrUnknownSubcommandIsAUserError) {
  EXPECT_EQ(run_dragon("").status, 1);
  EXPECT_EQ(run_dragon("frobnicate").status, 1);
}

TEST(Cli, BadSpecsAreUserErrors) {
  CliResult unknown = run_dragon("run matmull");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.output.find("unknown op 'matmull'"), std::string::npos) << unknown.output;
  CliResult param = run_dragon("show matmul:m=x");
  EXPECT_EQ(param.status, 1);
  EXPECT_NE(param.output.find("parameter m"), std::string::npos) << param.output;
  EXPECT_EQ(run_dragon("run").status, 1);  // neither spec nor --ir
  EXPECT_EQ(run_dragon("run matmul --ir x.ir").status, 1);
}

TEST(Cli, BadFlagValuesAreUserErrors) {
  CliResult dist = run_dragon("run matmul:m=4,n=4,k=4 --dist cauchy");
  EXPECT_EQ(dist.status, 1);
  EXPECT_NE(dist.output.find("unknown distribution 'cauchy'"), std::string::npos) << dist.output;
  EXPECT_EQ(run_dragon("run matmul:m=4,n=4,k=4 --seed minus-one").status, 1);
  EXPECT_EQ(run_dragon("ops --category nonsense").status, 1);
}

TEST(Cli, MissingAndMalformedIrFilesAreUserErrors) {
  CliResult missing = run_dragon("show --ir /nonexistent/file.ir");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("cannot read /nonexistent/file.ir"), std::string::npos) << missing.output;
  std::string bad = write_temp_file("bad.ir", "func f(in A: f32[4]) {\n  block root {\n    A[0] = \n");
  CliResult malformed = run_dragon("show --ir " + bad);
  EXPECT_EQ(malformed.status, 1);
  EXPECT_NE(malformed.output.find(bad + ":"), std::string::npos) << malformed.output;
}

TEST(Cli, ShowThenShowIrRoundTrips) {
  CliResult shown = run_dragon("show matmul:m=8,n=4,k=6");
  ASSERT_EQ(shown.status, 0) << shown.output;
  std::string path = write_temp_file("matmul.ir", shown.output);
  CliResult again = run_dragon("show --ir " + path);
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_EQ(again.output, shown.output);
}

TEST(Cli, RunIsDeterministicAndSeedSensitive) {
  CliResult a = run_dragon("run matmul:m=8,n=4,k=6 --seed 3 --json");
  CliResult b = run_dragon("run matmul:m=8,n=4,k=6 --seed 3 --json");
  CliResult c = run_dragon("run matmul:m=8,n=4,k=6 --seed 4 --json");
  ASSERT_EQ(a.status, 0) << a.output;
  auto fingerprint = [](const std::string& out) {
    auto pos = out.find("\"fingerprint\"");
    return pos == std::string::npos ? std::string() : out.substr(pos, 40);
  };
  EXPECT_FALSE(fingerprint(a.output).empty());
  EXPECT_EQ(fingerprint(a.output), fingerprint(b.output));
  EXPECT_NE(fingerprint(a.output), fingerprint(c.output));
}

TEST(Cli, ScriptsApplyAndRunAgainstTheUnscheduledFunction) {
  std::string split = write_temp_file(
      "split.json",
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
      R"(["Split",["l1","None",4],[true,false],["l4","l5"]],["Reorder",["l5","l4"],[],[]]],[]])");
  CliResult applied = run_dragon("apply matmul:m=8,n=8,k=8 " + split);
  ASSERT_EQ(applied.status, 0) << applied.output;
  EXPECT_NE(applied.output.find("vi0: S 8 = i0_0 * 4 + i0_1"), std::string::npos) << applied.output;
  CliResult run = run_dragon("run matmul:m=8,n=8,k=8 --script " + split);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("outputs match the unscheduled function"), std::string::npos) << run.output;
}

TEST(Cli, BadScriptsAreUserErrorsNamingTheInstruction) {
  std::string missing_block = write_temp_file("missing_block.json", R"([[["GetBlock",[],["Q","main"],["b0"]]],[]])");
  CliResult failed = run_dragon("run matmul:m=8,n=8,k=8 --script " + missing_block);
  EXPECT_EQ(failed.status, 1);
  EXPECT_NE(failed.output.find("instruction 0 failed: GetBlock"), std::string::npos) << failed.output;
  std::string short_split = write_temp_file(
      "short_split.json",
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
      R"(["Split",["l1",2,3],[true,false],["l4","l5"]]],[]])");
  CliResult split = run_dragon("apply matmul:m=8,n=8,k=8 " + short_split);
  EXPECT_EQ(split.status, 1);
  EXPECT_NE(split.output.find("instruction 2 failed: Split"), std::string::npos) << split.output;
  std::string truncated = write_temp_file("truncated.json", R"([[["GetBlock",[],["C","main"],["b0"]])");
  CliResult malformed = run_dragon("apply matmul:m=8,n=8,k=8 " + truncated);
  EXPECT_EQ(malformed.status, 1);
  EXPECT_NE(malformed.output.find(truncated + ": "), std::string::npos) << malformed.output;
  EXPECT_EQ(run_dragon("apply matmul:m=8,n=8,k=8 /nonexistent/script.json").status, 1);
}

}  // namespace
}  // namespace dragon::testing
