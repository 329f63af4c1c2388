// Malformed IR text must raise a UserError that says what is wrong and at which
// line:column, never an InternalError and never a crash: a table of known mistakes, then
// truncations and random mutations of valid texts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::ir {
namespace {

const std::string kValid =
    "func f(in A: f32[4, 4], out B: f32[4]) {\n"  // 1
    "  block root {\n"                            // 2
    "    for i in 4 {\n"                          // 3
    "      block b [v: S 4 = i] {\n"              // 4
    "        reads A[v, 0 +: 4]\n"                // 5
    "        writes B[v]\n"                       // 6
    "        B[v] = A[v, 0]\n"                    // 7
    "      }\n"                                   // 8
    "    }\n"                                     // 9
    "  }\n"                                       // 10
    "}\n";                                        // 11

// kValid with line `line` (1-based) replaced by `text` (several lines, or none).
std::string with_line(int line, const std::string& text) {
  std::istringstream in(kValid);
  std::string out, current;
  for (int n = 1; std::getline(in, current); ++n) {
    if (n != line) {
      out += current + "\n";
    } else if (!text.empty()) {
      out += text + "\n";
    }
  }
  return out;
}

// The message of the UserError that parsing `text` raises ("" if none; a failure if any
// other exception escapes).
std::string parse_error(const std::string& text) {
  try {
    parse_function(text, "bad.ir");
  } catch (const UserError& e) {
    return e.what();
  } catch (const InternalError& e) {
    ADD_FAILURE() << "InternalError: " << e.what() << "\n" << text;
    return "";
  }
  return "";
}

TEST(IrParseError, TheValidTextParses) {
  EXPECT_EQ(parse_error(kValid), "");
  EXPECT_EQ(print_function(parse_function(kValid)), kValid);
}

struct BadInput {
  const char* kind;
  std::string text;
  std::string message;  // after "bad.ir:"
};

TEST(IrParseError, EachMistakeIsReportedWhereItIs) {
  const std::vector<BadInput> cases = {
      {"stray character", with_line(7, "        B[v] = A[v, 0] $ 1"), "7:24: unexpected character '$'"},
      {"unknown buffer", with_line(7, "        B[v] = Q[v, 0]"), "7:16: unknown buffer 'Q'"},
      {"unknown variable", with_line(7, "        B[v] = A[w, 0]"), "7:18: unknown variable 'w'"},
      {"loop variable inside a block", with_line(7, "        B[i] = A[v, 0]"),
       "7:11: variable 'i' is defined outside this block, and a block sees only its own iteration variables"},
      {"wrong arity", with_line(7, "        B[v] = min(A[v, 0])"), "7:16: min takes 2 arguments, got 1"},
      {"type mismatch", with_line(7, "        B[v] = A[v + 1i64, 0]"), "7:20: type mismatch: i32 + i64"},
      {"rank mismatch", with_line(7, "        B[v] = A[v]"), "7:16: A has rank 2, indexed with 1 indices"},
      {"bad dtype", with_line(1, "func f(in A: f33[4, 4], out B: f32[4]) {"),
       "1:14: expected a dtype (f64, f32, f16, bf16, i8, i32, i64, bool), found 'f33'"},
      {"region of the wrong rank", with_line(5, "        reads A[v]"),
       "5:15: region of A has 1 dimensions, A has rank 2"},
      {"literal too large for its type", with_line(7, "        B[v] = f32(300i8)"),
       "7:20: literal 300i8 does not fit i8"},
      {"i32 literal too large", with_line(7, "        B[v] = f32(3000000000)"),
       "7:20: literal 3000000000 does not fit i32"},
      {"unterminated block", kValid.substr(0, kValid.size() - 6),
       "10:1: unterminated block root opened at 2:14: expected '}'"},
      {"float without a type", with_line(7, "        B[v] = 0.5"),
       "7:16: float literal 0.5 needs a type suffix, as in 0.5f32"},
      {"unknown literal suffix", with_line(7, "        B[v] = f32(5u8)"),
       "7:20: unknown literal type suffix 'u8' (expected i8, i32, i64, f16, bf16, f32 or f64)"},
      {"reserved word as a name", with_line(3, "    for for in 4 {"),
       "3:9: 'for' is a reserved word and cannot name a loop variable"},
      {"duplicate parameter", with_line(1, "func f(in A: f32[4, 4], out A: f32[4]) {"),
       "1:29: duplicate parameter 'A'"},
      {"store of the wrong type", with_line(7, "        B[v] = f64(A[v, 0])"),
       "7:14: cannot store f64 into f32 buffer B"},
      {"unknown function", with_line(7, "        B[v] = foo(A[v, 0])"), "7:16: unknown function 'foo'"},
      {"bad iteration kind", with_line(4, "      block b [v: Q 4 = i] {"),
       "4:19: expected an iteration kind (S, R, O or X), found 'Q'"},
      {"binding of the wrong type", with_line(4, "      block b [v: S 4 = i64(i)] {"),
       "4:25: binding of v has type i64, its domain i32"},
      {"unterminated string", with_line(3, "    for i in 4 @{k = \"abc"), "3:22: unterminated string"},
      {"non-bool condition", with_line(7, "        if (v) { B[v] = A[v, 0] }"),
       "7:13: if condition must be bool, got i32"},
      {"unknown loop kind", with_line(3, "    for i in 4 serial {"),
       "3:16: expected '{' to open the loop body, found 'serial'"},
      {"empty block body", with_line(7, ""), "7:7: empty body of block b"},
      {"text after the function", kValid + "x\n", "12:1: unexpected 'x' after the function"},
      {"negated variable", with_line(7, "        B[v] = A[-v, 0]"),
       "7:18: '-' in front of an operand must be part of a number literal, as in -3"},
      {"infinity without a type", with_line(7, "        B[v] = inf"),
       "7:16: inf needs a float type suffix, as in inff32"},
      {"integer infinity", with_line(7, "        B[v] = f32(-infi32)"), "7:20: i32 is not a float type"},
      {"negative shape", with_line(1, "func f(in A: f32[-4, 4], out B: f32[4]) {"),
       "1:18: expected a shape extent (a plain integer >= 0), found '-'"},
      {"bool arithmetic", with_line(7, "        B[v] = f32(v < 1 + true)"), "7:26: type mismatch: i32 + bool"},
      {"missing operand", with_line(7, "        B[v] = A[v, 0] *"), "8:7: expected an expression, found '}'"},
      {"bad parameter role", with_line(1, "func f(input A: f32[4, 4], out B: f32[4]) {"),
       "1:8: expected a parameter role (in, out or inout), found 'input'"},
      {"ill-formed IR found by the verifier", with_line(6, ""),
       "1:1: ill-formed IR: function 'f': block 'b' stores to buffer 'B', which is not in its writes"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.kind);
    EXPECT_EQ(parse_error(c.text), "bad.ir:" + c.message) << c.text;
  }
}

TEST(IrParseError, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "        B[v] = " + std::string(100000, '(') + "A[v, 0]" + std::string(100000, ')');
  std::string message = parse_error(with_line(7, deep));
  EXPECT_NE(message.find("bad.ir:7:"), std::string::npos) << message;
  EXPECT_NE(message.find("nesting deeper than"), std::string::npos) << message;
  // Moderate nesting is fine.
  std::string fine = "        B[v] = " + std::string(50, '(') + "A[v, 0]" + std::string(50, ')');
  EXPECT_EQ(parse_error(with_line(7, fine)), "");
}

std::vector<std::string> valid_texts() {
  std::vector<std::string> texts{kValid};
  for (const auto& entry : std::filesystem::directory_iterator(DRAGON_SOURCE_DIR "/tests/golden/ir")) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    texts.push_back(text.str());
  }
  return texts;
}

