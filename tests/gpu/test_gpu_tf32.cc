// On the H200: f32 GEMMs through TF32 tensor cores (the tensor-core rule's tf32 and 3xtf32
// candidates, tensor_intrin.h's m16n8k8 family) judged by the harness's own check: the
// reference and its f64 twin, the calibrated f32 tolerance, compare_output. 3xTF32 must pass
// it; one-pass TF32 rounds operands to a 10-bit mantissa, so its error is reported (and
// bounded far from garbage, which catches a wrong lane mapping), not held to the f32
// tolerance. Without a device every test says [SKIP]. On the CPU,
// tests/unit/search/test_tf32_space.cc runs these candidates on the interpreter and
// test_search_nvrtc compiles them.
#include <gtest/gtest.h>

#include <map>

#include "dragon/harness/output_comparison.h"
#include "dragon/harness/reference.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "interpreter_match.h"

namespace dragon::codegen {
namespace {

// One candidate of the tensor-core sketch of `spec` per tf32 variant (1: tf32, 3: 3xtf32).
std::map<int64_t, ir::PrimFunc> tf32_candidates(const std::string& spec) {
  const lower::Target target = lower::Target::cuda_h200();
  ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  std::vector<search::Sketch> sketches = search::generate_design_space(func, target, search::RuleSet::cuda());
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
    search::CandidateResult r = search::sample_candidate(*tc, func, target, search::RuleSet::cuda(), seed);
    if (!r.ok()) continue;
    const int64_t passes =
        r.candidate().trace.to_string().find("mma_m16n8k8_3xtf32f32") != std::string::npos ? 3 : 1;
    out.emplace(passes, r.candidate().func);
  }
  EXPECT_EQ(out.size(), 2u) << spec;
  return out;
}

TEST(GpuTf32, ThreeXTf32PassesTheF32CheckAndTf32IsCloseToIt) {
  DRAGON_REQUIRE_GPU();
  for (const char* spec : {"matmul:m=1024,n=1024,k=1024", "matmul:m=512,n=256,k=2048,trans_b=true"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    harness::ReferenceOptions ref_options;
    ref_options.engine = harness::ReferenceEngine::kCompiledCpu;
    ref_options.build.cache = &testing::test_cache();
    harness::Reference reference(func, ref_options);
    for (interp::Distribution dist : {interp::Distribution::kRand, interp::Distribution::kNormal}) {
      std::vector<tensor::HostTensor> inputs = interp::make_arguments(func, 5, dist);
      std::vector<harness::ReferenceOutput> expected = reference.compute(inputs);
      ASSERT_EQ(expected.size(), 1u);
      for (const auto& [passes, candidate] : tf32_candidates(spec)) {
        const std::string label = std::string(spec) + (passes == 3 ? " 3xtf32" : " tf32") +
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

}  // namespace
}  // namespace dragon::codegen
