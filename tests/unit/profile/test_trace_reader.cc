// Parsing of the injection library's JSON-lines trace files.
#include <gtest/gtest.h>

#include "dragon/profile/trace_format.h"
#include "dragon/support/error.h"

namespace dragon::profile {
namespace {

const char* kTrace =
    "{\"t\":\"process\",\"pid\":42,\"cmd\":\"python3\",\"start\":1000}\n"
    "{\"t\":\"kernel\",\"n\":\"_Z6kernelPf\",\"s\":1100,\"e\":1300,\"d\":0,\"st\":7,\"g\":[4,1,1],\"b\":[256,1,1]}\n"
    "{\"t\":\"memcpy\",\"n\":\"HtoD\",\"s\":1050,\"e\":1090,\"d\":0,\"st\":7,\"by\":4096}\n"
    "{\"t\":\"memset\",\"s\":1400,\"e\":1410,\"d\":0,\"st\":7,\"by\":64}\n"
    "{\"t\":\"range\",\"n\":\"measure\",\"s\":1080,\"e\":1500}\n"
    "{\"t\":\"end\",\"end\":2000,\"dropped\":3}\n";

TEST(TraceReader, ParsesEveryRecordKind) {
  ProcessTrace t = parse_trace(kTrace, "trace-42.jsonl");
  EXPECT_EQ(t.pid, 42);
  EXPECT_EQ(t.command, "python3");
  EXPECT_EQ(t.window_start_ns, 1000u);
  EXPECT_EQ(t.window_end_ns, 2000u);
  EXPECT_EQ(t.dropped_records, 3u);
  EXPECT_TRUE(t.complete);
  ASSERT_EQ(t.events.size(), 4u);
  EXPECT_EQ(t.events[0].kind, EventKind::kKernel);
  EXPECT_EQ(t.events[0].name, "_Z6kernelPf");
  EXPECT_EQ(t.events[0].duration_ns(), 200u);
  EXPECT_EQ(t.events[0].grid[0], 4);
  EXPECT_EQ(t.events[0].block[0], 256);
  EXPECT_EQ(t.events[1].name, "Memcpy HtoD");
  EXPECT_EQ(t.events[1].bytes, 4096u);
  EXPECT_EQ(t.events[2].name, "Memset");
  EXPECT_EQ(t.events[3].kind, EventKind::kRange);
}

TEST(TraceReader, ToleratesATruncatedLastLine) {
  std::string text = std::string(kTrace).substr(0, std::string(kTrace).find("{\"t\":\"end\"")) + "{\"t\":\"ker";
  ProcessTrace t = parse_trace(text, "trace-42.jsonl");
  EXPECT_FALSE(t.complete);
  EXPECT_EQ(t.events.size(), 4u);
}

TEST(TraceReader, MalformedLinesAreUserErrorsWithTheirLine) {
  std::string text = "{\"t\":\"process\",\"pid\":1,\"start\":0}\nnot json\n{\"t\":\"end\",\"end\":5}\n";
  try {
    parse_trace(text, "x.jsonl");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("x.jsonl:2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_trace("{\"t\":\"kernel\",\"n\":\"k\"}\n{\"t\":\"end\",\"end\":1}\n", "y.jsonl"), UserError);
  EXPECT_THROW(parse_trace("{\"t\":\"wat\"}\n{\"t\":\"end\",\"end\":1}\n", "z.jsonl"), UserError);
}

TEST(TraceReader, EscapesRoundTrip) {
  EXPECT_EQ(json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
  EXPECT_EQ(trace_file_name(77), "trace-77.jsonl");
  EXPECT_THROW(read_trace_dir("/nonexistent/folder"), UserError);
}

TEST(ActivitySelection, ParsesCommaLists) {
  ActivitySelection only_kernels = parse_activity_selection("kernel");
  EXPECT_TRUE(only_kernels.kernel);
  EXPECT_FALSE(only_kernels.memcpy);
  EXPECT_FALSE(only_kernels.memset);
  EXPECT_FALSE(only_kernels.nvtx);
  ActivitySelection all = parse_activity_selection("nvtx,memset,memcpy,kernel");
  EXPECT_TRUE(all.kernel && all.memcpy && all.memset && all.nvtx);
}

TEST(ActivitySelection, RejectsUnknownAndEmptyNames) {
  ActivitySelection untouched;
  EXPECT_NE(activity_selection_error("kernel,launches", &untouched).find("unknown activity 'launches'"),
            std::string::npos);
  EXPECT_TRUE(untouched.memcpy);  // left as it was on error
  EXPECT_NE(activity_selection_error("kernel,", &untouched).find("unknown activity ''"), std::string::npos);
  EXPECT_THROW(parse_activity_selection(""), UserError);
}

}  // namespace
}  // namespace dragon::profile
