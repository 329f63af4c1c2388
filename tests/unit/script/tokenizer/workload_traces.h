// Realistic traces for the tokenizer and constrained-decoding tests and benchmark:
// MetaSchedule-style CUDA sketches with sampled decisions for GEMM, conv2d and softmax
// (multi-level tiling with caches, inlining and cross-thread reductions). Header-only so
// bench/ can share it. Not a search space: one sketch per workload family.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"

namespace dragon::script::testing {

using namespace dragon::schedule;  // NOLINT(google-build-using-namespace): test helper

// Multi-level tiling SSSRRSRS of the block named `name` (spatial loops first, then
// reduce loops, as the operator library builds them), bound to blockIdx/vthread/
// threadIdx, with a local write cache, shared read caches fetched cooperatively and an
// unroll annotation; every tile and categorical decision is sampled from the schedule's
// random engine.
inline void tile_for_gpu(Schedule& sch, const std::string& name) {
  BlockRV block = sch.get_block(name);
  BlockRV root = sch.get_block("root");
  sch.annotate(block, "meta_schedule.tiling_structure", std::string("SSSRRSRS"));
  std::vector<LoopRV> loops = sch.get_loops(block);
  const ir::BlockNode* node = sch.get(block);
  std::vector<std::vector<LoopRV>> spatial, reduce;
  for (size_t i = 0; i < loops.size(); ++i) {
    const bool is_reduce = node->iter_vars[i].kind == ir::IterKind::kReduce;
    std::vector<ExprRV> f = sch.sample_perfect_tile(loops[i], is_reduce ? 3 : 5, 64);
    std::vector<LoopRV> parts = sch.split(loops[i], std::vector<SplitFactor>(f.begin(), f.end()));
    (is_reduce ? reduce : spatial).push_back(parts);
  }
  // Levels S S S R R S R S: spatial levels 0,1,2, reduce 0, reduce 1, spatial 3, reduce 2, spatial 4.
  std::vector<LoopRV> order;
  auto level = [&](std::vector<std::vector<LoopRV>>& group, size_t k) {
    for (auto& parts : group) order.push_back(parts[k]);
  };
  level(spatial, 0), level(spatial, 1), level(spatial, 2), level(reduce, 0), level(reduce, 1);
  level(spatial, 3), level(reduce, 2), level(spatial, 4);
  sch.reorder(order);
  auto fuse_level = [&](size_t k) {
    std::vector<LoopRV> l;
    for (auto& parts : spatial) l.push_back(parts[k]);
    return l.size() == 1 ? l[0] : sch.fuse(l);
  };
  sch.bind(fuse_level(0), "blockIdx.x");
  sch.bind(fuse_level(1), "vthread.x");
  LoopRV tx = fuse_level(2);
  sch.bind(tx, "threadIdx.x");
  sch.annotate(block, "meta_schedule.thread_extent_low_inclusive", int64_t{32});
  sch.annotate(block, "meta_schedule.thread_extent_high_inclusive", int64_t{1024});
  BlockRV local = sch.cache_write(block, 0, "local");
  sch.reverse_compute_at(local, tx, true, -1);
  const size_t num_reads = sch.get(block)->reads.size();
  for (size_t index = 0; index < num_reads; ++index) {
    BlockRV shared = sch.cache_read(block, static_cast<int64_t>(index), "shared", {block});
    sch.compute_at(shared, reduce[0][0], true, -1);
    std::vector<LoopRV> cl = sch.get_loops(shared);
    sch.fuse({cl[cl.size() - 2], cl[cl.size() - 1]});
    ExprRV v = sch.sample_categorical({1, 2, 3, 4}, {0.25, 0.25, 0.25, 0.25});
    sch.annotate(shared, "meta_schedule.cooperative_fetch", v);
  }
  ExprRV unroll = sch.sample_categorical({0, 16, 64, 512, 1024}, {0.2, 0.2, 0.2, 0.2, 0.2});
  sch.annotate(root, "meta_schedule.unroll_explicit", unroll);
}

// Softmax: x_exp inlined, the output block's rows on blockIdx.x and columns split onto
// threadIdx.x, each row reduction moved under the row loop and split onto threadIdx.x
// too (a cross-thread reduction), unroll sampled.
inline void softmax_for_gpu(Schedule& sch) {
  sch.compute_inline(sch.get_block("x_exp"));
  BlockRV out = sch.get_block("softmax");
  std::vector<LoopRV> loops = sch.get_loops(out);
  sch.bind(loops[0], "blockIdx.x");
  std::vector<ExprRV> f = sch.sample_perfect_tile(loops[1], 2, 1024);
  std::vector<LoopRV> cols = sch.split(loops[1], {f[0], f[1]});
  sch.bind(cols[1], "threadIdx.x");
  for (const char* name : {"exp_sum", "x_max"}) {
    BlockRV red = sch.get_block(name);
    sch.compute_at(red, loops[0], true, -1);
    std::vector<LoopRV> rl = sch.get_loops(red);
    ExprRV t = sch.sample_categorical({32, 64, 128, 256}, {0.25, 0.25, 0.25, 0.25});
    std::vector<LoopRV> parts = sch.split(rl.back(), {None{}, t});
    sch.bind(parts[1], "threadIdx.x");
  }
  ExprRV unroll = sch.sample_categorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25});
  sch.annotate(sch.get_block("root"), "meta_schedule.unroll_explicit", unroll);
}

