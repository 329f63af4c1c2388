// storage_align: the "buffer_dim_align" annotation it writes (format, merging, replacement,
// negative axes), that nothing else changes (same outputs on the interpreter), replay
// and JSON, each precondition's error; and the annotation's helpers in
// ir/buffer_dim_align.h (parse/format round trip, bad text, padded strides).
#include <gtest/gtest.h>

#include <functional>

#include "dragon/ir/buffer_dim_align.h"
#include "dragon/ir/printer.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using ir::BufferDimAlign;
using testing::expect_refusal;
using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

std::string align_of(const Schedule& sch, BlockRV block) {
  const ir::BlockNode* b = sch.get(block);
  auto it = b->annotations.find(ir::kBufferDimAlignKey);
  if (it == b->annotations.end()) return "<none>";
  return std::get<std::string>(it->second);
}

TEST(StorageAlign, MatmulSharedCacheGetsAnnotation) {
  Schedule sch(workload("matmul:m=32,n=32,k=32"));
  BlockRV c = sch.get_block("C");
  BlockRV a_shared = sch.cache_read(c, 0, "shared");
  sch.storage_align(a_shared, 0, 0, 32, 8);
  EXPECT_EQ(align_of(sch, a_shared), "A_shared:0:32:8");
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc A_shared: f32[32, 32] shared")) << text;  // shape unchanged
  EXPECT_NE(text.find("A_shared:0:32:8"), std::string::npos) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(StorageAlign, EntriesSortAndLaterOneReplaces) {
  Schedule sch(workload("matmul:m=16,n=16,k=16"));
  BlockRV c = sch.get_block("C");
  BlockRV c_local = sch.cache_write(c, 0, "local");
  (void)c_local;
  // The computation block now writes C_local: three alignments on it, axis -1 is 1.
  sch.storage_align(c, 0, 1, 16, 4);
  sch.storage_align(c, 0, 0, 32, 1);
  EXPECT_EQ(align_of(sch, c), "C_local:0:32:1;C_local:1:16:4");
  sch.storage_align(c, 0, -1, 8, 2);  // replaces axis 1
  EXPECT_EQ(align_of(sch, c), "C_local:0:32:1;C_local:1:8:2");
  EXPECT_EQ(sch.trace().instructions().back().attrs, (std::vector<Arg>{Arg(0), Arg(-1), Arg(8), Arg(2)}));
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(StorageAlign, SoftmaxIntermediateAndOtherAnnotationsKept) {
  Schedule sch(workload("softmax:shape=4x8"));
  BlockRV x_exp = sch.get_block("x_exp");
  sch.annotate(x_exp, "meta_schedule.tiling_structure", std::string("SS"));
  sch.storage_align(x_exp, 0, 0, 16, 1);
  const ir::BlockNode* b = sch.get(x_exp);
  EXPECT_EQ(b->annotations.size(), 2u);
  EXPECT_EQ(align_of(sch, x_exp), "x_exp:0:16:1");
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(StorageAlign, Conv2dPaddedInput) {
  Schedule sch(workload("conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1"));
  BlockRV pad = sch.get_block("X_pad");
  sch.storage_align(pad, 0, 2, 32, 4);
  EXPECT_EQ(align_of(sch, pad), "X_pad:2:32:4");
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(StorageAlign, TraceTextAndJsonLayout) {
  Schedule sch(workload("softmax:shape=4x8"));
  sch.storage_align(sch.get_block("x_exp"), 0, 1, 32, 8);
  const std::string text = sch.trace().to_string();
  EXPECT_NE(text.find("StorageAlign(b0 | 0 1 32 8)"), std::string::npos) << text;
  const std::string json = trace_to_json(sch.trace());
  EXPECT_NE(json.find(R"(["StorageAlign",["b0"],[0,1,32,8],[]])"), std::string::npos) << json;
  Schedule again = replay(trace_from_json(json), sch.original());
  EXPECT_EQ(align_of(again, again.get_block("x_exp")), "x_exp:1:32:8");
}

TEST(StorageAlign, Preconditions) {
  Schedule sch(workload("softmax:shape=4x8"));
  BlockRV x_exp = sch.get_block("x_exp");
  BlockRV out = sch.get_block("softmax");
  const std::string marked = "block x_exp [";
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(x_exp, 1, 0, 16, 0); }, {1, "IndexOutOfRange", "buffer_index"}, marked);
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(x_exp, -1, 0, 16, 0); }, {1, "IndexOutOfRange", "buffer_index"}, marked);
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(x_exp, 0, 2, 16, 0); }, {2, "AxisOutOfRange", "axis"}, marked);
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(x_exp, 0, -3, 16, 0); }, {2, "AxisOutOfRange", "axis"}, marked);
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(x_exp, 0, 0, 0, 0); }, {3, "InvalidFactor", "factor"}, marked);
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(x_exp, 0, 0, -4, 0); }, {3, "InvalidFactor", "factor"}, marked);
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(x_exp, 0, 0, 16, 16); }, {4, "InvalidOffset", "offset"}, marked);
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(x_exp, 0, 0, 16, -1); }, {4, "InvalidOffset", "offset"}, marked);
  expect_refusal(InstructionKind::StorageAlign, sch, [&] { sch.storage_align(out, 0, 0, 16, 0); }, {5, "ParameterBuffer", "block b1"},
               "block softmax [");
}

