// rfactor: the rfactor and write-back blocks, the intermediate buffer's shape at each
// factor axis, semantic preservation up to reassociation (exact for max and min), the
// combination with split, and each precondition.
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

TEST(RFactor, MatmulSplitReduceLoop) {
  Schedule sch(workload("matmul:m=4,n=6,k=16"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, int64_t{4}});
  BlockRV rf = sch.rfactor(k[1], 0);
  EXPECT_EQ(sch.get(rf)->name, "C_rf");
  EXPECT_TRUE(sch.is_valid(c));
  EXPECT_TRUE(sch.is_valid(k[0]));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc C_rf: f32[4, 4, 6]")) << text;
  EXPECT_TRUE(has_line(text, "block C_rf [vr0_1: S 4 = r0_1, vi0: S 4 = i0, vi1: S 6 = i1, vr0_0: R 4 = r0_0] {"))
      << text;
  EXPECT_TRUE(has_line(text, "C_rf[vr0_1, vi0, vi1] = C_rf[vr0_1, vi0, vi1] + A[vi0, vr0_0 * 4 + vr0_1] * "
                             "B[vr0_0 * 4 + vr0_1, vi1]"))
      << text;
  EXPECT_TRUE(has_line(text, "block C [vi0: S 4 = i0, vi1: S 6 = i1, vr0_1: R 4 = r0_1] {")) << text;
  EXPECT_TRUE(has_line(text, "C[vi0, vi1] = C[vi0, vi1] + C_rf[vr0_1, vi0, vi1]")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(sch));
  // The rfactor block is an ordinary reduction: decompose it and the write-back.
  sch.decompose_reduction(rf, sch.get_loops(rf)[2]);
  sch.decompose_reduction(c, sch.get_loops(c)[2]);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(RFactor, FactorAxisPlacesTheNewDimension) {
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(axis);
    Schedule sch(workload("matmul:m=4,n=6,k=8"));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    sch.rfactor(loops[2], axis);
    std::string text = ir::print_function(sch.func());
    int64_t at = axis < 0 ? axis + 3 : axis;
    const char* shapes[] = {"f32[8, 4, 6]", "f32[4, 8, 6]", "f32[4, 6, 8]"};
    EXPECT_TRUE(has_line(text, std::string("alloc C_rf: ") + shapes[at])) << text;
    EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, /*exact=*/false));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(RFactor, SeveralReductions) {
  struct Case {
    std::string spec;
    std::string block;
    size_t loop;
    bool exact;  // max and min do not round
  };
  std::vector<Case> cases = {
      {"sum:shape=4x12x5,axis=1", "sum", 2, false},
      {"softmax:shape=4x8,axis=1", "x_max", 1, true},
      {"softmax:shape=4x8,axis=1", "exp_sum", 1, false},
      {"layer_norm:shape=4x3x8,normalized_dims=1", "x_sum", 2, false},
      {"layer_norm:shape=4x3x8,normalized_dims=1", "sq_dev_sum", 2, false},
      {"conv2d:batch=1,in_channels=3,out_channels=4,size=6x6", "Y", 5, false},
      {"conv2d:batch=1,in_channels=3,out_channels=4,size=6x6", "Y", 4, false},
      {"min:shape=4x8x3,axis=1", "min", 2, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec + " " + c.block);
    Schedule sch(workload(c.spec));
    BlockRV b = sch.get_block(c.block);
    BlockRV rf = sch.rfactor(sch.get_loops(b)[c.loop], -1);
    EXPECT_EQ(sch.get(rf)->name, c.block + "_rf");
    EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, c.exact));
    EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 13, c.exact));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(RFactor, SplitNonDivisibleThenRFactorEitherPart) {
  for (int part : {0, 1}) {
    SCOPED_TRACE(part);
    Schedule sch(workload("sum:shape=3x10x4,axis=1"));
    BlockRV b = sch.get_block("sum");
    std::vector<LoopRV> loops = sch.get_loops(b);
    std::vector<LoopRV> r = sch.split(loops[2], {None{}, int64_t{4}});
    sch.reorder({r[0], loops[1]});
    sch.rfactor(r[part], 0);
    std::string text = ir::print_function(sch.func());
    EXPECT_TRUE(has_line(text, "if (r0_0 * 4 + r0_1 < 10)")) << text;
    EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, /*exact=*/false));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

