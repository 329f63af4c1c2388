// share_shared_memory on hand-written kernels: shared buffers used by disjoint ranges of
// the kernel's top-level statements become one buffer of the largest size, and
// insert_thread_syncs then puts a barrier between the last read of the first and the first
// write of the second; the merged kernel computes the same outputs with threads
// interleaved only at barriers (and without that barrier it does not); buffers whose
// lifetimes overlap, of different types or scopes, read by wgmma, or written by async
// copies after another buffer keep their own memory; through lower(), a pipelined GEMM's
// output tile takes an operand tile's memory.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "async_copy_model.h"
#include "barrier_simulator.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/passes.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"
#include "gpu_test_util.h"
#include "pipelined_gemm.h"
#include "unit/lower/lower_test_util.h"

namespace dragon::lower {
namespace {

// A kernel of 32 threads over one block with the given allocations around the body.
ir::PrimFunc kernel(const std::vector<std::string>& allocs, const std::string& body) {
  std::string open, close;
  for (const std::string& a : allocs) {
    open += "      alloc " + a + " {\n";
    close += "      }\n";
  }
  return ir::parse_function(R"(func k(in A: f32[128], out B: f32[128]) {
  for blockIdx_x in 1 bind blockIdx.x {
    for threadIdx_x in 32 bind threadIdx.x {
)" + open + body + "\n" + close +
                            R"(    }
  }
}
)");
}

struct SharedAllocation {
  std::string name;
  int64_t elements;
  std::string scope;
};

std::vector<SharedAllocation> shared_allocations(const ir::PrimFunc& f) {
  struct Finder : ir::StmtVisitor {
    std::vector<SharedAllocation> found;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::AllocateNode* op) override {
      if (op->buffer->scope == "shared" || op->buffer->scope == "shared.dyn") {
        found.push_back({op->buffer->name, op->buffer->num_elements(), op->buffer->scope});
      }
      ir::StmtVisitor::visit_(op);
    }
  } finder;
  finder.visit(f->body);
  return finder.found;
}

// Replaces the `n`-th (from 0, program order) evaluation of `op` with a no-op.
ir::PrimFunc drop_nth(const ir::PrimFunc& f, ir::Intrinsic op, int n) {
  struct Dropper : ir::StmtExprMutator {
    ir::Intrinsic op;
    int left;
    using ir::StmtExprMutator::visit_;
    ir::Stmt visit_(const ir::EvaluateNode* e) override {
      const auto* call = e->value.as<ir::CallNode>();
      if (call != nullptr && call->op == op && left-- == 0) {
        return ir::EvaluateNode::make(ir::make_zero(ir::DataType::i32()));
      }
      return ir::StmtExprMutator::visit_(e);
    }
  } dropper;
  dropper.op = op;
  dropper.left = n;
  return f.with_body(dropper.visit(f->body));
}

// The hand-written kernels' meaning: a barrier between any two top-level statements, so
// every thread finishes one before any thread starts the next (run sequentially, a kernel
// form reads elements other threads have not written yet). Independent of the passes.
ir::PrimFunc barrier_after_every_statement(const ir::PrimFunc& f) {
  struct Interleaver : ir::StmtMutator {
    bool done = false;
    using ir::StmtMutator::visit_;
    ir::Stmt visit_(const ir::SeqStmtNode* op) override {
      if (done) return ir::Stmt(op);
      done = true;
      std::vector<ir::Stmt> out;
      for (const ir::Stmt& s : op->seq) {
        if (!out.empty()) out.push_back(ir::EvaluateNode::make(ir::CallNode::make(ir::Intrinsic::SyncThreads, {})));
        out.push_back(s);
      }
      return ir::SeqStmtNode::make(std::move(out));
    }
  } interleaver;
  return f.with_body(interleaver.visit(f->body));
}

// What lowering runs from here: share, then place barriers.
ir::PrimFunc shared_and_synced(const ir::PrimFunc& f) { return insert_thread_syncs(share_shared_memory(f)); }

