// decompose_reduction: the init block's place, variables and loops, bit-exact semantic
// preservation on several reductions (alone and after split), and each precondition.
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

TEST(DecomposeReduction, AtTheReduceLoopInitSitsInsideTheSpatialLoops) {
  Schedule sch(workload("matmul:m=4,n=4,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  BlockRV init = sch.decompose_reduction(c, loops[2]);
  EXPECT_EQ(sch.get(init)->name, "C_init");
  EXPECT_TRUE(sch.is_valid(c));
  EXPECT_TRUE(sch.is_valid(loops[2]));
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "block C_init [vi0: S 4 = i0, vi1: S 4 = i1] {")) << text;
  EXPECT_TRUE(has_line(text, "block C [vi0: S 4 = i0, vi1: S 4 = i1, vr0: R 8 = r0] {")) << text;
  EXPECT_TRUE(has_line(text, "reads C[vi0, vi1], A[vi0, vr0], B[vr0, vi1]")) << text;
  EXPECT_FALSE(has_line(text, "init {")) << text;
  EXPECT_FALSE(has_line(text, "_init in")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  EXPECT_EQ(sch.trace().to_string().find("DecomposeReduction") != std::string::npos, true) << sch.trace().to_string();
}

TEST(DecomposeReduction, AtTheOutermostLoopInitGetsItsOwnLoops) {
  Schedule sch(workload("matmul:m=4,n=6,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  BlockRV init = sch.decompose_reduction(c, loops[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i0_init in 4 {")) << text;
  EXPECT_TRUE(has_line(text, "for i1_init in 6 {")) << text;
  EXPECT_TRUE(has_line(text, "block C_init [vi0: S 4 = i0_init, vi1: S 6 = i1_init] {")) << text;
  EXPECT_EQ(sch.get_loops(init).size(), 2u);
  EXPECT_EQ(sch.get_loops(c).size(), 3u);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(DecomposeReduction, AfterSplitOfTheReduceLoop) {
  Schedule sch(workload("matmul:m=4,n=4,k=10"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, int64_t{4}});
  std::vector<LoopRV> i = sch.split(loops[0], {None{}, int64_t{3}});
  sch.reorder({i[0], loops[1], k[0], i[1]});
  // Loops now: i0_0, i1, r0_0, i0_1, r0_1; r0_0 is the first reduce loop.
  sch.decompose_reduction(c, k[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i0_1_init in 3 {")) << text;
  // The spatial guard of the split stays; the reduce guard is the update's only.
  EXPECT_TRUE(has_line(text, "block C_init [vi0: S 4 = i0_0 * 3 + i0_1_init, vi1: S 4 = i1] if (i0_0 * 3 + i0_1_init < 4) {"))
      << text;
  EXPECT_TRUE(has_line(text, "if (r0_0 * 4 + r0_1 < 10 && i0_0 * 3 + i0_1 < 4) {")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(DecomposeReduction, BitExactOnSeveralReductions) {
  struct Case {
    std::string spec;
    std::vector<std::string> blocks;
    size_t loop;  // index in get_loops of the loop to decompose at
  };
  std::vector<Case> cases = {
      {"sum:shape=4x6x5,axis=1", {"sum"}, 1},
      {"sum:shape=4x6x5,axis=1", {"sum"}, 2},
      {"softmax:shape=4x8,axis=1", {"x_max", "exp_sum"}, 0},
      {"softmax:shape=4x8,axis=1", {"x_max", "exp_sum"}, 1},
      {"layer_norm:shape=4x3x8,normalized_dims=1", {"x_sum", "sq_dev_sum"}, 2},
      {"layer_norm:shape=4x3x8,normalized_dims=1", {"x_sum", "sq_dev_sum"}, 0},
      {"conv2d:batch=1,in_channels=3,out_channels=4,size=6x6", {"Y"}, 4},
      {"conv2d:batch=1,in_channels=3,out_channels=4,size=6x6", {"Y"}, 1},
      {"argmax:shape=4x8,axis=1", {"argmax"}, 1},
      {"argmax:shape=4x8,axis=1", {"argmax"}, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec + " at loop " + std::to_string(c.loop));
    Schedule sch(workload(c.spec));
    for (const std::string& name : c.blocks) {
      BlockRV b = sch.get_block(name);
      sch.decompose_reduction(b, sch.get_loops(b)[c.loop]);
      EXPECT_NE(sch.func()->body.get(), nullptr);
    }
    std::string text = ir::print_function(sch.func());
    for (const std::string& name : c.blocks) EXPECT_TRUE(has_line(text, "block " + name + "_init [")) << text;
    EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
    EXPECT_TRUE(same_outputs(sch.original(), sch.func(), 11));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(DecomposeReduction, ArgmaxInitWritesBothBuffers) {
  Schedule sch(workload("argmax:shape=4x8,axis=1"));
  BlockRV b = sch.get_block("argmax");
  sch.decompose_reduction(b, sch.get_loops(b)[1]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "argmax_value[vi0] = -inff32")) << text;
  EXPECT_TRUE(has_line(text, "argmax[vi0] = 0i64")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
}

TEST(DecomposeReduction, SecondDecompositionIsRefused) {
  Schedule sch(workload("matmul:m=4,n=4,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  BlockRV init = sch.decompose_reduction(c, loops[2]);
  EXPECT_EQ(sch.get(init)->name, "C_init");
  try {
    sch.decompose_reduction(c, loops[2]);
    ADD_FAILURE() << "expected NotReductionBlock";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 2);
    EXPECT_EQ(e.error_name(), "NotReductionBlock");
  }
}

struct ErrorCase {
  std::string spec;
  std::string block;
  std::string loop_block;  // the block whose loops the loop is taken from
  size_t loop;
  int precondition;
  std::string error_name;
  std::string marked;  // a piece of the line marked "<-- here"
};

TEST(DecomposeReduction, PreconditionErrors) {
  std::vector<ErrorCase> cases = {
      {"softmax:shape=4x8,axis=1", "exp_sum", "x_exp", 1, 1, "LoopNotAncestor", "for i1 in 8 {"},
      {"softmax:shape=4x8,axis=1", "x_exp", "x_exp", 1, 2, "NotReductionBlock", "block x_exp [vi0: S 4 = i0, vi1: S 8 = i1] {"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.error_name);
    Schedule sch(workload(c.spec));
    BlockRV b = sch.get_block(c.block);
    LoopRV l = sch.get_loops(sch.get_block(c.loop_block))[c.loop];
    ir::PrimFunc before = sch.func();
    size_t trace_size = sch.trace().size();
    try {
      sch.decompose_reduction(b, l);
      ADD_FAILURE() << "expected " << c.error_name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::DecomposeReduction);
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name);
      EXPECT_NE(std::string(e.what()).find(e.operand()), std::string::npos) << e.what();
      EXPECT_TRUE(has_line(e.detail(), c.marked + "  <-- here")) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
    EXPECT_EQ(sch.trace().size(), trace_size);
  }
}

TEST(DecomposeReduction, LoopBelowAReduceLoop) {
  Schedule sch(workload("matmul:m=4,n=4,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> k = sch.split(loops[2], {int64_t{2}, int64_t{4}});
  sch.reorder({k[0], loops[1]});  // i0, r0_0, i1, r0_1
  ir::PrimFunc before = sch.func();
  size_t trace_size = sch.trace().size();
  for (LoopRV l : {k[1], loops[1]}) {
    try {
      sch.decompose_reduction(c, l);
      ADD_FAILURE() << "expected LoopBelowReduceLoop";
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.precondition(), 3) << e.what();
      EXPECT_EQ(e.error_name(), "LoopBelowReduceLoop");
      EXPECT_EQ(e.operand(), "loop " + rv_name(l));
      EXPECT_NE(std::string(e.what()).find("r0_0"), std::string::npos) << e.what();
      EXPECT_TRUE(has_line(e.detail(), "  <-- here")) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
    EXPECT_EQ(sch.trace().size(), trace_size);
  }
  // At the first reduce loop it works, and the init keeps the spatial loop below it.
  sch.decompose_reduction(c, k[0]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i1_init in 4 {")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(DecomposeReduction, InvalidatedOperands) {
  Schedule sch(workload("matmul:m=4,n=4,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  sch.split(loops[2], {int64_t{2}, int64_t{4}});
  try {
    sch.decompose_reduction(c, loops[2]);
    ADD_FAILURE() << "expected precondition 0";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 0);
    EXPECT_EQ(e.kind(), InstructionKind::DecomposeReduction);
  }
}

// A hand-written guard over the reduce loop that fails where the reduction starts: the
// original init never runs for i0 > 0, a separate init block would.
constexpr const char* kGuarded = R"(func guarded(in A: f32[4, 8], out B: f32[4]) {
  block root {
    for i0 in 4 {
      for r0 in 8 {
        block B [vi0: S 4 = i0, vr0: R 8 = r0] if (i0 <= r0) {
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

TEST(DecomposeReduction, GuardFailingAtTheStartIsRefused) {
  Schedule sch(ir::parse_function(kGuarded));
  BlockRV b = sch.get_block("B");
  ir::PrimFunc before = sch.func();
  try {
    sch.decompose_reduction(b, sch.get_loops(b)[1]);
    ADD_FAILURE() << "expected UnsupportedPredicate";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), InstructionKind::DecomposeReduction);
    EXPECT_EQ(e.precondition(), 4);
    EXPECT_EQ(e.error_name(), "UnsupportedPredicate");
    EXPECT_TRUE(has_line(e.detail(), "block B [vi0: S 4 = i0, vr0: R 8 = r0] if (i0 <= r0) {  <-- here")) << e.detail();
  }
  EXPECT_TRUE(sch.func().same_as(before));
}

TEST(DecomposeReduction, OverProvisionedSplitOfTheReduceLoop) {
  Schedule sch(workload("sum:shape=3x10x4,axis=1"));
  BlockRV b = sch.get_block("sum");
  std::vector<LoopRV> r = sch.split(sch.get_loops(b)[2], {int64_t{5}, int64_t{4}});
  sch.decompose_reduction(b, r[0]);
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

constexpr const char* kInitUsesReduceVar = R"(func odd(in A: f32[4, 8], out B: f32[4]) {
  block root {
    for i0 in 4 {
      for r0 in 8 {
        block B [vi0: S 4 = i0, vr0: R 8 = r0] {
          reads A[vi0, vr0]
          writes B[vi0]
          init {
            B[vi0] = A[vi0, vr0]
          }
          B[vi0] = B[vi0] + A[vi0, vr0]
        }
      }
    }
  }
}
)";

TEST(DecomposeReduction, InitUsingAReduceVariableIsRefused) {
  Schedule sch(ir::parse_function(kInitUsesReduceVar));
  BlockRV b = sch.get_block("B");
  try {
    sch.decompose_reduction(b, sch.get_loops(b)[1]);
    ADD_FAILURE() << "expected NotReductionBlock";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 2);
    EXPECT_EQ(e.error_name(), "NotReductionBlock");
    EXPECT_NE(std::string(e.what()).find("reduce iteration variable"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dragon::schedule
