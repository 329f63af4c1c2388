// The pipelined GEMM schedules of pipelined_gemm.h.
#include "pipelined_gemm.h"

#include "dragon/lower/passes.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/support/error.h"

namespace dragon::lower::testing {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::None;

void annotate_pipeline(schedule::Schedule& sch, LoopRV loop, const PipelineAnnotation& p) {
  sch.annotate(loop, std::string(kSoftwarePipelineStage), p.stages);
  if (!p.order.empty()) sch.annotate(loop, std::string(kSoftwarePipelineOrder), p.order);
  if (!p.async_stages.empty()) sch.annotate(loop, std::string(kSoftwarePipelineAsyncStages), p.async_stages);
}

schedule::Schedule pipelined_simt_gemm(const std::string& spec, const PipelineAnnotation& p, int64_t vector) {
  schedule::Schedule sch(ops::OpRegistry::global().make_workload(spec).func);
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<LoopRV> i = sch.split(loops[0], {None{}, int64_t{4}, int64_t{2}});
  std::vector<LoopRV> j = sch.split(loops[1], {None{}, int64_t{8}, int64_t{2}});
  std::vector<LoopRV> k = sch.split(loops[2], {None{}, int64_t{8}});
  sch.reorder({i[0], j[0], i[1], j[1], k[0], k[1], i[2], j[2]});
  LoopRV bx = sch.fuse({i[0], j[0]});
  sch.bind(bx, "blockIdx.x");
  LoopRV tx = sch.fuse({i[1], j[1]});
  sch.bind(tx, "threadIdx.x");
  BlockRV c_local = sch.cache_write(c, 0, "local");
  sch.reverse_compute_at(c_local, tx, true, -1);
  for (int64_t index : {0, 1}) {
    BlockRV shared = sch.cache_read(c, index, "shared", {c});
    sch.compute_at(shared, k[0], true, -1);
    std::vector<LoopRV> cl = sch.get_loops(shared);
    LoopRV fused = sch.fuse({cl[cl.size() - 2], cl[cl.size() - 1]});
    std::vector<LoopRV> parts = sch.split(fused, {None{}, int64_t{32}, vector});
    sch.bind(parts[1], "threadIdx.x");
    sch.vectorize(parts[2]);
  }
  annotate_pipeline(sch, k[0], p);
  return sch;
}

schedule::Schedule pipelined_tensorcore_gemm(const std::string& spec, const PipelineAnnotation& outer,
                                             const PipelineAnnotation* inner,
                                             const schedule::testing::TensorCoreDecisions& decisions) {
  schedule::Schedule sch = schedule::testing::tensorcore_gemm_sketch(spec, 8, decisions);
  if (search::rewrite_cooperative_fetch(sch) != 2) throw InternalError("the tensor-core sketch has two copies");
  // The A tile's copy sits under [blockIdx.y, blockIdx.x, threadIdx.y, k0]; its fragment
  // load (the block tensorize made around the ldmatrix tile) under k0's fragment stage k1.
  std::vector<LoopRV> copy = sch.get_loops(sch.get_block("A_shared_dyn"));
  annotate_pipeline(sch, copy.at(3), outer);
  if (inner != nullptr) {
    std::vector<LoopRV> fragment = sch.get_loops(sch.get_block("A_shared_dyn_warp_o"));
    annotate_pipeline(sch, fragment.at(4), *inner);
  }
  search::auto_bind(sch);  // the output cast the sketch leaves unbound
  return sch;
}

}  // namespace dragon::lower::testing
