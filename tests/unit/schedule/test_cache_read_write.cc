// cache_read, cache_write and set_scope: the copy blocks and buffers they add, semantic
// preservation on the interpreter (matmul, softmax, conv2d, matmul_bias_act with its
// epilogue reverse-inlined), replay, and each precondition's error.
#include <gtest/gtest.h>

#include <functional>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;
using testing::marks;

TEST(CacheReadWrite, MatmulSharedInputsLocalOutput) {
  Schedule sch(workload("matmul:m=8,n=6,k=4"));
  BlockRV c = sch.get_block("C");
  BlockRV a_shared = sch.cache_read(c, 0, "shared");
  BlockRV b_shared = sch.cache_read(c, 1, "shared", {c});
  BlockRV c_local = sch.cache_write(c, 0, "local");
  EXPECT_EQ(sch.get(a_shared)->name, "A_shared");
  EXPECT_EQ(sch.get(b_shared)->name, "B_shared");
  EXPECT_EQ(sch.get(c_local)->name, "C_local");
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc A_shared: f32[8, 4] shared")) << text;
  EXPECT_TRUE(has_line(text, "alloc B_shared: f32[4, 6] shared")) << text;
  EXPECT_TRUE(has_line(text, "alloc C_local: f32[8, 6] local")) << text;
  EXPECT_TRUE(has_line(text, "block A_shared [v0: S 8 = ax0, v1: S 4 = ax1] {")) << text;
  EXPECT_TRUE(has_line(text, "A_shared[v0, v1] = A[v0, v1]")) << text;
  EXPECT_TRUE(has_line(text, "C_local[vi0, vi1] = C_local[vi0, vi1] + A_shared[vi0, vr0] * B_shared[vr0, vi1]"))
      << text;
  EXPECT_TRUE(has_line(text, "C_local[vi0, vi1] = 0f32")) << text;
  EXPECT_TRUE(has_line(text, "C[v0, v1] = C_local[v0, v1]")) << text;
  EXPECT_TRUE(has_line(text, "reads A_shared[vi0, vr0], B_shared[vr0, vi1]")) << text;
  // Order: the copies (each put first in the scope), the computation, the write-back.
  size_t a = text.find("block A_shared"), b = text.find("block B_shared"), comp = text.find("block C ["),
         back = text.find("block C_local");
  EXPECT_TRUE(b < a && a < comp && comp < back) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(CacheReadWrite, SoftmaxInputSharedByTwoConsumers) {
  Schedule sch(workload("softmax:shape=4x8"));
  BlockRV x_max = sch.get_block("x_max");
  BlockRV x_exp = sch.get_block("x_exp");
  sch.cache_read(x_max, 0, "shared", {x_max, x_exp});
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "x_max[vi0] = max(x_max[vi0], X_shared[vi0, vr0])")) << text;
  EXPECT_TRUE(has_line(text, "x_exp[vi0, vi1] = exp(X_shared[vi0, vi1] - x_max[vi0])")) << text;
  EXPECT_LT(text.find("block X_shared"), text.find("block x_max")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(CacheReadWrite, ReadOfAnIntermediateGoesAfterItsWriter) {
  Schedule sch(workload("softmax:shape=4x8"));
  BlockRV sum = sch.get_block("exp_sum");
  BlockRV copy = sch.cache_read(sum, 0, "local");
  sch.cache_read(sch.get_block("softmax"), 0, "local");  // a second copy of x_exp
  std::string text = ir::print_function(sch.func());
  EXPECT_EQ(sch.get(copy)->name, "x_exp_local");
  EXPECT_TRUE(has_line(text, "block x_exp_local_1 [")) << text;
  size_t writer = text.find("block x_exp ["), cached = text.find("block x_exp_local ["),
         consumer = text.find("block exp_sum [");
  EXPECT_TRUE(writer < cached && cached < consumer) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(CacheReadWrite, Conv2dLocalAccumulator) {
  Schedule sch(workload("conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3,padding=1x1"));
  sch.compute_inline(sch.get_block("X_pad"));
  sch.cache_write(sch.get_block("Y"), 0, "local");
  sch.cache_read(sch.get_block("Y"), 1, "shared");
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "Y_local[vi0, vi1, vi2, vi3] = 0f32")) << text;
  EXPECT_TRUE(has_line(text, "Y[v0, v1, v2, v3] = Y_local[v0, v1, v2, v3]")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(CacheReadWrite, MatmulBiasActEpilogueReverseInlined) {
  Schedule sch(workload("matmul_bias_act:m=8,n=8,k=8,activation=relu"));
  BlockRV back = sch.cache_write(sch.get_block("matmul"), 0, "local");
  sch.reverse_compute_inline(sch.get_block("out"));
  std::string text = ir::print_function(sch.func());
  EXPECT_EQ(sch.get(back)->name, "matmul_local");
  EXPECT_FALSE(has_line(text, "alloc matmul:")) << text;
  EXPECT_FALSE(has_line(text, "block out")) << text;
  EXPECT_TRUE(has_line(text, "out[v0, v1] = max(matmul_local[v0, v1] + bias[v1], 0f32)")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(CacheReadWrite, SetScopeOfAnIntermediate) {
  Schedule sch(workload("softmax:shape=4x8"));
  sch.set_scope(sch.get_block("x_exp"), 0, "shared");
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc x_exp: f32[4, 8] shared")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(CacheReadWrite, JsonRecordsTvmLayout) {
  Schedule sch(workload("matmul:m=4,n=4,k=4"));
  BlockRV c = sch.get_block("C");
  sch.cache_read(c, 0, "shared", {c});
  sch.cache_write(c, 0, "local");
  const std::string text = sch.trace().to_string();
  EXPECT_NE(text.find("b1 = CacheRead(b0, [b0] | 0 \"shared\")"), std::string::npos) << text;
  EXPECT_NE(text.find("b2 = CacheWrite(b0, [] | 0 \"local\")"), std::string::npos) << text;
  const std::string json = trace_to_json(sch.trace());
  EXPECT_NE(json.find(R"(["CacheRead",["b0",["b0"]],[0,"shared"],["b1"]])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"(["CacheWrite",["b0",[]],[0,"local"],["b2"]])"), std::string::npos) << json;
}

struct ErrorCase {
  int precondition;
  std::string error_name;
  std::string operand;
  std::string marked = "block C [";  // the line detail() marks
};

void expect_error(Schedule& sch, const std::function<void()>& apply, InstructionKind kind, const ErrorCase& c) {
  ir::PrimFunc before = sch.func();
  size_t trace_size = sch.trace().size();
  try {
    apply();
    ADD_FAILURE() << "expected " << c.error_name;
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), kind);
    EXPECT_EQ(e.precondition(), c.precondition) << e.what();
    EXPECT_EQ(e.error_name(), c.error_name) << e.what();
    EXPECT_EQ(e.operand(), c.operand) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.operand), std::string::npos) << e.what();
    EXPECT_TRUE(marks(e.detail(), c.marked)) << e.detail();
  }
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), trace_size);
}

