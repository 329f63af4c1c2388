// Script files (script_file.h): either form loads, a malformed or failing script is a
// ScriptFileError at its file, line and column that carries the failing instruction's
// index, and replaying gives what applying the decoded trace gives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"
#include "dragon/script/script_file.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::script {
namespace {

// A file under the test's temporary folder holding `text`.
std::string write_file(const std::string& name, const std::string& text) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("dragon_script_file_" + name);
  std::ofstream(path) << text;
  return path.string();
}

const char* kSplitScript = "gb C\ngl b0 3\nsp l1 None 4\nro l4 l3\n";

// The error load() or replay() throws, or a failure that says what happened instead.
template <typename Call>
ScriptFileError error_of(Call call) {
  try {
    call();
  } catch (const ScriptFileError& e) {
    return e;
  }
  ADD_FAILURE() << "no ScriptFileError";
  return ScriptFileError("", "", std::nullopt, std::nullopt);
}

TEST(ScriptFile, LoadsACompactScriptWithTheLineOfEachInstruction) {
  std::string path = write_file("compact.script", "# a sketch\ngb C\n\ngl b0 3\nsp l1 None 4\nro l4 l3\n");
  ScriptFile file = load(path);
  EXPECT_TRUE(file.compact);
  EXPECT_EQ(file.path, path);
  EXPECT_EQ(encode(file.trace), kSplitScript);
  EXPECT_EQ(file.lines, (std::vector<int>{2, 4, 5, 6}));
  EXPECT_EQ(file.texts, (std::vector<std::string>{"gb C", "gl b0 3", "sp l1 None 4", "ro l4 l3"}));
}

TEST(ScriptFile, LoadsATvmJsonTrace) {
  std::string path = write_file("trace.json", "  \n" + schedule::trace_to_json(decode(kSplitScript)));
  ScriptFile file = load(path);
  EXPECT_FALSE(file.compact);
  EXPECT_EQ(encode(file.trace), kSplitScript);
  EXPECT_TRUE(file.lines.empty());
}

TEST(ScriptFile, AMalformedLineIsPlacedAndCarriesItsInstructionIndex) {
  std::string path = write_file("malformed.script", "gb C\n# two so far\ngl b0 3\nsplt l0 4\n");
  ScriptFileError e = error_of([&] { load(path); });
  EXPECT_EQ(std::string(e.what()), path + ":4:1: unknown mnemonic 'splt'");
  EXPECT_EQ(e.path(), path);
  ASSERT_TRUE(e.position().has_value());
  EXPECT_EQ(e.position()->line, 4);
  EXPECT_EQ(e.position()->column, 1);
  EXPECT_EQ(e.instruction(), std::optional<size_t>(2));
}

TEST(ScriptFile, MalformedJsonNamesTheFileOnly) {
  std::string path = write_file("malformed.json", "[[[\"GetBlock\"");
  ScriptFileError e = error_of([&] { load(path); });
  EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
  EXPECT_FALSE(e.position().has_value());
  EXPECT_FALSE(e.instruction().has_value());
}

TEST(ScriptFile, AnUnreadableFileIsAUserErrorOfItsOwn) {
  try {
    load("/nonexistent/dragon.script");
    FAIL() << "loaded a file that does not exist";
  } catch (const ScriptFileError& e) {
    FAIL() << "not a script error: " << e.what();
  } catch (const UserError&) {
  }
}

TEST(ScriptFile, ReplayGivesWhatApplyingTheTraceGives) {
  ir::PrimFunc func = schedule::testing::workload("matmul:m=8,n=8,k=8");
  ScriptFile file = load(write_file("replay.script", kSplitScript));
  schedule::Schedule replayed = replay(func, file);
  schedule::Schedule applied(func);
  decode(kSplitScript).apply_to(applied);
  EXPECT_TRUE(ir::structural_equal(replayed.func(), applied.func()));
  EXPECT_EQ(encode(replayed.trace()), kSplitScript);
}

TEST(ScriptFile, AFailingInstructionIsPlacedAtItsLine) {
  ir::PrimFunc func = schedule::testing::workload("matmul:m=8,n=8,k=8");
  std::string path = write_file("failing.script", "gb C\ngl b0 3\n# a comment\nsp l0 2 3\n");
  ScriptFile file = load(path);
  ScriptFileError e = error_of([&] { replay(func, file); });
  EXPECT_EQ(std::string(e.what()).rfind(path + ":4:1: instruction 2 (Split) `sp l0 2 3` failed: ", 0), 0u) << e.what();
  ASSERT_TRUE(e.position().has_value());
  EXPECT_EQ(e.position()->line, 4);
  EXPECT_EQ(e.position()->column, 1);
  EXPECT_EQ(e.instruction(), std::optional<size_t>(2));
}

TEST(ScriptFile, AFailingJsonInstructionCarriesItsIndex) {
  ir::PrimFunc func = schedule::testing::workload("matmul:m=8,n=8,k=8");
  std::string path = write_file("failing.json", schedule::trace_to_json(decode("gb C\ngl b0 3\nsp l0 2 3\n")));
  ScriptFileError e = error_of([&] { replay(func, load(path)); });
  EXPECT_EQ(std::string(e.what()).rfind(path + ": instruction 2 failed: ", 0), 0u) << e.what();
  EXPECT_FALSE(e.position().has_value());
  EXPECT_EQ(e.instruction(), std::optional<size_t>(2));
}

}  // namespace
}  // namespace dragon::script
