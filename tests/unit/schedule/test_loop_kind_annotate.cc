// parallel, vectorize, unroll, bind, annotate, unannotate and add_unit_loop: the printed
// loop kinds and annotations, their checks, and unchanged results.
#include <gtest/gtest.h>

#include "dragon/ir/printer.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

TEST(LoopKind, ParallelVectorizeUnrollBind) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  auto i = sch.split(loops[0], {None{}, int64_t{2}});
  sch.bind(i[0], "blockIdx.x");
  sch.bind(i[1], "threadIdx.x");
  sch.vectorize(loops[1]);
  sch.unroll(loops[2]);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i0_0 in 4 bind blockIdx.x {")) << text;
  EXPECT_TRUE(has_line(text, "for i0_1 in 2 bind threadIdx.x {")) << text;
  EXPECT_TRUE(has_line(text, "for i1 in 8 vectorized {")) << text;
  EXPECT_TRUE(has_line(text, "for r0 in 8 unrolled {")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));

  Schedule cpu(workload("softmax:shape=4x16"));
  cpu.parallel(cpu.get_loops(cpu.get_block("x_exp"))[0]);
  EXPECT_TRUE(has_line(ir::print_function(cpu.func()), "for i0 in 4 parallel {"));
  EXPECT_TRUE(same_outputs(cpu.original(), cpu.func()));
}

TEST(LoopKind, ReductionLoopsAreNotDataParallel) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  for (int kind = 0; kind < 3; ++kind) {
    try {
      if (kind == 0) sch.parallel(loops[2]);
      if (kind == 1) sch.vectorize(loops[2]);
      if (kind == 2) sch.bind(loops[2], "blockIdx.x");
      ADD_FAILURE() << "expected NotDataParallel";
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.error_name(), "NotDataParallel");
      EXPECT_EQ(e.precondition(), kind == 2 ? 2 : 1);
      EXPECT_NE(std::string(e.what()).find("loop l3"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("vr0 (R)"), std::string::npos) << e.what();
      EXPECT_TRUE(has_line(e.detail(), "for r0 in 8 {  <-- here")) << e.detail();
    }
  }
  // threadIdx may feed a reduction (cross-thread reduction).
  sch.bind(loops[2], "threadIdx.x");
  EXPECT_TRUE(has_line(ir::print_function(sch.func()), "for r0 in 8 bind threadIdx.x {"));
}

TEST(LoopKind, ScanAxisCannotRunInParallel) {
  Schedule sch(workload("cumsum:shape=4x12"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_child_blocks(sch.get_block("root")).back());
  sch.parallel(loops[0]);
  try {
    sch.parallel(loops[1]);
    ADD_FAILURE() << "expected NotDataParallel";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.error_name(), "NotDataParallel");
  }
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
}

TEST(LoopKind, InvalidThreadTag) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  try {
    sch.bind(loops[0], "threadIdx.w");
    ADD_FAILURE() << "expected InvalidThreadTag";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 1);
    EXPECT_EQ(e.error_name(), "InvalidThreadTag");
    EXPECT_NE(std::string(e.what()).find("threadIdx.w"), std::string::npos);
  }
}

TEST(Annotate, LoopsAndBlocksWithEveryValueType) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  ExprRV v = sch.sample_categorical({0, 16, 64}, {0.2, 0.3, 0.5}, int64_t{2});
  sch.annotate(loops[0], "pragma_auto_unroll_max_step", v);
  sch.annotate(loops[1], "ratio", 0.5);
  sch.annotate(c, "meta_schedule.tiling_structure", std::string("SSRSRS"));
  sch.annotate(c, "count", int64_t{3});
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i0 in 8 @{pragma_auto_unroll_max_step = 64} {")) << text;
  EXPECT_TRUE(has_line(text, "for i1 in 8 @{ratio = 0.5} {")) << text;
  EXPECT_TRUE(has_line(text, "@{count = 3, meta_schedule.tiling_structure = \"SSRSRS\"} {")) << text;
  EXPECT_TRUE(replays_exactly(sch));

  sch.unannotate(c, "count");
  sch.unannotate(loops[1], "ratio");
  text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i1 in 8 {")) << text;
  EXPECT_FALSE(has_line(text, "count = 3")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  try {
    sch.unannotate(c, "count");
    ADD_FAILURE() << "expected AnnotationNotFound";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.error_name(), "AnnotationNotFound");
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos);
    EXPECT_TRUE(has_line(e.detail(), "<-- here")) << e.detail();
    EXPECT_NE(e.detail().find("\"SSRSRS\"} {  <-- here"), std::string::npos) << e.detail();
  }
}

TEST(AddUnitLoop, AboveABlockAndAboveALoop) {
  Schedule sch(workload("matmul:m=4,n=4,k=4"));
  BlockRV c = sch.get_block("C");
  LoopRV u = sch.add_unit_loop(c);
  std::vector<LoopRV> loops = sch.get_loops(c);
  ASSERT_EQ(loops.size(), 4u);
  EXPECT_TRUE(sch.get(loops[3])->loop_var.same_as(sch.get(u)->loop_var));
  LoopRV outer = sch.add_unit_loop(loops[0]);
  EXPECT_EQ(sch.get_loops(c).size(), 5u);
  sch.bind(outer, "blockIdx.x");
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for u in 1 bind blockIdx.x {")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  try {
    sch.add_unit_loop(sch.get_block("root"));
    ADD_FAILURE() << "expected RootBlock";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.error_name(), "RootBlock");
  }
}

}  // namespace
}  // namespace dragon::schedule
