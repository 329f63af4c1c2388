// The postprocessors and candidate replay (postproc.h): verify_gpu_code rejects what breaks
// the H200's limits (threads per block, virtual threads, vector bytes, shared memory, a
// thread's registers for local arrays and mma fragments) or a tiling's thread-extent
// bounds, and accepts what fits; rewrite_reduction_block and
// rewrite_unbound_block do their rewrites; every failure is a typed value (replay,
// postprocessor, rejection), never a ScheduleError.
#include <gtest/gtest.h>

#include "dragon/ir/op.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/default_schedule.h"
#include "dragon/search/postproc.h"
#include "dragon/ir/functor.h"
#include "unit/schedule/gemm_sketch.h"
#include "unit/schedule/schedule_test_util.h"
#include "unit/search/search_test_sketches.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::testing::workload;
using testing::kH200;


// verify_gpu_code alone on a copy of `sch`: nullopt when accepted.
std::optional<CandidateFailure> verify(const Schedule& sch, bool by_lowering = false) {
  Schedule s = sch.copy();
  PostprocSpec spec{"verify_gpu_code", {}};
  if (by_lowering) spec.params["lower"] = true;
  return apply_postprocs(s, kH200, {spec});
}

// relu over `n` elements split [blocks, threads, vector] and bound.
Schedule elementwise(int64_t n, int64_t threads, int64_t vector, const std::string& thread_tag = "threadIdx.x") {
  Schedule sch(workload("relu:shape=" + std::to_string(n)));
  BlockRV b = sch.get_block("relu");
  std::vector<LoopRV> l = sch.get_loops(b);
  std::vector<LoopRV> parts = sch.split(l[0], {schedule::None{}, threads, vector});
  sch.bind(parts[0], "blockIdx.x");
  sch.bind(parts[1], thread_tag);
  if (vector > 1) sch.vectorize(parts[2]);
  return sch;
}

TEST(VerifyGpuCode, AcceptsWhatFits) {
  EXPECT_FALSE(verify(elementwise(4096, 256, 4)).has_value());
  EXPECT_FALSE(verify(elementwise(4096, 1024, 1)).has_value());
  ir::PrimFunc softmax = workload("softmax:shape=64x4096,axis=1");
  EXPECT_FALSE(verify(default_schedule(softmax, kH200)).has_value());
}

TEST(VerifyGpuCode, RejectsTooManyThreadsPerBlock) {
  std::optional<CandidateFailure> f = verify(elementwise(8192, 2048, 1));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, FailureKind::kRejected);
  EXPECT_EQ(f->stage, "verify_gpu_code");
  EXPECT_EQ(f->message, "kernel 0: 2048 threads per block, above the limit 1024");
}

// CUDA grids hold at most 65535 blocks along y and z (2^31 - 1 along x): lowering folds a
// grid too tall along y into x where the whole grid fits there, so 65536 blocks along y
// pass; 2^32 blocks in all fit nowhere and are refused before the kernel is built.
TEST(VerifyGpuCode, RejectsGridsNoLaunchHolds) {
  auto grid = [](int64_t y, int64_t x) {
    Schedule sch(workload("relu:shape=" + std::to_string(y * x * 32)));
    BlockRV b = sch.get_block("relu");
    std::vector<LoopRV> parts = sch.split(sch.get_loops(b)[0], {y, x, int64_t{32}});
    sch.bind(parts[0], "blockIdx.y");
    sch.bind(parts[1], "blockIdx.x");
    sch.bind(parts[2], "threadIdx.x");
    return sch;
  };
  EXPECT_FALSE(verify(grid(65536, 2)).has_value());
  EXPECT_FALSE(verify(grid(65536, 2), /*by_lowering=*/true).has_value());
  std::optional<CandidateFailure> f = verify(grid(65536, 65536));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, FailureKind::kRejected);
  EXPECT_EQ(f->message, "kernel 0: a grid of 4294967296 blocks, above the 2147483647 a launch holds");
}

TEST(VerifyGpuCode, RejectsTooManyVirtualThreads) {
  Schedule sch = elementwise(8192, 16, 1, "vthread.x");
  std::optional<CandidateFailure> f = verify(sch);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->message, "kernel 0: 16 virtual threads, above the limit 8");
}

