// fuse and reorder: loop headers, floordiv/floormod bindings, i64 promotion, the
// preconditions, and semantic preservation on the interpreter.
#include <gtest/gtest.h>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

TEST(Fuse, TwoSpatialLoops) {
  Schedule sch(workload("matmul:m=6,n=10,k=4"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  LoopRV fused = sch.fuse({loops[0], loops[1]});
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i0_i1_fused in 60 {")) << text;
  EXPECT_TRUE(has_line(text, "vi0: S 6 = i0_i1_fused // 10, vi1: S 10 = i0_i1_fused % 10")) << text;
  EXPECT_EQ(sch.get(fused)->loop_var.name(), "i0_i1_fused");
  EXPECT_FALSE(sch.is_valid(loops[0]));
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Fuse, ThreeLoopsOfAConvolutionAndSplitAgain) {
  Schedule sch(workload("conv2d:batch=1,in_channels=2,out_channels=3,size=6x6,kernel=3x3"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("Y"));
  ASSERT_GE(loops.size(), 4u);
  LoopRV fused = sch.fuse({loops[1], loops[2], loops[3]});
  std::string text = ir::print_function(sch.func());
  // Outermost i1 = f // 16, middle i2 = f // 4 % 4, innermost i3 = f % 4.
  EXPECT_TRUE(has_line(text, "vi1: S 3 = i1_i2_i3_fused // 16, vi2: S 4 = i1_i2_i3_fused // 4 % 4, "
                             "vi3: S 4 = i1_i2_i3_fused % 4"))
      << text;
  sch.split(fused, {None{}, int64_t{5}});
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Fuse, WideProductUsesI64) {
  // 2^16 * 2^16 iterations do not fit i32; the interpreter never runs it.
  Schedule sch(workload("mul_scalar:shape=65536x65536"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_child_blocks(sch.get_block("root"))[0]);
  LoopRV fused = sch.fuse({loops[0], loops[1]});
  EXPECT_EQ(ir::to_string(sch.get(fused)->loop_var.dtype()), "i64");
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "in 4294967296i64 {")) << text;
  EXPECT_TRUE(has_line(text, "i32(")) << text;
}

TEST(Fuse, PreconditionErrors) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  auto expect_error = [&](const std::vector<LoopRV>& args, int k, const std::string& name, const std::string& operand) {
    ir::PrimFunc before = sch.func();
    try {
      sch.fuse(args);
      ADD_FAILURE() << "expected " << name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::Fuse);
      EXPECT_EQ(e.precondition(), k) << e.what();
      EXPECT_EQ(e.error_name(), name);
      EXPECT_NE(std::string(e.what()).find(operand), std::string::npos) << e.what();
      EXPECT_NE(e.detail().find("<-- here"), std::string::npos) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
  };
  expect_error({loops[0], loops[0]}, 1, "DuplicateLoop", "loop l1");
  expect_error({loops[0], loops[2]}, 2, "NotConsecutive", "loop l3");
  expect_error({loops[1], loops[0]}, 2, "NotConsecutive", "loop l1");
  sch.parallel(loops[0]);
  expect_error({loops[0], loops[1]}, 4, "HasAnnotationOrBinding", "loop l1");
}

TEST(Reorder, DependentDomainCannotMoveOutside) {
  Schedule sch(ir::parse_function(R"(func tri(in A: f32[4, 4], out B: f32[4, 4]) {
  block root {
    for i0 in 4 {
      for i1 in i0 + 1 {
        block B [vi0: S 4 = i0, vi1: S 4 = i1] {
          reads A[vi0, vi1]
          writes B[vi0, vi1]
          B[vi0, vi1] = A[vi0, vi1]
        }
      }
    }
  }
}
)"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("B"));
  try {
    sch.reorder({loops[1], loops[0]});
    ADD_FAILURE() << "expected DependentLoopDomain";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 3);
    EXPECT_EQ(e.error_name(), "DependentLoopDomain");
    EXPECT_NE(std::string(e.what()).find("loop i1"), std::string::npos) << e.what();
    EXPECT_TRUE(has_line(e.detail(), "for i1 in i0 + 1 {  <-- here")) << e.detail();
  }
  try {
    sch.fuse({loops[0], loops[1]});
    ADD_FAILURE() << "expected LoopNotStartAtZero";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 3);
    EXPECT_EQ(e.error_name(), "LoopNotStartAtZero");
  }
}

