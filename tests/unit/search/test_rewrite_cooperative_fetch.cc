// RewriteCooperativeFetch: shared-memory copies annotated by the design space are spread
// over the kernel's threads (threadIdx.y, threadIdx.x, vector), compute what they did,
// replay from the trace and lower for the H200; copies it cannot place are left alone.
#include <gtest/gtest.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/lower.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::testing::replays_exactly;
using schedule::testing::same_outputs;
using schedule::testing::workload;

// A 64^3 GEMM: 32x32 output tiles per block (blockIdx.x), 8x8 threads (threadIdx.y/x) of
// 4x4 results, k in steps of 8 with A and B tiles cached in shared memory at the k loop.
Schedule tiled_gemm(int64_t vector) {
  Schedule sch(workload("matmul:m=64,n=64,k=64"));
  BlockRV c = sch.get_block("C");
  BlockRV a_shared = sch.cache_read(c, 0, "shared");
  BlockRV b_shared = sch.cache_read(c, 1, "shared");
  std::vector<LoopRV> l = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(l[0], {schedule::None{}, int64_t{8}, int64_t{4}});
  std::vector<LoopRV> j = sch.split(l[1], {schedule::None{}, int64_t{8}, int64_t{4}});
  std::vector<LoopRV> k = sch.split(l[2], {schedule::None{}, int64_t{8}});
  sch.reorder({i[0], j[0], i[1], j[1], k[0], k[1], i[2], j[2]});
  LoopRV bx = sch.fuse({i[0], j[0]});
  sch.bind(bx, "blockIdx.x");
  sch.bind(i[1], "threadIdx.y");
  sch.bind(j[1], "threadIdx.x");
  for (BlockRV shared : {a_shared, b_shared}) {
    sch.compute_at(shared, k[0]);
    std::vector<LoopRV> cl = sch.get_loops(shared);
    sch.fuse({cl[cl.size() - 2], cl[cl.size() - 1]});
    sch.annotate(shared, "meta_schedule.cooperative_fetch", vector);
  }
  return sch;
}

// (tag, extent) of the loops around block `name`, outermost first.
std::vector<std::pair<std::string, int64_t>> loops_of(Schedule& sch, const std::string& name) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (LoopRV l : sch.get_loops(sch.get_block(name))) {
    const ir::ForNode* f = sch.get(l);
    std::string kind = f->for_kind == ir::ForKind::kVectorized ? "vectorized" : f->thread_tag;
    out.emplace_back(kind, ir::as_const_int(f->extent).value_or(-1));
  }
  return out;
}

TEST(RewriteCooperativeFetch, SpreadsSharedCopiesOverTheBlocksThreads) {
  Schedule sch = tiled_gemm(2);
  ir::PrimFunc before = sch.func();
  EXPECT_EQ(rewrite_cooperative_fetch(sch), 2);
  // A's tile is 32 x 8 = 256 elements: [256 / (8 * 8 * 2) = 2, ty 8, tx 8, vector 2].
  std::vector<std::pair<std::string, int64_t>> a = loops_of(sch, "A_shared");
  ASSERT_GE(a.size(), 4u);
  std::vector<std::pair<std::string, int64_t>> tail(a.end() - 4, a.end());
  EXPECT_EQ(tail, (std::vector<std::pair<std::string, int64_t>>{
                      {"", 2}, {"threadIdx.y", 8}, {"threadIdx.x", 8}, {"vectorized", 2}}));
  EXPECT_EQ(sch.get(sch.get_block("A_shared"))->annotations.count("meta_schedule.cooperative_fetch"), 0u);
  EXPECT_TRUE(same_outputs(before, sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  EXPECT_NO_THROW(lower::lower(sch.func(), lower::Target::cuda_h200()));
  EXPECT_EQ(rewrite_cooperative_fetch(sch), 0);  // nothing annotated is left
}

TEST(RewriteCooperativeFetch, AVectorOfOneIsNotVectorizedAndOversizedSplitsArePredicated) {
  Schedule plain = tiled_gemm(1);
  ir::PrimFunc before = plain.func();
  EXPECT_EQ(rewrite_cooperative_fetch(plain), 2);
  EXPECT_EQ(loops_of(plain, "A_shared").back(), (std::pair<std::string, int64_t>{"threadIdx.x", 8}));
  EXPECT_TRUE(same_outputs(before, plain.func()));
  // 8 x 8 threads x 8 lanes = 512 slots for a 256-element tile: half of them idle.
  Schedule wide = tiled_gemm(8);
  EXPECT_EQ(rewrite_cooperative_fetch(wide), 2);
  std::vector<std::pair<std::string, int64_t>> a = loops_of(wide, "A_shared");
  std::vector<std::pair<std::string, int64_t>> tail(a.end() - 4, a.end());
  EXPECT_EQ(tail, (std::vector<std::pair<std::string, int64_t>>{
                      {"", 1}, {"threadIdx.y", 8}, {"threadIdx.x", 8}, {"vectorized", 8}}));
  EXPECT_TRUE(same_outputs(before, wide.func()));
  // 8 f32 lanes are 32 bytes a vector access: the GPU check refuses the candidate (as
  // MetaSchedule's VerifyGPUCode does; search then drops it).
  try {
    lower::lower(wide.func(), lower::Target::cuda_h200());
    ADD_FAILURE() << "an f32 x 8 vector was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("max_vector_bytes = 16"), std::string::npos) << e.what();
  }
}

TEST(RewriteCooperativeFetch, LeavesCopiesOutsideAnyKernelAlone) {
  Schedule sch(workload("matmul:m=16,n=16,k=16"));
  BlockRV c = sch.get_block("C");
  BlockRV a_shared = sch.cache_read(c, 0, "shared");
  std::vector<LoopRV> cl = sch.get_loops(a_shared);
  sch.fuse({cl[0], cl[1]});
  sch.annotate(a_shared, "meta_schedule.cooperative_fetch", int64_t{4});
  EXPECT_EQ(rewrite_cooperative_fetch(sch), 0);
  EXPECT_EQ(sch.get(sch.get_block("A_shared"))->annotations.count("meta_schedule.cooperative_fetch"), 1u);
}

}  // namespace
}  // namespace dragon::search