TEST(VerifyGpuCode, RejectsVectorsWiderThanSixteenBytes) {
  std::optional<CandidateFailure> f = verify(elementwise(4096, 64, 8));
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("accesses 32 bytes at once, above the limit 16"), std::string::npos) << f->message;
  EXPECT_FALSE(verify(elementwise(4096, 64, 4)).has_value());  // 16 bytes of f32
}

// A GEMM bound per output (256 outputs per thread block: a row of C when n = 256) with A
// staged in shared memory per thread block: the block holds its rows of A.
Schedule gemm_with_shared_a(const std::string& spec) {
  Schedule sch(workload(spec));
  BlockRV c = sch.get_block("C");
  BlockRV a_shared = sch.cache_read(c, 0, "shared");
  std::vector<LoopRV> l = sch.get_loops(c);
  LoopRV fused = sch.fuse({l[0], l[1]});
  std::vector<LoopRV> parts = sch.split(fused, {schedule::None{}, int64_t{256}});
  sch.bind(parts[0], "blockIdx.x");
  sch.bind(parts[1], "threadIdx.x");
  sch.compute_at(a_shared, parts[0]);
  return sch;
}

TEST(VerifyGpuCode, RejectsSharedMemoryAboveTheLimit) {
  // A row of A with k = 65536: 256 KiB of f32, above the H200's 227 KiB.
  Schedule big = gemm_with_shared_a("matmul:m=4,n=256,k=65536");
  std::optional<CandidateFailure> f = verify(big);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->message, "kernel 0: 262144 bytes of shared memory, above the limit 232448");
  std::optional<CandidateFailure> lowered = verify(big, /*by_lowering=*/true);
  ASSERT_TRUE(lowered.has_value());  // lowering's own verify_gpu_code agrees
  EXPECT_NE(lowered->message.find("shared memory"), std::string::npos) << lowered->message;
  // With k = 32768 the row takes 128 KiB and fits.
  Schedule fits = gemm_with_shared_a("matmul:m=4,n=256,k=32768");
  EXPECT_FALSE(verify(fits).has_value());
  EXPECT_FALSE(verify(fits, /*by_lowering=*/true).has_value());
}

TEST(VerifyGpuCode, RejectsThreadCountsOutsideATilingsBounds) {
  Schedule sch = elementwise(4096, 8, 1);
  sch.annotate(sch.get_block("relu"), "meta_schedule.thread_extent_low_inclusive", int64_t{32});
  std::optional<CandidateFailure> f = verify(sch);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->message, "kernel 0: block relu runs 8 threads, below its tiling's bound 32");
}

// A thread's local accumulators past its 255 registers: the CUDA-core GEMM sketch with 8 x 64
// outputs a thread, each 4 times over for its 4 virtual threads (a 256^3 candidate search
// drew; ptxas took 15-20 s on it), is rejected; 4 x 2 outputs twice over is not.
TEST(VerifyGpuCode, RejectsLocalArraysBeyondAThreadsRegisters) {
  Schedule spilling(workload("matmul:m=256,n=256,k=256"));
  schedule::testing::apply_gemm_sketch(spilling, {.i = {1, 4, 8, 2, 4}, .j = {1, 1, 4, 2, 32}, .k = {16, 1, 16}});
  std::optional<CandidateFailure> f = verify(spilling);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->message,
            "kernel 0: about 2080 registers per thread for its register arrays (local, and its lane's fragments) "
            "and 32 more, above the limit 255");
  Schedule fits(workload("matmul:m=256,n=256,k=256"));
  schedule::testing::apply_gemm_sketch(fits, {.i = {4, 2, 8, 2, 2}, .j = {4, 2, 8, 1, 2}, .k = {16, 2, 8}});
  EXPECT_FALSE(verify(fits).has_value()) << verify(fits)->message;
}

