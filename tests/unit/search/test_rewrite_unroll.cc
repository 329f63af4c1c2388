// RewriteUnroll: the sampled unroll step moves from the root block to the outermost loop of
// each nest, replays from the trace, leaves the computation unchanged and makes lowering
// unroll the small inner nests.
#include <gtest/gtest.h>

#include <variant>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/interp/tensor_compare.h"
#include "dragon/ir/functor.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/rewrite_unroll.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;

// A softmax whose root carries the sampled unroll step (MetaSchedule's sketches put it
// there): four nests, the x_exp one inlined away.
Schedule annotated_softmax(const char* key, int64_t step) {
  Schedule sch(ops::OpRegistry::global().make_workload("softmax:shape=4x64,axis=1").func);
  sch.compute_inline(sch.get_block("x_exp"));
  sch.annotate(sch.get_block("root"), key, step);
  return sch;
}

struct LoopAnnotations {
  int annotated_loops = 0;
  int64_t max_step = -1, explicit_flag = -1;
  bool root_keeps_key = false;
};

LoopAnnotations scan(const ir::PrimFunc& func) {
  struct Scan : ir::StmtVisitor {
    LoopAnnotations out;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      auto step = op->annotations.find("pragma_auto_unroll_max_step");
      if (step != op->annotations.end()) {
        ++out.annotated_loops;
        out.max_step = std::get<int64_t>(step->second);
        out.explicit_flag = std::get<int64_t>(op->annotations.at("pragma_unroll_explicit"));
      }
      ir::StmtVisitor::visit_(op);
    }
    void visit_(const ir::BlockRealizeNode* op) override {
      if (op->block->annotations.count("meta_schedule.unroll_explicit") ||
          op->block->annotations.count("meta_schedule.unroll_implicit")) {
        out.root_keeps_key = true;
      }
      ir::StmtVisitor::visit_(op);
    }
  } s;
  s.visit(func->body);
  return s.out;
}

TEST(RewriteUnroll, MovesTheStepToEveryNestsOutermostLoop) {
  Schedule sch = annotated_softmax("meta_schedule.unroll_explicit", 64);
  EXPECT_EQ(rewrite_unroll(sch), 3);  // x_max, exp_sum, softmax
  LoopAnnotations a = scan(sch.func());
  EXPECT_EQ(a.annotated_loops, 3);
  EXPECT_EQ(a.max_step, 64);
  EXPECT_EQ(a.explicit_flag, 1);
  EXPECT_FALSE(a.root_keeps_key);

  Schedule implicit = annotated_softmax("meta_schedule.unroll_implicit", 16);
  EXPECT_EQ(rewrite_unroll(implicit), 3);
  EXPECT_EQ(scan(implicit.func()).explicit_flag, 0);
}

TEST(RewriteUnroll, NestsSharingALoopAreAnnotatedOnce) {
  Schedule sch = annotated_softmax("meta_schedule.unroll_explicit", 64);
  LoopRV row = sch.get_loops(sch.get_block("softmax"))[0];
  sch.compute_at(sch.get_block("exp_sum"), row, true, -1);
  sch.compute_at(sch.get_block("x_max"), row, true, -1);
  EXPECT_EQ(rewrite_unroll(sch), 1);
  EXPECT_EQ(scan(sch.func()).annotated_loops, 1);
}

TEST(RewriteUnroll, AZeroStepOnlyRemovesTheAnnotation) {
  Schedule sch = annotated_softmax("meta_schedule.unroll_explicit", 0);
  EXPECT_EQ(rewrite_unroll(sch), 0);
  LoopAnnotations a = scan(sch.func());
  EXPECT_EQ(a.annotated_loops, 0);
  EXPECT_FALSE(a.root_keeps_key);
}

TEST(RewriteUnroll, ReplaysAndComputesTheSame) {
  Schedule sch = annotated_softmax("meta_schedule.unroll_explicit", 64);
  rewrite_unroll(sch);
  Schedule replayed(ops::OpRegistry::global().make_workload("softmax:shape=4x64,axis=1").func);
  sch.trace().apply_to(replayed);
  EXPECT_EQ(scan(replayed.func()).annotated_loops, 3);

  const ir::PrimFunc original = ops::OpRegistry::global().make_workload("softmax:shape=4x64,axis=1").func;
  std::vector<tensor::HostTensor> expected = interp::make_arguments(original, 3, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> actual = expected;
  interp::run(original, expected);
  interp::run(replayed.func(), actual);
  EXPECT_TRUE(interp::compare_tensors(expected[1], actual[1], interp::reordering_tolerance(actual[1].dtype())).ok);
}

int unrolled_loops(const Schedule& sch) {
  ir::PrimFunc flat = lower::lower(sch.func(), lower::Target::cpu()).func;
  struct Count : ir::StmtVisitor {
    int unrolled = 0;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      if (op->for_kind == ir::ForKind::kUnrolled) ++unrolled;
      ir::StmtVisitor::visit_(op);
    }
  } count;
  count.visit(flat->body);
  return count.unrolled;
}

TEST(RewriteUnroll, LoweringUnrollsOnlyAfterTheRewrite) {
  // The root's annotation alone does nothing: lowering reads only the loop pragma.
  Schedule before = annotated_softmax("meta_schedule.unroll_explicit", 64);
  EXPECT_EQ(unrolled_loops(before), 0);
  Schedule after = annotated_softmax("meta_schedule.unroll_explicit", 64);
  rewrite_unroll(after);
  EXPECT_GE(unrolled_loops(after), 1);
}

}  // namespace
}  // namespace dragon::search
