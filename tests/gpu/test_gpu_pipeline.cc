// On the GPU: software-pipelined GEMMs (inject_software_pipeline, cp.async copies with
// commit/wait groups) match the interpreter running the unscheduled function: SIMT f32
// GEMMs with partial tiles and 2-4 stages, 16-byte and 4-byte copies and synchronous
// stages; tensor-core GEMMs 2-4 stages deep with double-buffered fragments; and the
// pipelined expert scripts at a shape the interpreter checks quickly; tensor-core
// convolutions (implicit GEMMs) whose gathered tiles are cp.async copies, zero-filled
// where the padding is, with the output staged through shared memory. Without a device
// every test says [SKIP]. The same schedules are checked on the CPU against a model of
// cp.async in tests/unit/lower/gpu/test_software_pipeline.cc.
#include <gtest/gtest.h>

#include <string>

#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/support/file.h"
#include "interpreter_match.h"
#include "unit/lower/gpu/pipelined_gemm.h"
#include "unit/search/search_test_sketches.h"

namespace dragon::codegen {
namespace {

using lower::testing::PipelineAnnotation;

ir::PrimFunc unscheduled(const std::string& spec) { return ops::OpRegistry::global().make_workload(spec).func; }

TEST(GpuPipeline, SimtGemmsMatchInterpreterOnEveryShapeDepthAndCopyWidth) {
  DRAGON_REQUIRE_GPU();
  // 64^3 divides every tile; 40x24x36 leaves partial tiles (predicated copies); 8x16x8 has
  // one k step, fewer than the stages in flight.
  for (const char* spec : {"matmul:m=64,n=64,k=64", "matmul:m=40,n=24,k=36", "matmul:m=8,n=16,k=8"}) {
    for (const char* stages : {"0 0 1", "0 0 2", "0 0 3"}) {
      for (int64_t vector : {2, 4}) {
        schedule::Schedule sch = lower::testing::pipelined_simt_gemm(spec, {stages, "", "0"}, vector);
        std::string label = std::string(spec) + " stages " + stages + " vector " + std::to_string(vector);
        EXPECT_TRUE(runs_like_interpreter(label, unscheduled(spec), sch.func(), kGpuToleranceScale));
      }
    }
  }
}

TEST(GpuPipeline, SynchronousStagesAndAnotherOrderMatchInterpreter) {
  DRAGON_REQUIRE_GPU();
  for (PipelineAnnotation p : {PipelineAnnotation{"0 0 1", "", ""}, PipelineAnnotation{"0 0 2", "1 0 2", "0"},
                               PipelineAnnotation{"0 1 2", "", "0"}}) {
    schedule::Schedule sch = lower::testing::pipelined_simt_gemm("matmul:m=40,n=24,k=36", p);
    EXPECT_TRUE(runs_like_interpreter(p.stages + " / " + p.order + " / " + p.async_stages,
                                      unscheduled("matmul:m=40,n=24,k=36"), sch.func(),
                                      kGpuToleranceScale));
  }
}

// f16 and bf16 products are exact in f32; the mma sums in an order of its own, so results
// differ by f32 reassociation and one rounding of the output: the GPU tolerance.
TEST(GpuPipeline, TensorCoreGemmsMatchInterpreterAtTwoToFourStages) {
  DRAGON_REQUIRE_GPU();
  PipelineAnnotation fragments{"0 0 1", "", ""};
  schedule::testing::TensorCoreDecisions d;
  d.i = {1, 1, 2, 2, 1};  // 64 rows: 2 warps of 2 16-row tiles
  d.j = {1, 2, 2, 1, 2};  // 64 columns
  d.k = {8, 2, 2};        // 512 deep: 8 shared steps of 64
  for (const char* spec : {"matmul:m=64,n=64,k=512,dtype=f16", "matmul:m=64,n=64,k=512,dtype=bf16"}) {
    for (const char* stages : {"0 0 1", "0 0 2", "0 0 3"}) {
      for (bool inner : {false, true}) {
        schedule::Schedule sch =
            lower::testing::pipelined_tensorcore_gemm(spec, {stages, "", "0"}, inner ? &fragments : nullptr, d);
        std::string label = std::string(spec) + " stages " + stages + (inner ? " + fragments" : "");
        EXPECT_TRUE(runs_like_interpreter(label, unscheduled(spec), sch.func(), kGpuToleranceScale));
      }
    }
  }
}

// Convolutions presented as GEMMs, two and three k steps deep: their gathered tiles are
// 4-byte cp.async copies (zero-filled in the padded one, and where k = 27 is padded to
// 32), the output tile goes through shared memory into Y in the memory of an operand tile.
// TF32 rounds the operands, so the check is the 3xTF32 variant's: f32-close.
TEST(GpuPipeline, ConvolutionsWithZeroFilledAsyncGathersMatchInterpreter) {
  DRAGON_REQUIRE_GPU();
  for (const search::testing::PipelinedConv& c : search::testing::pipelined_convs()) {
    const ir::PrimFunc func = unscheduled(c.spec);
    for (int64_t depth : {2, 3}) {
      search::CandidateResult r = search::testing::pipelined_conv_candidate(c, func, depth, /*three_pass=*/true);
      ASSERT_TRUE(r.ok()) << c.spec << ": " << r.failure().message;
      EXPECT_TRUE(runs_like_interpreter(std::string(c.spec) + " depth " + std::to_string(depth) + "\n" +
                                            script::encode(r.candidate().trace),
                                        func, r.candidate().func, kGpuToleranceScale));
    }
  }
}

// The pipelined expert GEMM scripts split by None above their tiles, so they apply to any
// shape whose m and n are multiples of 512 (4x4 or 4x2 groups of block tiles) and whose k
// is a multiple of their k step (32 or 64); at 512x512x256 the interpreter takes a few seconds.
TEST(GpuPipeline, PipelinedExpertGemmScriptsMatchInterpreterAtSmallShape) {
  DRAGON_REQUIRE_GPU();
  const std::string dir = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu/";
  const std::pair<const char*, const char*> cases[] = {
      {"gemm_f16_pipelined_3stage.script", "matmul:m=512,n=512,k=256,dtype=f16"},
      {"gemm_f16_pipelined_4stage.script", "matmul:m=512,n=512,k=256,dtype=f16"},
      {"gemm_f16_pipelined_128x256.script", "matmul:m=512,n=512,k=256,dtype=f16"},
      {"gemm_f16_pipelined_k64.script", "matmul:m=512,n=512,k=256,dtype=f16"},
      {"gemm_bf16_pipelined_4stage.script", "matmul:m=512,n=512,k=256,dtype=bf16"},
  };
  for (const auto& [file, spec] : cases) {
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    schedule::Schedule sch(w.func);
    script::decode(read_text_file(dir + file)).apply_to(sch);
    EXPECT_TRUE(runs_like_interpreter(std::string(file) + " on " + spec, w.func, sch.func(), kGpuToleranceScale));
  }
}

}  // namespace
}  // namespace dragon::codegen