// A kernel as the GPU runs it: async copies land at the waits that retire them, threads
// interleave only at barriers.
ir::PrimFunc on_gpu(const ir::PrimFunc& f) {
  return testing::serialize_between_barriers(testing::delay_async_copies(f));
}

// Whether kernel `g` computes what kernel `f` means.
::testing::AssertionResult computes_what_it_means(const ir::PrimFunc& f, const ir::PrimFunc& g) {
  return testing::close_outputs(on_gpu(barrier_after_every_statement(f)), on_gpu(g));
}

// S (32 floats) is filled and read back by each thread alone (no barrier); T (64 floats)
// is filled only after S's last read, each thread writing the element another thread's S
// read used, and read back across threads.
const std::vector<std::string> kDisjointAllocs = {"S: f32[32] shared", "T: f32[64] shared"};
const char* kDisjointBody = R"(
        S[threadIdx_x] = A[threadIdx_x]
        B[threadIdx_x] = S[threadIdx_x] * 2f32
        T[31 - threadIdx_x] = A[threadIdx_x + 32] * 3f32
        T[threadIdx_x + 32] = A[threadIdx_x + 64]
        B[threadIdx_x + 32] = T[threadIdx_x] + T[63 - threadIdx_x])";

TEST(ShareSharedMemory, DisjointLifetimesShareTheLargerBuffer) {
  ir::PrimFunc f = kernel(kDisjointAllocs, kDisjointBody);
  ir::PrimFunc g = share_shared_memory(f);
  std::vector<SharedAllocation> allocs = shared_allocations(g);
  ASSERT_EQ(allocs.size(), 1u) << ir::print_function(g);
  EXPECT_EQ(allocs[0].name, "S_then_T");
  EXPECT_EQ(allocs[0].elements, 64);
  EXPECT_EQ(allocs[0].scope, "shared");
  // verify_gpu_code's count: 256 bytes, where the two buffers took 384.
  Target tight = Target::cuda_h200();
  tight.max_shared_memory_per_block = 256;
  EXPECT_THROW(verify_gpu_code(f, tight), UserError);
  EXPECT_NO_THROW(verify_gpu_code(g, tight));
  const std::string text = ir::print_function(g);
  // Every access names the merged buffer (indices unchanged: both start at its element 0).
  EXPECT_FALSE(std::regex_search(text, std::regex(R"((^|[^\w])[ST]\[)"))) << text;
  EXPECT_TRUE(testing::has_exact_line(text, "S_then_T[31 - threadIdx_x] = A[threadIdx_x + 32] * 3f32")) << text;
  EXPECT_TRUE(testing::has_exact_line(text, "B[threadIdx_x] = S_then_T[threadIdx_x] * 2f32")) << text;
  EXPECT_EQ(ir::print_function(ir::parse_function(text)), text);
}

TEST(ShareSharedMemory, ABarrierSeparatesTheLastReadFromTheNextWrite) {
  ir::PrimFunc f = kernel(kDisjointAllocs, kDisjointBody);
  // Apart, S needs no barrier (each thread reads its own element) and T one.
  EXPECT_EQ(testing::count_syncs(insert_thread_syncs(f)->body), 1);
  ir::PrimFunc g = shared_and_synced(f);
  EXPECT_EQ(testing::count_syncs(g->body), 2) << ir::print_function(g);
  const std::string text = ir::print_function(g);
  const size_t last_read = text.find("B[threadIdx_x] = S_then_T[threadIdx_x] * 2f32");
  const size_t barrier = text.find("eval sync_threads()");
  const size_t first_write = text.find("S_then_T[31 - threadIdx_x] = A");
  ASSERT_NE(last_read, std::string::npos) << text;
  EXPECT_LT(last_read, barrier) << text;
  EXPECT_LT(barrier, first_write) << text;
}

