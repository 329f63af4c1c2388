// AutoBind: every op kind gets a GPU binding that computes what the op computes, replays
// from its trace, and lowers for the H200; plus the rule's cases one by one (fusion of
// the spatial prefix, reductions kept inside the thread, unit loops, large extents,
// already-bound nests, sampled thread counts, sampled vector lanes).
#include <gtest/gtest.h>

#include <set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "unit/schedule/schedule_test_util.h"
#include "unit/search/search_test_sketches.h"

namespace dragon::search {
namespace {

using schedule::Schedule;
using schedule::testing::replays_exactly;
using schedule::testing::same_outputs;
using schedule::testing::workload;

// Thread-bound loops by tag -> extents, in pre-order.
struct Bindings : ir::StmtVisitor {
  std::vector<std::pair<std::string, int64_t>> loops;
  using ir::StmtVisitor::visit_;
  void visit_(const ir::ForNode* op) override {
    if (op->for_kind == ir::ForKind::kThreadBinding) {
      loops.emplace_back(op->thread_tag, ir::as_const_int(op->extent).value_or(-1));
    }
    ir::StmtVisitor::visit_(op);
  }
};

Bindings bindings_of(const ir::PrimFunc& f) {
  Bindings b;
  b.visit(f->body);
  return b;
}

// Every block under the root runs under a blockIdx and a threadIdx loop.
::testing::AssertionResult every_block_bound(Schedule& sch) {
  for (schedule::BlockRV b : sch.get_child_blocks(sch.get_block("root"))) {
    bool block = false, thread = false;
    for (schedule::LoopRV l : sch.get_loops(b)) {
      const std::string& tag = sch.get(l)->thread_tag;
      block = block || tag.rfind("blockIdx.", 0) == 0;
      thread = thread || tag.rfind("threadIdx.", 0) == 0;
    }
    if (!block || !thread) return ::testing::AssertionFailure() << "block " << sch.get(b)->name << " is not bound";
  }
  return ::testing::AssertionSuccess();
}

TEST(AutoBind, EveryOpKindGetsAValidDefaultGpuSchedule) {
  int checked = 0;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    SCOPED_TRACE(op.name);
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
    Schedule sch(func);
    int bound = auto_bind(sch);
    EXPECT_GT(bound, 0);
    EXPECT_TRUE(every_block_bound(sch)) << ir::print_function(sch.func());
    EXPECT_EQ(auto_bind(sch), 0) << "a second application binds nothing";
    EXPECT_TRUE(same_outputs(func, sch.func(), 3)) << sch.trace().to_string();
    EXPECT_TRUE(replays_exactly(sch));
    EXPECT_NO_THROW(lower::lower(sch.func(), lower::Target::cuda_h200())) << sch.trace().to_string();
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(ops::OpRegistry::global().kinds().size())) << "every op kind, none skipped";
}

TEST(AutoBind, FusesTheSpatialLoopsAndSplitsByTheThreadCount) {
  Schedule sch(workload("relu:shape=16x1024"));
  EXPECT_EQ(auto_bind(sch), 1);
  // 16 * 1024 = 16384 elements: 64 blocks of 256 threads.
  std::vector<std::pair<std::string, int64_t>> expected = {{"blockIdx.x", 64}, {"threadIdx.x", 256}};
  EXPECT_EQ(bindings_of(sch.func()).loops, expected);
  std::string trace = sch.trace().to_string();
  EXPECT_NE(trace.find("Fuse"), std::string::npos) << trace;
  EXPECT_NE(trace.find("Split"), std::string::npos) << trace;
  EXPECT_NE(trace.find("Bind"), std::string::npos) << trace;
}

TEST(AutoBind, KeepsReductionLoopsInsideEachThread) {
  // sum over axis 1 of 16x64x63: spatial (16, 63) fused = 1008 -> 4 blocks x 256; the
  // reduction loop of 64 stays serial under the thread.
  Schedule sch(workload("sum:shape=16x64x63,axis=1"));
  auto_bind(sch);
  std::vector<std::pair<std::string, int64_t>> expected = {{"blockIdx.x", 4}, {"threadIdx.x", 256}};
  EXPECT_EQ(bindings_of(sch.func()).loops, expected);
  EXPECT_TRUE(same_outputs(workload("sum:shape=16x64x63,axis=1"), sch.func(), 5));
}

TEST(AutoBind, ReductionOutermostRunsOnOneThread) {
  // frobenius_norm's total sum of squares has no spatial loop: a unit loop per tag.
  ir::PrimFunc func = workload("frobenius_norm:shape=2x3x4x5");
  Schedule sch(func);
  auto_bind(sch);
  EXPECT_TRUE(every_block_bound(sch));
  bool unit_block = false;
  for (const auto& [tag, extent] : bindings_of(sch.func()).loops) unit_block = unit_block || (tag == "blockIdx.x" && extent == 1);
  EXPECT_TRUE(unit_block) << ir::print_function(sch.func());
  EXPECT_TRUE(same_outputs(func, sch.func(), 2));
}

TEST(AutoBind, LargeExtentsLoopInsideEachThread) {
  // 4 * 256 * 256 = 262144 > 256 blocks x 256 threads: split [4, 256, 256], the serial
  // loop moved inside the bound ones.
  Schedule sch(workload("relu:shape=1024x256"));
  auto_bind(sch);
  std::vector<std::pair<std::string, int64_t>> expected = {{"blockIdx.x", 256}, {"threadIdx.x", 256}};
  EXPECT_EQ(bindings_of(sch.func()).loops, expected);
  EXPECT_TRUE(same_outputs(workload("relu:shape=1024x256"), sch.func(), 1));
}

// KernelBench 38 (l1_norm over 32768 x 65535, 2147450880 elements): with 1056 blocks the
// padded product of the split passed 2^31 and Split refused it. 1047 blocks is the most
// whose padding still fits: 8012 x 1047 x 256 = 2147472384 <= 2^31 - 1, while 1048 pads to
// 2147645440.
// AutoBind with the default schedule's 1,056 blocks on `spec`: the bindings it makes
// (building only: these shapes are far too big to run here); the trace must replay.
std::vector<std::pair<std::string, int64_t>> bindings_with_1056_blocks(const std::string& spec) {
  Schedule sch(workload(spec));
  AutoBindOptions options;
  options.max_threadblocks = 1056;
  auto_bind(sch, options);
  EXPECT_TRUE(replays_exactly(sch)) << spec;
  return bindings_of(sch.func()).loops;
}

TEST(AutoBind, NearTwoToTheThirtyOneIterationsStillSplitWithinI32) {
  std::vector<std::pair<std::string, int64_t>> expected = {{"blockIdx.x", 1047}, {"threadIdx.x", 256}};
  EXPECT_EQ(bindings_with_1056_blocks("relu:shape=32768x65535"), expected);
}

// KernelBench 87 (a 1x1 convolution with 16 x 128 x 1024 x 1024 = 2^31 outputs): the fused
// loop is i64, so the padding bound is i64's; against i32's, every block count failed and
// the whole output ran in one block of 256 threads (38 s on an H100, eager 4.6 ms).
TEST(AutoBind, TwoToTheThirtyOneIterationsOrMoreGetEveryBlock) {
  std::vector<std::pair<std::string, int64_t>> expected = {{"blockIdx.x", 1056}, {"threadIdx.x", 256}};
  EXPECT_EQ(bindings_with_1056_blocks("relu:shape=16x128x1024x1024"), expected);
}

TEST(AutoBind, LeavesBoundNestsAloneAndCompletesThreadOnlyOnes) {
  Schedule sch(workload("relu:shape=8x32"));
  std::vector<schedule::LoopRV> loops = sch.get_loops(sch.get_block("relu"));
  sch.bind(loops[1], "threadIdx.x");
  EXPECT_TRUE(auto_bind_block(sch, sch.get_block("relu")));
  std::vector<std::pair<std::string, int64_t>> expected = {{"blockIdx.x", 8}, {"threadIdx.x", 32}};
  EXPECT_EQ(bindings_of(sch.func()).loops, expected);
  EXPECT_FALSE(auto_bind_block(sch, sch.get_block("relu")));
}

TEST(AutoBind, SamplesTheThreadCountAmongTheCandidates) {
  AutoBindOptions options;
  options.max_threads_per_block = 1024;
  options.thread_extent_candidates = {32, 64, 128, 256, 512, 1024};
  for (int64_t seed : {1, 2, 3, 4}) {
    Schedule sch(workload("relu:shape=4x128"), seed);
    auto_bind(sch, options);
    Bindings b = bindings_of(sch.func());
    ASSERT_EQ(b.loops.size(), 2u);
    EXPECT_LE(b.loops[1].second, 512);  // never more threads than elements
    EXPECT_EQ(b.loops[0].second * b.loops[1].second, 512);
    EXPECT_NE(sch.trace().to_string().find("SampleCategorical"), std::string::npos);
    EXPECT_TRUE(replays_exactly(sch));
  }
}

// Past max_threadblocks x threads, the block count of the thread loop split is sampled
// among the candidates (each computing the same and replaying); a nest that fits stays
// one element per thread, its block count the quotient.
TEST(AutoBind, SamplesTheBlockCountOfThreadsThatLoop) {
  AutoBindOptions options;
  options.max_threadblocks = 2;
  options.thread_extent_candidates = {32};
  options.threadblock_candidates = {2, 3, 5};
  std::set<int64_t> seen;
  for (int64_t seed = 1; seed <= 16; ++seed) {
    Schedule sch(workload("relu:shape=8x40"), seed);
    auto_bind(sch, options);
    Bindings b = bindings_of(sch.func());
    ASSERT_EQ(b.loops.size(), 2u);
    EXPECT_EQ(b.loops[1], (std::pair<std::string, int64_t>{"threadIdx.x", 32}));
    seen.insert(b.loops[0].second);
    EXPECT_TRUE(same_outputs(workload("relu:shape=8x40"), sch.func(), seed)) << "seed " << seed;
    EXPECT_TRUE(replays_exactly(sch)) << "seed " << seed;
  }
  EXPECT_EQ(seen, (std::set<int64_t>{2, 3, 5}));
  Schedule small(workload("relu:shape=2x32"));
  auto_bind(small, options);
  EXPECT_EQ(bindings_of(small.func()).loops[0], (std::pair<std::string, int64_t>{"blockIdx.x", 2}));
}

// Vector lanes: an elementwise nest gets its lanes sampled among the candidates dividing its
// extent (split innermost, vectorized), computes the same for every draw, and replays; a
// nest with a reduction inside, or an extent no candidate above 1 divides, gets no lanes.
int64_t vectorized_extent(const ir::PrimFunc& f) {
  struct Find : ir::StmtVisitor {
    int64_t lanes = 0;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      if (op->for_kind == ir::ForKind::kVectorized) lanes = ir::as_const_int(op->extent).value_or(-1);
      ir::StmtVisitor::visit_(op);
    }
  } find;
  find.visit(f->body);
  return find.lanes;
}