TEST(Reorder, SwapsLoopsKeepingBindings) {
  Schedule sch(workload("matmul:m=4,n=6,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.reorder({loops[2], loops[0]});
  std::string text = ir::print_function(sch.func());
  // r0 takes i0's place and i0 takes r0's; i1 stays in the middle.
  size_t r0 = text.find("for r0 in 8"), i1 = text.find("for i1 in 6"), i0 = text.find("for i0 in 4");
  ASSERT_NE(r0, std::string::npos);
  EXPECT_LT(r0, i1);
  EXPECT_LT(i1, i0);
  EXPECT_TRUE(has_line(text, "vi0: S 4 = i0, vi1: S 6 = i1, vr0: R 8 = r0")) << text;
  // Each output element still sums k in the same order: bit for bit.
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  // The loop random variables survive a reorder.
  EXPECT_TRUE(sch.is_valid(loops[0]));
}

TEST(Reorder, TiledMatmul) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  auto i = sch.split(loops[0], {None{}, int64_t{4}});
  auto j = sch.split(loops[1], {None{}, int64_t{2}});
  auto k = sch.split(loops[2], {None{}, int64_t{4}});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  std::string text = ir::print_function(sch.func());
  EXPECT_LT(text.find("for r0_0"), text.find("for i0_1")) << text;
  EXPECT_LT(text.find("for i1_0"), text.find("for r0_0")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Reorder, PreconditionErrors) {
  Schedule sch(workload("softmax:shape=4x16"));
  std::vector<LoopRV> a = sch.get_loops(sch.get_block("x_max"));
  std::vector<LoopRV> b = sch.get_loops(sch.get_block("x_exp"));
  try {
    sch.reorder({a[1], a[1]});
    ADD_FAILURE();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 1);
    EXPECT_EQ(e.error_name(), "DuplicateLoop");
  }
  try {
    sch.reorder({a[0], b[1]});
    ADD_FAILURE();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 2);
    EXPECT_EQ(e.error_name(), "NotSingleBranchChain");
    EXPECT_NE(std::string(e.what()).find("loop l"), std::string::npos) << e.what();
  }
}

TEST(Reorder, KeepsScanOrder) {
  Schedule sch(workload("cumsum:shape=4x12"));
  BlockRV scan = sch.get_child_blocks(sch.get_block("root")).back();
  std::vector<LoopRV> loops = sch.get_loops(scan);
  ASSERT_EQ(loops.size(), 2u);
  // The spatial loop may move inside the scan loop: each row still scans in order.
  sch.reorder({loops[1], loops[0]});
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  // Splitting the scan axis and swapping its parts would break the carried dependence.
  std::vector<LoopRV> parts = sch.split(loops[1], {None{}, int64_t{4}});
  try {
    sch.reorder({parts[1], parts[0]});
    ADD_FAILURE() << "expected IterationOrderChanged";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 4);
    EXPECT_EQ(e.error_name(), "IterationOrderChanged");
    EXPECT_NE(e.detail().find("<-- here"), std::string::npos) << e.detail();
  }
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Reorder, FusedSpatialAndReduceLoopsKeepTheirOrder) {
  // Fusing i1 with r0 and splitting the result unevenly mixes output elements and
  // reduction steps in each part; swapping the parts would run updates before the init.
  Schedule sch(workload("matmul:m=4,n=6,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  LoopRV fused = sch.fuse({loops[1], loops[2]});
  std::vector<LoopRV> parts = sch.split(fused, {int64_t{5}, None{}});
  try {
    sch.reorder({parts[1], parts[0]});
    ADD_FAILURE() << "expected IterationOrderChanged";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 4);
    EXPECT_EQ(e.error_name(), "IterationOrderChanged");
    EXPECT_NE(std::string(e.what()).find("block 'C'"), std::string::npos) << e.what();
  }
  // Moving a purely spatial loop across them is fine.
  sch.reorder({parts[0], parts[1], loops[0]});
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

}  // namespace
}  // namespace dragon::schedule