constexpr const char* kTwoWriters = R"(func two(in A: f32[4], out C: f32[4]) {
  block root {
    alloc B: f32[4]
    for i0 in 4 {
      block B0 [vi0: S 4 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0]
      }
    }
    for i0 in 4 {
      block B1 [vi0: S 4 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0] + 1f32
      }
    }
    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads B[vi0]
        writes C[vi0]
        C[vi0] = B[vi0]
      }
    }
  }
}
)";

constexpr const char* kSharedNest = R"(func nest(in A: f32[4], out C: f32[4]) {
  block root {
    alloc B: f32[4]
    for i0 in 4 {
      block B [vi0: S 4 = i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0] * 2f32
      }
      block C [vi0: S 4 = i0] {
        reads B[vi0]
        writes C[vi0]
        C[vi0] = B[vi0] + 1f32
      }
    }
  }
}
)";

constexpr const char* kStridedWrite = R"(func strided(in A: f32[4], out C: f32[8]) {
  block root {
    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads A[vi0]
        writes C[vi0 * 2]
        C[vi0 * 2] = A[vi0]
      }
    }
    for i0 in 4 {
      block D [vi0: S 4 = i0] {
        reads A[vi0]
        writes C[vi0 * 2 + 1]
        C[vi0 * 2 + 1] = A[vi0]
      }
    }
  }
}
)";