TEST(AutoBind, SamplesVectorLanesOfElementwiseNests) {
  AutoBindOptions options;
  options.thread_extent_candidates = {32, 64};
  options.vector_lanes_candidates = {1, 2, 4};
  std::set<int64_t> seen;
  for (const char* spec : {"relu:shape=6x40", "batch_norm:shape=2x3x4x8,eps=1e-05,training=false,dtype=f32"}) {
    for (int64_t seed = 1; seed <= 12; ++seed) {
      Schedule sch(workload(spec), seed);
      auto_bind(sch, options);
      const int64_t lanes = vectorized_extent(sch.func());
      EXPECT_TRUE(lanes == 1 || lanes == 2 || lanes == 4) << spec << " seed " << seed << ": " << lanes;
      seen.insert(lanes);
      EXPECT_TRUE(same_outputs(workload(spec), sch.func(), seed)) << spec << " seed " << seed;
      EXPECT_TRUE(replays_exactly(sch)) << spec << " seed " << seed;
    }
  }
  EXPECT_EQ(seen, (std::set<int64_t>{1, 2, 4}));
  // 15 elements: only 1 divides, so no split at all.
  Schedule odd(workload("relu:shape=3x5"));
  auto_bind(odd, options);
  EXPECT_EQ(vectorized_extent(odd.func()), 0);
  // A reduction inside the nest (sum's rows): the lanes would wrap a serial sum.
  Schedule reduce(workload("sum:shape=8x64,axis=1"));
  auto_bind(reduce, options);
  EXPECT_EQ(vectorized_extent(reduce.func()), 0);
}