// The cross-block reduction's shape: every reduce loop fused, split by a factor that does
// not divide the fused extent, and the outer part factored out. The outer loop feeds all
// the reduce variables (through the fused index); each partial sums one run of it.
TEST(RFactor, OuterPartOfFusedReduceLoops) {
  struct Case {
    std::string spec;
    std::string block;
    size_t first_reduce;  // its loops from here on are the reduce ones
  };
  std::vector<Case> cases = {
      {"mse_loss:shape=6x10", "squared_error_sum", 0},
      {"frobenius_norm:shape=2x3x5x4", "sq_sum", 0},
      {"layer_norm:shape=4x3x7,normalized_dims=2", "x_sum", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    Schedule sch(workload(c.spec));
    BlockRV b = sch.get_block(c.block);
    std::vector<LoopRV> loops = sch.get_loops(b);
    std::vector<LoopRV> reduce(loops.begin() + static_cast<std::ptrdiff_t>(c.first_reduce), loops.end());
    ASSERT_GE(reduce.size(), 2u);
    std::vector<LoopRV> parts = sch.split(sch.fuse(reduce), {None{}, int64_t{8}});
    BlockRV rf = sch.rfactor(parts[0], 0);
    std::string text = ir::print_function(sch.func());
    EXPECT_EQ(sch.get(rf)->name, c.block + "_rf");
    EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, /*exact=*/false)) << text;
    EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 13, /*exact=*/false)) << text;
    EXPECT_TRUE(replays_exactly(sch));
  }
}

struct RFactorErrorCase {
  std::string spec;
  std::string block;
  size_t loop;
  int64_t factor_axis;
  int precondition;
  std::string error_name;
};

TEST(RFactor, PreconditionErrors) {
  std::vector<RFactorErrorCase> cases = {
      {"softmax:shape=4x8,axis=1", "x_exp", 1, 0, 2, "NotReductionBlock"},
      {"argmax:shape=4x8,axis=1", "argmax", 1, 0, 3, "UnrecognizedReducer"},
      {"matmul:m=4,n=4,k=8", "C", 0, 0, 4, "InvalidRFactorLoop"},
      {"matmul:m=4,n=4,k=8", "C", 2, 3, 6, "InvalidFactorAxis"},
      {"matmul:m=4,n=4,k=8", "C", 2, -4, 6, "InvalidFactorAxis"},
  };
  for (const RFactorErrorCase& c : cases) {
    SCOPED_TRACE(c.error_name);
    Schedule sch(workload(c.spec));
    LoopRV l = sch.get_loops(sch.get_block(c.block))[c.loop];
    ir::PrimFunc before = sch.func();
    size_t trace_size = sch.trace().size();
    try {
      sch.rfactor(l, c.factor_axis);
      ADD_FAILURE() << "expected " << c.error_name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::RFactor);
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name);
      EXPECT_NE(std::string(e.what()).find(e.operand()), std::string::npos) << e.what();
      EXPECT_TRUE(has_line(e.detail(), "  <-- here")) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
    EXPECT_EQ(sch.trace().size(), trace_size);
  }
}

TEST(RFactor, LoopAndNestErrors) {
  {
    // A bound loop.
    Schedule sch(workload("matmul:m=4,n=4,k=8"));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    sch.unroll(loops[2]);
    try {
      sch.rfactor(loops[2], 0);
      ADD_FAILURE() << "expected UnsupportedLoop";
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.precondition(), 1);
      EXPECT_EQ(e.error_name(), "UnsupportedLoop");
      EXPECT_TRUE(has_line(e.detail(), "for r0 in 8 unrolled {  <-- here")) << e.detail();
    }
  }
  {
    // A fused spatial-and-reduce loop feeds both kinds.
    Schedule sch(workload("matmul:m=4,n=4,k=8"));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    LoopRV fused = sch.fuse({loops[1], loops[2]});
    try {
      sch.rfactor(fused, 0);
      ADD_FAILURE() << "expected InvalidRFactorLoop";
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.precondition(), 4);
      EXPECT_EQ(e.error_name(), "InvalidRFactorLoop");
    }
  }
  {
    // After decompose_reduction the init block shares the outer loops.
    Schedule sch(workload("matmul:m=4,n=4,k=8"));
    BlockRV c = sch.get_block("C");
    std::vector<LoopRV> loops = sch.get_loops(c);
    sch.decompose_reduction(c, loops[2]);
    try {
      sch.rfactor(loops[2], 0);
      ADD_FAILURE() << "expected an error";
    } catch (const ScheduleError& e) {
      // The update has no init any more.
      EXPECT_EQ(e.precondition(), 2);
      EXPECT_EQ(e.error_name(), "NotReductionBlock");
    }
  }
}

