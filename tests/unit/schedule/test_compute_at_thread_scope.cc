// compute_at of GPU caches in the MetaSchedule GEMM shape: a shared copy computed at the
// outer reduction loop inside the thread-bound loops covers the whole tile of the thread
// block (relaxed over threadIdx and vthread), a warp copy the tile of threadIdx.x, a local
// or global one only the iteration's own tile; reverse_compute_at never relaxes.
// Semantics checked on the interpreter, replay and JSON round trip.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

// matmul 64x64x64 tiled as MetaSchedule's SSSRRSRS sketch (gemm_sketch.h decisions):
// i = 2*1*8*2*2, j = 4*2*4*1*2, k = 8*2*4; blockIdx.x = (i0, j0) fused (8), vthread.x =
// (i1, j1) (2), threadIdx.x = (i2, j2) (32). A thread block computes a 32x16 tile of C;
// one iteration of the vthread and threadIdx loops a 4x2 tile; one k0 iteration reads
// 8 of k.
struct TiledGemm {
  Schedule sch;
  BlockRV c;
  LoopRV bx, vx, tx, k0;
};

TiledGemm tiled_gemm() {
  TiledGemm g{Schedule(workload("matmul:m=64,n=64,k=64")), {}, {}, {}, {}, {}};
  Schedule& sch = g.sch;
  g.c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(g.c);
  auto tile = [&](LoopRV loop, std::vector<int64_t> factors) {
    std::vector<SplitFactor> f(factors.begin(), factors.end());
    return sch.split(loop, f);
  };
  std::vector<LoopRV> i = tile(loops[0], {2, 1, 8, 2, 2});
  std::vector<LoopRV> j = tile(loops[1], {4, 2, 4, 1, 2});
  std::vector<LoopRV> k = tile(loops[2], {8, 2, 4});
  sch.reorder({i[0], j[0], i[1], j[1], i[2], j[2], k[0], k[1], i[3], j[3], k[2], i[4], j[4]});
  g.bx = sch.fuse({i[0], j[0]});
  sch.bind(g.bx, "blockIdx.x");
  g.vx = sch.fuse({i[1], j[1]});
  sch.bind(g.vx, "vthread.x");
  g.tx = sch.fuse({i[2], j[2]});
  sch.bind(g.tx, "threadIdx.x");
  g.k0 = k[0];
  return g;
}

// The extents of the loops above `block`, outermost first.
std::vector<int64_t> extents(Schedule& sch, BlockRV block) {
  std::vector<int64_t> result;
  for (LoopRV l : sch.get_loops(block)) result.push_back(ir::as_const_int(sch.get(l)->extent).value_or(-1));
  return result;
}

