// Malformed scripts are ScriptErrors (UserErrors) at the right line and column, one test
// per class of mistake; malformed traces are UserErrors from encode. Never a crash.
#include <gtest/gtest.h>

#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"

namespace dragon::script {
namespace {

struct Expected {
  int line;
  int column;
  std::string piece;  // part of the message
};

::testing::AssertionResult fails_at(std::string_view script, const Expected& e) {
  try {
    decode(script);
  } catch (const ScriptError& error) {
    if (error.line() != e.line || error.column() != e.column || error.message().find(e.piece) == std::string::npos) {
      return ::testing::AssertionFailure() << "got " << error.what() << ", expected " << e.line << ":" << e.column
                                           << ": ..." << e.piece << "...";
    }
    std::string prefix = std::to_string(e.line) + ":" + std::to_string(e.column) + ": ";
    if (std::string(error.what()).rfind(prefix, 0) != 0) {
      return ::testing::AssertionFailure() << "what() does not start with " << prefix << ": " << error.what();
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& other) {
    return ::testing::AssertionFailure() << "not a ScriptError: " << other.what();
  }
  return ::testing::AssertionFailure() << "decoded without error:\n" << script;
}

const char* kPrefix = "gb C\ngl b0 2\n";  // b0; l0, l1

TEST(ScriptErrors, UnknownMnemonic) {
  EXPECT_TRUE(fails_at("gb C\nsplit l0 4\n", {2, 1, "unknown mnemonic 'split'"}));
  EXPECT_TRUE(fails_at("  42 b0\n", {1, 3, "expected a mnemonic"}));
}

TEST(ScriptErrors, WrongArity) {
  std::string p = kPrefix;
  EXPECT_TRUE(fails_at(p + "par l0 l1\n", {3, 8, "unexpected operand 'l1'"}));
  EXPECT_TRUE(fails_at(p + "ca b0\n", {3, 6, "missing operand 2 (loop)"}));
  EXPECT_TRUE(fails_at(p + "gl b0\n", {3, 6, "missing operand 2 (count)"}));
  EXPECT_TRUE(fails_at(p + "ro l0 l1 5\n", {3, 10, "unexpected operand '5'"}));
  EXPECT_TRUE(fails_at(p + "post x\n", {3, 6, "post takes no operands"}));
}

TEST(ScriptErrors, UndefinedVariable) {
  std::string p = kPrefix;
  EXPECT_TRUE(fails_at(p + "par l2\n", {3, 5, "undefined variable l2: 2 loop variables are defined so far"}));
  EXPECT_TRUE(fails_at("gl b0 1\n", {1, 4, "undefined variable b0"}));
  EXPECT_TRUE(fails_at(p + "fu l0 l01\n", {3, 7, "bad variable name 'l01'"}));
}

TEST(ScriptErrors, VariableOfTheWrongKind) {
  std::string p = kPrefix;
  EXPECT_TRUE(fails_at(p + "par b0\n", {3, 5, "b0 is a block variable, expected a loop variable"}));
  EXPECT_TRUE(fails_at(p + "sp l0 l1 4\n", {3, 7, "l1 is a loop variable, expected an integer, an expression"}));
  EXPECT_TRUE(fails_at(p + "ann l0 coop l1\n", {3, 13, "l1 is a loop variable"}));
}

TEST(ScriptErrors, BadNumber) {
  std::string p = kPrefix;
  EXPECT_TRUE(fails_at(p + "sp l0 4x\n", {3, 7, "bad number '4x'"}));
  EXPECT_TRUE(fails_at(p + "sp l0 04\n", {3, 7, "non-canonical number '04': write 4"}));
  EXPECT_TRUE(fails_at(p + "sp l0 99999999999999999999\n", {3, 7, "out of the 64-bit range"}));
  EXPECT_TRUE(fails_at(p + "sp l0 1.5\n", {3, 7, "expected an integer"}));
  EXPECT_TRUE(fails_at("sc [1 2] [0.50 0.5]\n", {1, 11, "non-canonical number '0.50': write 0.5"}));
  EXPECT_TRUE(fails_at("sc [1 2] [1e999 0.5]\n", {1, 11, "out of range"}));
  EXPECT_TRUE(fails_at("sc [1 2] [1. 0.5]\n", {1, 11, "a digit must follow '.'"}));
  EXPECT_TRUE(fails_at(p + "spt l0 2 64 = 4 x\n", {3, 17, "expected an integer decision"}));
}

TEST(ScriptErrors, TruncatedLine) {
  std::string p = kPrefix;
  EXPECT_TRUE(fails_at(p + "ann b0 \"abc\n", {3, 12, "unterminated string"}));
  EXPECT_TRUE(fails_at("sc [1 2\n", {1, 8, "missing ']'"}));
  EXPECT_TRUE(fails_at(p + "spt l0 2\n", {3, 9, "missing operand 3 (max_innermost_factor)"}));
  EXPECT_TRUE(fails_at("sc [1 2] =\n", {1, 11, "takes one integer as its decision"}));
  EXPECT_TRUE(fails_at(p + "ann b0 \"a\\", {3, 10, "the line ends inside an escape"}));
}

TEST(ScriptErrors, StringsAndNames) {
  std::string p = kPrefix;
  EXPECT_TRUE(fails_at(p + "bind l0 bogus\n", {3, 9, "unknown thread_axis 'bogus': one of bx by bz tx"}));
  EXPECT_TRUE(fails_at(p + "bind l0 \"threadIdx.x\"\n", {3, 9, "non-canonical string \"threadIdx.x\": write tx"}));
  EXPECT_TRUE(fails_at("gb \"C\"\n", {1, 4, "non-canonical string \"C\": write C"}));
  EXPECT_TRUE(fails_at("gb C-1\n", {1, 5, "unexpected character '-'"}));
  EXPECT_TRUE(fails_at("gb \"a\\q\"\n", {1, 6, "unknown escape \\q"}));
  EXPECT_TRUE(fails_at("gb \"a\\x41\"\n", {1, 6, "non-canonical escape"}));
  EXPECT_TRUE(fails_at("gb C @\n", {1, 6, "unexpected character '@'"}));
}

TEST(ScriptErrors, NonCanonicalDefaultsAndDecisions) {
  std::string p = kPrefix;
  EXPECT_TRUE(fails_at(p + "sp l0 4 true\n", {3, 9, "non-canonical: preserve_unit_iters is its default"}));
  EXPECT_TRUE(fails_at("gb C main\n", {1, 6, "func_name is its default"}));
  EXPECT_TRUE(fails_at("sc [1 2] [0.5 0.5]\n", {1, 18, "probs is its default"}));
  EXPECT_TRUE(fails_at(p + "par l0 = 3\n", {3, 8, "par takes no decision"}));
  EXPECT_TRUE(fails_at("sc [1 2] = 1 2\n", {1, 14, "takes one integer as its decision"}));
  EXPECT_TRUE(fails_at(p + "gl b0 -1\n", {3, 7, "count = -1 outputs: must be between 0 and"}));
  EXPECT_TRUE(fails_at(p + "spt l0 2 64 =3\n", {3, 14, "expected a space after '='"}));
}

TEST(ScriptErrors, ErrorsNameTheRightLineAfterCommentsAndBlanks) {
  EXPECT_TRUE(fails_at("# a comment\n\ngb C  # trailing\n\tgl b0 1\nvec l1\n", {5, 5, "undefined variable l1"}));
}

TEST(ScriptErrors, RandomGarbageNeverCrashes) {
  // Every byte string is either a trace or a ScriptError: mutate a valid script byte by byte.
  const std::string valid = "gb C\ngl b0 2\nspt l0 2 64 = 4 16\nsp l0 v0 v1\nsc [1 2] = 0\nann b0 coop v2\n";
  int errors = 0, decoded = 0;
  const std::string alphabet = " \t\n[]=\"\\#-.0123456789blvxe_aZ\x01\xff";
  for (size_t pos = 0; pos < valid.size(); ++pos) {
    for (char c : alphabet) {
      std::string s = valid;
      s[pos] = c;
      try {
        decode(s);
        ++decoded;
      } catch (const ScriptError&) {
        ++errors;
      }
      s.insert(pos, 1, c);
      try {
        decode(s.substr(0, pos + 1 + (pos % 7)));  // truncated too
        ++decoded;
      } catch (const ScriptError&) {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 1000);
  EXPECT_GT(decoded, 50);
}

TEST(ScriptErrors, TracesThatDoNotFitTheSchemaAreUserErrors) {
  auto encode_json = [](const char* json) { return encode(schedule::trace_from_json(json)); };
  // A decision on a kind without one.
  EXPECT_THROW(encode_json(R"([[["GetBlock",[],["C","main"],["b0"]]],[[0,3]]])"), UserError);
  // Split's output count differs from its factors.
  EXPECT_THROW(encode_json(R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1"]],)"
                           R"(["Split",["l1",2,2],[true,false],["l2"]]],[]])"),
               UserError);
  // A loop where a block belongs.
  EXPECT_THROW(encode_json(R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1"]],)"
                           R"(["ComputeInline",["l1"],[],[]]],[]])"),
               UserError);
  // A wrong attr count.
  EXPECT_THROW(encode_json(R"([[["GetBlock",[],["C"],["b0"]]],[]])"), UserError);
  try {
    encode_json(R"([[["GetBlock",[],["C","main"],["b0"]],["Parallel",["b0"],[],[]]],[]])");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("instruction 1 (Parallel)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dragon::script