constexpr const char* kTwoBlocks = R"(func two(in A: f32[4, 8], out B: f32[4], out D: f32[4]) {
  block root {
    for i0 in 4 {
      block D [vi0: S 4 = i0] {
        writes D[vi0]
        D[vi0] = 1f32
      }
      for r0 in 8 {
        block B [vi0: S 4 = i0, vr0: R 8 = r0] {
          reads A[vi0, vr0]
          writes B[vi0]
          init {
            B[vi0] = 0f32
          }
          B[vi0] = B[vi0] + A[vi0, vr0]
        }
      }
    }
  }
}
)";

TEST(RFactor, OuterLoopWithAnotherBlock) {
  Schedule sch(ir::parse_function(kTwoBlocks));
  LoopRV r = sch.get_loops(sch.get_block("B"))[1];
  try {
    sch.rfactor(r, 0);
    ADD_FAILURE() << "expected NotSingleBlockNest";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 5);
    EXPECT_EQ(e.error_name(), "NotSingleBlockNest");
    EXPECT_TRUE(has_line(e.detail(), "for i0 in 4 {  <-- here")) << e.detail();
  }
}

// Factors multiplying well past the extent leave outer iterations with nothing to
// reduce: their partials would never be initialized.
TEST(RFactor, PartialsThatNeverStartAreRefused) {
  Schedule sch(workload("sum:shape=3x10x4,axis=1"));
  BlockRV b = sch.get_block("sum");
  std::vector<LoopRV> r = sch.split(sch.get_loops(b)[2], {int64_t{5}, int64_t{4}});
  ir::PrimFunc before = sch.func();
  try {
    sch.rfactor(r[0], 0);
    ADD_FAILURE() << "expected InvalidRFactorLoop";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 4);
    EXPECT_EQ(e.error_name(), "InvalidRFactorLoop");
    EXPECT_NE(std::string(e.what()).find("never initialized"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(sch.func().same_as(before));
  // The inner part always starts at r0_0 = 0: fine.
  sch.rfactor(r[1], 1);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(sch));
}

// Inside a blockized tile the intermediate buffer is allocated in the tile's block.
TEST(RFactor, InsideABlockizedTile) {
  Schedule sch(workload("matmul:m=4,n=4,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  BlockRV outer = sch.blockize(loops[1]);
  std::vector<LoopRV> k = sch.split(loops[2], {int64_t{2}, int64_t{4}});
  sch.rfactor(k[1], 0);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "alloc C_rf: f32[4, 4, 4]")) << text;
  EXPECT_EQ(sch.get_child_blocks(outer).size(), 2u);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 7, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(sch));
}

// Blockize inside a reduce loop: the inner block's reduce variable is bound over the outer
// block's, which rfactor's new block could not see. Refused (it used to build a block whose
// body used a variable it does not define; the IR verifier caught it).
TEST(RFactor, ReduceBoundOutsideItsScopeIsRefused) {
  Schedule sch(workload("matmul:m=4,n=4,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> k = sch.split(sch.get_loops(c)[2], {int64_t{2}, int64_t{4}});
  sch.blockize(k[1]);
  LoopRV inner = sch.get_loops(c).back();
  ir::PrimFunc before = sch.func();
  try {
    sch.rfactor(inner, 0);
    ADD_FAILURE() << "expected InvalidRFactorLoop\n" << ir::print_function(sch.func());
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 4) << e.what();
    EXPECT_EQ(e.error_name(), "InvalidRFactorLoop");
    EXPECT_NE(std::string(e.what()).find("from outside the loops of its scope"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(sch.func().same_as(before));
}

}  // namespace
}  // namespace dragon::schedule