TEST(ComputeAtThreadScope, SharedCopyCoversTheThreadBlockTile) {
  TiledGemm g = tiled_gemm();
  BlockRV a = g.sch.cache_read(g.c, 0, "shared", {g.c});
  g.sch.compute_at(a, g.k0, true, -1);
  BlockRV b = g.sch.cache_read(g.c, 1, "shared", {g.c});
  g.sch.compute_at(b, g.k0, true, -1);
  // A: the block's 32 rows by 8 of k; B: 8 of k by the block's 16 columns (one thread's
  // own tile would be 4 x 8 and 8 x 2).
  EXPECT_EQ(extents(g.sch, a), (std::vector<int64_t>{8, 2, 32, 8, 32, 8}));
  EXPECT_EQ(extents(g.sch, b), (std::vector<int64_t>{8, 2, 32, 8, 8, 16}));
  const std::string text = ir::print_function(g.sch.func());
  // The copy's rows start at the thread block's tile, whatever the thread: no threadIdx
  // or vthread variable in its bindings, and no guard (the tile divides the matrix).
  EXPECT_TRUE(has_line(text, "block A_shared [v0: S 64 = i0_0_i1_0_fused // 4 * 32 + ax0, v1: S 64 = r0_0 * 8 + ax1]"))
      << text;
  EXPECT_TRUE(has_line(text, "block B_shared [v0: S 64 = r0_0 * 8 + ax0_1, v1: S 64 = i0_0_i1_0_fused % 4 * 16 + ax1_1]"))
      << text;
  EXPECT_FALSE(has_line(text, "if (")) << text;
  EXPECT_TRUE(same_outputs(g.sch.original(), g.sch.func(), 3, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(g.sch));

  // Cooperative fetch as MetaSchedule's postprocessor does it: the copy's loops fused,
  // split by the thread count and bound to threadIdx.x; still the unscheduled result.
  for (BlockRV cache : {a, b}) {
    std::vector<LoopRV> cl = g.sch.get_loops(cache);
    LoopRV fused = g.sch.fuse({cl[4], cl[5]});
    std::vector<LoopRV> parts = g.sch.split(fused, {None{}, int64_t{32}, int64_t{2}});
    g.sch.bind(parts[1], "threadIdx.x");
    g.sch.vectorize(parts[2]);
  }
  EXPECT_TRUE(same_outputs(g.sch.original(), g.sch.func(), 5, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(g.sch));
}

TEST(ComputeAtThreadScope, LocalAndGlobalCopiesCoverOneIterationsTile) {
  for (const char* scope : {"local", "global"}) {
    SCOPED_TRACE(scope);
    TiledGemm g = tiled_gemm();
    BlockRV a = g.sch.cache_read(g.c, 0, scope, {g.c});
    g.sch.compute_at(a, g.k0, true, -1);
    BlockRV b = g.sch.cache_read(g.c, 1, scope, {g.c});
    g.sch.compute_at(b, g.k0, true, -1);
    EXPECT_EQ(extents(g.sch, a), (std::vector<int64_t>{8, 2, 32, 8, 4, 8}));
    EXPECT_EQ(extents(g.sch, b), (std::vector<int64_t>{8, 2, 32, 8, 8, 2}));
    EXPECT_TRUE(same_outputs(g.sch.original(), g.sch.func(), 3, /*exact=*/false));
    EXPECT_TRUE(replays_exactly(g.sch));
  }
}

TEST(ComputeAtThreadScope, WarpCopyIsRelaxedOverThreadIdxXOnly) {
  TiledGemm g = tiled_gemm();
  BlockRV b = g.sch.cache_read(g.c, 1, "warp", {g.c});
  g.sch.compute_at(b, g.k0, true, -1);
  // The 8 columns of all threadIdx.x values for one vthread (shared: 16).
  EXPECT_EQ(extents(g.sch, b), (std::vector<int64_t>{8, 2, 32, 8, 8, 8}));
  EXPECT_TRUE(same_outputs(g.sch.original(), g.sch.func(), 3, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(g.sch));
}

TEST(ComputeAtThreadScope, SharedCopyAtTheThreadLoopItself) {
  // At the threadIdx loop the loop itself is relaxed too: still the block's tile, all of k.
  TiledGemm g = tiled_gemm();
  BlockRV a = g.sch.cache_read(g.c, 0, "shared", {g.c});
  g.sch.compute_at(a, g.tx, true, -1);
  EXPECT_EQ(extents(g.sch, a), (std::vector<int64_t>{8, 2, 32, 32, 64}));
  EXPECT_TRUE(same_outputs(g.sch.original(), g.sch.func(), 3, /*exact=*/false));
}

TEST(ReverseComputeAtThreadScope, SharedWriteBackCoversOnlyItsThreadsTile) {
  // TVM relaxes storage scopes for compute_at only: a write-back of a shared
  // accumulator moved under threadIdx copies what its own thread produced, since the
  // other threads' part is not computed yet when it runs.
  TiledGemm g = tiled_gemm();
  BlockRV back = g.sch.cache_write(g.c, 0, "shared");
  g.sch.reverse_compute_at(back, g.tx, true, -1);
  EXPECT_EQ(extents(g.sch, back), (std::vector<int64_t>{8, 2, 32, 4, 2}));
  EXPECT_TRUE(same_outputs(g.sch.original(), g.sch.func(), 3, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(g.sch));
}

}  // namespace
}  // namespace dragon::schedule
