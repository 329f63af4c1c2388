// The MetaSchedule-style CUDA GEMM sketch (multi-level tiling SSSRRSRS, thread binding,
// a local write cache, shared read caches with cooperative fetch, unroll annotation) with
// fixed decisions, built through the Schedule API. Shared by test_gemm_trace.cc and
// bench/trace_bench.cc so the two cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/schedule/schedule.h"

namespace dragon::schedule::testing {

// The sketch's sampled decisions: perfect tiles of i and j ([blockIdx, vthread, threadIdx,
// serial, serial]) and k ([shared stage, serial, serial]), the cooperative-fetch indexes of
// A and B into {1, 2, 3, 4} and the explicit-unroll index into {0, 16, 64, 512, 1024}. The
// defaults are the 64^3 decisions the trace tests compare with TVM's.
struct GemmSketchDecisions {
  std::vector<int64_t> i{2, 1, 8, 2, 2};
  std::vector<int64_t> j{4, 2, 4, 1, 2};
  std::vector<int64_t> k{8, 2, 4};
  int64_t fetch_a = 1, fetch_b = 3;
  int64_t unroll = 2;
};

// Applies the sketch to the matmul in `sch` (block "C"), up to but not including
// EnterPostproc; records nothing else, so the trace is exactly TVM's sketch.
inline void apply_gemm_sketch(Schedule& sch, const GemmSketchDecisions& decisions = {}) {
  BlockRV c = sch.get_block("C");
  BlockRV root = sch.get_block("root");
  sch.annotate(c, "meta_schedule.tiling_structure", std::string("SSSRRSRS"));
  std::vector<LoopRV> loops = sch.get_loops(c);
  auto tile = [&](LoopRV loop, int n, std::vector<int64_t> decision) {
    std::vector<ExprRV> f = sch.sample_perfect_tile(loop, n, 64, decision);
    return sch.split(loop, std::vector<SplitFactor>(f.begin(), f.end()));
  };
  std::vector<LoopRV> i = tile(loops[0], 5, decisions.i);
  std::vector<LoopRV> j = tile(loops[1], 5, decisions.j);
  std::vector<LoopRV> k = tile(loops[2], 3, decisions.k);
  sch.reorder({i[0], j[0], i[1], j[1], i[2], j[2], k[0], k[1], i[3], j[3], k[2], i[4], j[4]});
  LoopRV bx = sch.fuse({i[0], j[0]});
  sch.bind(bx, "blockIdx.x");
  LoopRV vx = sch.fuse({i[1], j[1]});
  sch.bind(vx, "vthread.x");
  LoopRV tx = sch.fuse({i[2], j[2]});
  sch.bind(tx, "threadIdx.x");
  sch.annotate(c, "meta_schedule.thread_extent_low_inclusive", int64_t{16});
  sch.annotate(c, "meta_schedule.thread_extent_high_inclusive", int64_t{256});
  BlockRV c_local = sch.cache_write(c, 0, "local");
  sch.reverse_compute_at(c_local, tx, true, -1);
  for (int64_t index : {0, 1}) {
    BlockRV shared = sch.cache_read(c, index, "shared", {c});
    sch.compute_at(shared, k[0], true, -1);
    std::vector<LoopRV> cl = sch.get_loops(shared);
    sch.fuse({cl[cl.size() - 2], cl[cl.size() - 1]});
    ExprRV v = sch.sample_categorical({1, 2, 3, 4}, {0.25, 0.25, 0.25, 0.25},
                                      index == 0 ? decisions.fetch_a : decisions.fetch_b);
    sch.annotate(shared, "meta_schedule.cooperative_fetch", v);
  }
  ExprRV unroll = sch.sample_categorical({0, 16, 64, 512, 1024}, {0.2, 0.2, 0.2, 0.2, 0.2}, decisions.unroll);
  sch.annotate(root, "meta_schedule.unroll_explicit", unroll);
}

}  // namespace dragon::schedule::testing
