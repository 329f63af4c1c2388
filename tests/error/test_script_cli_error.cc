// dragon script encode|decode|check and compact scripts in apply/run: good input exits 0,
// a malformed script exits 1 naming FILE:LINE:COL, a failing instruction names its line.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"

namespace dragon::testing {
namespace {

const char* kSplitJson =
    R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
    R"(["Split",["l1","None",4],[true,false],["l4","l5"]],["Reorder",["l5","l4"],[],[]]],[]])";
const char* kSplitScript = "gb C\ngl b0 3\nsp l0 None 4\nro l4 l3\n";

TEST(ScriptCli, EncodeAndDecodeConvertBetweenTheForms) {
  std::string json = write_temp_file("split_trace.json", kSplitJson);
  CliResult encoded = run_dragon("script encode " + json);
  ASSERT_EQ(encoded.status, 0) << encoded.output;
  EXPECT_EQ(encoded.output, kSplitScript);
  std::string script = write_temp_file("split_trace.script", kSplitScript);
  CliResult decoded = run_dragon("script decode " + script);
  ASSERT_EQ(decoded.status, 0) << decoded.output;
  EXPECT_EQ(decoded.output, std::string(kSplitJson) + "\n");
  CliResult python = run_dragon("script encode --python " + script);
  ASSERT_EQ(python.status, 0) << python.output;
  EXPECT_NE(python.output.find("l4, l5 = sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True, "
                               "disable_predication=False)\n"),
            std::string::npos)
      << python.output;
}

TEST(ScriptCli, ApplyAndRunAcceptEitherForm) {
  std::string json = write_temp_file("either.json", kSplitJson);
  std::string script = write_temp_file("either.script", kSplitScript);
  CliResult from_json = run_dragon("apply matmul:m=8,n=8,k=8 " + json);
  CliResult from_script = run_dragon("apply matmul:m=8,n=8,k=8 " + script);
  ASSERT_EQ(from_script.status, 0) << from_script.output;
  EXPECT_EQ(from_script.output, from_json.output);
  CliResult run = run_dragon("run matmul:m=8,n=8,k=8 --script " + script);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("outputs match the unscheduled function"), std::string::npos) << run.output;
  CliResult check = run_dragon("script check matmul:m=8,n=8,k=8 " + script);
  ASSERT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("4 instructions apply to matmul"), std::string::npos) << check.output;
}

TEST(ScriptCli, MalformedScriptsNameLineAndColumn) {
  std::string unknown = write_temp_file("unknown.script", "gb C\n\ngl b0 3\nsplt l0 4\n");
  CliResult a = run_dragon("script check matmul:m=8,n=8,k=8 " + unknown);
  EXPECT_EQ(a.status, 1);
  EXPECT_NE(a.output.find(unknown + ":4:1: unknown mnemonic 'splt'"), std::string::npos) << a.output;
  std::string wrong_kind = write_temp_file("wrong_kind.script", "gb C\ngl b0 3\nsp b0 4\n");
  CliResult b = run_dragon("apply matmul:m=8,n=8,k=8 " + wrong_kind);
  EXPECT_EQ(b.status, 1);
  EXPECT_NE(b.output.find(wrong_kind + ":3:4: b0 is a block variable"), std::string::npos) << b.output;
  CliResult c = run_dragon("script decode " + wrong_kind);
  EXPECT_EQ(c.status, 1);
  EXPECT_NE(c.output.find(":3:4:"), std::string::npos) << c.output;
  EXPECT_EQ(run_dragon("script encode /nonexistent/trace.json").status, 1);
  EXPECT_EQ(run_dragon("script").status, 1);
}

TEST(ScriptCli, CheckNamesTheFailingInstructionAndItsLine) {
  std::string bad = write_temp_file("bad_split.script", "gb C\ngl b0 3\n# a comment\nsp l0 2 3\n");
  CliResult r = run_dragon("script check matmul:m=8,n=8,k=8 " + bad);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find(bad + ":4:1: instruction 2 (Split) `sp l0 2 3` failed:"), std::string::npos) << r.output;
  std::string missing = write_temp_file("missing_block.script", "gb Q\n");
  CliResult m = run_dragon("script check matmul:m=8,n=8,k=8 " + missing);
  EXPECT_EQ(m.status, 1);
  EXPECT_NE(m.output.find(missing + ":1:1: instruction 0 (GetBlock) `gb Q` failed:"), std::string::npos) << m.output;
}

}  // namespace
}  // namespace dragon::testing
