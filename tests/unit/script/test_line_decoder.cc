// The incremental line decoder: the environment grows line by line, a failed or checked
// line changes nothing, and feeding a script's lines gives decode()'s trace.
#include <gtest/gtest.h>

#include "dragon/script/script.h"
#include "random_traces.h"

namespace dragon::script {
namespace {

using schedule::RVType;

TEST(LineDecoder, TracksTheEnvironmentLineByLine) {
  LineDecoder d;
  EXPECT_EQ(d.feed("gb C"), 0u);
  EXPECT_EQ(d.defined(RVType::kBlock), 1);
  EXPECT_EQ(d.feed("gl b0 3"), 1u);
  EXPECT_EQ(d.defined(RVType::kLoop), 3);
  EXPECT_EQ(d.feed(""), std::nullopt);
  EXPECT_EQ(d.feed("# note"), std::nullopt);
  EXPECT_EQ(d.feed("spt l2 2 64 = 4 16"), 2u);
  EXPECT_EQ(d.defined(RVType::kExpr), 2);
  EXPECT_EQ(d.feed("sp l2 v0 v1\r"), 3u);
  EXPECT_EQ(d.defined(RVType::kLoop), 5);
  EXPECT_EQ(d.lines(), 6);
  // Outputs carry global ids in definition order, as TVM's JSON names them.
  const schedule::Trace& t = d.trace();
  EXPECT_EQ(t[3].outputs[0], (schedule::RandomVar{RVType::kLoop, 6}));
  EXPECT_EQ(t[3].inputs[1], schedule::Arg(schedule::RandomVar{RVType::kExpr, 4}));
  EXPECT_EQ(t.decision(2), schedule::Arg(schedule::Arg::int_list({4, 16})));
}

TEST(LineDecoder, FailedAndCheckedLinesChangeNothing) {
  LineDecoder d;
  d.feed("gb C");
  d.feed("gl b0 2");
  EXPECT_THROW(d.feed("fu l0 l9"), ScriptError);
  EXPECT_THROW(d.check("vec l2"), ScriptError);
  EXPECT_NO_THROW(d.check("fu l0 l1"));
  EXPECT_EQ(d.trace().size(), 2u);
  EXPECT_EQ(d.lines(), 2);
  EXPECT_EQ(d.defined(RVType::kLoop), 2);
  // The error is numbered as the next line, and feeding goes on from there.
  try {
    d.feed("vec l2");
    FAIL();
  } catch (const ScriptError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.column(), 5);
  }
  EXPECT_EQ(d.feed("fu l0 l1"), 2u);
  EXPECT_EQ(d.defined(RVType::kLoop), 3);
  EXPECT_NO_THROW(d.check("vec l2"));
}

TEST(LineDecoder, FeedingEveryPrefixMatchesDecode) {
  for (int64_t seed = 1; seed <= 50; ++seed) {
    schedule::Trace trace = testing::schema_trace(seed, 15);
    std::string script = encode(trace);
    LineDecoder d;
    size_t start = 0, instructions = 0;
    while (start < script.size()) {
      size_t end = script.find('\n', start);
      ASSERT_NO_THROW(d.check(script.substr(start, end - start))) << script;
      ASSERT_EQ(d.feed(script.substr(start, end - start)), instructions) << script;
      ++instructions;
      // The prefix fed so far is itself a canonical script of the trace's prefix.
      EXPECT_EQ(encode(d.trace()), script.substr(0, end + 1));
      start = end + 1;
    }
    EXPECT_TRUE(d.trace() == trace);
  }
}

}  // namespace
}  // namespace dragon::script
