// The golden codegen cases (golden_cases.h).
#include "golden_cases.h"

#include "dragon/codegen/cpu_codegen.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/ir/op.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/trace_json.h"
#include "default_gpu_schedule.h"

namespace dragon::codegen::testing {
namespace {

using schedule::LoopRV;
using schedule::None;
using schedule::Schedule;

schedule::BlockRV only_block(Schedule& sch) {
  return sch.get_child_blocks(sch.get_block("root")).front();
}

void cpu_tiled_matmul(Schedule& sch) {
  schedule::BlockRV block = only_block(sch);
  std::vector<LoopRV> loops = sch.get_loops(block);  // i, j, k
  std::vector<LoopRV> j = sch.split(loops[1], {None{}, int64_t{8}});
  sch.reorder({loops[0], j[0], loops[2], j[1]});
  sch.parallel(loops[0]);
  sch.vectorize(j[1]);
}

// Elementwise over all loops: fused, split [blocks, 256 threads, 4 lanes], lanes vectorized.
void gpu_vectorized_elementwise(Schedule& sch) {
  schedule::BlockRV block = only_block(sch);
  LoopRV fused = sch.fuse(sch.get_loops(block));
  std::vector<LoopRV> parts = sch.split(fused, {None{}, int64_t{256}, int64_t{4}});
  sch.bind(parts[0], "blockIdx.x");
  sch.bind(parts[1], "threadIdx.x");
  sch.vectorize(parts[2]);
}

}  // namespace

const std::vector<GoldenCase>& golden_cases() {
  static const std::vector<GoldenCase> cases = {
      {"relu_cpu", "relu:shape=16x64,dtype=f32", false, [](Schedule&) {}},
      {"matmul_cpu_tiled", "matmul:m=32,n=32,k=16,dtype=f32", false, cpu_tiled_matmul},
      {"gelu_f16_cpu", "gelu:shape=8x32,dtype=f16,approximate=tanh", false, [](Schedule&) {}},
      {"relu_cuda_float4", "relu:shape=16x1024,dtype=f32", true, gpu_vectorized_elementwise},
      {"relu_cuda_f16", "relu:shape=16x1024,dtype=f16", true, gpu_vectorized_elementwise},
      {"softmax_cuda", "softmax:shape=16x256,axis=1,dtype=f32", true, apply_default_gpu_schedule},
      {"matmul_cuda", "matmul:m=64,n=64,k=64,dtype=f32", true, apply_default_gpu_schedule},
      {"conv2d_cuda", "conv2d", true, apply_default_gpu_schedule},
  };
  return cases;
}

std::string golden_directory() { return std::string(DRAGON_SOURCE_DIR) + "/tests/golden/codegen"; }

std::string golden_kernel(const GoldenCase& c, const std::string& script_json) {
  ops::Workload w = ops::OpRegistry::global().make_workload(c.spec);
  Schedule sch = schedule::replay(schedule::trace_from_json(script_json), w.func);
  lower::Target target = c.cuda ? lower::Target::cuda_h200() : lower::Target::cpu();
  ir::PrimFunc flat = lower::lower(sch.func(), target).func;
  return c.cuda ? generate_cuda(flat, target).code : generate_cpu(flat).code;
}

}  // namespace dragon::codegen::testing
