// The tensor-core rule on f32 GEMMs (space/multi_level_tiling_tensor_core.cc with the tf32
// intrinsics of tensor_intrin_mma.cc): an f32 matmul gets a tensor-core sketch whose mma is
// a sampled decision between tf32 and 3xtf32 (a tile choice, redrawn by mutate_tile_size);
// its candidates tensorize with m16n8k8 tiles, compute the GEMM on the interpreter, and
// print as the tf32 PTX helpers. Blocks that are not a GEMM (an elementwise op), or whose
// padding to whole tiles would more than double the work, get no such sketch. NVRTC
// compiles are test_search_nvrtc's;
// GPU runs tests/gpu/test_gpu_tf32.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dragon/codegen/cuda_codegen.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/search/design_space.h"
#include "dragon/search/mutator.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/postproc.h"
#include "dragon/support/file.h"
#include "unit/codegen/codegen_test_util.h"
#include "unit/schedule/schedule_test_util.h"
#include "unit/search/search_test_sketches.h"

namespace dragon::search {
namespace {

using schedule::testing::workload;
using testing::kH200;

// The tensor-core sketches of `spec` under the CUDA set with both f32 variants.
std::vector<Sketch> both_variant_sketches(const std::string& spec) {
  return testing::tensor_core_sketches_of(workload(spec), testing::cuda_with_both_tf32_variants());
}

// The decided value of the categorical over {1, 3} (the tf32 passes) and its role.
std::optional<std::pair<int64_t, SamplingRole>> tf32_passes(const schedule::Trace& trace) {
  for (const SamplingSite& site : sampling_sites(trace)) {
    const schedule::Instruction& inst = trace[site.instruction];
    if (inst.kind != schedule::InstructionKind::SampleCategorical) continue;
    const auto& candidates = *inst.attrs.at(0).as<schedule::Arg::List>();
    if (candidates.size() != 2 || *candidates[0].as<int64_t>() != 1 || *candidates[1].as<int64_t>() != 3) continue;
    const auto* index = trace.decision(site.instruction)->as<int64_t>();
    return std::make_pair(*candidates.at(static_cast<size_t>(*index)).as<int64_t>(), site.role);
  }
  return std::nullopt;
}

TEST(Tf32TensorCore, F32GemmsGetATensorCoreSketchWithASampledVariant) {
  for (const char* spec : {"matmul:m=128,n=128,k=64", "matmul:m=128,n=64,k=64,trans_b=true",
                           "batch_matmul:batch=2,m=64,n=64,k=32"}) {
    SCOPED_TRACE(spec);
    std::vector<Sketch> s = both_variant_sketches(spec);
    ASSERT_EQ(s.size(), 1u);
    std::string text = script::encode(s[0].trace);
    EXPECT_NE(text.find("mma_m16n8k8_tf32tf32f32"), std::string::npos) << text;
    EXPECT_NE(text.find("mma_load_a_m16k8_f32"), std::string::npos) << text;
    std::optional<std::pair<int64_t, SamplingRole>> passes = tf32_passes(s[0].trace);
    ASSERT_TRUE(passes.has_value()) << text;
    EXPECT_EQ(passes->second, SamplingRole::kTileChoice);
  }
}

TEST(Tf32TensorCore, TheBuiltInSetSamplesOnly3xTf32) {
  // One-pass TF32 fails the harness's f32 check (search_test_sketches.h says where it was
  // measured), so tuning with cuda.json never proposes it.
  const std::string spec = "matmul:m=128,n=128,k=64";
  ir::PrimFunc func = workload(spec);
  std::vector<Sketch> sketches = generate_design_space(func, kH200, RuleSet::cuda());
  auto tc = std::find_if(sketches.begin(), sketches.end(), testing::is_tensor_core_sketch);
  ASSERT_NE(tc, sketches.end());
  for (int seed = 0; seed < 16; ++seed) {
    CandidateResult r = sample_candidate(*tc, func, kH200, RuleSet::cuda(), seed);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
    // The sketch names the one-pass mma; rewrite_tensorize tensorizes with the sampled one.
    codegen::CudaSource src = codegen::generate_cuda(lower::lower(r.candidate().func, kH200).func, kH200);
    EXPECT_NE(src.code.find("dragon_tf32_mma_m16n8k8_3x_presplit(", src.prelude_size), std::string::npos) << "seed " << seed;
    EXPECT_EQ(src.code.find("dragon_tf32_mma_m16n8k8_prerounded(", src.prelude_size), std::string::npos)
        << "seed " << seed;
  }
}

// A GEMM of an f32 and a bf16 operand (DLRM-Bench's DCN layer: the f32 low-rank product
// times bf16 weights) gets the tf32 sketch with the bf16 operand kept in bf16 and widened
// in the mma; its candidates compute the layer on the interpreter and print the mixed
// helpers.
TEST(Tf32TensorCore, AnF32TimesBf16GemmWidensTheBf16Operand) {
  const std::string spec = "dcn_cross_layer:batch=64,dim=64,rank=32,dtype=bf16";
  ir::PrimFunc func = workload(spec);
  std::vector<Sketch> sketches = generate_design_space(func, kH200, RuleSet::cuda());
  std::vector<const Sketch*> mixed;
  for (const Sketch& s : sketches) {
    if (script::encode(s.trace).find("mma_m16n8k8_tf32_f32bf16f32") != std::string::npos) mixed.push_back(&s);
  }
  ASSERT_FALSE(mixed.empty());
  std::set<std::string> helpers;
  for (int seed = 0; seed < 6; ++seed) {
    CandidateResult r = sample_candidate(*mixed[static_cast<size_t>(seed) % mixed.size()], func, kH200, RuleSet::cuda(), seed);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
    const std::string text = script::encode(r.candidate().trace);
    EXPECT_NE(text.find("mma_load_b_k8n8_bf16"), std::string::npos) << text;
    std::vector<tensor::HostTensor> expected = interp::make_arguments(func, 11, interp::Distribution::kNormal);
    std::vector<tensor::HostTensor> actual = expected;
    interp::run(func, expected);
    interp::run(r.candidate().func, actual);
    EXPECT_TRUE(codegen::testing::outputs_match(func, expected, actual)) << "seed " << seed;
    codegen::CudaSource src = codegen::generate_cuda(lower::lower(r.candidate().func, kH200).func, kH200);
    for (const char* helper : {"dragon_tf32_mma_m16n8k8_mixed(", "dragon_tf32_mma_m16n8k8_3x_mixed("}) {
      if (src.code.find(helper, src.prelude_size) != std::string::npos) helpers.insert(helper);
    }
    EXPECT_NE(src.code.find("dragon_tf32_load_b_k8n8(u_", src.prelude_size), std::string::npos);
  }
  EXPECT_FALSE(helpers.empty());
}

// cp.async copies global memory as it is: a GEMM operand that a producer computes (an
// attention's softmax weights, inlined into the tile's fetch) keeps its fetch unpipelined,
// so its candidates pass verify_gpu_code (before, every pipelined one was refused there),
// while one that a reduction leaves in global memory (the DCN layer's low-rank product)
// is pipelined.
TEST(Tf32TensorCore, OnlyOperandsCopiedFromGlobalMemoryArePipelined) {
  const std::string mixed = "mma_m16n8k8_tf32_f32bf16f32";
  const std::string dcn = "dcn_cross_layer:batch=64,dim=64,rank=32,dtype=bf16";
  bool dcn_pipelined = false;
  for (const Sketch& s : generate_design_space(workload(dcn), kH200, RuleSet::cuda())) {
    const std::string text = script::encode(s.trace);
    // The sketch whose only tensor-core GEMM is the mixed one.
    if (text.find(mixed) != std::string::npos && text.find("bf16bf16f32") == std::string::npos) {
      dcn_pipelined = dcn_pipelined || text.find("software_pipeline_depth") != std::string::npos;
    }
  }
  EXPECT_TRUE(dcn_pipelined);
  const std::string sdpa =
      "scaled_dot_product_attention:batch=8,heads=32,seq_q=2048,seq_kv=2048,head_dim=128,causal=true,dtype=bf16";
  ir::PrimFunc func = workload(sdpa);
  int sampled = 0;
  for (const Sketch& s : generate_design_space(func, kH200, RuleSet::cuda())) {
    if (script::encode(s.trace).find(mixed) == std::string::npos) continue;
    for (int seed = 1; seed <= 4; ++seed, ++sampled) {
      CandidateResult r = sample_candidate(s, func, kH200, RuleSet::cuda(), seed);
      EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.failure().message);
    }
  }
  EXPECT_GT(sampled, 0);
}

TEST(Tf32TensorCore, NonGemmF32BlocksGetNone) {
  // Not GEMMs, and GEMMs whose padding to whole 16 x 8 x 8 tiles would more than double
  // the work (m = 4 to 16, k = 3 to 8; GEMMs and convolutions padded within it:
  // test_implicit_gemm_space.cc).
  for (const char* spec : {"relu:shape=128x128", "softmax:shape=128x128,axis=1", "matmul:m=4,n=128,k=64",
                           "matmul:m=128,n=128,k=3"}) {
    EXPECT_TRUE(both_variant_sketches(spec).empty()) << spec;
  }
}

TEST(Tf32TensorCore, BothVariantsAreSampledTensorizeAndComputeTheGemm) {
  for (const char* spec : {"matmul:m=128,n=128,k=64", "matmul:m=64,n=128,k=32,trans_b=true"}) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> s = both_variant_sketches(spec);
    ASSERT_EQ(s.size(), 1u);
    const bool trans_b = std::string(spec).find("trans_b") != std::string::npos;
    std::set<int64_t> seen;
    for (int seed = 0; seed < 32 && seen.size() < 2; ++seed) {
      CandidateResult r = sample_candidate(s[0], func, kH200, testing::cuda_with_both_tf32_variants(), seed);
      ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
      const SpaceCandidate& c = r.candidate();
      std::optional<std::pair<int64_t, SamplingRole>> passes = tf32_passes(c.trace);
      ASSERT_TRUE(passes.has_value());
      if (!seen.insert(passes->first).second) continue;
      std::string text = script::encode(c.trace);
      SCOPED_TRACE(text);
      // The update tensorized with the sampled variant, the init with the fill.
      EXPECT_NE(text.find("tz l"), std::string::npos);
      EXPECT_NE(text.find(schedule::tf32_mma_intrin_name(static_cast<int>(passes->first), trans_b)), std::string::npos);
      EXPECT_NE(text.find("mma_fill_m16n8_f32"), std::string::npos);
      EXPECT_NE(text.find(trans_b ? "mma_load_b_trans_n8k8_f32" : "mma_load_b_k8n8_f32"), std::string::npos);
      // The interpreter runs the descriptions: the same GEMM as the workload.
      std::vector<tensor::HostTensor> expected = interp::make_arguments(func, 7, interp::Distribution::kNormal);
      std::vector<tensor::HostTensor> actual = expected;
      interp::run(func, expected);
      interp::run(c.func, actual);
      EXPECT_TRUE(codegen::testing::outputs_match(func, expected, actual));
      // Printed as the tf32 helpers: the rounding and the m16n8k8 mma (three for 3xtf32).
      codegen::CudaSource src = codegen::generate_cuda(lower::lower(c.func, kH200).func, kH200);
      EXPECT_NE(src.code.find("cvt.rna.tf32.f32"), std::string::npos);
      EXPECT_NE(src.code.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
      // One pass rounds each fragment once, at its load; 3xTF32 splits each once there.
      const bool three = passes->first == 3;
      const std::string helper = three ? "dragon_tf32_mma_m16n8k8_3x_presplit(" : "dragon_tf32_mma_m16n8k8_prerounded(";
      const std::string load = three ? "_split(" : "_rounded(";
      const size_t prelude_end = src.prelude_size;
      EXPECT_NE(src.code.find(helper, prelude_end), std::string::npos) << src.code.substr(prelude_end);
      // A (and a B stored [n, k]) by ldmatrix on 32-bit words: the rule pads shared rows
      // to 16 bytes; a B stored [k, n] by lane.
      EXPECT_NE(src.code.find("dragon_tf32_ldmatrix_a_m16k8" + load, prelude_end), std::string::npos);
      EXPECT_NE(src.code.find(std::string(trans_b ? "dragon_tf32_ldmatrix_b_trans_n8k8" : "dragon_tf32_load_b_k8n8") + load,
                              prelude_end),
                std::string::npos);
      EXPECT_EQ(src.code.find("dragon_ldmatrix_", prelude_end), std::string::npos);
    }
    EXPECT_EQ(seen, (std::set<int64_t>{1, 3}));
  }
}

TEST(Tf32TensorCore, MutateTileSizeRedrawsTheVariant) {
  const std::string spec = "matmul:m=128,n=128,k=64";
  ir::PrimFunc func = workload(spec);
  std::vector<Sketch> s = both_variant_sketches(spec);
  ASSERT_EQ(s.size(), 1u);
  CandidateResult first = sample_candidate(s[0], func, kH200, testing::cuda_with_both_tf32_variants(), 1);
  ASSERT_TRUE(first.ok()) << first.failure().message;
  const int64_t before = tf32_passes(first.candidate().trace)->first;
  std::unique_ptr<Mutator> mutate = make_mutate_tile_size();
  schedule::RandomEngine rng(11);
  bool moved = false;
  for (int round = 0; round < 60 && !moved; ++round) {
    std::optional<schedule::Trace> t = mutate->apply(first.candidate().trace, func, rng);
    ASSERT_TRUE(t.has_value());
    CandidateResult r = replay_candidate(*t, func, kH200, testing::cuda_with_both_tf32_variants());
    ASSERT_TRUE(r.ok()) << r.failure().message;
    const int64_t after = tf32_passes(r.candidate().trace)->first;
    if (after == before) continue;
    moved = true;
    EXPECT_NE(script::encode(r.candidate().trace).find(schedule::tf32_mma_intrin_name(static_cast<int>(after), false)),
              std::string::npos);
  }
  EXPECT_TRUE(moved);
}

// The rule's candidate for the 4096^3 f32 GEMM at the expert scripts' decisions: blocks of
// 128 x 128 (i tiles 8 4 2 4 1, j tiles 8 4 2 4 2: 2 x 2 warps of 64 x 64), k steps of 32
// (128 4 1 tiles of 8), 16-byte cooperative copies, unroll 512, and `passes`.
SpaceCandidate expert_candidate(int64_t passes) {
  const std::string spec = "matmul:m=4096,n=4096,k=4096";
  std::vector<Sketch> s = both_variant_sketches(spec);
  EXPECT_EQ(s.size(), 1u);
  CandidateResult r = testing::candidate_at_decisions(
      s.at(0), workload(spec), testing::cuda_with_both_tf32_variants(), {{8, 4, 2, 4, 1}, {8, 4, 2, 4, 2}, {128, 4, 1}},
      [&](SamplingRole role, const std::vector<int64_t>& candidates) -> std::optional<int64_t> {
        // Unpipelined (the k steps' depth over {1, 2, 3}, 1), as when the scripts were timed;
        // `passes` for the tf32 variant (over {1, 3}).
        if (role == SamplingRole::kTileChoice) return candidates == std::vector<int64_t>{1, 2, 3} ? 1 : passes;
        return role == SamplingRole::kVectorLength ? 4 : role == SamplingRole::kUnroll ? 512 : passes;
      });
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.failure().message);
  return r.candidate();
}

