// The expert GPU scripts of data/scripts/expert/gpu/ (timed on the H200 by
// bench/gpu_expert_bench.cc): each replays at its full KernelBench shape, lowers for the
// H200 within its limits, generates the kernel structure its design promises (tensor-core
// mma.sync, 16-byte cooperative copies, cross-thread reductions) and compiles with NVRTC,
// which needs no GPU. A change that breaks an expert script fails here, not on the device.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dragon/codegen/cuda_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/support/file.h"

namespace dragon::codegen {
namespace {

const std::string kDir = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu";

struct ExpertScript {
  std::string name, spec, script;
};

std::vector<ExpertScript> expert_scripts() {
  std::vector<ExpertScript> out;
  std::istringstream lines(read_text_file(kDir + "/index.tsv"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ExpertScript e;
    fields >> e.name >> e.spec >> e.script;
    out.push_back(e);
  }
  return out;
}

struct Built {
  ir::PrimFunc flat;
  CudaSource source;
};

Built build_expert(const std::string& name) {
  for (const ExpertScript& e : expert_scripts()) {
    if (e.name != name) continue;
    schedule::Schedule sch(ops::OpRegistry::global().make_workload(e.spec).func);
    std::string text = read_text_file(kDir + "/" + e.script);
    EXPECT_TRUE(script::is_canonical(text)) << e.script << " is not in canonical form";
    script::decode(text).apply_to(sch);
    lower::Target target = lower::Target::cuda_h200();
    ir::PrimFunc flat = lower::lower(sch.func(), target).func;
    return {flat, generate_cuda(flat, target)};
  }
  ADD_FAILURE() << "no expert script " << name << " in " << kDir << "/index.tsv";
  return {};
}

TEST(ExpertGpuScripts, IndexListsTheIssuesFourProblems) {
  std::vector<std::string> names;
  for (const ExpertScript& e : expert_scripts()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"gemm_f16_4096", "gemm_f16_pipe3", "gemm_f16_pipe4", "gemm_f16_pipe3_128x256",
                                             "gemm_f16_pipe3_k64", "gemm_bf16_pipe4", "gemm_f16_wgmma_128x256",
                                             "gemm_f16_wgmma_pipe3_128x256", "gemm_f16_wgmma_pipe3_1024",
                                             "gemm_bf16_wgmma_pipe3_128x256", "gemm_f32_4096",
                                             "gemm_f32_tf32_4096", "gemm_f32_3xtf32_4096", "gemm_f32_tf32_pipe3_4096",
                                             "gemm_f32_3xtf32_pipe3_4096",
                                             "softmax_kb23", "layer_norm_kb40", "conv2d_f16_resnet50_3x3"}));
}

// The Hopper GEMMs (tests/unit/codegen/test_cuda_wgmma.cc generates their scripts): two
// warpgroups of 128 lanes per block, each a 64xN accumulator in registers fed by wgmma
// from 128-byte-swizzled shared tiles of 64 halves a row (k steps of 64), which the copies
// write through the swizzle; unpipelined or 3 cp.async stages deep.
TEST(ExpertGpuScripts, WgmmaGemmsIssueWarpgroupMmaFromSwizzledTiles) {
  struct Case {
    const char* name;
    int64_t blocks, stages, bn;
    const char* dtype;
  };
  for (Case c : {Case{"gemm_f16_wgmma_128x256", 512, 1, 256, "f16"}, Case{"gemm_f16_wgmma_pipe3_128x256", 512, 3, 256, "f16"},
                 Case{"gemm_f16_wgmma_pipe3_1024", 64, 3, 128, "f16"},
                 Case{"gemm_bf16_wgmma_pipe3_128x256", 512, 3, 256, "bf16"}}) {
    Built b = build_expert(c.name);
    ASSERT_EQ(b.source.kernels.size(), 2u) << c.name;
    const KernelLaunch& k = b.source.kernels[0];
    EXPECT_EQ(k.grid[0] * k.grid[1] * k.grid[2], c.blocks) << c.name;
    EXPECT_EQ(k.block, (std::array<int64_t, 3>{128, 2, 1})) << c.name;
    EXPECT_EQ(k.dynamic_shared_bytes, c.stages * (128 + c.bn) * 64 * 2) << c.name;
    const std::string& code = b.source.code;
    EXPECT_NE(code.find("wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.bn) + "k16.f32." + c.dtype + "." +
                        c.dtype),
              std::string::npos)
        << c.name;
    EXPECT_NE(code.find("B_shared_dyn + dragon_swizzle128_b16("), std::string::npos) << c.name;
    EXPECT_EQ(code.find("mma.sync"), std::string::npos) << c.name;
  }
}

TEST(ExpertGpuScripts, TensorCoreGemmUsesMmaAndSixteenByteCopies) {
  Built b = build_expert("gemm_f16_4096");
  // The mma kernel accumulating in f32, then the cast of its result to f16.
  ASSERT_EQ(b.source.kernels.size(), 2u);
  const KernelLaunch& k = b.source.kernels[0];
  EXPECT_EQ(k.grid[0] * k.grid[1] * k.grid[2], 1024);  // 128x128 tiles of a 4096x4096 output
  EXPECT_EQ(k.threads_per_block(), 128);                // 4 warps of 64x64
  EXPECT_NE(b.source.code.find("mma.sync.aligned.m16n8k16"), std::string::npos);
  EXPECT_NE(b.source.code.find("ldmatrix"), std::string::npos);
  EXPECT_NE(b.source.code.find("int4"), std::string::npos) << "cooperative copies should move 16 bytes a thread";
}

// ResNet-50's 3x3 conv as an implicit GEMM on tensor cores (tests/unit/search/
// test_implicit_gemm_space.cc checks it is the rule's candidate): the mma kernel's shared
// tiles gather straight from X (the padding inlined as a select, no im2col buffer among
// the kernel's parameters), 196 blocks of 32 x 64 outputs, 4 warps.
TEST(ExpertGpuScripts, ImplicitGemmConvGathersSharedTilesFromTheInput) {
  Built b = build_expert("conv2d_f16_resnet50_3x3");
  ASSERT_FALSE(b.source.kernels.empty());
  const KernelLaunch& k = b.source.kernels[0];
  EXPECT_EQ(k.grid[0] * k.grid[1] * k.grid[2], 196);
  EXPECT_EQ(k.threads_per_block(), 128);
  const std::string body = b.source.code.substr(b.source.prelude_size);
  EXPECT_NE(b.source.code.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos);
  EXPECT_NE(b.source.code.find("ldmatrix"), std::string::npos);
  EXPECT_EQ(body.find("X_pad_reindex["), std::string::npos) << body;
  EXPECT_EQ(body.find("W_reindex["), std::string::npos) << body;
}

// The pipelined f16 and bf16 GEMMs: shared tiles three or four stages deep, each stage's copies
// 16-byte cp.async (8 halves a thread, rows padded by 8 halves so ldmatrix's eight
// 16-byte rows fall in distinct banks), one commit per k step, a wait for all but the
// stages still ahead before the barrier, and the 48 KB default raised for the slots.
struct PipelinedGemm {
  const char* name;
  int64_t blocks, threads, stages, stage_bytes;
};

TEST(ExpertGpuScripts, PipelinedTensorCoreGemmsIssueSixteenByteCpAsyncStagesDeep) {
  // A 128x32 tile in rows of 40 halves (128x64 in rows of 72); B 32 (64) rows of 128 (or
  // 256) columns in rows of 136 (264): the last row unpadded, each slot a multiple of 16
  // bytes.
  const int64_t a_tile = (127 * 40 + 32) * 2;
  for (PipelinedGemm g : {PipelinedGemm{"gemm_f16_pipe3", 1024, 128, 3, a_tile + (31 * 136 + 128) * 2},
                          PipelinedGemm{"gemm_f16_pipe4", 1024, 128, 4, a_tile + (31 * 136 + 128) * 2},
                          PipelinedGemm{"gemm_f16_pipe3_128x256", 512, 256, 3, a_tile + (31 * 264 + 256) * 2},
                          PipelinedGemm{"gemm_f16_pipe3_k64", 1024, 128, 3, (127 * 72 + 64) * 2 + (63 * 136 + 128) * 2},
                          PipelinedGemm{"gemm_bf16_pipe4", 1024, 128, 4, a_tile + (31 * 136 + 128) * 2}}) {
    Built b = build_expert(g.name);
    ASSERT_EQ(b.source.kernels.size(), 2u) << g.name;
    const KernelLaunch& k = b.source.kernels[0];
    EXPECT_EQ(k.grid[0] * k.grid[1] * k.grid[2], g.blocks) << g.name;  // 128x128 or 128x256 tiles
    EXPECT_EQ(k.threads_per_block(), g.threads) << g.name;
    EXPECT_EQ(k.dynamic_shared_bytes, g.stages * g.stage_bytes) << g.name;
    const std::string& code = b.source.code;
    EXPECT_NE(code.find("dragon_cp_async_16(A_shared_dyn + "), std::string::npos) << g.name;
    EXPECT_NE(code.find("dragon_cp_async_16(B_shared_dyn + "), std::string::npos) << g.name;
    EXPECT_EQ(code.find("dragon_cp_async_4("), code.rfind("dragon_cp_async_4(")) << g.name << ": only the prelude's";
    EXPECT_NE(code.find("cp.async.wait_group " + std::to_string(g.stages - 2) + ";"), std::string::npos) << g.name;
    EXPECT_NE(code.find("mma.sync.aligned.m16n8k16"), std::string::npos) << g.name;
  }
}

TEST(ExpertGpuScripts, Fp32GemmTilesThroughSharedMemoryWithVectorCopies) {
  Built b = build_expert("gemm_f32_4096");
  ASSERT_EQ(b.source.kernels.size(), 1u);
  const KernelLaunch& k = b.source.kernels[0];
  EXPECT_EQ(k.grid[0] * k.grid[1] * k.grid[2], 1024);
  EXPECT_EQ(k.threads_per_block(), 256);
  EXPECT_GT(k.dynamic_shared_bytes, 0);
  EXPECT_NE(b.source.code.find("float4"), std::string::npos);
}

// The f32 GEMM on TF32 tensor cores (the tensor-core rule's candidate at these decisions:
// tests/unit/search/test_tf32_space.cc): 128x128 tiles, 4 warps of 64x64, k steps of 32,
// operands rounded by cvt.rna.tf32.f32 into m16n8k8 mma (at the fragment loads for one pass,
// split into three products a step in the mma for 3xTF32), A by
// ldmatrix on 32-bit words and the [k, n] B by lane, 16-byte cooperative copies.
TEST(ExpertGpuScripts, Tf32GemmsRoundOperandsIntoM16n8k8Mma) {
  for (const char* name : {"gemm_f32_tf32_4096", "gemm_f32_3xtf32_4096", "gemm_f32_tf32_pipe3_4096",
                           "gemm_f32_3xtf32_pipe3_4096"}) {
    SCOPED_TRACE(name);
    Built b = build_expert(name);
    ASSERT_EQ(b.source.kernels.size(), 1u);
    const KernelLaunch& k = b.source.kernels[0];
    EXPECT_EQ(k.grid[0] * k.grid[1] * k.grid[2], 1024);
    EXPECT_EQ(k.threads_per_block(), 128);
    const std::string& code = b.source.code;
    EXPECT_NE(code.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
    EXPECT_NE(code.find("cvt.rna.tf32.f32"), std::string::npos);
    const bool three = std::string(name).find("3x") != std::string::npos;
    EXPECT_EQ(code.find("dragon_tf32_mma_m16n8k8_3x_presplit(", b.source.prelude_size) != std::string::npos, three);
    EXPECT_EQ(code.find("dragon_tf32_mma_m16n8k8_3x(", b.source.prelude_size), std::string::npos)
        << "no mma splits its operands again";
    // Each fragment is rounded (one pass) or split into 3xTF32's big and small parts once,
    // when loaded, and the mma takes it as it is.
    const std::string loads = three ? "_split(" : "_rounded(";
    EXPECT_NE(code.find("dragon_tf32_ldmatrix_a_m16k8" + loads, b.source.prelude_size), std::string::npos);
    EXPECT_NE(code.find("dragon_tf32_load_b_k8n8" + loads, b.source.prelude_size), std::string::npos);
    EXPECT_EQ(code.find("dragon_tf32_mma_m16n8k8_prerounded(", b.source.prelude_size) != std::string::npos, !three);
    EXPECT_EQ(code.find("dragon_tf32_mma_m16n8k8(", b.source.prelude_size), std::string::npos)
        << "no mma rounds its operands again";
    EXPECT_EQ(code.find("dragon_ldmatrix_", b.source.prelude_size), std::string::npos);
    if (std::string(name).find("pipe3") == std::string::npos) {
      EXPECT_NE(code.find("float4"), std::string::npos) << "cooperative copies should move 16 bytes a thread";
    } else {
      // Three stages of 16-byte cp.async: 128 x 32 A and 32 x 128 B floats each, rows padded.
      EXPECT_NE(code.find("dragon_cp_async_16(A_shared_dyn + "), std::string::npos);
      EXPECT_NE(code.find("dragon_cp_async_16(B_shared_dyn + "), std::string::npos);
      EXPECT_NE(code.find("cp.async.wait_group 1;"), std::string::npos);
      EXPECT_GT(k.dynamic_shared_bytes, 3 * (128 * 32 + 32 * 128) * 4);
      EXPECT_LE(k.dynamic_shared_bytes, 3 * (128 * 36 + 32 * 136) * 4);
    }
  }
}

TEST(ExpertGpuScripts, SoftmaxIsOneKernelOfOneBlockPerRow) {
  Built b = build_expert("softmax_kb23");
  ASSERT_EQ(b.source.kernels.size(), 1u);
  EXPECT_EQ(b.source.kernels[0].grid[0], 4096);
  EXPECT_EQ(b.source.kernels[0].block[0], 1024);
  EXPECT_NE(b.source.code.find("__syncthreads"), std::string::npos);
}

TEST(ExpertGpuScripts, LayerNormSpreadsItsReductionsOverManyBlocks) {
  Built b = build_expert("layer_norm_kb40");
  // Partial sums (rfactor) and their combination, for the sum and the squared deviations,
  // then the elementwise normalisation.
  ASSERT_EQ(b.source.kernels.size(), 5u);
  EXPECT_EQ(b.source.kernels[0].grid[0], 16 * 64);
  EXPECT_EQ(b.source.kernels[4].grid[0] * b.source.kernels[4].block[0], 16 * 64 * 256 * 256);
}

// A global buffer that one thread writes and the others read after __syncthreads (a row's
// maximum kept in global memory) must not be __restrict__: with it NVRTC hoisted the other
// threads' loads above the barrier and they read the value from before the store (seen on
// the H200: softmax at KernelBench's shape was wrong in every warp but the first).
TEST(ExpertGpuScripts, GlobalBuffersWrittenAndReadInOneKernelAreNotRestrict) {
  schedule::Schedule sch(ops::OpRegistry::global().make_workload("softmax:shape=8x4096,axis=1").func);
  script::decode(
      "gb x_max\ngb x_exp\ngb exp_sum\ngb softmax\nci b1\ngl b3 2\nsp l1 None 1024\nbind l0 bx\nbind l3 tx\n"
      "ca b2 l0 false\nca b0 l0 false\ngl b2 2\nsp l5 None 1024\nbind l7 tx\ngl b0 2\nsp l9 None 1024\n"
      "bind l11 tx\n")
      .apply_to(sch);
  lower::Target target = lower::Target::cuda_h200();
  CudaSource source = generate_cuda(lower::lower(sch.func(), target).func, target);
  ASSERT_EQ(source.kernels.size(), 1u);
  EXPECT_NE(source.code.find("(const float* __restrict__ X, float* __restrict__ softmax, float* exp_sum, float* x_max)"),
            std::string::npos)
      << source.code.substr(source.code.find("__global__"), 200);
}

TEST(ExpertGpuScripts, EveryScriptCompilesWithNvrtc) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (no CUDA toolkit)";
  std::vector<ir::PrimFunc> flats;
  std::vector<std::string> names;
  for (const ExpertScript& e : expert_scripts()) {
    flats.push_back(build_expert(e.name).flat);
    names.push_back(e.name);
  }
  std::vector<Expected<runtime::CudaBuild>> builds = runtime::compile_cuda_all(flats, lower::Target::cuda_h200());
  for (size_t i = 0; i < builds.size(); ++i) {
    EXPECT_TRUE(builds[i].ok()) << names[i] << ": " << (builds[i].ok() ? "" : builds[i].error().describe());
  }
}

}  // namespace
}  // namespace dragon::codegen