// Parses `text`: a UserError is fine, and so is success (then the result must print to a
// text that parses back to the same text); anything else fails the test.
void parse_must_not_break(const std::string& text) {
  try {
    PrimFunc f = parse_function(text, "fuzz.ir");
    std::string printed = print_function(f);
    EXPECT_EQ(print_function(parse_function(printed)), printed) << text;
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind("fuzz.ir:", 0), 0u) << message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a UserError: " << e.what() << "\n--- input ---\n" << text;
  }
}

TEST(IrParseError, EveryTruncationIsAUserError) {
  for (const std::string& text : valid_texts()) {
    for (size_t n = 0; n + 1 < text.size(); ++n) {
      std::string truncated = text.substr(0, n);
      try {
        parse_function(truncated, "fuzz.ir");
        ADD_FAILURE() << "a truncated text parsed:\n" << truncated;
      } catch (const UserError&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "not a UserError: " << e.what() << "\n--- input ---\n" << truncated;
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// The printed text of every registered op with its default parameters.
std::vector<std::string> op_texts() {
  std::vector<std::string> texts;
  for (const ops::OpKind& kind : ops::OpRegistry::global().kinds()) {
    bool all_defaults = true;
    for (const ops::OpParam& p : kind.params) all_defaults &= p.default_value.has_value();
    if (all_defaults) texts.push_back(print_function(ops::OpRegistry::global().make_workload(kind.name).func));
  }
  return texts;
}

TEST(IrParseError, RandomMutationsAreUserErrorsOrValid) {
  // Characters that make the likeliest mistakes: operators, brackets, digits, suffixes.
  const std::string alphabet = "()[]{},:=<>+-*/%!@\"#. \n0123456789aeifSRvxAB_";
  const std::vector<std::string> words = {"i64",   "f16",  "bool", "-", "+:", "select",   "min",      "block",  "for",
                                          "alloc", "init", "if",   "}", "{",  "1e400f64", "65536f16", "nanf32", "x4"};
  std::mt19937 rng(12345);
  std::vector<std::string> texts = valid_texts();
  size_t golden = texts.size();
  for (std::string& text : op_texts()) texts.push_back(std::move(text));
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::string& text = texts[t];
    // Many mutations of the small golden texts, fewer of each op's.
    for (int trial = 0; trial < (t < golden ? 400 : 40); ++trial) {
      std::string mutated = text;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits && !mutated.empty(); ++e) {
        size_t at = rng() % mutated.size();
        switch (rng() % 5) {
          case 0: mutated.erase(at, 1 + rng() % 4); break;
          case 1: mutated[at] = alphabet[rng() % alphabet.size()]; break;
          case 2: mutated.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
          case 3: mutated.insert(at, words[rng() % words.size()]); break;
          default: {  // duplicate a span elsewhere
            size_t from = rng() % mutated.size();
            mutated.insert(at, mutated.substr(from, 1 + rng() % 12));
            break;
          }
        }
      }
      parse_must_not_break(mutated);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace dragon::ir
