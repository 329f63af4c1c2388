// blockize: the outer block's variables, bindings and regions, the inner block's new
// bindings, bit-exact semantic preservation, and each precondition.
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

TEST(Blockize, MatmulInnerTile) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(loops[0], {None{}, int64_t{4}});
  std::vector<LoopRV> j = sch.split(loops[1], {None{}, int64_t{4}});
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, int64_t{2}});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  BlockRV outer = sch.blockize(i[1]);
  EXPECT_EQ(sch.get(outer)->name, "C_o");
  EXPECT_TRUE(sch.is_valid(c));
  EXPECT_TRUE(sch.is_valid(i[1]));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "block C_o [vi0_o: S 2 = i0_0, vi1_o: S 2 = i1_0, vr0_o: R 4 = r0_0] {")) << text;
  EXPECT_TRUE(has_line(text, "reads C[vi0_o * 4 +: 4, vi1_o * 4 +: 4], A[vi0_o * 4 +: 4, vr0_o * 2 +: 2]")) << text;
  EXPECT_TRUE(has_line(text, "writes C[vi0_o * 4 +: 4, vi1_o * 4 +: 4]")) << text;
  EXPECT_TRUE(has_line(text, "block C [vi0: S 8 = vi0_o * 4 + i0_1, vi1: S 8 = vi1_o * 4 + i1_1, vr0: R 8 = vr0_o * 2 + r0_1] {"))
      << text;
  EXPECT_TRUE(has_line(text, "init {")) << text;
  EXPECT_EQ(sch.get_child_blocks(outer).size(), 1u);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Blockize, WholeNestAndUnitIters) {
  for (bool preserve : {true, false}) {
    SCOPED_TRACE(preserve);
    Schedule sch(workload("matmul:m=4,n=6,k=8"));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    BlockRV outer = sch.blockize(loops[0], preserve);
    std::string text = ir::print_function(sch.func());
    if (preserve) {
      EXPECT_TRUE(has_line(text, "block C_o [vi0_o: S 1 = 0, vi1_o: S 1 = 0, vr0_o: R 1 = 0] {")) << text;
      EXPECT_TRUE(has_line(text, "block C [vi0: S 4 = i0, vi1: S 6 = i1, vr0: R 8 = r0] {")) << text;
    } else {
      EXPECT_TRUE(has_line(text, "block C_o {")) << text;
    }
    EXPECT_TRUE(has_line(text, "writes C[0 +: 4, 0 +: 6]")) << text;
    EXPECT_EQ(sch.get_loops(outer).size(), 0u);
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(Blockize, BitExactOnSeveralOps) {
  struct Case {
    std::string spec;
    std::string block;
    size_t loop;
  };
  std::vector<Case> cases = {
      {"conv2d:batch=1,in_channels=3,out_channels=4,size=6x6", "Y", 4},
      {"conv2d:batch=1,in_channels=3,out_channels=4,size=6x6", "Y", 2},
      {"softmax:shape=4x8,axis=1", "x_exp", 1},
      {"softmax:shape=4x8,axis=1", "exp_sum", 1},
      {"layer_norm:shape=4x3x8,normalized_dims=1", "x_sum", 1},
      {"argmax:shape=4x8,axis=1", "argmax", 1},
      {"sum:shape=4x6x5,axis=1", "sum", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec + " " + c.block);
    Schedule sch(workload(c.spec));
    BlockRV b = sch.get_block(c.block);
    sch.blockize(sch.get_loops(b)[c.loop]);
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(Blockize, AfterDecomposeReductionAndSplit) {
  Schedule sch(workload("matmul:m=8,n=4,k=6"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(loops[0], {None{}, int64_t{2}});
  BlockRV init = sch.decompose_reduction(c, i[0]);
  sch.blockize(sch.get_loops(init)[1]);
  sch.blockize(i[1]);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Blockize, PreconditionErrors) {
  {
    // A split that does not divide leaves a guard over loops on both sides.
    Schedule sch(workload("matmul:m=10,n=4,k=4"));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    std::vector<LoopRV> i = sch.split(loops[0], {None{}, int64_t{4}});
    ir::PrimFunc before = sch.func();
    try {
      sch.blockize(i[1]);
      ADD_FAILURE() << "expected UnsupportedPredicate";
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::Blockize);
      EXPECT_EQ(e.precondition(), 4) << e.what();
      EXPECT_EQ(e.error_name(), "UnsupportedPredicate");
      EXPECT_TRUE(has_line(e.detail(), "  <-- here")) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
  }
  {
    // Two blocks under the loop: the init sits in i1, next to the reduce loop.
    Schedule sch(workload("matmul:m=4,n=4,k=4"));
    BlockRV c = sch.get_block("C");
    std::vector<LoopRV> loops = sch.get_loops(c);
    sch.decompose_reduction(c, loops[2]);
    size_t trace_size = sch.trace().size();
    try {
      sch.blockize(loops[0]);
      ADD_FAILURE() << "expected NotSingleBlockChain";
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.precondition(), 1);
      EXPECT_EQ(e.error_name(), "NotSingleBlockChain");
      EXPECT_EQ(e.operand(), "loop " + rv_name(loops[0]));
      EXPECT_TRUE(has_line(e.detail(), "for i1 in 4 {  <-- here")) << e.detail();
    }
    EXPECT_EQ(sch.trace().size(), trace_size);
  }
  {
    // A fused loop under the blockized one: its part in each binding is not an offset
    // in a tile of the loops above.
    Schedule other(workload("matmul:m=4,n=4,k=4"));
    std::vector<LoopRV> l2 = other.get_loops(other.get_block("C"));
    LoopRV f2 = other.fuse({l2[0], l2[1]});
    std::vector<LoopRV> p2 = other.split(f2, {int64_t{3}, int64_t{6}});
    try {
      other.blockize(p2[1]);
      ADD_FAILURE() << "expected an error";
    } catch (const ScheduleError& e) {
      EXPECT_TRUE(e.precondition() == 3 || e.precondition() == 4) << e.what();
    }
  }
}

constexpr const char* kNonAffine = R"(func sq(in A: f32[16], out B: f32[4]) {
  block root {
    for i0 in 4 {
      block B [vi0: S 4 = i0] {
        reads A[vi0 * vi0]
        writes B[vi0]
        B[vi0] = A[vi0 * vi0]
      }
    }
  }
}
)";

constexpr const char* kSquareBinding = R"(func sq(in A: f32[16], out B: f32[16]) {
  block root {
    for i0 in 4 {
      block B [vi0: S 16 = i0 * i0] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0]
      }
    }
  }
}
)";

TEST(Blockize, NonAffineBindingIsRefused) {
  // Non-affine accesses are fine (regions widen); a non-affine binding is not.
  Schedule ok(ir::parse_function(kNonAffine));
  ok.blockize(ok.get_loops(ok.get_block("B"))[0]);
  EXPECT_TRUE(same_outputs(ok.original(), ok.func()));
  Schedule sch(ir::parse_function(kSquareBinding));
  try {
    sch.blockize(sch.get_loops(sch.get_block("B"))[0]);
    ADD_FAILURE() << "expected NotAffineBinding";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 3) << e.what();
    EXPECT_EQ(e.error_name(), "NotAffineBinding");
    EXPECT_TRUE(has_line(e.detail(), "block B [vi0: S 16 = i0 * i0] {  <-- here")) << e.detail();
  }
}

}  // namespace
}  // namespace dragon::schedule