// A complete trace (ending with EnterPostproc) for `spec`: matmul and conv2d get the
// tiling sketch on their reduction block, softmax its own sketch. Retries seeds whose
// sampled decisions a later step rejects, so every returned trace replays.
inline Trace workload_trace(const std::string& spec, int64_t seed) {
  const ops::Workload w = ops::OpRegistry::global().make_workload(spec);
  for (int64_t attempt = 0;; ++attempt) {
    Schedule sch(w.func, seed * 7919 + attempt);
    try {
      if (w.op->name == "softmax") {
        softmax_for_gpu(sch);
      } else {
        // The reduction block: C or Y, or C_acc/conv when a cast, padding or bias block
        // surrounds it.
        Schedule probe = sch.copy();
        std::string name;
        for (BlockRV b : probe.get_child_blocks(probe.get_block("root"))) {
          for (const ir::IterVar& iv : probe.get(b)->iter_vars) {
            if (iv.kind == ir::IterKind::kReduce && name.empty()) name = probe.get(b)->name;
          }
        }
        tile_for_gpu(sch, name);
      }
      sch.enter_postproc();
      return sch.trace();
    } catch (const ScheduleError&) {
      if (attempt > 50) throw;
    }
  }
}

// Shapes of the three families the figures and tests use.
inline std::vector<std::string> gemm_specs() {
  return {"matmul:m=64,n=64,k=64",       "matmul:m=128,n=256,k=64",   "matmul:m=1024,n=1024,k=1024",
          "matmul:m=512,n=768,k=3072",   "matmul:m=96,n=40,k=200",    "matmul:m=2048,n=512,k=128,dtype=f16",
          "matmul:m=256,n=256,k=256,trans_b=true", "matmul:m=4096,n=4096,k=4096"};
}
inline std::vector<std::string> conv2d_specs() {
  return {"conv2d", "conv2d:batch=1,in_channels=64,out_channels=64,size=56x56,kernel=3x3,padding=1x1",
          "conv2d:batch=8,in_channels=3,out_channels=32,size=32x32,kernel=5x5,stride=2x2",
          "conv2d:batch=1,in_channels=128,out_channels=256,size=14x14,kernel=1x1",
          "conv2d:batch=2,in_channels=16,out_channels=16,size=28x28,kernel=3x3,bias=true"};
}
inline std::vector<std::string> softmax_specs() {
  return {"softmax", "softmax:shape=128x4096", "softmax:shape=32x1000", "softmax:shape=1x50257",
          "softmax:shape=512x512"};
}

}  // namespace dragon::script::testing