// mma.sync fragments are register arrays too, a lane holding 1/32 of its warp's tiles: an
// f16 GEMM candidate whose warp computes 128 x 128 outputs (256 accumulators a lane, and
// its A and B fragments) is rejected; 32 x 32 a warp is not. Before, such candidates
// (392 accumulators and 784 A halves a lane, drawn for a ResNet conv) passed, spilled, and
// took NVRTC seconds.
TEST(VerifyGpuCode, RejectsMmaFragmentsBeyondALanesRegisters) {
  const ir::PrimFunc func = workload("matmul:m=1024,n=1024,k=1024,dtype=f16");
  std::vector<Sketch> tc = testing::tensor_core_sketches_of(func, RuleSet::cuda());
  ASSERT_FALSE(tc.empty());
  auto none = [](SamplingRole) { return std::optional<int64_t>(); };
  // i in 64 tiles of 16 rows, j in 128 of 8 columns, k in 64 steps of 16.
  CandidateResult spilling =
      testing::candidate_at_decisions(tc.front(), func, RuleSet::cuda(), {{8, 1, 1, 8, 1}, {8, 1, 1, 16, 1}, {64, 1, 1}}, none);
  ASSERT_FALSE(spilling.ok());
  EXPECT_EQ(spilling.failure().stage, "verify_gpu_code");
  EXPECT_NE(spilling.failure().message.find("registers per thread for its register arrays"), std::string::npos)
      << spilling.failure().message;
  CandidateResult fits =
      testing::candidate_at_decisions(tc.front(), func, RuleSet::cuda(), {{8, 2, 2, 2, 1}, {8, 4, 2, 4, 1}, {16, 4, 1}}, none);
  EXPECT_TRUE(fits.ok()) << fits.failure().message;
}

TEST(VerifyGpuCode, ByLoweringCatchesWhatOnlyLoweringKnows) {
  // A shared copy in its own kernel: the footprint fits, but shared memory cannot outlive
  // a kernel, which lowering says.
  Schedule sch(workload("matmul:m=16,n=16,k=16"));
  BlockRV c = sch.get_block("C");
  sch.cache_read(c, 0, "shared");
  Schedule bound = default_schedule(sch.func(), kH200);
  EXPECT_FALSE(verify(bound).has_value());
  std::optional<CandidateFailure> f = verify(bound, /*by_lowering=*/true);
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->message.find("several loop nests bound to blockIdx"), std::string::npos) << f->message;
}

TEST(Postprocs, RewriteReductionBlockDecomposesSerialReductionsOnly) {
  // A GEMM bound per output: its init moves out of the k loop. A softmax row reduced across
  // threads keeps its init for lowering.
  Schedule gemm = default_schedule(workload("matmul:m=32,n=32,k=32"), kH200);
  ASSERT_FALSE(apply_postprocs(gemm, kH200, {{"rewrite_reduction_block", {}}}).has_value());
  EXPECT_NO_THROW(gemm.get_block("C_init"));
  DefaultScheduleOptions across;
  across.serial_reduction_limit = 4;
  Schedule softmax = default_schedule(workload("softmax:shape=4x64,axis=1"), kH200, across);
  ASSERT_FALSE(apply_postprocs(softmax, kH200, {{"rewrite_reduction_block", {}}}).has_value());
  EXPECT_THROW(softmax.get_block("x_max_init"), schedule::ScheduleError);
  EXPECT_TRUE(schedule::testing::same_outputs(workload("matmul:m=32,n=32,k=32"), gemm.func()));
}

