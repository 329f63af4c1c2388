// The lexical rules the constrained decoder mirrors from docs/script-format.md:
// canonical integers and floats, integer prefixes within a range, string spellings.
#include <gtest/gtest.h>

#include "script_words.h"

namespace dragon::decode {
namespace {

TEST(ScriptWords, CanonicalIntegers) {
  EXPECT_EQ(parse_canonical_int("0"), 0);
  EXPECT_EQ(parse_canonical_int("-17"), -17);
  EXPECT_EQ(parse_canonical_int("9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(parse_canonical_int("-0"));
  EXPECT_FALSE(parse_canonical_int("007"));
  EXPECT_FALSE(parse_canonical_int("9223372036854775808"));
  EXPECT_FALSE(parse_canonical_int("1.0"));
}

TEST(ScriptWords, CanonicalFloats) {
  EXPECT_EQ(parse_canonical_float("0.5"), 0.5);
  EXPECT_EQ(parse_canonical_float("1.0"), 1.0);
  EXPECT_FALSE(parse_canonical_float("1"));      // an integer
  EXPECT_FALSE(parse_canonical_float("0.50"));   // not the shortest
  EXPECT_EQ(spell_float(0.25), "0.25");
  EXPECT_EQ(spell_float(2.0), "2.0");
}

TEST(ScriptWords, IntegerPrefixesWithinARange) {
  EXPECT_TRUE(int_prefix_viable("", 1, 64));
  EXPECT_TRUE(int_prefix_viable("6", 1, 64));    // 6, 64
  EXPECT_FALSE(int_prefix_viable("65", 1, 64));
  EXPECT_FALSE(int_prefix_viable("0", 1, 64));   // no leading zeros
  EXPECT_TRUE(int_prefix_viable("0", 0, 64));
  EXPECT_FALSE(int_prefix_viable("-", 1, 64));
  EXPECT_TRUE(int_prefix_viable("-", -2, 64));
  EXPECT_TRUE(int_prefix_viable("-2", -2, 64));
  EXPECT_FALSE(int_prefix_viable("-3", -2, 64));
  EXPECT_TRUE(int_prefix_viable("1", 100, 199));  // 1xx
  EXPECT_FALSE(int_prefix_viable("2", 100, 199));
  EXPECT_TRUE(int_prefix_viable("92233720368547758", INT64_MIN, INT64_MAX));
}

TEST(ScriptWords, StringsHaveOneSpelling) {
  const ShortName names[] = {{"tx", "threadIdx.x"}};
  EXPECT_EQ(parse_string_word("tx", names, true), "threadIdx.x");
  EXPECT_FALSE(parse_string_word("threadIdx.x", names, false));  // must use the code
  EXPECT_FALSE(parse_string_word("foo", names, true));           // enum: codes only
  EXPECT_EQ(parse_string_word("foo", names, false), "foo");
  EXPECT_FALSE(parse_string_word("\"foo\"", {}, false));          // a word is written bare
  EXPECT_EQ(parse_string_word("\"a b\"", {}, false), "a b");
  EXPECT_EQ(spell_string("a\nb", {}), "\"a\\nb\"");
  EXPECT_TRUE(quoted_prefix_viable("\"a \\x0"));
  EXPECT_FALSE(quoted_prefix_viable("\"a \\x41"));  // 'A' is written raw
  EXPECT_TRUE(bare_prefix_viable("b3"));             // could become b3x
  EXPECT_FALSE(bare_prefix_viable("3b"));
}

}  // namespace
}  // namespace dragon::decode
