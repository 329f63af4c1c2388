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

}  // namespace
}  // namespace dragon::testing
