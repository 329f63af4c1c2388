// split: loop headers, rewritten bindings, predicates for non-divisible factors,
// semantic preservation on the interpreter, and each precondition's error.
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

// The semantic checks below are only as good as same_outputs: it must see a change.
TEST(Split, SameOutputsNoticesAWrongFunction) {
  ir::PrimFunc func = workload("matmul:m=4,n=4,k=4");
  std::string text = ir::print_function(func);
  size_t at = text.find("C[vi0, vi1] + A[vi0, vr0]");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 13, "C[vi0, vi1] - ");
  EXPECT_FALSE(same_outputs(func, ir::parse_function(text)));
  EXPECT_FALSE(same_outputs(func, ir::parse_function(text), 7, /*exact=*/false));
  EXPECT_TRUE(same_outputs(func, ir::parse_function(ir::print_function(func))));
}

TEST(Split, DivisibleFactorsRewriteTheBinding) {
  Schedule sch(workload("matmul:m=16,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> parts = sch.split(loops[0], {None{}, int64_t{4}});
  ASSERT_EQ(parts.size(), 2u);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i0_0 in 4 {")) << text;
  EXPECT_TRUE(has_line(text, "for i0_1 in 4 {")) << text;
  EXPECT_TRUE(has_line(text, "vi0: S 16 = i0_0 * 4 + i0_1,")) << text;
  EXPECT_FALSE(has_line(text, " if (")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Split, NonDivisibleFactorsAddAPredicate) {
  Schedule sch(workload("matmul:m=10,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.split(loops[0], {None{}, int64_t{4}});
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i0_0 in 3 {")) << text;
  EXPECT_TRUE(has_line(text, "if (i0_0 * 4 + i0_1 < 10)")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Split, ThreeWaySplitOfAReductionLoop) {
  Schedule sch(workload("matmul:m=4,n=4,k=24"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> parts = sch.split(loops[2], {int64_t{2}, None{}, int64_t{4}});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(ir::print_expr(sch.get(parts[1])->extent), "3");
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "vr0: R 24 = r0_0 * 12 + r0_1 * 4 + r0_2")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(Split, OldLoopRandomVariableIsInvalidated) {
  Schedule sch(workload("matmul:m=16,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.split(loops[0], {int64_t{4}, int64_t{4}});
  EXPECT_FALSE(sch.is_valid(loops[0]));
  try {
    sch.split(loops[0], {int64_t{2}, None{}});
    FAIL() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 0);
    EXPECT_NE(std::string(e.what()).find("loop l1 was replaced by Split"), std::string::npos) << e.what();
  }
}

struct SplitCase {
  std::vector<SplitFactor> factors;
  int precondition;
  std::string error_name;
  std::string operand;
};

TEST(Split, PreconditionErrors) {
  std::vector<SplitCase> cases = {
      {{None{}, None{}}, 3, "NotSingleInferFactor", "factors[1]"},
      {{int64_t{0}, None{}}, 4, "NonPositiveFactor", "factors[0]"},
      {{int64_t{2}, int64_t{-3}}, 4, "NonPositiveFactor", "factors[1]"},
      {{None{}, int64_t{1} << 40}, 4, "NonPositiveFactor", "factors[1]"},
      {{int64_t{2}, int64_t{3}}, 5, "WrongFactorProduct", "loop l1"},
      {{int64_t{1} << 20, int64_t{1} << 20}, 5, "WrongFactorProduct", "loop l1"},
  };
  for (const SplitCase& c : cases) {
    Schedule sch(workload("matmul:m=16,n=8,k=8"));
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    ir::PrimFunc before = sch.func();
    size_t trace_size = sch.trace().size();
    try {
      sch.split(loops[0], c.factors);
      ADD_FAILURE() << "expected " << c.error_name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.kind(), InstructionKind::Split);
      EXPECT_EQ(e.precondition(), c.precondition) << e.what();
      EXPECT_EQ(e.error_name(), c.error_name);
      EXPECT_EQ(e.operand(), c.operand);
      EXPECT_NE(std::string(e.what()).find(c.operand), std::string::npos) << e.what();
      // The detailed message marks the loop.
      EXPECT_TRUE(has_line(e.detail(), "for i0 in 16 {  <-- here")) << e.detail();
    }
    EXPECT_TRUE(sch.func().same_as(before));
    EXPECT_EQ(sch.trace().size(), trace_size);
  }
}

TEST(Split, RejectsAnnotatedBoundAndShiftedLoops) {
  Schedule sch(workload("matmul:m=16,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  sch.bind(loops[0], "blockIdx.x");
  sch.annotate(loops[1], "pragma_auto_unroll_max_step", int64_t{16});
  for (LoopRV l : {loops[0], loops[1]}) {
    try {
      sch.split(l, {None{}, int64_t{2}});
      ADD_FAILURE() << "expected HasAnnotationOrBinding";
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.precondition(), 2);
      EXPECT_EQ(e.error_name(), "HasAnnotationOrBinding");
    }
  }
}

// Loops the op library never makes, written by hand: a shifted loop and a triangular one.
constexpr const char* kShifted = R"(func shifted(in A: f32[6], out B: f32[6]) {
  block root {
    for i0 in 2 +: 6 {
      block B [vi0: S 6 = i0 - 2] {
        reads A[vi0]
        writes B[vi0]
        B[vi0] = A[vi0]
      }
    }
  }
}
)";
constexpr const char* kTriangular = R"(func tri(in A: f32[4, 4], out B: f32[4, 4]) {
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
)";

TEST(Split, ShiftedAndSymbolicLoops) {
  Schedule shifted(ir::parse_function(kShifted));
  LoopRV l = shifted.get_loops(shifted.get_block("B"))[0];
  try {
    shifted.split(l, {None{}, int64_t{2}});
    ADD_FAILURE() << "expected LoopNotStartAtZero";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 1);
    EXPECT_EQ(e.error_name(), "LoopNotStartAtZero");
    EXPECT_TRUE(has_line(e.detail(), "for i0 in 2 +: 6 {  <-- here")) << e.detail();
  }
  Schedule tri(ir::parse_function(kTriangular));
  LoopRV inner = tri.get_loops(tri.get_block("B"))[1];
  try {
    tri.split(inner, {None{}, int64_t{2}});
    ADD_FAILURE() << "expected NonConstantExtent";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.precondition(), 6);
    EXPECT_EQ(e.error_name(), "NonConstantExtent");
    EXPECT_NE(std::string(e.what()).find("i0 + 1"), std::string::npos) << e.what();
  }
}

TEST(Split, ExprRVFactorsAndUnitIters) {
  Schedule sch(workload("matmul:m=16,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  std::vector<ExprRV> tile = sch.sample_perfect_tile(loops[1], 2, 4, std::vector<int64_t>{2, 4});
  sch.split(loops[1], {tile[0], tile[1]});
  sch.split(loops[0], {int64_t{1}, int64_t{16}}, /*preserve_unit_iters=*/false);
  std::string text = ir::print_function(sch.func());
  EXPECT_TRUE(has_line(text, "for i1_0 in 2 {")) << text;
  EXPECT_TRUE(has_line(text, "for i1_1 in 4 {")) << text;
  EXPECT_TRUE(has_line(text, "vi0: S 16 = i0_1, vi1: S 8 = i1_0 * 4 + i1_1")) << text;
  EXPECT_TRUE(same_outputs(sch.original(), sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
}

}  // namespace
}  // namespace dragon::schedule