// A plain GEMM's k steps are software-pipelined at a sampled depth (1, 2 or 3), and the
// shared memory of padded rows times the stages is what decides whether a tiling fits: a
// 1024 x 16 A tile of rows padded from 16 to 36 floats, in 3 stages, lowers to 457,200
// bytes. verify_gpu_code counted it unpadded (200 KB) and passed it, and the decision
// sampler drew such tilings; now verify rejects it and a fresh draw fits.
TEST(Tf32TensorCore, PipelinedPaddedTilesAreCountedAtTheirLoweredSize) {
  const std::string spec = "matmul:m=1024,n=1024,k=1024";
  std::vector<Sketch> s = both_variant_sketches(spec);
  ASSERT_EQ(s.size(), 1u);
  auto at_depth = [&](int64_t depth) {
    return testing::candidate_at_decisions(s[0], workload(spec), testing::cuda_with_both_tf32_variants(),
                                           {{1, 1, 8, 2, 4}, {16, 4, 1, 1, 2}, {64, 1, 2}},
                                           [&](SamplingRole role, const std::vector<int64_t>& candidates)
                                               -> std::optional<int64_t> {
                                             if (role == SamplingRole::kTileChoice) {
                                               return candidates == std::vector<int64_t>{1, 2, 3} ? depth : 3;
                                             }
                                             if (role == SamplingRole::kVectorLength) return 1;
                                             return std::nullopt;
                                           });
  };
  CandidateResult serial = at_depth(1);
  ASSERT_TRUE(serial.ok()) << serial.failure().message;
  CandidateResult deep = at_depth(3);
  ASSERT_FALSE(deep.ok()) << "a 3-stage pipeline of this tile does not fit";
  EXPECT_NE(deep.failure().message.find("shared memory"), std::string::npos) << deep.failure().message;
  // Fresh draws of the sketch fit, pipelined or not, and some are pipelined.
  int pipelined = 0;
  for (int64_t seed = 1; seed <= 24; ++seed) {
    CandidateResult r = sample_candidate(s[0], workload(spec), kH200, testing::cuda_with_both_tf32_variants(), seed);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
    pipelined += script::encode(r.candidate().trace).find("swstage") != std::string::npos ? 1 : 0;
  }
  EXPECT_GT(pipelined, 0);
}

