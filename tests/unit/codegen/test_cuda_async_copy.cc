// The CUDA emitter's asynchronous copies (cuda_async_copy.cc): pipelined GEMMs
// (tests/unit/lower/gpu/pipelined_gemm.h) issue their shared tiles as cp.async of 16
// bytes where rows are aligned, of 4 bytes (or plain stores for 2-byte elements) where
// not, commit one group per step and wait before the barrier, every lane of a tensor-core
// kernel taking part; and the sources compile with NVRTC for sm_90a (no GPU needed).
// Running them against the interpreter is tests/gpu/test_gpu_pipeline.cc.
#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "unit/lower/gpu/pipelined_gemm.h"

namespace dragon::codegen {
namespace {

using lower::testing::PipelineAnnotation;

ir::PrimFunc lowered(const schedule::Schedule& sch) { return lower::lower(sch.func(), lower::Target::cuda_h200()).func; }

CudaSource cuda_of(const schedule::Schedule& sch) { return generate_cuda(lowered(sch), lower::Target::cuda_h200()); }

size_t count(const std::string& text, const std::string& piece) {
  size_t n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

// The tensor-core sketch at 128x128x256: four shared k steps of 64, so that a pipeline
// three stages deep has a prologue, a steady state and an epilogue.
schedule::Schedule tensorcore(const char* stages, bool inner) {
  PipelineAnnotation fragments{"0 0 1", "", ""};
  schedule::testing::TensorCoreDecisions d;
  d.k = {4, 2, 2};
  return lower::testing::pipelined_tensorcore_gemm("matmul:m=128,n=128,k=256,dtype=f16", {stages, "", "0"},
                                                   inner ? &fragments : nullptr, d);
}

TEST(CudaAsyncCopy, TensorCoreTilesAreSixteenByteCpAsyncWaitedBeforeTheBarrier) {
  CudaSource src = cuda_of(tensorcore("0 0 2", true));
  const std::string& code = src.code;
  // One copy statement per tile in the prologue and in the steady state: A's cooperative
  // fetch moves 8 halves a thread (16 bytes), B's 4 (8 bytes).
  EXPECT_EQ(count(code, "dragon_cp_async_16(A_shared_dyn + "), 2u) << code;
  EXPECT_EQ(count(code, "dragon_cp_async_8(B_shared_dyn + "), 2u) << code;
  EXPECT_NE(code.find("cp.async.cg.shared.global [%0], [%1], 16;"), std::string::npos);
  // A commit per step of every phase: the epilogue's groups are empty, and keep the number
  // of groups between a copy and its wait the same in every step.
  EXPECT_EQ(count(code, "asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");"), 3u) << code;
  // Steady state and epilogue: wait for all but the newest group, then the barrier.
  EXPECT_EQ(count(code, "asm volatile(\"cp.async.wait_group 1;\\n\" ::: \"memory\");\n"
                        "    __syncthreads();"),
            2u)
      << code;
  // Commits and waits are per thread: no lane-0 guard around them.
  size_t wait = code.find("cp.async.wait_group");
  size_t guard = code.rfind("if (", wait);
  EXPECT_TRUE(guard == std::string::npos || code.substr(guard, wait - guard).find("== 0)") == std::string::npos)
      << code.substr(guard, wait - guard);
}

TEST(CudaAsyncCopy, ScalarAndUnalignedCopiesFallBack) {
  // Rows of 36 floats: vectors of 4 are not provably 16-byte aligned, so each float is a
  // 4-byte cp.async.
  CudaSource f32 = cuda_of(lower::testing::pipelined_simt_gemm("matmul:m=40,n=24,k=36", {"0 0 2", "", "0"}, 4));
  EXPECT_GT(count(f32.code, "dragon_cp_async_4("), 0u) << f32.code;
  EXPECT_EQ(count(f32.code, "dragon_cp_async_16("), 1u) << f32.code;  // the prelude's definition only
  // 64^3: B's 8x16 tile is 32 vectors of 4, one a thread, 16-byte aligned: 16-byte copies.
  // A's 8x8 tile is 16 vectors for 32 threads: the loop is predicated (half the threads
  // idle), so its floats stay 4-byte copies.
  CudaSource aligned = cuda_of(lower::testing::pipelined_simt_gemm("matmul:m=64,n=64,k=64", {"0 0 2", "", "0"}, 4));
  EXPECT_EQ(count(aligned.code, "dragon_cp_async_16(B_shared + "), 2u) << aligned.code;  // prologue, steady
  EXPECT_EQ(count(aligned.code, "dragon_cp_async_4(A_shared + "), 2u) << aligned.code;
}

TEST(CudaAsyncCopy, WithoutPipelineNoAsyncHelpers) {
  schedule::Schedule sch = lower::testing::pipelined_simt_gemm("matmul:m=64,n=64,k=64", {"0 0 1", "", ""}, 4);
  CudaSource src = cuda_of(sch);
  EXPECT_EQ(src.code.find("cp.async"), std::string::npos) << src.code;
  EXPECT_EQ(src.code.find("dragon_shared_address"), std::string::npos);
}

TEST(CudaAsyncCopy, PipelinedGemmsCompileToSm90aCubin) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  std::vector<ir::PrimFunc> funcs = {
      lowered(tensorcore("0 0 1", false)),
      lowered(tensorcore("0 0 3", true)),
      lowered(lower::testing::pipelined_simt_gemm("matmul:m=64,n=64,k=64", {"0 0 2", "", "0"}, 4)),
      lowered(lower::testing::pipelined_simt_gemm("matmul:m=40,n=24,k=36", {"0 0 3", "", "0"}, 2)),
  };
  std::vector<Expected<runtime::CudaBuild>> builds = runtime::compile_cuda_all(funcs, lower::Target::cuda_h200(), options);
  ASSERT_EQ(builds.size(), funcs.size());
  for (auto& build : builds) {
    ASSERT_TRUE(build.ok()) << build.error().describe();
    EXPECT_EQ(build.value().cubin.bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
    EXPECT_NE(build.value().source.code.find("cp.async.commit_group"), std::string::npos);
  }
}

}  // namespace
}  // namespace dragon::codegen