// A sketch records the loops AutoBind fused under its own draws. When a cross-thread
// reduction's thread count covered the whole axis, the outer piece of that split is a unit
// loop nothing uses (simplified away) and looks data-parallel; fused, it became a
// reduction's loop under every smaller thread count and those candidates failed to replay
// (group norm at batch 1: 9 of 80). Every candidate of these sketches now replays; what
// fails, fails for the GPU's limits.
TEST(AutoBind, FusedLoopsStayDataParallelUnderEveryDecision) {
  for (const std::string spec : {"group_norm:shape=1x512x64x64,num_groups=32,dtype=f16",
                                 "batch_norm:shape=1x96x56x56,eps=1e-05,training=true,dtype=f16",
                                 "softmax:shape=1x4096"}) {
    SCOPED_TRACE(spec);
    const ir::PrimFunc func = workload(spec);
    const std::vector<Sketch> sketches = generate_design_space(func, testing::kH200, RuleSet::cuda());
    int ok = 0;
    for (int64_t seed = 1; seed <= 60; ++seed) {
      const CandidateResult r =
          sample_candidate(sketches[static_cast<size_t>(seed) % sketches.size()], func, testing::kH200, RuleSet::cuda(), seed);
      if (r.ok()) {
        ++ok;
        continue;
      }
      EXPECT_NE(r.failure().kind, FailureKind::kReplay) << "seed " << seed << ": " << r.failure().message;
    }
    EXPECT_GT(ok, 0);
  }
}

}  // namespace
}  // namespace dragon::search