TEST(ShareSharedMemory, ComputesTheSameWithThreadsInterleavedAtBarriers) {
  ir::PrimFunc f = kernel(kDisjointAllocs, kDisjointBody);
  ir::PrimFunc g = shared_and_synced(f);
  EXPECT_TRUE(computes_what_it_means(f, insert_thread_syncs(f)));  // the model's baseline
  EXPECT_TRUE(computes_what_it_means(f, g));
  // Without the barrier before T's first write, thread 31's S overwrites what thread 0
  // stored into T: the model shows it.
  ir::PrimFunc missing = drop_nth(g, ir::Intrinsic::SyncThreads, 0);
  EXPECT_EQ(testing::count_syncs(missing->body), 1);
  EXPECT_FALSE(computes_what_it_means(f, missing));
}

TEST(ShareSharedMemory, BuffersTakeTurnsInOrderOfUse) {
  // P and R are alive together; Q lives between P and R and fits into P's memory.
  ir::PrimFunc f = kernel({"P: f32[64] shared", "Q: f32[32] shared", "R: f32[64] shared"}, R"(
        P[threadIdx_x] = A[threadIdx_x]
        B[threadIdx_x] = P[31 - threadIdx_x]
        Q[threadIdx_x] = A[threadIdx_x + 32]
        B[threadIdx_x + 32] = Q[31 - threadIdx_x]
        R[threadIdx_x] = A[threadIdx_x + 64]
        B[threadIdx_x + 64] = R[31 - threadIdx_x]
        B[threadIdx_x + 96] = Q[threadIdx_x] + R[threadIdx_x])");
  ir::PrimFunc g = share_shared_memory(f);
  std::vector<SharedAllocation> allocs = shared_allocations(g);
  ASSERT_EQ(allocs.size(), 2u) << ir::print_function(g);
  EXPECT_EQ(allocs[0].name, "P_then_Q");
  EXPECT_EQ(allocs[0].elements, 64);
  EXPECT_EQ(allocs[1].name, "R");
  EXPECT_TRUE(computes_what_it_means(f, insert_thread_syncs(g)));
}

TEST(ShareSharedMemory, OverlappingLifetimesKeepTheirOwnMemory) {
  ir::PrimFunc f = kernel(kDisjointAllocs, R"(
        S[threadIdx_x] = A[threadIdx_x]
        T[threadIdx_x] = A[threadIdx_x + 32]
        B[threadIdx_x] = S[31 - threadIdx_x] + T[31 - threadIdx_x])");
  EXPECT_TRUE(share_shared_memory(f).same_as(f)) << ir::print_function(share_shared_memory(f));
  // Lifetimes that meet in one statement overlap too.
  ir::PrimFunc g = kernel(kDisjointAllocs, R"(
        S[threadIdx_x] = A[threadIdx_x]
        T[threadIdx_x] = S[31 - threadIdx_x]
        B[threadIdx_x] = T[31 - threadIdx_x])");
  EXPECT_TRUE(share_shared_memory(g).same_as(g)) << ir::print_function(share_shared_memory(g));
}

