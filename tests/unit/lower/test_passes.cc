// Unit tests of the core lowering passes, one by one on small scheduled workloads: what
// each pass produces and that it computes what its input did.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/uses_var.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/passes.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "lower_test_util.h"

namespace dragon::lower {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::None;
using schedule::Schedule;
using testing::computes_the_same;
using testing::has_exact_line;
using testing::workload;
using testing::loads_of;

// A 16x16x16 matmul tiled 4x4x4 (i0, j0, k0, i1, j1, k1) with A read through a global
// cache computed at k0.
Schedule tiled_matmul_with_cache() {
  Schedule sch(workload("matmul:m=16,n=16,k=16"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> l = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(l[0], {None{}, int64_t{4}});
  std::vector<LoopRV> j = sch.split(l[1], {None{}, int64_t{4}});
  std::vector<LoopRV> k = sch.split(l[2], {None{}, int64_t{4}});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  BlockRV cache = sch.cache_read(c, 0, "global");
  sch.compute_at(cache, k[0]);
  return sch;
}

// The function after the pipeline stage named `pass` (its first run).
ir::PrimFunc stage(const ir::PrimFunc& func, const std::string& pass) {
  for (const testing::Stage& s : testing::lower_stages(func, Target::cpu())) {
    if (s.pass == pass) return s.func;
  }
  ADD_FAILURE() << "no pass " << pass;
  return func;
}

// Loop facts gathered from a statement: kind and annotations by loop variable name, and
// the loop directly around each Allocate (by buffer name; "" at the top level).
struct LoopFacts : ir::StmtVisitor {
  std::map<std::string, const ir::ForNode*> loops;
  std::map<std::string, std::string> allocated_in;

 protected:
  void visit_(const ir::ForNode* op) override {
    loops[op->loop_var.name()] = op;
    enclosing_.push_back(op->loop_var.name());
    ir::StmtVisitor::visit_(op);
    enclosing_.pop_back();
  }
  void visit_(const ir::AllocateNode* op) override {
    allocated_in[op->buffer->name] = enclosing_.empty() ? "" : enclosing_.back();
    ir::StmtVisitor::visit_(op);
  }

 private:
  std::vector<std::string> enclosing_;
};

LoopFacts facts(const ir::PrimFunc& func) {
  LoopFacts f;
  f.visit(func->body);
  return f;
}

// ---- lower_reduction_init -------------------------------------------------------------

TEST(LowerReductionInit, GuardsTheInitByTheBlockVariablesWhateverTheLoopOrder) {
  // The reduce loop split and its outer part moved outermost: the init must still run
  // once per output element, at the first reduce iteration, not at the first loop one.
  Schedule sch(workload("matmul:m=8,n=6,k=10"));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> k = sch.split(l[2], {None{}, int64_t{4}});  // 3 x 4, predicated
  sch.reorder({k[0], l[0], l[1], k[1]});
  ir::PrimFunc lowered = lower_reduction_init(sch.func());
  std::string text = ir::print_function(lowered);
  EXPECT_TRUE(has_exact_line(text, "if (vr0 == 0) {")) << text;
  EXPECT_EQ(text.find("init {"), std::string::npos);
  EXPECT_TRUE(computes_the_same(sch.func(), lowered));
  EXPECT_TRUE(lower_reduction_init(lowered).same_as(lowered));  // nothing left to lower
}

TEST(LowerReductionInit, StaysCorrectAfterRfactorAndDecomposition) {
  Schedule sch(workload("sum:shape=4x12x5,axis=1"));
  BlockRV sum = sch.get_child_blocks(sch.get_block("root"))[0];
  LoopRV reduce_loop;
  for (LoopRV loop : sch.get_loops(sum)) {
    if (sch.get(loop)->loop_var.name()[0] == 'r') reduce_loop = loop;
  }
  std::vector<LoopRV> r = sch.split(reduce_loop, {None{}, int64_t{5}});  // 12 = 3 x 5, predicated
  BlockRV rf = sch.rfactor(r[1]);
  sch.decompose_reduction(rf, sch.get_loops(rf)[1]);
  ir::PrimFunc lowered = lower_reduction_init(sch.func());
  EXPECT_FALSE(lowered.same_as(sch.func()));
  EXPECT_TRUE(computes_the_same(sch.func(), lowered));
  EXPECT_TRUE(computes_the_same(sch.func(), lower(sch.func(), Target::cpu()).func));
}

// ---- plan_buffer_allocation ------------------------------------------------------------

TEST(PlanBufferAllocation, MovesACacheIntoTheLoopHoldingEveryUse) {
  Schedule sch = tiled_matmul_with_cache();
  ir::PrimFunc planned = plan_buffer_allocation(sch.func());
  EXPECT_TRUE(planned.root_block()->alloc_buffers.empty());
  EXPECT_EQ(facts(planned).allocated_in["A_global"], "r0_0");
  EXPECT_TRUE(computes_the_same(sch.func(), planned));
}

// A 16x16x16 matmul with i split 4 x 4, the inner part bound to threadIdx.x, and A read
// through a cache in `scope` computed at j (inside the thread loop): each thread copies
// its own row of A.
Schedule matmul_with_cache_in_thread_loop(const char* scope) {
  Schedule sch(workload("matmul:m=16,n=16,k=16"));
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> l = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(l[0], {None{}, int64_t{4}});
  sch.bind(i[1], "threadIdx.x");
  sch.compute_at(sch.cache_read(c, 0, scope), l[1]);
  return sch;
}

TEST(PlanBufferAllocation, PutsCachesInsideThreadLoopsWhereTheirUsesAre) {
  for (const char* scope : {"shared", "local"}) {
    Schedule sch = matmul_with_cache_in_thread_loop(scope);
    ir::PrimFunc planned = plan_buffer_allocation(sch.func());
    EXPECT_EQ(facts(planned).allocated_in[std::string("A_") + scope], "i1") << scope;
    EXPECT_TRUE(computes_the_same(sch.func(), planned));
  }
}

TEST(PlanBufferAllocation, LeavesFunctionsWithNothingToMoveUnchanged) {
  ir::PrimFunc softmax = workload("softmax:shape=4x10");  // every buffer spans several nests
  EXPECT_TRUE(plan_buffer_allocation(softmax).same_as(softmax));
}

// ---- compact_buffers -------------------------------------------------------------------

TEST(CompactBuffers, ShrinksATileCacheToTheTile) {
  ir::PrimFunc before = stage(tiled_matmul_with_cache().func(), "simplify_func");
  ir::PrimFunc compacted = compact_buffers(before);
  std::string text = ir::print_function(compacted);
  EXPECT_TRUE(has_exact_line(text, "alloc A_global: f32[4, 4] {")) << text;
  EXPECT_TRUE(has_exact_line(text, "A_global[ax0, ax1] = A[i0_0 * 4 + ax0, r0_0 * 4 + ax1]")) << text;
  EXPECT_TRUE(computes_the_same(before, compacted));
  EXPECT_TRUE(compact_buffers(compacted).same_as(compacted));
}

TEST(CompactBuffers, SharedMemoryCoversEveryThreadOfABlockLocalMemoryOne) {
  // Each thread reads one row of A. Shared memory, which all threads of a block share once
  // hoisted, holds the rows of all four threads (compute_at copies them all for a shared
  // cache), at an offset free of threadIdx; local memory holds the thread's own row.
  ir::PrimFunc shared = stage(matmul_with_cache_in_thread_loop("shared").func(), "compact_buffers");
  std::string text = ir::print_function(shared);
  EXPECT_TRUE(has_exact_line(text, "alloc A_shared: f32[4, 16] shared {")) << text;
  EXPECT_TRUE(has_exact_line(text, "A_shared[ax0, ax1] = A[i0_0 * 4 + ax0, ax1]")) << text;
  EXPECT_NE(text.find("A_shared[i0_1, r0] * B[r0, i1]"), std::string::npos) << text;
  ir::PrimFunc local = stage(matmul_with_cache_in_thread_loop("local").func(), "compact_buffers");
  text = ir::print_function(local);
  EXPECT_TRUE(has_exact_line(text, "alloc A_local: f32[1, 16] local {")) << text;
  EXPECT_TRUE(has_exact_line(text, "A_local[0, ax1] = A[i0_0 * 4 + i0_1, ax1]")) << text;
  for (const ir::PrimFunc& f : {shared, local}) {
    EXPECT_TRUE(computes_the_same(matmul_with_cache_in_thread_loop("local").func(), f));
  }
}

TEST(CompactBuffers, KeepsBuffersWhoseUsesSpanTheWholeExtent) {
  ir::PrimFunc before = stage(workload("softmax:shape=4x10"), "simplify_func");
  EXPECT_TRUE(compact_buffers(before).same_as(before));
}

// ---- lower_blocks ----------------------------------------------------------------------

TEST(LowerBlocks, PredicatesBecomeIfThenElseAndBindingsReplaceIterationVariables) {
  Schedule sch(workload("mul_scalar:shape=3x10"));
  std::vector<LoopRV> l = sch.get_loops(sch.get_child_blocks(sch.get_block("root"))[0]);
  sch.split(l[1], {None{}, int64_t{4}});
  ir::PrimFunc lowered = lower_blocks(sch.func());
  std::string text = ir::print_function(lowered);
  EXPECT_TRUE(has_exact_line(text, "if (i1_0 * 4 + i1_1 < 10) {")) << text;
  EXPECT_TRUE(has_exact_line(text, "C[i0, i1_0 * 4 + i1_1] = A[i0, i1_0 * 4 + i1_1] * 3.14f32")) << text;
  EXPECT_EQ(lowered.root_block(), nullptr);
  EXPECT_TRUE(computes_the_same(sch.func(), lowered));
}

TEST(LowerBlocks, ATensorIntrinBlockKeepsItsAnnotationsOnAUnitLoop) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  BlockRV c = sch.get_block("C");
  sch.annotate(c, "tensor_intrin", std::string("test_intrin"));
  sch.annotate(c, "pragma_note", int64_t{7});
  ir::PrimFunc lowered = lower_blocks(lower_reduction_init(sch.func()));
  const ir::ForNode* unit = facts(lowered).loops["C_unit"];
  ASSERT_NE(unit, nullptr) << ir::print_function(lowered);
  EXPECT_TRUE(ir::is_const_int(unit->extent, 1));
  EXPECT_EQ(unit->for_kind, ir::ForKind::kSerial);
  EXPECT_EQ(std::get<std::string>(unit->annotations.at("tensor_intrin")), "test_intrin");
  EXPECT_EQ(std::get<int64_t>(unit->annotations.at("pragma_note")), 7);
  EXPECT_NE(unit->body.as<ir::SeqStmtNode>(), nullptr);  // guarded init, then the update
  EXPECT_TRUE(computes_the_same(sch.func(), lowered));
}

TEST(LowerBlocks, ATensorizedMmaKeepsItsIntrinOnAUnitLoop) {
  // An f16 matmul prepared for mma.m16n8k16 (operands through shared and warp caches,
  // the accumulator in warp, tiles innermost, the reduction decomposed) and tensorized.
  Schedule sch(workload("matmul:m=32,n=16,k=32,dtype=f16"));
  BlockRV c = sch.get_block("C_acc");
  for (int64_t index : {0, 1}) {
    sch.cache_read(c, index, "shared");
    sch.cache_read(c, index, "warp");
  }
  sch.cache_write(c, 0, "warp");
  std::vector<LoopRV> l = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(l[0], {None{}, int64_t{16}});
  std::vector<LoopRV> j = sch.split(l[1], {None{}, int64_t{8}});
  std::vector<LoopRV> k = sch.split(l[2], {None{}, int64_t{16}});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  sch.decompose_reduction(c, k[0]);
  sch.tensorize(i[1], "mma_m16n8k16_f16f16f32");
  Lowered lowered = lower(sch.func(), Target::cpu());
  const ir::ForNode* unit = facts(lowered.func).loops["C_acc_o_unit"];
  ASSERT_NE(unit, nullptr) << ir::print_function(lowered.func);
  EXPECT_EQ(std::get<std::string>(unit->annotations.at("tensor_intrin")), "mma_m16n8k16_f16f16f32");
  EXPECT_TRUE(ir::is_const_int(unit->extent, 1));
  EXPECT_TRUE(computes_the_same(sch.func(), lowered.func));
  // Unrolled, the tile is one call: the unroll budget counts it so, not as its 16 x 8 x 16
  // reference statements.
  UnrolledSize size = unrolled_size(ir::Stmt(unit));
  EXPECT_EQ(size.statements, 1);
  EXPECT_LT(size.operations, 64);
}

TEST(LowerBlocks, RefusesABlockWhoseInitWasNotLowered) {
  EXPECT_THROW(lower_blocks(workload("sum:shape=4x6,axis=1")), InternalError);
}

// ---- unroll_loops ----------------------------------------------------------------------

TEST(UnrollLoops, UnrollsTheNestsWithinTheMaxStepAndConsumesTheAnnotation) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  std::vector<LoopRV> k = sch.split(l[2], {None{}, int64_t{4}});
  sch.annotate(l[0], "pragma_auto_unroll_max_step", int64_t{16});
  ir::PrimFunc before = stage(sch.func(), "compact_buffers");
  ir::PrimFunc unrolled = unroll_loops(before);
  LoopFacts f = facts(unrolled);
  EXPECT_EQ(f.loops["i0"]->for_kind, ir::ForKind::kSerial);    // 8 * 8 * 8 steps
  EXPECT_EQ(f.loops["i1"]->for_kind, ir::ForKind::kSerial);    // 8 * 8 (+ 8 init) steps
  EXPECT_EQ(f.loops["r0_0"]->for_kind, ir::ForKind::kUnrolled);  // 2 * 4 * 2 stores
  EXPECT_EQ(f.loops["r0_1"]->for_kind, ir::ForKind::kUnrolled);
  EXPECT_TRUE(f.loops["i0"]->annotations.empty());
  EXPECT_TRUE(computes_the_same(before, unrolled));
  EXPECT_TRUE(unroll_loops(unrolled).same_as(unrolled));
}

TEST(UnrollLoops, AMaxStepOfZeroUnrollsNothingAndExplicitUnrollsStay) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
  sch.annotate(l[0], "pragma_auto_unroll_max_step", int64_t{0});
  sch.unroll(l[2]);
  LoopFacts f = facts(unroll_loops(stage(sch.func(), "compact_buffers")));
  EXPECT_EQ(f.loops["i1"]->for_kind, ir::ForKind::kSerial);
  EXPECT_EQ(f.loops["r0"]->for_kind, ir::ForKind::kUnrolled);
  EXPECT_EQ(f.loops["i0"]->annotations.count("pragma_auto_unroll_max_step"), 0u);
}