TEST(CacheReadWrite, CacheReadPreconditionErrors) {
  {
    Schedule sch(workload("matmul:m=4,n=4,k=4"));
    BlockRV c = sch.get_block("C");
    expect_error(sch, [&] { sch.cache_read(c, 2, "shared"); }, InstructionKind::CacheRead,
                 {1, "IndexOutOfRange", "read_buffer_index"});
    expect_error(sch, [&] { sch.cache_read(c, 0, "texture"); }, InstructionKind::CacheRead,
                 {2, "InvalidScope", "storage_scope"});
  }
  {
    Schedule sch(workload("softmax:shape=4x8"));
    BlockRV x_max = sch.get_block("x_max");
    BlockRV sum = sch.get_block("exp_sum");
    expect_error(sch, [&] { sch.cache_read(x_max, 0, "shared", {sum}); }, InstructionKind::CacheRead,
                 {3, "NotAConsumer", "consumer b1", "block exp_sum ["});
  }
  {
    Schedule sch(ir::parse_function(kTwoWriters));
    BlockRV c = sch.get_block("C");
    expect_error(sch, [&] { sch.cache_read(c, 0, "shared"); }, InstructionKind::CacheRead,
                 {4, "NotSingleWriter", "block b0", "block B1 ["});
  }
  {
    Schedule sch(ir::parse_function(kSharedNest));
    BlockRV c = sch.get_block("C");
    expect_error(sch, [&] { sch.cache_read(c, 0, "shared"); }, InstructionKind::CacheRead,
                 {4, "NotSingleWriter", "block b0"});
  }
}

TEST(CacheReadWrite, CacheWriteAndSetScopePreconditionErrors) {
  {
    Schedule sch(workload("matmul:m=4,n=4,k=4"));
    BlockRV c = sch.get_block("C");
    expect_error(sch, [&] { sch.cache_write(c, 1, "local"); }, InstructionKind::CacheWrite,
                 {1, "IndexOutOfRange", "write_buffer_index"});
    expect_error(sch, [&] { sch.cache_write(c, 0, "registers"); }, InstructionKind::CacheWrite,
                 {2, "InvalidScope", "storage_scope"});
    expect_error(sch, [&] { sch.set_scope(c, 0, "shared"); }, InstructionKind::SetScope,
                 {3, "ParameterBuffer", "block b0"});
    expect_error(sch, [&] { sch.set_scope(c, 3, "shared"); }, InstructionKind::SetScope,
                 {1, "IndexOutOfRange", "buffer_index"});
    expect_error(sch, [&] { sch.set_scope(c, 0, "smem"); }, InstructionKind::SetScope,
                 {2, "InvalidScope", "storage_scope"});
  }
  {
    Schedule sch(ir::parse_function(kTwoWriters));
    BlockRV b0 = sch.get_block("B0");
    expect_error(sch, [&] { sch.cache_write(b0, 0, "local"); }, InstructionKind::CacheWrite,
                 {3, "NotSingleWriteBlock", "block b0", "block B1 ["});
  }
  {
    Schedule sch(ir::parse_function(kStridedWrite));
    BlockRV c = sch.get_block("C");
    // Two writers of C: precondition 3 comes first.
    expect_error(sch, [&] { sch.cache_write(c, 0, "local"); }, InstructionKind::CacheWrite,
                 {3, "NotSingleWriteBlock", "block b0", "block D ["});
  }
  {
    Schedule sch(ir::parse_function(kSharedNest));
    BlockRV b = sch.get_block("B");
    expect_error(sch, [&] { sch.cache_write(b, 0, "local"); }, InstructionKind::CacheWrite,
                 {5, "SharedLoopNest", "block b0", "block C ["});
  }
}

constexpr const char* kStridedOnly = R"(func strided(in A: f32[4], out C: f32[8]) {
  block root {
    for i0 in 4 {
      block C [vi0: S 4 = i0] {
        reads A[vi0]
        writes C[vi0 * 2]
        C[vi0 * 2] = A[vi0]
      }
    }
  }
}
)";

TEST(CacheReadWrite, CacheWriteOfAStridedRegion) {
  Schedule sch(ir::parse_function(kStridedOnly));
  BlockRV c = sch.get_block("C");
  expect_error(sch, [&] { sch.cache_write(c, 0, "local"); }, InstructionKind::CacheWrite,
               {4, "UnsupportedWriteRegion", "block b0"});
}

// The multi-level tiling flow: copies made at the root, then moved under the tile loops.
TEST(CacheReadWrite, CopiesMovedUnderTheTilesByComputeAt) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(loops[0], {None{}, int64_t{4}});
  std::vector<LoopRV> j = sch.split(loops[1], {None{}, int64_t{4}});
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, int64_t{2}});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  BlockRV a_shared = sch.cache_read(c, 0, "shared");
  BlockRV b_shared = sch.cache_read(c, 1, "shared");
  BlockRV c_local = sch.cache_write(c, 0, "local");
  sch.compute_at(a_shared, k[0]);
  sch.compute_at(b_shared, k[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "block A_shared [v0: S 8 = i0_0 * 4 + ")) << text;
  EXPECT_TRUE(has_line(text, "block B_shared [v0: S 8 = r0_0 * 2 + ")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  (void)c_local;
}

}  // namespace
}  // namespace dragon::schedule