TEST(Postprocs, RewriteParallelVectorizeUnrollSplitsLongRowsToVectorize) {
  // softmax over rows of 96: the output block's row loop (the one element-wise nest; x_exp
  // is not inlined here) is longer than the vector extent (32), so it is split [3, 32] and
  // the 32 vectorized, as is x_exp's; rows of 20 fit and vectorize whole; rows of 97
  // (prime) have no divisor to split by and stay serial.
  auto vectorized_extents = [](const ir::PrimFunc& func) {
    struct Collect : ir::StmtVisitor {
      std::vector<int64_t> extents;
      using ir::StmtVisitor::visit_;
      void visit_(const ir::ForNode* op) override {
        if (op->for_kind == ir::ForKind::kVectorized) extents.push_back(ir::as_const_int(op->extent).value_or(-1));
        ir::StmtVisitor::visit_(op);
      }
    } collect;
    collect.visit(func->body);
    return collect.extents;
  };
  const lower::Target cpu = lower::Target::cpu();
  const std::vector<PostprocSpec> postprocs = {{"rewrite_parallel_vectorize_unroll", {}}};
  for (auto [row, lanes] : {std::pair<int64_t, int64_t>{96, 32}, {20, 20}, {97, 0}}) {
    SCOPED_TRACE("row " + std::to_string(row));
    ir::PrimFunc func = workload("softmax:shape=4x" + std::to_string(row) + ",axis=1");
    Schedule sch(func);
    sch.annotate(sch.get_block("root"), "meta_schedule.vectorize", int64_t{32});
    ASSERT_FALSE(apply_postprocs(sch, cpu, postprocs).has_value());
    std::vector<int64_t> expected = lanes > 0 ? std::vector<int64_t>{lanes, lanes} : std::vector<int64_t>{};
    EXPECT_EQ(vectorized_extents(sch.func()), expected);
    EXPECT_TRUE(schedule::testing::same_outputs(func, sch.func(), 3, /*exact=*/false));
    EXPECT_NO_THROW(lower::lower(sch.func(), cpu));
  }
}

TEST(Postprocs, RewriteUnboundBlockBindsEveryNest) {
  Schedule sch(workload("softmax:shape=4x64,axis=1"));
  ASSERT_FALSE(apply_postprocs(sch, kH200, {{"rewrite_unbound_block", {}}}).has_value());
  EXPECT_NO_THROW(lower::lower(sch.func(), kH200));
  EXPECT_EQ(sch.trace().instructions().front().kind, schedule::InstructionKind::EnterPostproc);
}

TEST(Candidates, FailuresAreValuesNamingTheStage) {
  // A primitive refusing inside a postprocessor: an intrinsic nobody registered.
  Schedule sch = default_schedule(workload("relu:shape=256"), kH200);
  sch.annotate(sch.get_block("relu"), "meta_schedule.auto_tensorize", std::string("mma_nothing"));
  std::optional<CandidateFailure> f = apply_postprocs(sch, kH200, RuleSet::cuda().postprocs);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, FailureKind::kPostproc);
  EXPECT_EQ(f->stage, "rewrite_tensorize");
  EXPECT_NE(f->message.find("UnknownIntrinsic"), std::string::npos) << f->message;

  // A trace for another function: its first lookup fails on replay.
  Schedule gemm(workload("matmul:m=32,n=32,k=32"));
  gemm.get_loops(gemm.get_block("C"));
  CandidateResult r = replay_candidate(gemm.trace(), workload("relu:shape=256"), kH200, RuleSet::cuda());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure().kind, FailureKind::kReplay);
  EXPECT_EQ(r.failure().stage, "replay");

  // A trace whose binding breaks the limits: rejected, not thrown.
  CandidateResult too_wide = replay_candidate(elementwise(8192, 2048, 1).trace(), workload("relu:shape=8192"), kH200,
                                              RuleSet::cuda());
  ASSERT_FALSE(too_wide.ok());
  EXPECT_EQ(too_wide.failure().kind, FailureKind::kRejected);
  EXPECT_EQ(too_wide.failure().stage, "verify_gpu_code");
}

TEST(Candidates, ReplayingACandidatesTraceGivesTheCandidate) {
  ir::PrimFunc func = workload("matmul:m=64,n=64,k=64");
  std::vector<Sketch> sketches = generate_design_space(func, kH200, RuleSet::cuda());
  int checked = 0;
  for (int seed = 0; seed < 16 && checked < 4; ++seed) {
    CandidateResult r = sample_candidate(sketches[0], func, kH200, RuleSet::cuda(), seed);
    if (!r.ok()) continue;
    CandidateResult again = replay_candidate(r.candidate().trace, func, kH200, RuleSet::cuda());
    ASSERT_TRUE(again.ok()) << again.failure().message;
    EXPECT_EQ(again.candidate().trace, r.candidate().trace);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace dragon::search
