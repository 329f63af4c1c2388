// The wgmma GEMM sketch (wgmma_gemm_sketch.h). The caches come first and the reduction is
// decomposed before tensorizing, as in tensorcore_gemm_sketch.cc; there are no fragment
// caches of A and B: wgmma reads them from shared memory through descriptors.
#include "wgmma_gemm_sketch.h"

#include <vector>

#include "dragon/lower/passes.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/auto_bind.h"
#include "dragon/schedule/tensor_intrin.h"

namespace dragon::schedule::testing {

Schedule wgmma_gemm_sketch(const std::string& spec, const WgmmaGemmTiles& tiles, bool bind_cast) {
  const bool bf16 = spec.find("dtype=bf16") != std::string::npos;
  Schedule sch(ops::OpRegistry::global().make_workload(spec).func);
  BlockRV c = sch.get_block("C_acc");
  BlockRV c_warp = sch.cache_write(c, 0, "warp");
  BlockRV a_shared = sch.cache_read(c, 0, "shared.dyn", {c});
  BlockRV b_shared = sch.cache_read(c, 1, "shared.dyn", {c});
  std::vector<LoopRV> loops = sch.get_loops(c);
  // i: [block, warpgroup, 64]; j: [block, n_tile]; k: [shared stage of 64, 4, 16].
  std::vector<LoopRV> i = sch.split(loops[0], {None{}, tiles.warpgroups, int64_t{64}});
  std::vector<LoopRV> j = sch.split(loops[1], {None{}, tiles.n_tile});
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, int64_t{4}, int64_t{16}});
  sch.reorder({i[0], j[0], i[1], k[0], k[1], i[2], j[1], k[2]});
  sch.bind(i[0], "blockIdx.y");
  sch.bind(j[0], "blockIdx.x");
  sch.bind(i[1], "threadIdx.y");
  sch.reverse_compute_at(c_warp, i[1], true, -1);
  for (BlockRV shared : {a_shared, b_shared}) {
    sch.compute_at(shared, k[0], true, -1);
    // Every thread of the block copies 8 halves (16 bytes) at a time: warpgroups along
    // threadIdx.y, their 128 lanes along threadIdx.x.
    std::vector<LoopRV> cl = sch.get_loops(shared);
    LoopRV fused = sch.fuse({cl[cl.size() - 2], cl[cl.size() - 1]});
    std::vector<LoopRV> parts = sch.split(fused, {None{}, tiles.warpgroups, int64_t{128}, int64_t{8}});
    sch.bind(parts[1], "threadIdx.y");
    sch.bind(parts[2], "threadIdx.x");
    sch.vectorize(parts[3]);
  }
  if (tiles.stages > 1) {
    // Under the k-step loop: A's copy, B's copy, the wgmma loop.
    sch.annotate(k[0], std::string(lower::kSoftwarePipelineStage), "0 0 " + std::to_string(tiles.stages - 1));
    sch.annotate(k[0], std::string(lower::kSoftwarePipelineAsyncStages), std::string("0"));
  }
  BlockRV init = sch.decompose_reduction(c, k[0]);
  sch.tensorize(i[2], wgmma_intrin_name(bf16 ? "bf16" : "f16", static_cast<int>(tiles.n_tile)));
  // The init and the store as 64 x 8 tiles: [64, n_tile] -> [n_tile / 8][64, 8].
  auto tile_64x8 = [&](BlockRV block, const std::string& intrin) {
    std::vector<LoopRV> bl = sch.get_loops(block);
    std::vector<LoopRV> cols = sch.split(bl[bl.size() - 1], {None{}, int64_t{8}});
    sch.reorder({cols[0], bl[bl.size() - 2], cols[1]});
    sch.tensorize(bl[bl.size() - 2], intrin);
  };
  tile_64x8(init, "wgmma_fill_m64n8_f32");
  tile_64x8(c_warp, "wgmma_store_m64n8_f32");
  if (bind_cast) search::auto_bind(sch);
  return sch;
}

}  // namespace dragon::schedule::testing