// The expert scripts for the next GPU session's timing against cuBLAS
// (data/scripts/expert/gpu/gemm_f32_{tf32,3xtf32}_4096.script) are this rule's candidates:
// search can find what they time.
TEST(Tf32TensorCore, TheExpertScriptsAreTheRulesCandidates) {
  for (int64_t passes : {1, 3}) {
    SpaceCandidate c = expert_candidate(passes);
    const std::string file = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu/gemm_f32_" +
                             (passes == 3 ? "3xtf32" : "tf32") + "_4096.script";
    EXPECT_EQ(script::encode(c.trace), read_text_file(file)) << file;
  }
}

// Shared rows of 33 floats (padding 1) are not 16-byte aligned: the A tile falls back to
// per-lane loads, and the GEMM still prints as tf32 mma.
TEST(Tf32TensorCore, UnalignedSharedRowsFallBackToPerLaneLoads) {
  std::string text = script::encode(expert_candidate(1).trace);
  const std::string aligned = "sa b2 0 -2 8 4";
  ASSERT_NE(text.find(aligned), std::string::npos) << text;
  text.replace(text.find(aligned), aligned.size(), "sa b2 0 -2 32 1");
  schedule::Schedule sch(workload("matmul:m=4096,n=4096,k=4096"));
  script::decode(text).apply_to(sch);
  codegen::CudaSource src = codegen::generate_cuda(lower::lower(sch.func(), kH200).func, kH200);
  EXPECT_NE(src.code.find("dragon_tf32_load_a_m16k8_rounded(A_shared_dyn_warp", src.prelude_size), std::string::npos);
  EXPECT_EQ(src.code.find("dragon_tf32_ldmatrix_a_m16k8", src.prelude_size), std::string::npos);
  EXPECT_NE(src.code.find("dragon_tf32_mma_m16n8k8_prerounded(", src.prelude_size), std::string::npos);
}

}  // namespace
}  // namespace dragon::search
