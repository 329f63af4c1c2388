// insert_thread_syncs on hand-written kernels: a barrier exactly where one thread reads
// (or overwrites) shared data another thread wrote (or still reads), inside loops for the
// next iteration, outside thread-dependent conditions; none where a thread only touches
// its own element, local memory, or after an existing barrier.
#include <gtest/gtest.h>

#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/verify.h"
#include "dragon/lower/passes.h"
#include "gpu_test_util.h"
#include "unit/lower/lower_test_util.h"

namespace dragon::lower {
namespace {

// A kernel of 32 threads over one block, the body given.
ir::PrimFunc kernel(const std::string& body, const std::string& scope = "shared") {
  return ir::parse_function(R"(func k(in A: f32[256], out B: f32[256]) {
  for blockIdx_x in 1 bind blockIdx.x {
    for threadIdx_x in 32 bind threadIdx.x {
      alloc S: f32[64] )" + scope + R"( {
)" + body + R"(
      }
    }
  }
}
)");
}

std::string synced(const ir::PrimFunc& f) { return ir::print_function(insert_thread_syncs(f)); }

TEST(ThreadSyncs, ReadOfAnotherThreadsWriteGetsOneBarrier) {
  ir::PrimFunc f = kernel(R"(
        S[threadIdx_x] = A[threadIdx_x]
        B[threadIdx_x] = S[31 - threadIdx_x])");
  ir::PrimFunc g = insert_thread_syncs(f);
  EXPECT_EQ(testing::count_syncs(g->body), 1);
  std::string text = ir::print_function(g);
  EXPECT_LT(text.find("S[threadIdx_x] = A"), text.find("eval sync_threads()")) << text;
  EXPECT_LT(text.find("eval sync_threads()"), text.find("B[threadIdx_x] = S")) << text;
  // The interpreter runs the barrier as a no-op (threads run one after another).
  EXPECT_TRUE(testing::computes_the_same(f, g));
  // The text round-trips.
  EXPECT_EQ(ir::print_function(ir::parse_function(text)), text);
}

TEST(ThreadSyncs, TheBarrierIsOnlyAStatement) {
  // sync_threads() has no value: the verifier refuses it inside an expression (the
  // parser checks the same, so the function is built here).
  ir::Buffer a = ir::Buffer::make("A", ir::DataType::f32(), {4});
  ir::Buffer b = ir::Buffer::make("B", ir::DataType::f32(), {4});
  ir::Var i("i");
  ir::Expr barrier = ir::CallNode::make(ir::Intrinsic::SyncThreads, {});
  ir::Stmt store =
      ir::BufferStoreNode::make(b, ir::BufferLoadNode::make(a, {i}) + ir::cast(ir::DataType::f32(), barrier), {i});
  ir::PrimFunc f = ir::PrimFunc::make(
      "k", {{a, ir::ParamRole::kInput, {}}, {b, ir::ParamRole::kOutput, {}}},
      ir::ForNode::make(i, ir::make_zero(ir::DataType::i32()), ir::make_const(ir::DataType::i32(), 4),
                        ir::ForKind::kSerial, store));
  std::vector<std::string> problems = ir::find_ir_problems(f);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("sync_threads() has no value and may only be evaluated as a statement"),
            std::string::npos)
      << problems[0];
}

TEST(ThreadSyncs, NoneWhenEachThreadReadsItsOwnElement) {
  ir::PrimFunc f = kernel(R"(
        S[threadIdx_x] = A[threadIdx_x]
        B[threadIdx_x] = S[threadIdx_x] * 2f32)");
  EXPECT_TRUE(insert_thread_syncs(f).same_as(f)) << synced(f);
}

TEST(ThreadSyncs, NoneForLocalMemory) {
  ir::PrimFunc f = kernel(R"(
        S[threadIdx_x] = A[threadIdx_x]
        B[threadIdx_x] = S[31 - threadIdx_x])", "local");
  EXPECT_TRUE(insert_thread_syncs(f).same_as(f)) << synced(f);
}

