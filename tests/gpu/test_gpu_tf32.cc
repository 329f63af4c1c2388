// On the H200: f32 GEMMs through TF32 tensor cores (the tensor-core rule's tf32 and 3xtf32
// candidates and the tf32 expert scripts, tensor_intrin.h's m16n8k8 family) judged by the
// harness's own check: the
// reference and its f64 twin, the calibrated f32 tolerance, compare_output. 3xTF32 must pass
// it; one-pass TF32 rounds operands to a 10-bit mantissa, so its error is reported (and
// bounded far from garbage, which catches a wrong lane mapping), not held to the f32
// tolerance. Without a device every test says [SKIP]. On the CPU,
// tests/unit/search/test_tf32_space.cc runs these candidates on the interpreter and
// test_search_nvrtc compiles them.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "dragon/harness/output_comparison.h"
#include "dragon/harness/reference.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/cuda_function.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/search/design_space.h"
#include "dragon/script/script.h"
#include "dragon/search/postproc.h"
#include "dragon/support/file.h"
#include "interpreter_match.h"
#include "unit/search/search_test_sketches.h"

namespace dragon::codegen {
namespace {

// One candidate of the tensor-core sketch of `spec` per tf32 variant (1: tf32, 3: 3xtf32).
std::map<int64_t, ir::PrimFunc> tf32_candidates(const std::string& spec) {
  const lower::Target target = lower::Target::cuda_h200();
  ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const search::RuleSet& rules = search::testing::cuda_with_both_tf32_variants();
  std::vector<search::Sketch> sketches = search::generate_design_space(func, target, rules);
  const search::Sketch* tc = nullptr;
  for (const search::Sketch& s : sketches) {
    for (const std::string& a : s.applied) {
      if (a.rfind("multi_level_tiling_tensor_core(", 0) == 0) tc = &s;
    }
  }
  std::map<int64_t, ir::PrimFunc> out;
  if (tc == nullptr) {
    ADD_FAILURE() << spec << ": no tensor-core sketch";
    return out;
  }
  for (int seed = 0; seed < 64 && out.size() < 2; ++seed) {
    search::CandidateResult r = search::sample_candidate(*tc, func, target, rules, seed);
    if (!r.ok()) continue;
    const int64_t passes =
        r.candidate().trace.to_string().find("mma_m16n8k8_3xtf32f32") != std::string::npos ? 3 : 1;
    out.emplace(passes, r.candidate().func);
  }
  EXPECT_EQ(out.size(), 2u) << spec;
  return out;
}

// The expert scripts (data/scripts/expert/gpu/gemm_f32_*tf32*_4096.script; their tiles are
// repaired to the shape) applied to `spec`, by variant and name.
std::vector<std::tuple<int64_t, std::string, ir::PrimFunc>> tf32_expert_kernels(const std::string& spec) {
  std::vector<std::tuple<int64_t, std::string, ir::PrimFunc>> out;
  for (const char* name : {"gemm_f32_tf32_4096", "gemm_f32_3xtf32_4096", "gemm_f32_tf32_pipe3_4096",
                           "gemm_f32_3xtf32_pipe3_4096"}) {
    schedule::Schedule sch(ops::OpRegistry::global().make_workload(spec).func);
    script::decode(read_text_file(std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu/" + name + ".script"))
        .apply_to(sch);
    out.emplace_back(std::string(name).find("3xtf32") != std::string::npos ? 3 : 1, name, sch.func());
  }
  return out;
}

// Runs every kernel of `spec` (the rule's candidates, and the expert scripts where
// `experts`) on seeded rand and normal inputs and judges it by the harness's check.
void check_tf32_kernels(const std::string& spec, bool experts) {
  ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  std::vector<std::tuple<int64_t, std::string, ir::PrimFunc>> kernels;
  for (const auto& [passes, candidate] : tf32_candidates(spec)) kernels.emplace_back(passes, "candidate", candidate);
  if (experts) {
    for (auto& k : tf32_expert_kernels(spec)) kernels.push_back(std::move(k));
  }
  harness::ReferenceOptions ref_options;
  ref_options.engine = harness::ReferenceEngine::kCompiledCpu;
  ref_options.build.cache = &testing::test_cache();
  harness::Reference reference(func, ref_options);
  for (interp::Distribution dist : {interp::Distribution::kRand, interp::Distribution::kNormal}) {
    std::vector<tensor::HostTensor> inputs = interp::make_arguments(func, 5, dist);
    std::vector<harness::ReferenceOutput> expected = reference.compute(inputs);
    ASSERT_EQ(expected.size(), 1u);
    for (const auto& [passes, what, candidate] : kernels) {
      {
        const std::string label = spec + " " + what + (passes == 3 ? " 3xtf32" : " tf32") +
                                  (dist == interp::Distribution::kRand ? " rand" : " normal");
        runtime::BuildOptions options;
        options.cache = &testing::test_cache();
        auto exe = runtime::build(candidate, lower::Target::cuda_h200(), options);
        ASSERT_TRUE(exe.ok()) << label << ": " << exe.error().describe();
        std::vector<tensor::HostTensor> args = inputs;
        Status status = exe.value()->run(args);
        ASSERT_TRUE(status.ok()) << label << ": " << status.error().describe();
        const harness::ReferenceOutput& out = expected[0];
        harness::OutputComparison c =
            harness::compare_output(out.native, out.exact, args[out.param_index], out.tolerance);
        std::printf("%s: normalized error %.3g (f32 tolerance %.3g) %s\n", label.c_str(), c.normalized_error,
                    out.tolerance, c.ok() ? "passes" : "fails");
        if (passes == 3) {
          EXPECT_TRUE(c.ok()) << label << ": " << harness::describe(c, out.native.shape());
        } else {
          // TF32's own rounding (2^-11 relative per operand) summed over k stays below 1e-2
          // of the output's scale; a misplaced fragment element is of the scale itself.
          EXPECT_LT(c.normalized_error, 1e-2) << label << ": " << harness::describe(c, out.native.shape());
          EXPECT_EQ(c.non_finite + c.unwritten, 0) << label;
        }
      }
    }
  }
}

// The rounding the one-pass mma and 3xTF32's small parts take (dragon_tf32_round_for_mma:
// half an ulp added, the mma dropping the 13 low bits) gives the mma cvt.rna's operand for
// every bit pattern: random patterns (NaNs, infinities and subnormals among them), the
// GPU's canonical NaN and its negation, the largest finite values and ties, each masked as
// the mma masks it, equal to cvt.rna.tf32.f32 of the same value.
TEST(GpuTf32, TheMmaRoundingGivesCvtRnasOperandForEveryBitPattern) {
  DRAGON_REQUIRE_GPU();
  const lower::Target target = lower::Target::cuda_h200();
  const ir::PrimFunc candidate = tf32_candidates("matmul:m=64,n=64,k=64").begin()->second;
  const codegen::CudaSource generated = generate_cuda(lower::lower(candidate, target).func, target);
  const std::string code = generated.code.substr(0, generated.prelude_size) + R"(
extern "C" __global__ void tf32_rounding(const unsigned* in, unsigned* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float x = __uint_as_float(in[i]);
  out[2 * i] = dragon_tf32_round(x);
  out[2 * i + 1] = dragon_tf32_round_for_mma(x) & 0xffffe000u;
}
)";
  Expected<runtime::Cubin> cubin = runtime::nvrtc_compile(code, "tf32_rounding.cu", {}, testing::test_cache());
  ASSERT_TRUE(cubin.ok()) << cubin.error().describe();
  constexpr int kThreads = 256, kBlocks = 4096, kCount = kThreads * kBlocks;
  runtime::CudaBuild build;
  build.source.code = code;
  build.cubin = cubin.value();
  codegen::KernelLaunch launch{.name = "tf32_rounding", .grid = {kBlocks, 1, 1}, .block = {kThreads, 1, 1}};
  launch.args = {codegen::KernelArg{codegen::KernelArg::Kind::kParam, 0}, codegen::KernelArg{codegen::KernelArg::Kind::kParam, 1}};
  build.source.kernels.push_back(launch);
  auto loaded = runtime::LoadedCudaFunction::load(build);
  ASSERT_TRUE(loaded.ok()) << loaded.error().describe();

  std::vector<uint32_t> in(kCount);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (uint32_t& v : in) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<uint32_t>(state >> 32);
  }
  const uint32_t special[] = {0x7fffffffu, 0xffffffffu, 0x7fc00000u, 0x7f800001u, 0x7f800000u, 0xff800000u,
                              0x7f7fffffu, 0xff7fffffu, 0x7f7ff000u, 0x3f801000u, 0xbf801000u, 0x3f800fffu,
                              0x3f802000u, 0x00001000u, 0x80001000u, 0x00000fffu, 0x00000000u, 0x80000000u};
  for (size_t k = 0; k < std::size(special); ++k) in[k] = special[k];
  runtime::CudaDriver* driver = runtime::CudaDriver::get().value();
  auto in_device = driver->allocate(kCount * sizeof(uint32_t));
  auto out_device = driver->allocate(2 * kCount * sizeof(uint32_t));
  ASSERT_TRUE(in_device.ok() && out_device.ok());
  ASSERT_TRUE(driver->copy_to_device(in_device.value(), in.data(), kCount * sizeof(uint32_t)).ok());
  runtime::DevicePtr params[] = {in_device.value(), out_device.value()};
  ASSERT_TRUE(loaded.value()->launch(params).ok());
  std::vector<uint32_t> out(2 * kCount);
  ASSERT_TRUE(driver->copy_to_host(out.data(), out_device.value(), out.size() * sizeof(uint32_t)).ok());
  driver->release(in_device.value());
  driver->release(out_device.value());
  int differ = 0;
  for (int i = 0; i < kCount; ++i) {
    if (out[2 * i] == out[2 * i + 1]) continue;
    if (++differ <= 8) {
      ADD_FAILURE() << std::hex << "x = 0x" << in[i] << ": cvt.rna 0x" << out[2 * i] << ", the mma's rounding 0x"
                    << out[2 * i + 1];
    }
  }
  EXPECT_EQ(differ, 0) << "of " << kCount;
}

TEST(GpuTf32, ThreeXTf32PassesTheF32CheckAndTf32IsCloseToIt) {
  DRAGON_REQUIRE_GPU();
  check_tf32_kernels("matmul:m=1024,n=1024,k=1024", true);
  check_tf32_kernels("matmul:m=512,n=256,k=2048,trans_b=true", false);
}

// Operands staged by columns ([k, m] or [k, n] shared tiles whose fragments load
// transposed: mma_load_a_m16k8_from_k8m16, mma_load_b_n8k8_from_k8n8): a transposed A
// with its B copied [k, n], the NCHW input of a 1x1 convolution of one image, a
// padded GEMM's [k, n] B. A lane reading the wrong element would be an error of the
// output's own scale.
TEST(GpuTf32, OperandsStagedByColumnsPassTheF32Check) {
  DRAGON_REQUIRE_GPU();
  check_tf32_kernels("matmul:m=256,n=128,k=512,trans_a=true", false);
  check_tf32_kernels(
      "conv2d:batch=1,in_channels=32,out_channels=64,size=18x18,kernel=1x1,stride=1x1,padding=0x0,dilation=1x1,"
      "groups=1,bias=false,dtype=f32",
      false);
  check_tf32_kernels("matmul:m=100,n=60,k=72", false);
}

// An f32 x bf16 GEMM (the DCN layer's f32 low-rank product times bf16 weights): the bf16
// operand kept in bf16 and widened in the mma. Every candidate of the sketches that
// tensorize it that way, one-pass and 3xTF32, passes the harness's check of the bf16 layer.
TEST(GpuTf32, F32TimesBf16GemmsPassTheLayersCheck) {
  DRAGON_REQUIRE_GPU();
  const std::string spec = "dcn_cross_layer:batch=1024,dim=512,rank=128,dtype=bf16";
  const lower::Target target = lower::Target::cuda_h200();
  ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  std::vector<search::Sketch> sketches = search::generate_design_space(func, target, search::RuleSet::cuda());
  harness::ReferenceOptions ref_options;
  ref_options.engine = harness::ReferenceEngine::kCompiledCpu;
  ref_options.build.cache = &testing::test_cache();
  harness::Reference reference(func, ref_options);
  std::vector<tensor::HostTensor> inputs = interp::make_arguments(func, 5, interp::Distribution::kNormal);
  std::vector<harness::ReferenceOutput> expected = reference.compute(inputs);
  ASSERT_EQ(expected.size(), 1u);
  std::set<std::string> variants;
  int seed = 0;
  for (const search::Sketch& sketch : sketches) {
    if (script::encode(sketch.trace).find("mma_m16n8k8_tf32_f32bf16f32") == std::string::npos) continue;
    for (int draw = 0; draw < 4; ++draw, ++seed) {
      search::CandidateResult r = search::sample_candidate(sketch, func, target, search::RuleSet::cuda(), seed);
      if (!r.ok()) continue;
      const std::string text = script::encode(r.candidate().trace);
      const std::string variant = text.find("3xtf32_f32bf16f32") != std::string::npos ? "3xtf32" : "tf32";
      variants.insert(variant);
      const std::string label = spec + " " + variant + " seed " + std::to_string(seed);
      runtime::BuildOptions options;
      options.cache = &testing::test_cache();
      auto exe = runtime::build(r.candidate().func, target, options);
      ASSERT_TRUE(exe.ok()) << label << ": " << exe.error().describe();
      std::vector<tensor::HostTensor> args = inputs;
      Status status = exe.value()->run(args);
      ASSERT_TRUE(status.ok()) << label << ": " << status.error().describe();
      const harness::ReferenceOutput& out = expected[0];
      harness::OutputComparison c = harness::compare_output(out.native, out.exact, args[out.param_index], out.tolerance);
      std::printf("%s: normalized error %.3g (tolerance %.3g) %s\n", label.c_str(), c.normalized_error, out.tolerance,
                  c.ok() ? "passes" : "fails");
      EXPECT_TRUE(c.ok()) << label << ": " << harness::describe(c, out.native.shape());
    }
  }
  EXPECT_FALSE(variants.empty()) << "no candidate tensorized the f32 x bf16 GEMM";
}

}  // namespace
}  // namespace dragon::codegen
