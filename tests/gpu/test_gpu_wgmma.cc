// On the H200: GEMMs through Hopper's wgmma (warpgroup MMA with shared-memory operands by
// 128-byte-swizzled descriptors, tensor_intrin.h) match the interpreter running the
// unscheduled function: f16 and bf16, N = 64, 128, 256 and an odd 24, one or two
// warpgroups, unpipelined and cp.async-pipelined 3 stages deep, and the wgmma expert
// scripts at small shapes. Without a device every test says [SKIP]. On the CPU,
// tests/unit/codegen/test_cuda_wgmma.cc checks the same schedules on the interpreter and
// compiles them with NVRTC.
#include <gtest/gtest.h>

#include <string>

#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/support/file.h"
#include "interpreter_match.h"
#include "unit/schedule/wgmma_gemm_sketch.h"

namespace dragon::codegen {
namespace {

ir::PrimFunc unscheduled(const std::string& spec) { return ops::OpRegistry::global().make_workload(spec).func; }

// f16 and bf16 products are exact in f32 and wgmma sums in an order of its own: the
// results differ by f32 reassociation and one rounding of the output (the GPU tolerance).
TEST(GpuWgmma, SketchGemmsMatchInterpreter) {
  DRAGON_REQUIRE_GPU();
  struct Case {
    const char* spec;
    schedule::testing::WgmmaGemmTiles tiles;
  };
  for (const Case& c : {Case{"matmul:m=128,n=128,k=128,trans_b=true,dtype=f16", {2, 128, 0}},
                        Case{"matmul:m=128,n=128,k=128,trans_b=true,dtype=bf16", {2, 128, 0}},
                        Case{"matmul:m=64,n=128,k=192,trans_b=true,dtype=f16", {1, 64, 0}},
                        Case{"matmul:m=128,n=256,k=128,trans_b=true,dtype=bf16", {2, 256, 0}},
                        Case{"matmul:m=128,n=48,k=64,trans_b=true,dtype=f16", {2, 24, 0}},
                        Case{"matmul:m=256,n=256,k=512,trans_b=true,dtype=f16", {2, 128, 3}},
                        Case{"matmul:m=128,n=256,k=256,trans_b=true,dtype=bf16", {2, 256, 3}}}) {
    schedule::Schedule sch = schedule::testing::wgmma_gemm_sketch(c.spec, c.tiles, true);
    std::string label = std::string(c.spec) + " warpgroups " + std::to_string(c.tiles.warpgroups) + " n " +
                        std::to_string(c.tiles.n_tile) + " stages " + std::to_string(c.tiles.stages);
    EXPECT_TRUE(runs_like_interpreter(label, unscheduled(c.spec), sch.func(), kGpuToleranceScale));
  }
}

TEST(GpuWgmma, ExpertScriptsAtSmallShapesMatchInterpreter) {
  DRAGON_REQUIRE_GPU();
  const std::string dir = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu/";
  const std::pair<const char*, const char*> cases[] = {
      {"gemm_f16_wgmma_128x256.script", "matmul:m=256,n=512,k=256,trans_b=true,dtype=f16"},
      {"gemm_f16_wgmma_pipe3_128x256.script", "matmul:m=256,n=512,k=512,trans_b=true,dtype=f16"},
      {"gemm_f16_wgmma_pipe3_128x128.script", "matmul:m=256,n=256,k=512,trans_b=true,dtype=f16"},
      {"gemm_bf16_wgmma_pipe3_128x256.script", "matmul:m=256,n=512,k=512,trans_b=true,dtype=bf16"},
  };
  for (const auto& [file, spec] : cases) {
    schedule::Schedule sch(unscheduled(spec));
    script::decode(read_text_file(dir + file)).apply_to(sch);
    EXPECT_TRUE(runs_like_interpreter(std::string(file) + " on " + spec, unscheduled(spec), sch.func(),
                                      kGpuToleranceScale));
  }
}

}  // namespace
}  // namespace dragon::codegen