// A script may give the key any value (a sampled model script annotated a string): lowering
// says which loop and what value, as a user error, where it used to fail an internal check.
TEST(UnrollLoops, AMaxStepThatIsNotAnIntegerIsTheScriptsError) {
  for (const ir::AnnotationValue& value : {ir::AnnotationValue{std::string("sixteen")}, ir::AnnotationValue{1.5}}) {
    Schedule sch(workload("matmul:m=8,n=8,k=8"));
    std::vector<LoopRV> l = sch.get_loops(sch.get_block("C"));
    if (const auto* text = std::get_if<std::string>(&value)) {
      sch.annotate(l[0], "pragma_auto_unroll_max_step", *text);
    } else {
      sch.annotate(l[0], "pragma_auto_unroll_max_step", std::get<double>(value));
    }
    try {
      unroll_loops(stage(sch.func(), "compact_buffers"));
      ADD_FAILURE() << "a non-integer max step lowered";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("loop 'i0': annotation pragma_auto_unroll_max_step must be an integer"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(UnrollLoops, NoNestPastTheCapIsUnrolledExplicitlyOrAutomatically) {
  // 16 x 256 x 4 = 16384 stores: NVRTC spent minutes on this nest fully unrolled.
  Schedule sch(workload("relu:shape=16x1024"));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("relu"));
  std::vector<LoopRV> j = sch.split(l[1], {None{}, int64_t{4}});
  sch.unroll(l[0]);
  sch.unroll(j[0]);
  sch.unroll(j[1]);
  ir::PrimFunc before = stage(sch.func(), "compact_buffers");
  LoopFacts f = facts(unroll_loops(before));
  EXPECT_EQ(f.loops["i0"]->for_kind, ir::ForKind::kSerial);    // 16384 steps: past the cap
  EXPECT_EQ(f.loops["i1_0"]->for_kind, ir::ForKind::kSerial);  // 1024 steps: past it too
  EXPECT_EQ(f.loops["i1_1"]->for_kind, ir::ForKind::kUnrolled);
  // An auto-unroll step above the cap unrolls no nest past it.
  Schedule auto_sch(workload("relu:shape=16x1024"));
  std::vector<LoopRV> al = auto_sch.get_loops(auto_sch.get_block("relu"));
  std::vector<LoopRV> aj = auto_sch.split(al[1], {None{}, int64_t{128}});
  auto_sch.annotate(al[0], "pragma_auto_unroll_max_step", int64_t{100000});
  LoopFacts a = facts(unroll_loops(stage(auto_sch.func(), "compact_buffers")));
  EXPECT_EQ(a.loops["i0"]->for_kind, ir::ForKind::kSerial);    // 16384
  EXPECT_EQ(a.loops["i1_0"]->for_kind, ir::ForKind::kSerial);  // 1024
  EXPECT_EQ(a.loops["i1_1"]->for_kind, ir::ForKind::kUnrolled);  // 128
  EXPECT_TRUE(computes_the_same(before, unroll_loops(before)));
}

// Statements whose indices take many operations (a fused loop's divisions and remainders
// in every dimension) cap a nest by its operations too: 256 such stores are within the
// statement cap and the max step, but NVRTC's time follows the unrolled operations, so
// the nest stays a loop; 32 of them are unrolled.
TEST(UnrollLoops, NoNestPastTheOperationCapIsUnrolled) {
  auto inner_kind = [](int64_t inner) {
    Schedule sch(workload("relu:shape=8x8x8x8"));
    std::vector<LoopRV> l = sch.get_loops(sch.get_block("relu"));
    std::vector<LoopRV> f = sch.split(sch.fuse(l), {None{}, inner});
    sch.annotate(f[0], "pragma_auto_unroll_max_step", int64_t{512});
    ir::PrimFunc before = stage(sch.func(), "compact_buffers");
    ir::PrimFunc after = unroll_loops(before);
    EXPECT_TRUE(computes_the_same(before, after));
    const ir::ForNode* loop = facts(after).loops["i0_i1_i2_i3_fused_1"];
    EXPECT_NE(loop, nullptr) << ir::print_function(after);
    return loop != nullptr ? loop->for_kind : ir::ForKind::kParallel;
  };
  EXPECT_EQ(inner_kind(256), ir::ForKind::kSerial);
  EXPECT_EQ(inner_kind(32), ir::ForKind::kUnrolled);
}

// A math call counts as the code it expands into, not one operation: 256 steps of
// softplus (log1p of exp: about 37 operations a step) stay a loop, where relu's 256 are
// unrolled; NVRTC took 0.25 s for 256 unrolled expf, 3.4 s for 256 sinf.
TEST(UnrollLoops, MathCallsCountAsTheCodeTheyExpandInto) {
  // The function unrolled, and its inner loop (a node of that function).
  auto unrolled = [](const std::string& spec) {
    Schedule sch(workload(spec.c_str()));
    std::vector<LoopRV> l = sch.get_loops(sch.get_block(spec.substr(0, spec.find(':'))));
    sch.annotate(l[0], "pragma_auto_unroll_max_step", int64_t{512});
    ir::PrimFunc before = stage(sch.func(), "compact_buffers");
    ir::PrimFunc after = unroll_loops(before);
    EXPECT_TRUE(computes_the_same(before, after)) << spec;
    return after;
  };
  const ir::PrimFunc relu = unrolled("relu:shape=4x256"), softplus = unrolled("softplus:shape=4x256");
  const ir::ForNode* relu_loop = facts(relu).loops["i1"];
  const ir::ForNode* softplus_loop = facts(softplus).loops["i1"];
  ASSERT_NE(relu_loop, nullptr) << ir::print_function(relu);
  ASSERT_NE(softplus_loop, nullptr) << ir::print_function(softplus);
  EXPECT_EQ(relu_loop->for_kind, ir::ForKind::kUnrolled);
  EXPECT_EQ(softplus_loop->for_kind, ir::ForKind::kSerial);
  const UnrolledSize relu_size = unrolled_size(ir::Stmt(relu_loop));
  const UnrolledSize softplus_size = unrolled_size(ir::Stmt(softplus_loop));
  EXPECT_EQ(relu_size.statements, softplus_size.statements);
  EXPECT_GT(softplus_size.operations, 256 * 30);
  EXPECT_LT(relu_size.operations, 256 * 8);
}

// ---- carry_loop_values -----------------------------------------------------------------

// The stages around the first run of `pass`: (before, after, changed).
std::tuple<ir::PrimFunc, ir::PrimFunc, bool> around(const ir::PrimFunc& func, const std::string& pass,
                                                    const Target& target = Target::cpu()) {
  std::vector<testing::Stage> stages = testing::lower_stages(func, target);
  for (size_t k = 1; k < stages.size(); ++k) {
    if (stages[k].pass == pass) return {stages[k - 1].func, stages[k].func, stages[k].changed};
  }
  ADD_FAILURE() << "no pass " << pass;
  return {func, func, false};
}

// Every scan kind of the op registry (inclusive, reverse, exclusive, product, masked) reads
// its running value from a one-element local buffer instead of the output it just stored,
// with the same results bit for bit; on the GPU too (default schedule), where the loop
// then needs no barrier.
TEST(CarryLoopValues, EveryScanKeepsItsRunningValueInALocalBuffer) {
  for (const char* spec : {"cumsum:shape=4x9,dim=1", "cumsum:shape=4x9,dim=1,reverse=true",
                           "cumsum:shape=4x9,dim=1,exclusive=true", "cumprod:shape=3x7,dim=1",
                           "masked_cumsum:shape=4x9,dim=1"}) {
    SCOPED_TRACE(spec);
    const ir::PrimFunc func = workload(spec);
    auto [before, after, changed] = around(func, "carry_loop_values");
    EXPECT_TRUE(changed);
    EXPECT_GT(loads_of(before, "Y"), 0);
    EXPECT_EQ(loads_of(after, "Y"), 0) << ir::print_function(after);
    EXPECT_EQ(loads_of(after, "Y_carry"), 2) << "the running value, and the store of it:\n" << ir::print_function(after);
    EXPECT_TRUE(computes_the_same(before, after));
    EXPECT_TRUE(computes_the_same(func, lower(func, Target::cpu()).func));
  }
  // Rows on threads, as the default schedule binds a scan.
  Schedule sch(workload("cumsum:shape=64x256,dim=1"));
  std::vector<LoopRV> rows = sch.split(sch.get_loops(sch.get_block("Y"))[0], {None{}, 32});
  sch.bind(rows[0], "blockIdx.x");
  sch.bind(rows[1], "threadIdx.x");
  const ir::PrimFunc gpu = lower(sch.func(), Target::cuda_h200()).func;
  EXPECT_EQ(loads_of(gpu, "Y"), 0) << ir::print_function(gpu);
  struct Barriers : ir::StmtExprVisitor {
    int count = 0;
    void visit_(const ir::CallNode* op) override {
      count += op->op == ir::Intrinsic::SyncThreads ? 1 : 0;
      ir::StmtExprVisitor::visit_(op);
    }
  } barriers;
  barriers.visit(gpu->body);
  EXPECT_EQ(barriers.count, 0) << "a thread's own running value needs no barrier:\n" << ir::print_function(gpu);
}

// A load of the buffer outside the stored value (a copy of each element after the scan
// step) stays and reads what the store wrote; the stored value's own load is carried. The
// buffers keep their two dimensions: the pass's first run is before flattening.
TEST(CarryLoopValues, CarriesTheStoredValuesLoadAndLeavesOtherLoads) {
  const ir::PrimFunc copied = ir::parse_function(R"(func copied(in X: f32[3, 8], out Y: f32[3, 8], out Z: f32[3, 8]) {
  block root {
    for i0 in 3 {
      for i1 in 8 {
        block Y [vi0: S 3 = i0, vi1: O 8 = i1] {
          reads X[vi0, vi1], Y[vi0, vi1 - 1]
          writes Y[vi0, vi1]
          Y[vi0, vi1] = select(vi1 == 0, X[vi0, vi1], Y[vi0, vi1 - 1] + X[vi0, vi1])
        }
        block Z [vi0: S 3 = i0, vi1: S 8 = i1] {
          reads Y[vi0, vi1]
          writes Z[vi0, vi1]
          Z[vi0, vi1] = Y[vi0, vi1] * 2f32
        }
      }
    }
  }
}
)");
  auto [before, after, changed] = around(copied, "carry_loop_values");
  EXPECT_TRUE(changed);
  EXPECT_EQ(loads_of(before, "Y"), 2);
  EXPECT_EQ(loads_of(after, "Y"), 1) << "Z's copy reads memory:\n" << ir::print_function(after);
  EXPECT_EQ(loads_of(after, "Y_carry"), 2) << ir::print_function(after);
  EXPECT_TRUE(computes_the_same(before, after));
  EXPECT_TRUE(computes_the_same(copied, lower(copied, Target::cpu()).func));
}

// Left alone: a value read before the loop wrote it (the first step reads the buffer as
// given), and a scan along a middle axis, whose store sits in an inner loop and whose
// load is a step back in the outer one.
TEST(CarryLoopValues, LeavesLoopsWhereTheReadIsNotTheLastStepsStore) {
  const ir::PrimFunc unguarded = ir::parse_function(R"(func unguarded(in X: f32[8], inout Y: f32[8]) {
  block root {
    for i0 in 7 {
      block Y [vi0: O 7 = i0] {
        reads X[vi0 + 1], Y[vi0]
        writes Y[vi0 + 1]
        Y[vi0 + 1] = Y[vi0] + X[vi0 + 1]
      }
    }
  }
}
)");
  auto [before, after, changed] = around(unguarded, "carry_loop_values");
  EXPECT_FALSE(changed) << ir::print_function(after);
  EXPECT_EQ(loads_of(after, "Y"), 1);
  auto [middle_before, middle_after, middle_changed] = around(workload("cumsum:shape=3x6x5,dim=1"), "carry_loop_values");
  EXPECT_FALSE(middle_changed) << ir::print_function(middle_after);
}

// A chunked scan whose last chunk is partial (21 offsets in chunks of 8): the store sits
// under the guard "position < 21", which holds on a prefix of the chunk's loop, so the
// running value is carried under the same guard; the chunks run on threads with no load
// of the output and no barrier. A guard that holds on a suffix ("i1 > 2": the first
// iterations store nothing, a later one reads what the buffer held) leaves the loop alone.
TEST(CarryLoopValues, CarriesUnderAGuardThatHoldsOnAPrefixOfTheLoop) {
  const ir::PrimFunc func = workload("lengths_to_offsets:batch=20,include_total=true,index_dtype=i32");
  Schedule sch(func);
  std::vector<LoopRV> parts = sch.split(sch.get_loops(sch.get_block("offsets"))[0], {None{}, int64_t{8}});
  BlockRV total = sch.chunk_scan(parts[0]);
  sch.bind(parts[0], "threadIdx.x");
  sch.bind(sch.get_loops(total)[0], "threadIdx.x");
  sch.bind(sch.add_unit_loop(sch.get_loops(sch.get_consumers(total)[0])[0]), "threadIdx.x");
  auto [before, after, changed] = around(sch.func(), "carry_loop_values");
  EXPECT_TRUE(changed) << ir::print_function(after);
  EXPECT_TRUE(computes_the_same(before, after));
  const ir::PrimFunc gpu = lower(sch.func(), Target::cuda_h200()).func;
  EXPECT_EQ(loads_of(gpu, "offsets"), 0) << ir::print_function(gpu);
  EXPECT_TRUE(computes_the_same(func, lower(sch.func(), Target::cpu()).func));

  const ir::PrimFunc suffix = ir::parse_function(R"(func suffix(in X: f32[8], inout Y: f32[8]) {
  block root {
    for i0 in 8 {
      block Y [vi0: O 8 = i0] if (i0 > 2) {
        reads X[vi0], Y[vi0 - 1]
        writes Y[vi0]
        Y[vi0] = select(vi0 == 0, X[vi0], Y[vi0 - 1] + X[vi0])
      }
    }
  }
}
)");
  auto [suffix_before, suffix_after, suffix_changed] = around(suffix, "carry_loop_values");
  EXPECT_FALSE(suffix_changed) << ir::print_function(suffix_after);
}