TEST(ThreadSyncs, NoneBetweenWritesOnly) {
  ir::PrimFunc f = kernel(R"(
        S[threadIdx_x] = A[threadIdx_x]
        S[threadIdx_x + 32] = A[threadIdx_x + 32]
        B[threadIdx_x] = A[threadIdx_x])");
  EXPECT_TRUE(insert_thread_syncs(f).same_as(f)) << synced(f);
}

TEST(ThreadSyncs, AnExistingBarrierIsEnough) {
  ir::PrimFunc f = kernel(R"(
        S[threadIdx_x] = A[threadIdx_x]
        eval sync_threads()
        B[threadIdx_x] = S[31 - threadIdx_x])");
  EXPECT_TRUE(insert_thread_syncs(f).same_as(f)) << synced(f);
}

TEST(ThreadSyncs, LoopCarriedOverwriteGetsABarrierAtTheTopOfTheBody) {
  // The k loop of a tiled GEMM: fill the tile, read others' elements, next k overwrites.
  ir::PrimFunc f = kernel(R"(
        for k in 4 {
          S[threadIdx_x] = A[k * 32 + threadIdx_x]
          B[k * 32 + threadIdx_x] = S[31 - threadIdx_x]
        })");
  ir::PrimFunc g = insert_thread_syncs(f);
  EXPECT_EQ(testing::count_syncs(g->body), 2) << ir::print_function(g);
  EXPECT_TRUE(testing::has_exact_line(ir::print_function(g), "for k in 4 {"));
  std::string text = ir::print_function(g);
  size_t loop = text.find("for k in 4 {");
  size_t first_sync = text.find("eval sync_threads()", loop);
  EXPECT_LT(first_sync, text.find("S[threadIdx_x] = A"));  // before the overwrite
  EXPECT_LT(text.find("S[threadIdx_x] = A"), text.find("eval sync_threads()", first_sync + 1));
}

TEST(ThreadSyncs, NoLoopCarriedBarrierWhenEachThreadKeepsToItsElement) {
  ir::PrimFunc f = kernel(R"(
        for k in 4 {
          S[threadIdx_x] = A[k * 32 + threadIdx_x]
          B[k * 32 + threadIdx_x] = S[threadIdx_x]
        })");
  EXPECT_TRUE(insert_thread_syncs(f).same_as(f)) << synced(f);
}

TEST(ThreadSyncs, BarrierGoesOutsideThreadDependentConditions) {
  // Thread 0 writes, everyone reads: the barrier cannot be inside `if (threadIdx_x == 0)`.
  ir::PrimFunc f = kernel(R"(
        if (threadIdx_x == 0) {
          S[0] = A[0]
        }
        B[threadIdx_x] = S[0])");
  ir::PrimFunc g = insert_thread_syncs(f);
  EXPECT_EQ(testing::count_syncs(g->body), 1);
  std::string text = ir::print_function(g);
  size_t sync = text.find("eval sync_threads()");
  EXPECT_GT(sync, text.find("S[0] = A[0]")) << text;
  EXPECT_LT(sync, text.find("B[threadIdx_x] = S[0]")) << text;
  EXPECT_TRUE(testing::has_exact_line(text, "eval sync_threads()")) << text;
}

TEST(ThreadSyncs, BarrierGoesBeforeTheWholeLoopThatReads) {
  // Not once per iteration: before the loop.
  ir::PrimFunc f = kernel(R"(
        S[threadIdx_x] = A[threadIdx_x]
        for j in 8 {
          B[j * 32 + threadIdx_x] = S[j]
        })");
  std::string text = synced(f);
  EXPECT_LT(text.find("eval sync_threads()"), text.find("for j in 8 {")) << text;
  EXPECT_EQ(testing::count_syncs(insert_thread_syncs(f)->body), 1);
}

}  // namespace
}  // namespace dragon::lower
