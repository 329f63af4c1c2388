// inject_software_pipeline (src/lower/gpu/): pipelined GEMM k loops keep their sequential
// results, bit for bit, on several shapes (edges predicated, fewer iterations than
// stages) and stage depths, with cp.async modelled as landing only at the wait that
// retires it (async_copy_model.h) and threads interleaved only at barriers
// (barrier_simulator.h); the kernel's structure (slots, phases, waits, barriers); the
// models catch a wait or barrier too few; bad annotations are UserErrors.
#include <gtest/gtest.h>

#include <string>

#include "async_copy_model.h"
#include "barrier_simulator.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/passes.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "gpu_test_util.h"
#include "pipelined_gemm.h"
#include "unit/lower/lower_test_util.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::lower {
namespace {

using testing::PipelineAnnotation;

ir::PrimFunc kernel_of(const schedule::Schedule& sch) { return lower(sch.func(), Target::cuda_h200()).func; }

// The kernel as the GPU runs it: copies land at their waits, threads interleave at
// barriers.
ir::PrimFunc as_on_gpu(const ir::PrimFunc& kernel) {
  return testing::serialize_between_barriers(testing::delay_async_copies(kernel));
}

int count_text(const std::string& text, const std::string& piece) {
  int n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

// Rewrites every async_wait_group(n) to async_wait_group(n + extra), or drops barriers
// inside loops: the two mistakes the models must catch.
class BreakSynchronization : public ir::StmtExprMutator {
 public:
  BreakSynchronization(int64_t extra_in_flight, bool drop_loop_barriers)
      : extra_(extra_in_flight), drop_(drop_loop_barriers) {}

 protected:
  using ir::StmtExprMutator::visit_;
  ir::Stmt visit_(const ir::ForNode* op) override {
    ++loops_;
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    --loops_;
    return s;
  }
  ir::Stmt visit_(const ir::EvaluateNode* op) override {
    const auto* call = op->value.as<ir::CallNode>();
    if (call != nullptr && call->op == ir::Intrinsic::AsyncWaitGroup) {
      int64_t n = *ir::as_const_int(call->args[0]) + extra_;
      return ir::EvaluateNode::make(ir::CallNode::make(ir::Intrinsic::AsyncWaitGroup, {ir::make_const(ir::DataType::i32(), double(n))}));
    }
    // Inside the launch loops and the k loop: depth > 2 (blockIdx.x, threadIdx.x).
    if (call != nullptr && call->op == ir::Intrinsic::SyncThreads && drop_ && loops_ > 2) {
      return ir::EvaluateNode::make(ir::make_zero(ir::DataType::i32()));
    }
    return ir::StmtExprMutator::visit_(op);
  }

 private:
  int64_t extra_;
  bool drop_;
  int loops_ = 0;
};

ir::PrimFunc broken(const ir::PrimFunc& kernel, int64_t extra_in_flight, bool drop_loop_barriers) {
  return kernel.with_body(BreakSynchronization(extra_in_flight, drop_loop_barriers).visit(kernel->body));
}

TEST(SoftwarePipeline, AsyncSimtGemmKeepsItsResultsOnEveryShapeAndDepth) {
  // 64^3 divides every tile; 40x24x36 leaves partial tiles in i, j and k (predicated
  // copies and compute); 8x16x8 has one k step, fewer than the stages in flight.
  for (const char* spec : {"matmul:m=64,n=64,k=64", "matmul:m=40,n=24,k=36", "matmul:m=8,n=16,k=8"}) {
    for (const char* stages : {"0 0 1", "0 0 2", "0 0 3"}) {
      schedule::Schedule sch = testing::pipelined_simt_gemm(spec, {stages, "", "0"});
      ir::PrimFunc kernel = kernel_of(sch);
      EXPECT_TRUE(testing::computes_the_same(sch.func(), as_on_gpu(kernel), 17)) << spec << " stages " << stages;
    }
  }
}

TEST(SoftwarePipeline, SixteenByteAndFallbackCopiesKeepTheirResults) {
  // Vectors of 4 floats: 16-byte copies where K keeps rows aligned (64), 4-byte ones or
  // plain stores where it does not (36): the result is the same either way.
  for (const char* spec : {"matmul:m=64,n=64,k=64", "matmul:m=40,n=24,k=36"}) {
    schedule::Schedule sch = testing::pipelined_simt_gemm(spec, {"0 0 2", "", "0"}, 4);
    EXPECT_TRUE(testing::computes_the_same(sch.func(), as_on_gpu(kernel_of(sch)), 3)) << spec;
  }
}

TEST(SoftwarePipeline, SynchronousStagesAndAnotherOrderKeepTheirResults) {
  // No async stage: plain stores into the slots, barriers from insert_thread_syncs. Order
  // "1 0 2" issues B's copy before A's (independent statements may swap).
  for (PipelineAnnotation p : {PipelineAnnotation{"0 0 1", "", ""}, PipelineAnnotation{"0 0 2", "1 0 2", "0"},
                               PipelineAnnotation{"0 1 2", "", "0"}}) {
    schedule::Schedule sch = testing::pipelined_simt_gemm("matmul:m=40,n=24,k=36", p);
    EXPECT_TRUE(testing::computes_the_same(sch.func(), as_on_gpu(kernel_of(sch)), 5))
        << p.stages << " / " << p.order << " / " << p.async_stages;
  }
}

TEST(SoftwarePipeline, KernelHasSlotsPhasesWaitsAndBarriers) {
  schedule::Schedule sch = testing::pipelined_simt_gemm("matmul:m=64,n=64,k=64", {"0 0 2", "", "0"});
  ir::PrimFunc kernel = kernel_of(sch);
  std::string text = ir::print_function(kernel);
  // Three slots of each 8x8 and 8x16 tile; 8 k steps: prologue of 2, steady 6, epilogue 2.
  EXPECT_TRUE(schedule::testing::has_line(text, "alloc A_shared: f32[192] shared {")) << text;
  EXPECT_TRUE(schedule::testing::has_line(text, "alloc B_shared: f32[384] shared {")) << text;
  EXPECT_TRUE(schedule::testing::has_line(text, "for r0_0_prologue in 2 {")) << text;
  EXPECT_TRUE(schedule::testing::has_line(text, "for r0_0_steady in 2 +: 6 {")) << text;
  EXPECT_TRUE(schedule::testing::has_line(text, "for r0_0_epilogue in 8 +: 2 {")) << text;
  // A group per step (empty in the epilogue, so that a copy's group is always the same
  // number of commits before its wait), a wait for all but the newest group before each
  // step that reads the tiles, then one barrier.
  EXPECT_EQ(count_text(text, "eval async_commit_group()"), 3) << text;
  EXPECT_EQ(count_text(text, "eval async_wait_group(1)"), 2) << text;
  EXPECT_EQ(testing::count_syncs(kernel->body), 3) << text;  // before the prologue, steady, epilogue
  EXPECT_EQ(count_text(text, "@{async_copy = 1}"), 4) << text;
  EXPECT_EQ(text.find("software_pipeline"), std::string::npos) << text;
}

TEST(SoftwarePipeline, TheModelsCatchAWaitOrABarrierTooFew) {
  schedule::Schedule sch = testing::pipelined_simt_gemm("matmul:m=64,n=64,k=64", {"0 0 2", "", "0"});
  ir::PrimFunc kernel = kernel_of(sch);
  ASSERT_TRUE(testing::computes_the_same(sch.func(), as_on_gpu(kernel), 9));
  // Waiting for one group less: the newest tile is read before it lands.
  EXPECT_FALSE(testing::computes_the_same(sch.func(), as_on_gpu(broken(kernel, 1, false)), 9));
  // Without the barriers of the k loop, a thread reads tiles other threads have not copied.
  EXPECT_FALSE(testing::computes_the_same(sch.func(), as_on_gpu(broken(kernel, 0, true)), 9));
  // Without the delay model, the missing wait would go unseen: the model is what tests it.
  EXPECT_TRUE(testing::computes_the_same(
      sch.func(), testing::serialize_between_barriers(broken(kernel, 1, false)), 9));
}

TEST(SoftwarePipeline, TensorCoreGemmWithNestedPipelinesKeepsItsResults) {
  // Shared tiles three and four stages deep through cp.async, fragments double-buffered in
  // registers by the inner loop: the interpreter runs the tensorized blocks' reference
  // loops, so the order of every sum is unchanged.
  PipelineAnnotation inner{"0 0 1", "", ""};
  schedule::testing::TensorCoreDecisions d;
  d.i = {1, 1, 2, 2, 1};  // 64 rows: 2 warps of 2 16-row tiles
  d.j = {1, 2, 2, 1, 2};  // 64 columns
  d.k = {4, 2, 1};        // 128 deep: 4 shared steps of 32
  for (int64_t depth : {3, 4}) {
    std::string stages = "0 0 " + std::to_string(depth - 1);
    schedule::Schedule sch = testing::pipelined_tensorcore_gemm("matmul:m=64,n=64,k=128,dtype=f16",
                                                                {stages, "", "0"}, &inner, d);
    ir::PrimFunc kernel = kernel_of(sch);
    std::string text = ir::print_function(kernel);
    EXPECT_EQ(count_text(text, "eval async_wait_group(" + std::to_string(depth - 2) + ")"), 2) << text;
    EXPECT_TRUE(testing::computes_the_same(sch.func(), as_on_gpu(kernel), 21)) << stages;
  }
}

// The four-stage expert GEMM script (data/scripts/expert/gpu/, timed at 4096^3 on the
// H200) at the smallest shape it applies to, 512^2 (4x4 groups of 128x128 block tiles)
// and k = 128 (four k steps: three in the prologue, one in the steady state): its kernel
// waits for all but two groups before each step that reads a tile. Executing it here
// takes minutes on the interpreter; tests/gpu/test_gpu_pipeline.cc runs it on the GPU,
// and the nested pipelines above check the same structure at 4 stages.
TEST(SoftwarePipeline, FourStageExpertGemmScriptLowersToAFourStagePipeline) {
  ops::Workload w = ops::OpRegistry::global().make_workload("matmul:m=512,n=512,k=128,dtype=f16");
  schedule::Schedule sch(w.func);
  script::decode(read_text_file(std::string(DRAGON_SOURCE_DIR) +
                                "/data/scripts/expert/gpu/gemm_f16_pipelined_4stage.script"))
      .apply_to(sch);
  std::string text = ir::print_function(kernel_of(sch));
  EXPECT_EQ(count_text(text, "eval async_wait_group(2)"), 2) << text;  // the steady state and the epilogue
  EXPECT_EQ(count_text(text, "eval async_commit_group()"), 3) << text;  // one per phase
  // Four slots of the 128x32 A tile in rows of 40 (5112 halves: the last row unpadded).
  EXPECT_TRUE(schedule::testing::has_line(text, "alloc A_shared_dyn: f16[20448] shared.dyn {")) << text;
}

std::string pipeline_error(const PipelineAnnotation& p) {
  try {
    kernel_of(testing::pipelined_simt_gemm("matmul:m=64,n=64,k=64", p));
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SoftwarePipeline, BadAnnotationsAreUserErrorsNamingTheLoop) {
  EXPECT_NE(pipeline_error({"0 1", "", ""}).find("software pipeline of loop 'r0_0': software_pipeline_stage \"0 1\" "
                                                 "has 2 entries but the loop body holds 3 statements"),
            std::string::npos)
      << pipeline_error({"0 1", "", ""});
  EXPECT_NE(pipeline_error({"0 0 1", "0 0 1", ""}).find("is not a permutation"), std::string::npos);
  EXPECT_NE(pipeline_error({"0 0 x", "", ""}).find("is not a list of integers"), std::string::npos);
  // The compute is not a copy into shared memory.
  EXPECT_NE(pipeline_error({"0 0 1", "", "1"}).find("cp.async can only copy global memory into shared memory"),
            std::string::npos)
      << pipeline_error({"0 0 1", "", "1"});
  // The compute in the copies' async stage.
  EXPECT_NE(pipeline_error({"0 0 0", "", "0"}).find("statement 2 is in async stage 0"), std::string::npos)
      << pipeline_error({"0 0 0", "", "0"});
  // The compute before the copies it reads.
  EXPECT_NE(pipeline_error({"1 1 0", "", ""}).find("would run first"), std::string::npos)
      << pipeline_error({"1 1 0", "", ""});
  // In one stage, the compute ordered before the A copy it reads. (Stages "0 0 1" with
  // that order are fine: the compute of iteration i runs a step after i's copies.)
  EXPECT_NE(pipeline_error({"0 0 0", "2 0 1", ""}).find("would run first"), std::string::npos)
      << pipeline_error({"0 0 0", "2 0 1", ""});
  EXPECT_EQ(pipeline_error({"0 0 1", "2 0 1", ""}), "(no error)");
}

TEST(SoftwarePipeline, ALoopWithoutTheAnnotationIsUnchanged) {
  schedule::Schedule sch = testing::pipelined_simt_gemm("matmul:m=64,n=64,k=64", {"0 0 1", "", ""});
  ir::PrimFunc before = testing::gpu_stage(sch.func(), "unify_thread_bindings");
  ir::PrimFunc after = inject_software_pipeline(before);
  EXPECT_FALSE(after.same_as(before));
  schedule::Schedule plain = testing::pipelined_simt_gemm("matmul:m=64,n=64,k=64", {"0 0 1", "", ""});
  plain.unannotate(plain.get_loops(plain.get_block("A_shared"))[2], std::string(kSoftwarePipelineStage));
  ir::PrimFunc plain_before = testing::gpu_stage(plain.func(), "unify_thread_bindings");
  EXPECT_TRUE(inject_software_pipeline(plain_before).same_as(plain_before));
}

}  // namespace
}  // namespace dragon::lower