// ---- hoist_invariant_guards ------------------------------------------------------------

// The last loop named `name` in `func` in program order (copies of a nest keep their
// loops' names: a chunked scan's own nest comes after its totals' and carries'), or nullptr.
const ir::ForNode* loop_named(const ir::PrimFunc& func, const std::string& name) {
  struct Finder : ir::StmtVisitor {
    std::string name;
    const ir::ForNode* found = nullptr;
    void visit_(const ir::ForNode* op) override {
      if (op->loop_var.name() == name) found = op;
      ir::StmtVisitor::visit_(op);
    }
  } finder;
  finder.name = name;
  finder.visit(func->body);
  return finder.found;
}

// A sum whose fused outputs are split past their count (KernelBench 47's best record:
// 524,160 outputs in 8 x 256 x 256) guards its store inside the 4096-term loop, where NVCC
// kept the partial sum in memory; the guard moves outside the loop, which then reads and
// writes its accumulator every iteration. A conjunct over the loop's own variable stays
// inside (a chunked scan's partial last chunk), one that does not moves out.
TEST(HoistInvariantGuards, MovesTheConjunctsALoopDoesNotChangeOutsideIt) {
  Schedule sch(workload("sum:shape=4x8x31,axis=1,keepdim=true"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("sum"));
  std::vector<LoopRV> parts = sch.split(sch.fuse({loops[0], loops[1], loops[2]}), {None{}, int64_t{4}, int64_t{8}});
  sch.reorder({parts[1], parts[2], parts[0]});
  sch.bind(parts[1], "blockIdx.x");
  sch.bind(parts[2], "threadIdx.x");
  for (const Target& target : {Target::cpu(), Target::cuda_h200()}) {
    SCOPED_TRACE(target.is_gpu() ? "cuda" : "cpu");
    auto [before, after, changed] = around(sch.func(), "hoist_invariant_guards", target);
    EXPECT_TRUE(changed) << ir::print_function(after);
    const ir::ForNode* guarded = loop_named(before, "r0");
    const ir::ForNode* hoisted = loop_named(after, "r0");
    ASSERT_TRUE(guarded != nullptr && hoisted != nullptr) << ir::print_function(after);
    EXPECT_NE(guarded->body.as<ir::IfThenElseNode>(), nullptr) << ir::print_function(before);
    EXPECT_EQ(hoisted->body.as<ir::IfThenElseNode>(), nullptr) << ir::print_function(after);
    EXPECT_TRUE(computes_the_same(before, after));
  }

  Schedule scan(workload("lengths_to_offsets:batch=20,include_total=true,index_dtype=i32"));
  std::vector<LoopRV> chunks = scan.split(scan.get_loops(scan.get_block("offsets"))[0], {None{}, int64_t{8}});
  BlockRV total = scan.chunk_scan(chunks[0]);
  std::vector<LoopRV> threads = scan.split(chunks[0], {None{}, int64_t{2}});  // 3 chunks on 2 x 2 threads: a guard
  scan.bind(threads[0], "blockIdx.x");
  scan.bind(threads[1], "threadIdx.x");
  scan.bind(scan.get_loops(total)[0], "threadIdx.x");
  scan.bind(scan.add_unit_loop(scan.get_loops(scan.get_consumers(total)[0])[0]), "threadIdx.x");
  auto [before, after, changed] = around(scan.func(), "hoist_invariant_guards", Target::cuda_h200());
  EXPECT_TRUE(changed) << ir::print_function(after);
  const ir::ForNode* chunk = loop_named(after, "i0_1");
  ASSERT_NE(chunk, nullptr) << ir::print_function(after);
  const auto* inside = chunk->body.as<ir::IfThenElseNode>();
  ASSERT_NE(inside, nullptr) << ir::print_function(after);
  EXPECT_TRUE(ir::uses_var(inside->condition, chunk->loop_var.get())) << ir::print_function(after);
  EXPECT_TRUE(computes_the_same(before, after));
}

// ---- flatten_buffers -------------------------------------------------------------------

TEST(FlattenBuffers, ParametersAndAllocationsBecomeOneDimensional) {
  ir::PrimFunc before = stage(workload("softmax:shape=4x10"), "unroll_loops");
  ir::PrimFunc flat = flatten_buffers(before);
  std::string text = ir::print_function(flat);
  EXPECT_TRUE(has_exact_line(text, "func softmax(in X: f32[40], out softmax: f32[40]) {")) << text;
  EXPECT_TRUE(has_exact_line(text, "alloc x_exp: f32[40] {")) << text;
  EXPECT_TRUE(has_exact_line(text, "x_exp[i0 * 10 + i1] = exp(X[i0 * 10 + i1] - x_max[i0])")) << text;
  EXPECT_TRUE(find_flat_form_problems(flat).empty());
  EXPECT_TRUE(computes_the_same(before, flat));
  EXPECT_TRUE(flatten_buffers(flat).same_as(flat));  // already flat
}

TEST(FlattenBuffers, AScalarBufferBecomesOneElement) {
  ir::PrimFunc before = stage(workload("mse_loss:shape=4x8"), "unroll_loops");
  std::string text = ir::print_function(flatten_buffers(before));
  EXPECT_NE(text.find("out loss: f32[1]"), std::string::npos) << text;
  EXPECT_TRUE(has_exact_line(text, "alloc squared_error_sum: f32[1] {")) << text;
  EXPECT_TRUE(has_exact_line(text, "squared_error_sum[0] = 0f32")) << text;
  EXPECT_TRUE(has_exact_line(text, "loss[0] = squared_error_sum[0] / 32f32")) << text;
}

// ---- serialize_thread_loops, simplify_func ---------------------------------------------

TEST(SerializeThreadLoops, ThreadBoundLoopsRunSeriallyOnTheCpu) {
  Schedule sch(workload("relu:shape=8x16"));
  std::vector<LoopRV> l = sch.get_loops(sch.get_child_blocks(sch.get_block("root"))[0]);
  sch.bind(l[0], "blockIdx.x");
  sch.bind(l[1], "threadIdx.x");
  ir::PrimFunc serial = serialize_thread_loops(lower_blocks(sch.func()));
  for (const auto& [name, loop] : facts(serial).loops) {
    EXPECT_EQ(loop->for_kind, ir::ForKind::kSerial) << name;
    EXPECT_TRUE(loop->thread_tag.empty()) << name;
  }
  EXPECT_TRUE(serialize_thread_loops(serial).same_as(serial));
  EXPECT_TRUE(computes_the_same(sch.func(), serial));
}

TEST(SimplifyFunc, DropsStatementsThatDoNothingAndKeepsTheRest) {
  ir::PrimFunc relu = lower_blocks(workload("relu:shape=4x4"));
  const ir::Buffer y = relu->params[1].buffer;
  ir::Var i("i"), j("j");
  ir::Stmt store = ir::BufferStoreNode::make(y, ir::make_zero(ir::DataType::f32()), {i, j});
  ir::Stmt dead_loop = ir::ForNode::make(ir::Var("d"), 0, 0, ir::ForKind::kSerial, store);
  ir::Stmt dead_if = ir::IfThenElseNode::make(ir::make_bool(false), store);
  ir::Stmt live_if = ir::IfThenElseNode::make(i < 8, store);  // always true for i < 4
  ir::Stmt body = ir::ForNode::make(
      i, 0, 4, ir::ForKind::kSerial,
      ir::ForNode::make(j, 0, 4, ir::ForKind::kSerial, ir::SeqStmtNode::make({dead_loop, dead_if, live_if})));
  ir::PrimFunc func = relu.with_body(ir::SeqStmtNode::make({relu->body, body}));
  ir::PrimFunc simplified = simplify_func(func);
  std::string text = ir::print_function(simplified);
  EXPECT_EQ(text.find("for d in"), std::string::npos) << text;
  EXPECT_EQ(text.find("if ("), std::string::npos) << text;
  EXPECT_TRUE(computes_the_same(func, simplified));
  EXPECT_TRUE(simplify_func(simplified).same_as(simplified));
}

}  // namespace
}  // namespace dragon::lower