TEST(StorageAlign, InvalidatedBlockIsPreconditionZero) {
  Schedule sch(workload("softmax:shape=4x8"));
  BlockRV x_exp = sch.get_block("x_exp");
  sch.compute_inline(x_exp);
  try {
    sch.storage_align(x_exp, 0, 0, 16, 0);
    ADD_FAILURE() << "expected an error";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 0) << e.what();
  }
}

// ---- ir/buffer_dim_align.h ------------------------------------------------------------

TEST(BufferDimAlign, FormatSortsDedupsAndRoundTrips) {
  std::vector<BufferDimAlign> entries = {{"B", 1, 32, 8}, {"A", 0, 16, 1}, {"B", 0, 4, 0}, {"B", 1, 64, 2}};
  const std::string text = ir::format_buffer_dim_align(entries);
  EXPECT_EQ(text, "A:0:16:1;B:0:4:0;B:1:64:2");
  std::vector<BufferDimAlign> parsed = ir::parse_buffer_dim_align(text);
  EXPECT_EQ(parsed, (std::vector<BufferDimAlign>{{"A", 0, 16, 1}, {"B", 0, 4, 0}, {"B", 1, 64, 2}}));
  EXPECT_EQ(ir::format_buffer_dim_align(parsed), text);
  EXPECT_EQ(ir::format_buffer_dim_align({}), "");
  EXPECT_TRUE(ir::parse_buffer_dim_align("").empty());
}

TEST(BufferDimAlign, BadTextIsUserError) {
  for (const char* bad : {"A:0:16", "A:0:16:1:2", ":0:16:1", "A:x:16:1", "A:0:0:0", "A:0:16:16", "A:-1:16:1",
                          "A:0:16:-1", "A:0:16:1;", "A:0:16:1;A:0:8:1", "A:0:16:1 "}) {
    EXPECT_THROW(ir::parse_buffer_dim_align(bad), UserError) << bad;
  }
  try {
    ir::parse_buffer_dim_align("A:0:16:1;B:1:8:9");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("B:1:8:9"), std::string::npos) << e.what();  // names the entry
  }
  EXPECT_THROW(ir::format_buffer_dim_align({{"A;B", 0, 1, 0}}), InternalError);
}

TEST(BufferDimAlign, AlignedStridesPadToTheCongruence) {
  const std::vector<BufferDimAlign> aligns = {{"A", 0, 32, 8}, {"other", 0, 7, 3}};
  // [32, 32] row stride 32 -> 40 (40 % 32 == 8); size 31 * 40 + 31 + 1.
  std::vector<int64_t> strides = ir::aligned_strides("A", {32, 32}, aligns);
  EXPECT_EQ(strides, (std::vector<int64_t>{40, 1}));
  EXPECT_EQ(ir::aligned_allocation_size({32, 32}, strides), 31 * 40 + 32);
  // Unaligned buffers keep row-major strides; an aligned inner axis scales the outer ones.
  EXPECT_EQ(ir::aligned_strides("B", {2, 3, 4}, aligns), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(ir::aligned_strides("A", {2, 3, 4}, {{"A", 1, 8, 1}}), (std::vector<int64_t>{27, 9, 1}));
  // Already congruent: unchanged.
  EXPECT_EQ(ir::aligned_strides("A", {4, 16}, {{"A", 0, 16, 0}}), (std::vector<int64_t>{16, 1}));
  for (const auto& [shape, aligns_case] : std::vector<std::pair<std::vector<int64_t>, std::vector<BufferDimAlign>>>{
           {{5, 6, 7}, {{"A", 0, 32, 5}, {"A", 1, 16, 3}}}, {{3, 9}, {{"A", 0, 4, 2}}}}) {
    std::vector<int64_t> s = ir::aligned_strides("A", shape, aligns_case);
    for (const BufferDimAlign& a : aligns_case) EXPECT_EQ(s[a.axis] % a.factor, a.offset);
    for (size_t d = 0; d + 1 < shape.size(); ++d) EXPECT_GE(s[d], s[d + 1] * shape[d + 1]);  // no overlap
  }
  EXPECT_THROW(ir::aligned_strides("A", {4}, {{"A", 1, 8, 0}}), UserError);
  EXPECT_EQ(ir::aligned_allocation_size({}, {}), 1);
  EXPECT_EQ(ir::aligned_allocation_size({0, 4}, {4, 1}), 0);
}

}  // namespace
}  // namespace dragon::schedule
