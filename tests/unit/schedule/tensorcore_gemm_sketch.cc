// The tensor-core GEMM sketch (tensorcore_gemm_sketch.h), in TVM's order where our
// primitives allow it. Differences from TVM's MultiLevelTilingTensorCore + postprocessors:
// - the caches come first: our cache_write needs a leaf block and our blockize keeps the
//   init in the inner block, so the write cache and the fragment reads are made on the
//   untiled C_acc, and the reduction is decomposed before tensorizing (TVM:
//   RewriteReductionBlock);
// - the tile is 16x8x16 (one mma.m16n8k16), not TVM's 16x16x16 pair; no ReIndex or
//   TransformLayout (the op is already a canonical GEMM; fragments are indexed
//   logically, the lane layout is the emitter's, tensor_intrin.h);
// - thread bindings: blockIdx.y, blockIdx.x, threadIdx.y (one warp per threadIdx.y; the
//   32 lanes are implied by the tensorized blocks), as TVM's tile_binds.
#include "tensorcore_gemm_sketch.h"

#include <vector>

#include "dragon/ops/op_registry.h"

namespace dragon::schedule::testing {

Schedule tensorcore_gemm_sketch(const std::string& spec, int64_t row_padding) {
  return tensorcore_gemm_sketch(spec, row_padding, TensorCoreDecisions{});
}

Schedule tensorcore_gemm_sketch(const std::string& spec, int64_t row_padding, const TensorCoreDecisions& decisions) {
  const bool bf16 = spec.find("dtype=bf16") != std::string::npos;
  const char* half = bf16 ? "bf16" : "f16";
  // B stored [n, k]: its fragments load untransposed and the mma takes B^T.
  const bool trans_b = spec.find("trans_b=true") != std::string::npos;
  Schedule sch(ops::OpRegistry::global().make_workload(spec).func);
  BlockRV c = sch.get_block("C_acc");
  BlockRV root = sch.get_block("root");
  sch.annotate(c, "meta_schedule.tiling_structure", std::string("SSSRRSRS"));
  BlockRV c_warp = sch.cache_write(c, 0, "warp");
  BlockRV a_shared = sch.cache_read(c, 0, "shared.dyn", {c});
  BlockRV a_warp = sch.cache_read(c, 0, "warp", {c});
  BlockRV b_shared = sch.cache_read(c, 1, "shared.dyn", {c});
  BlockRV b_warp = sch.cache_read(c, 1, "warp", {c});
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> it = sch.split(loops[0], {None{}, int64_t{16}});
  std::vector<LoopRV> jt = sch.split(loops[1], {None{}, int64_t{8}});
  std::vector<LoopRV> kt = sch.split(loops[2], {None{}, int64_t{16}});
  auto tile = [&](LoopRV loop, int n, std::vector<int64_t> decision) {
    std::vector<ExprRV> f = sch.sample_perfect_tile(loop, n, 4, decision);
    return sch.split(loop, std::vector<SplitFactor>(f.begin(), f.end()));
  };
  std::vector<LoopRV> i = tile(it[0], 5, decisions.i);
  std::vector<LoopRV> j = tile(jt[0], 5, decisions.j);
  std::vector<LoopRV> k = tile(kt[0], 3, decisions.k);
  sch.reorder({i[0], j[0], i[1], j[1], i[2], j[2], k[0], k[1], i[3], j[3], k[2], i[4], j[4], it[1], jt[1], kt[1]});
  LoopRV by = sch.fuse({i[0], j[0]});
  sch.bind(by, "blockIdx.y");
  LoopRV bx = sch.fuse({i[1], j[1]});
  sch.bind(bx, "blockIdx.x");
  LoopRV ty = sch.fuse({i[2], j[2]});
  sch.bind(ty, "threadIdx.y");
  sch.annotate(c, "meta_schedule.thread_extent_low_inclusive", int64_t{32});
  sch.annotate(c, "meta_schedule.thread_extent_high_inclusive", int64_t{1024});
  sch.reverse_compute_at(c_warp, ty, true, -1);
  // Fragments per R1 step, shared tiles per R0 step (consumers first: compute_at needs
  // every reader of a cache under the loop).
  sch.compute_at(a_warp, k[1], true, -1);
  sch.compute_at(b_warp, k[1], true, -1);
  for (auto [shared, fetch_decision] : {std::pair{a_shared, decisions.fetch_a}, std::pair{b_shared, decisions.fetch_b}}) {
    sch.compute_at(shared, k[0], true, -1);
    // Rows padded to 32 + row_padding elements against shared-memory bank conflicts
    // (TVM's values: 32 + 8).
    sch.storage_align(shared, 0, -2, 32, row_padding);
    std::vector<LoopRV> cl = sch.get_loops(shared);
    sch.fuse({cl[cl.size() - 2], cl[cl.size() - 1]});
    ExprRV v = sch.sample_categorical({1, 2, 4, 8}, {0.25, 0.25, 0.25, 0.25}, fetch_decision);
    sch.annotate(shared, "meta_schedule.cooperative_fetch", v);
  }
  ExprRV unroll = sch.sample_categorical({0, 16, 64, 512, 1024}, {0.2, 0.2, 0.2, 0.2, 0.2}, decisions.unroll);
  sch.annotate(root, "meta_schedule.unroll_explicit", unroll);
  sch.enter_postproc();
  // RewriteReductionBlock, then RewriteTensorize: the update, its init, the fragment
  // loads and the store, each cut into intrinsic tiles first.
  BlockRV init = sch.decompose_reduction(c, k[0]);
  sch.tensorize(it[1],
                std::string("mma_m16n8k16_") + (bf16 ? "bf16bf16f32" : "f16f16f32") + (trans_b ? "_trans_b" : ""));
  std::vector<LoopRV> init_loops = sch.get_loops(init);
  sch.tensorize(init_loops[init_loops.size() - 2], "mma_fill_m16n8_f32");
  auto tile_copy = [&](BlockRV copy, int64_t rows, int64_t cols, const std::string& intrin) {
    std::vector<LoopRV> cl = sch.get_loops(copy);
    std::vector<LoopRV> r = sch.split(cl[cl.size() - 2], {None{}, rows});
    std::vector<LoopRV> q = sch.split(cl[cl.size() - 1], {None{}, cols});
    sch.reorder({r[0], q[0], r[1], q[1]});
    sch.tensorize(r[1], intrin);
  };
  tile_copy(a_warp, 16, 16, std::string("mma_ldmatrix_a_m16k16_") + half);
  if (trans_b) {
    tile_copy(b_warp, 8, 16, std::string("mma_ldmatrix_b_trans_n8k16_") + half);
  } else {
    tile_copy(b_warp, 16, 8, std::string("mma_ldmatrix_b_k16n8_") + half);
  }
  tile_copy(c_warp, 16, 8, "mma_store_m16n8_f32");
  return sch;
}

}  // namespace dragon::schedule::testing