TEST(ShareSharedMemory, DifferentTypesOrScopesKeepTheirOwnMemory) {
  struct Case {
    const char* t;       // T's allocation; S is f32[32] shared
    const char* to_t;    // what T stores
    const char* from_t;  // what B stores of T
  };
  const Case cases[] = {
      {"T: i32[32] shared", "i32(A[threadIdx_x + 32])", "f32(T[31 - threadIdx_x])"},
      {"T: f16[32] shared", "f16(A[threadIdx_x + 32])", "f32(T[31 - threadIdx_x])"},
      {"T: f32[32] shared.dyn", "A[threadIdx_x + 32]", "T[31 - threadIdx_x]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.t);
    ir::PrimFunc f = kernel({"S: f32[32] shared", c.t}, std::string(R"(
        S[threadIdx_x] = A[threadIdx_x]
        B[threadIdx_x] = S[31 - threadIdx_x]
        T[threadIdx_x] = )") + c.to_t + R"(
        B[threadIdx_x + 32] = )" + c.from_t);
    EXPECT_TRUE(share_shared_memory(f).same_as(f)) << ir::print_function(share_shared_memory(f));
  }
}

TEST(ShareSharedMemory, OneSharedBufferOrOneStatementIsLeftAlone) {
  ir::PrimFunc one_buffer = kernel({"S: f32[32] shared", "L: f32[4] local"}, R"(
        S[threadIdx_x] = A[threadIdx_x]
        L[0] = S[31 - threadIdx_x]
        B[threadIdx_x] = L[0])");
  EXPECT_TRUE(share_shared_memory(one_buffer).same_as(one_buffer));
  // Inside one loop the buffers take turns every iteration: not a top-level sequence.
  ir::PrimFunc one_statement = kernel(kDisjointAllocs, R"(
        for i in 2 {
          S[threadIdx_x] = A[i * 32 + threadIdx_x]
          B[i * 32 + threadIdx_x] = S[31 - threadIdx_x]
          T[threadIdx_x] = A[i * 32 + threadIdx_x + 64]
          B[i * 32 + threadIdx_x + 64] = T[31 - threadIdx_x]
        })");
  EXPECT_TRUE(share_shared_memory(one_statement).same_as(one_statement));
}

TEST(ShareSharedMemory, BuffersWgmmaReadsKeepTheirOwnMemory) {
  // The emitter lays wgmma operands out with a 128-byte swizzle from a 1024-byte aligned
  // start; T's plain accesses would not follow it. (Only the annotation matters here.)
  ir::PrimFunc f = kernel(kDisjointAllocs, R"(
        S[threadIdx_x] = A[threadIdx_x]
        for u in 1 unrolled @{tensor_intrin = "wgmma_m64n8k16_f32_f16"} {
          B[threadIdx_x] = S[31 - threadIdx_x]
        }
        T[threadIdx_x] = A[threadIdx_x + 32]
        B[threadIdx_x + 32] = T[31 - threadIdx_x])");
  EXPECT_TRUE(share_shared_memory(f).same_as(f)) << ir::print_function(share_shared_memory(f));
  // Any other tensor_intrin block's buffers are plain loads and stores: shared.
  ir::PrimFunc g = kernel(kDisjointAllocs, R"(
        S[threadIdx_x] = A[threadIdx_x]
        for u in 1 unrolled @{tensor_intrin = "mma_load_a_m16k8_f32"} {
          B[threadIdx_x] = S[31 - threadIdx_x]
        }
        T[threadIdx_x] = A[threadIdx_x + 32]
        B[threadIdx_x + 32] = T[31 - threadIdx_x])");
  EXPECT_EQ(shared_allocations(share_shared_memory(g)).size(), 1u);
}

TEST(ShareSharedMemory, AsyncCopyTargetsOnlyOpenASlot) {
  // T's async copies would not count as writes for insert_thread_syncs: no barrier would
  // keep them from overwriting S while other threads still read it.
  ir::PrimFunc f = kernel(kDisjointAllocs, R"(
        S[threadIdx_x] = A[threadIdx_x]
        B[threadIdx_x] = S[31 - threadIdx_x]
        for c in 1 @{async_copy = 1} {
          T[threadIdx_x] = A[threadIdx_x + 32]
        }
        eval async_commit_group()
        eval async_wait_group(0)
        eval sync_threads()
        B[threadIdx_x + 32] = T[31 - threadIdx_x])");
  EXPECT_TRUE(share_shared_memory(f).same_as(f)) << ir::print_function(share_shared_memory(f));
}

// S is filled by two groups of async copies; only the first is waited for and read
// before T, which takes S's memory, is written. The second group, never read, is still
// in flight and lands at the later wait_group(0) unless the pass drained it first.
const char* kAsyncBody = R"(
        for c in 1 @{async_copy = 1} {
          S[threadIdx_x] = A[threadIdx_x]
        }
        eval async_commit_group()
        for c in 1 @{async_copy = 1} {
          S[threadIdx_x + 32] = A[threadIdx_x + 32]
        }
        eval async_commit_group()
        eval async_wait_group(1)
        eval sync_threads()
        B[threadIdx_x] = S[31 - threadIdx_x]
        T[threadIdx_x + 32] = A[threadIdx_x + 64] * 3f32
        eval async_wait_group(0)
        eval sync_threads()
        B[threadIdx_x + 32] = T[63 - threadIdx_x])";

TEST(ShareSharedMemory, AfterAsyncCopiesTheNextBufferWaitsForThemToLand) {
  ir::PrimFunc f = kernel({"S: f32[64] shared", "T: f32[64] shared"}, kAsyncBody);
  ir::PrimFunc g = shared_and_synced(f);
  ASSERT_EQ(shared_allocations(g).size(), 1u) << ir::print_function(g);
  const std::string text = ir::print_function(g);
  const size_t last_read = text.find("B[threadIdx_x] = S_then_T[31 - threadIdx_x]");
  const size_t drain = text.find("eval async_wait_group(0)");
  const size_t barrier = text.find("eval sync_threads()", drain);
  const size_t first_write = text.find("S_then_T[threadIdx_x + 32] = A[threadIdx_x + 64]");
  ASSERT_NE(last_read, std::string::npos) << text;
  EXPECT_LT(last_read, drain) << text;
  EXPECT_LT(drain, barrier) << text;
  EXPECT_LT(barrier, first_write) << text;
  EXPECT_EQ(testing::count_syncs(g->body), 3) << text;  // the kernel's two and the drain's
  EXPECT_TRUE(computes_what_it_means(f, g));
  // Without the drain the unread copies land on T's data at the kernel's own wait.
  EXPECT_FALSE(computes_what_it_means(f, drop_nth(g, ir::Intrinsic::AsyncWaitGroup, 1)));
}

// The pipelined SIMT GEMM of the pipelining tests with its output staged through shared
// memory, as the tensor-core rules stage theirs: the A and B tiles (cp.async, two slots)
// live in the k loop, C_shared after it, so through lower() C_shared takes a tile's memory
// and the kernel still computes the GEMM.
TEST(ShareSharedMemory, AScheduledGemmsOutputTileTakesAnOperandTilesMemory) {
  const char* spec = "matmul:m=40,n=24,k=36";
  schedule::Schedule sch = testing::pipelined_simt_gemm(spec, {});
  schedule::BlockRV copy_out = sch.cache_write(sch.get_block("C_local"), 0, "shared");
  sch.reverse_compute_at(copy_out, sch.get_loops(sch.get_block("C")).front(), true, -1);
  std::vector<schedule::LoopRV> loops = sch.get_loops(copy_out);
  schedule::LoopRV fused = sch.fuse({loops[loops.size() - 2], loops[loops.size() - 1]});
  sch.bind(sch.split(fused, {schedule::None{}, int64_t{32}})[1], "threadIdx.x");

  std::vector<SharedAllocation> apart;
  LowerOptions options;
  options.after_pass = [&](const std::string& pass, const ir::PrimFunc& after, bool) {
    if (pass == "plan_gpu_allocations") apart = shared_allocations(after);
  };
  const ir::PrimFunc kernel = lower(sch.func(), Target::cuda_h200(), options).func;
  ASSERT_EQ(apart.size(), 3u);  // A_shared, B_shared, C_shared
  std::vector<SharedAllocation> together = shared_allocations(kernel);
  ASSERT_EQ(together.size(), 2u) << ir::print_function(kernel);
  int64_t merged = 0;
  for (const SharedAllocation& a : together) {
    if (a.name.find("_then_C_shared") != std::string::npos) ++merged;
  }
  EXPECT_EQ(merged, 1) << ir::print_function(kernel);
  const std::string text = ir::print_function(kernel);
  // The async copies drained and fenced off before C_shared's first write.
  EXPECT_TRUE(testing::has_exact_line(text, "eval async_wait_group(0)")) << text;
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  EXPECT_TRUE(testing::close_outputs(func, on_gpu(kernel)));
}

}  // namespace
}  // namespace dragon::lower
