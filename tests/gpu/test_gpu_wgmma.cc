// On the H200: GEMMs through Hopper's wgmma (warpgroup MMA with shared-memory operands by
// 128-byte-swizzled descriptors, tensor_intrin.h) match the interpreter running the
// unscheduled function: f16 and bf16, N = 64, 128, 256 and an odd 24, one or two
// warpgroups, unpipelined and cp.async-pipelined 3 stages deep, and the wgmma expert
// scripts at small shapes; and wgmma candidates that search samples (the
// multi_level_tiling_wgmma rule: warpgroups, N, pipeline depth) of a 1024^3 f16 GEMM against
// the default schedule on the device, and of small GEMMs (f16, bf16, a batch matmul) against
// the interpreter. Without a device every test says [SKIP]. On the CPU,
// tests/unit/codegen/test_cuda_wgmma.cc checks the same schedules on the interpreter and
// compiles them with NVRTC; tests/unit/search/test_wgmma_space.cc and test_search_nvrtc
// do so for the search candidates.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dragon/ops/op_registry.h"
#include "dragon/search/default_schedule.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
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

// Up to `want` candidates of the wgmma rule's sketch of `spec` with distinct decisions
// (warpgroups, N, pipeline depth; the unroll step aside), each with its decisions.
std::vector<std::pair<std::string, ir::PrimFunc>> wgmma_candidates(const std::string& spec, size_t want) {
  const lower::Target target = lower::Target::cuda_h200();
  ir::PrimFunc func = unscheduled(spec);
  std::vector<search::Sketch> sketches = search::generate_design_space(func, target, search::RuleSet::cuda());
  const search::Sketch* wgmma = nullptr;
  for (const search::Sketch& s : sketches) {
    for (const std::string& a : s.applied) {
      if (a.rfind("multi_level_tiling_wgmma(", 0) == 0) wgmma = &s;
    }
  }
  std::vector<std::pair<std::string, ir::PrimFunc>> out;
  if (wgmma == nullptr) return out;
  std::set<std::string> seen;
  for (int seed = 0; seed < 64 && out.size() < want; ++seed) {
    search::CandidateResult r = search::sample_candidate(*wgmma, func, target, search::RuleSet::cuda(), seed);
    if (!r.ok()) continue;
    std::string decisions;
    for (const search::SamplingSite& site : search::sampling_sites(r.candidate().trace)) {
      if (site.role == search::SamplingRole::kUnroll) continue;
      decisions += schedule::to_string(*r.candidate().trace.decision(site.instruction)) + " ";
    }
    if (seen.insert(decisions).second) out.emplace_back(spec + " decisions " + decisions, r.candidate().func);
  }
  return out;
}

TEST(GpuWgmma, SearchCandidatesMatchTheDefaultScheduleAt1024AndTheInterpreterWhenSmall) {
  DRAGON_REQUIRE_GPU();
  const std::string spec = "matmul:m=1024,n=1024,k=1024,trans_b=true,dtype=f16";
  const ir::PrimFunc func = unscheduled(spec);
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  // The reference at 1024^3: the default schedule on the device (the interpreter would take
  // minutes; test_gpu_ops checks the default schedule against it).
  auto reference_exe = runtime::build(search::default_schedule(func, lower::Target::cuda_h200()).func(),
                                      lower::Target::cuda_h200(), options);
  ASSERT_TRUE(reference_exe.ok()) << reference_exe.error().describe();
  const std::vector<tensor::HostTensor> inputs = interp::make_arguments(func, 13, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> reference = inputs;
  Status ran = reference_exe.value()->run(reference);
  ASSERT_TRUE(ran.ok()) << ran.error().describe();
  std::vector<std::pair<std::string, ir::PrimFunc>> candidates = wgmma_candidates(spec, 6);
  EXPECT_EQ(candidates.size(), 6u) << "the wgmma rule should offer six distinct candidates of " << spec;
  for (const auto& [label, scheduled] : candidates) {
    auto exe = runtime::build(scheduled, lower::Target::cuda_h200(), options);
    ASSERT_TRUE(exe.ok()) << label << ": " << exe.error().describe();
    std::vector<tensor::HostTensor> actual = inputs;
    Status status = exe.value()->run(actual);
    ASSERT_TRUE(status.ok()) << label << ": " << status.error().describe();
    EXPECT_TRUE(testing::outputs_match(func, reference, actual, kGpuToleranceScale)) << label;
  }
  // At small shapes (bf16, a batch matmul too) candidates against the interpreter.
  for (const std::string small : {"matmul:m=256,n=256,k=256,trans_b=true,dtype=f16",
                                  "matmul:m=128,n=256,k=256,trans_b=true,dtype=bf16",
                                  "batch_matmul:batch=3,m=128,n=256,k=128,trans_b=true,dtype=f16"}) {
    std::vector<std::pair<std::string, ir::PrimFunc>> small_candidates = wgmma_candidates(small, 4);
    EXPECT_EQ(small_candidates.size(), 4u) << small;
    for (const auto& [label, scheduled] : small_candidates) {
      EXPECT_TRUE(runs_like_interpreter(label, unscheduled(small), scheduled, kGpuToleranceScale));
    }
  }
}

}  // namespace
}  // namespace dragon::codegen
