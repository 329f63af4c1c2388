// What search makes compiles for the H200 with NVRTC (no GPU needed): the untuned default
// schedule of every op kind of every suite at its full shape, and candidates sampled from
// the design spaces of a GEMM (f32 tiling, f16 tensor cores) and a softmax (cross-thread
// reduction), wgmma candidates of f16/bf16 GEMMs and a batch matmul (the wgmma rule,
// sm_90a), tf32/3xtf32 tensor-core candidates of f32 GEMMs, and GEMMs and convs of partial
// tiles padded to whole ones. Skips,
// saying so, in a build without the toolkit.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string_view>

#include "dragon/ir/stmt.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/search/default_schedule.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "suite_workloads.h"
#include "unit/search/search_test_sketches.h"

namespace dragon::search {
namespace {

// Compiles every function (NVRTC, batched four to a program on two threads, as the 2-core
// CI machine affords) and expects a CUBIN for each.
void expect_compiles(const std::vector<std::string>& labels, const std::vector<ir::PrimFunc>& scheduled) {
  std::vector<ir::PrimFunc> flats;
  for (size_t i = 0; i < scheduled.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    ASSERT_NO_THROW(flats.push_back(lower::lower(scheduled[i], lower::Target::cuda_h200()).func));
  }
  runtime::BuildOptions options;
  options.nvrtc_threads = 2;
  std::vector<Expected<runtime::CudaBuild>> builds =
      runtime::compile_cuda_batch(flats, lower::Target::cuda_h200(), options, 4);
  ASSERT_EQ(builds.size(), flats.size());
  for (size_t i = 0; i < builds.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    ASSERT_TRUE(builds[i].ok()) << builds[i].error().describe();
    EXPECT_EQ(builds[i].value().cubin.bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
  }
}

TEST(SearchNvrtc, TheDefaultScheduleOfEveryOpKindOfEverySuiteCompiles) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> scheduled;
  for (const testing::SuiteWorkload& w : testing::one_problem_per_op_kind()) {
    labels.push_back(w.label + " " + w.spec);
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(w.spec).func;
    scheduled.push_back(default_schedule(func, lower::Target::cuda_h200()).func());
  }
  EXPECT_GE(scheduled.size(), 40u);
  expect_compiles(labels, scheduled);
}

// KernelBench's longest sums (37 Frobenius norm, 94 MSE, 96 Huber: 2^30 terms and more;
// 6: K = 524288), whose default schedule spans blocks: partial sums, then a write-back.
TEST(SearchNvrtc, TheDefaultScheduleOfSumsSpanningBlocksCompiles) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> scheduled;
  for (const testing::SuiteWorkload& w : testing::suite_workloads()) {
    if (w.label != "kernelbench-l1/37" && w.label != "kernelbench-l1/94" && w.label != "kernelbench-l1/96" &&
        w.label != "kernelbench-l1/6") {
      continue;
    }
    labels.push_back(w.label + " " + w.spec);
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(w.spec).func;
    scheduled.push_back(default_schedule(func, lower::Target::cuda_h200()).func());
    bool partial_sums = false;
    for (const ir::Buffer& b : scheduled.back()->body.as<ir::BlockRealizeNode>()->block->alloc_buffers) {
      partial_sums = partial_sums || b->name.ends_with("_rf");
    }
    EXPECT_TRUE(partial_sums) << labels.back();
  }
  ASSERT_EQ(scheduled.size(), 4u);
  expect_compiles(labels, scheduled);
}

TEST(SearchNvrtc, SampledCandidatesCompile) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> scheduled;
  const lower::Target target = lower::Target::cuda_h200();
  for (const char* spec : {"matmul:m=512,n=512,k=512", "matmul:m=512,n=512,k=512,dtype=f16",
                           "softmax:shape=256x4096,axis=1"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    std::vector<Sketch> sketches = generate_design_space(func, target, RuleSet::cuda());
    int found = 0;
    // One candidate per sketch (NVRTC takes about a second for a tensor-core kernel).
    for (int seed = 0; seed < 64 && found < static_cast<int>(sketches.size()); ++seed) {
      const Sketch& sketch = sketches[static_cast<size_t>(seed) % sketches.size()];
      CandidateResult r = sample_candidate(sketch, func, target, RuleSet::cuda(), seed);
      if (!r.ok()) continue;
      labels.push_back(std::string(spec) + " seed " + std::to_string(seed) + "\n" + r.candidate().trace.to_string());
      scheduled.push_back(r.candidate().func);
      ++found;
    }
    EXPECT_GT(found, 0) << spec;
  }
  expect_compiles(labels, scheduled);
}

// The first sketch of `sketches` that the rule `rule` was applied to, or nullptr.
const Sketch* sketch_applying(const std::vector<Sketch>& sketches, std::string_view rule) {
  const std::string prefix = std::string(rule) + "(";
  for (const Sketch& s : sketches) {
    for (const std::string& a : s.applied) {
      if (a.starts_with(prefix)) return &s;
    }
  }
  return nullptr;
}

// Compiles `flats` in one NVRTC batch for `target` (two compiler threads); each must give an
// ELF cubin, and `check(i, build)` looks at the source of each.
void expect_batch_compiles(const std::vector<ir::PrimFunc>& flats, const std::vector<std::string>& labels,
                           const lower::Target& target,
                           const std::function<void(size_t, const runtime::CudaBuild&)>& check) {
  runtime::BuildOptions options;
  options.nvrtc_threads = 2;
  std::vector<Expected<runtime::CudaBuild>> builds = runtime::compile_cuda_batch(flats, target, options, 4);
  ASSERT_EQ(builds.size(), flats.size());
  for (size_t i = 0; i < builds.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    ASSERT_TRUE(builds[i].ok()) << builds[i].error().describe();
    EXPECT_EQ(builds[i].value().cubin.bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
    check(i, builds[i].value());
  }
}

TEST(SearchNvrtc, SampledWgmmaCandidatesCompileForSm90a) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  const lower::Target target = lower::Target::cuda_h200();
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> flats;
  for (const char* spec : {"matmul:m=4096,n=4096,k=4096,trans_b=true,dtype=f16",
                           "matmul:m=4096,n=4096,k=4096,trans_b=true,dtype=bf16",
                           "batch_matmul:batch=4,m=512,n=512,k=512,trans_b=true,dtype=f16"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    std::vector<Sketch> sketches = generate_design_space(func, target, RuleSet::cuda());
    const Sketch* wgmma = sketch_applying(sketches, "multi_level_tiling_wgmma");
    ASSERT_NE(wgmma, nullptr) << spec;
    // Four candidates with different rule decisions (warpgroups, N, depth) of each.
    std::set<std::string> seen;
    for (int seed = 0; seed < 64 && seen.size() < 4; ++seed) {
      CandidateResult r = sample_candidate(*wgmma, func, target, RuleSet::cuda(), seed);
      ASSERT_TRUE(r.ok()) << spec << " seed " << seed << ": " << r.failure().message;
      std::string decisions;
      for (const SamplingSite& site : sampling_sites(r.candidate().trace)) {
        if (site.role != SamplingRole::kUnroll) decisions += schedule::to_string(*r.candidate().trace.decision(site.instruction)) + " ";
      }
      if (!seen.insert(decisions).second) continue;
      labels.push_back(std::string(spec) + " seed " + std::to_string(seed) + "\n" + r.candidate().trace.to_string());
      ASSERT_NO_THROW(flats.push_back(lower::lower(r.candidate().func, target).func)) << labels.back();
    }
    EXPECT_EQ(seen.size(), 4u) << spec;
  }
  expect_batch_compiles(flats, labels, target, [](size_t, const runtime::CudaBuild& build) {
    EXPECT_NE(build.source.code.find("wgmma.mma_async.sync.aligned.m64n"), std::string::npos);
  });
}

TEST(SearchNvrtc, SampledTf32CandidatesCompileForSm90a) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  const lower::Target target = lower::Target::cuda_h200();
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> flats;
  std::vector<int64_t> variants;  // the tf32 passes of each candidate
  for (const char* spec : {"matmul:m=4096,n=4096,k=4096", "matmul:m=1024,n=1024,k=1024,trans_b=true"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    std::vector<Sketch> sketches = generate_design_space(func, target, testing::cuda_with_both_tf32_variants());
    const Sketch* tc = sketch_applying(sketches, "multi_level_tiling_tensor_core");
    ASSERT_NE(tc, nullptr) << spec;
    // A candidate of each variant (1: tf32, 3: 3xtf32).
    std::set<int64_t> seen;
    for (int seed = 0; seed < 64 && seen.size() < 2; ++seed) {
      CandidateResult r = sample_candidate(*tc, func, target, testing::cuda_with_both_tf32_variants(), seed);
      ASSERT_TRUE(r.ok()) << spec << " seed " << seed << ": " << r.failure().message;
      const std::string text = r.candidate().trace.to_string();
      const int64_t passes = text.find("mma_m16n8k8_3xtf32f32") != std::string::npos ? 3 : 1;
      if (!seen.insert(passes).second) continue;
      labels.push_back(std::string(spec) + " seed " + std::to_string(seed) + "\n" + text);
      variants.push_back(passes);
      ASSERT_NO_THROW(flats.push_back(lower::lower(r.candidate().func, target).func)) << labels.back();
    }
    EXPECT_EQ(seen.size(), 2u) << spec;
  }
  expect_batch_compiles(flats, labels, target, [&](size_t i, const runtime::CudaBuild& build) {
    const std::string& code = build.source.code;
    EXPECT_NE(code.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
    EXPECT_NE(code.find("cvt.rna.tf32.f32"), std::string::npos);
    EXPECT_NE(code.find(variants[i] == 3 ? "dragon_tf32_mma_m16n8k8_3x_presplit(" : "dragon_tf32_mma_m16n8k8_prerounded(",
                        build.source.prelude_size),
              std::string::npos);
  });
}

// Convolutions on tensor cores (implicit GEMM, space/implicit_gemm.h): ResNet-50's 3x3
// layer of its third stage (256 -> 256 channels, 14x14, batch 8: m = 1568, n = 256,
// k = 2304) in f16, bf16 and f32 (tf32); a candidate of each of the rule's two sketches
// compiles, with the mma and the shared tiles gathered from the input (no im2col buffer
// in the kernel's parameters); the first sketch's (taps outer in k) copies the weights into
// W_reindex, the second's reads them as they are.
TEST(SearchNvrtc, SampledImplicitGemmConvCandidatesCompileForSm90a) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  const lower::Target target = lower::Target::cuda_h200();
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> flats;
  std::vector<std::string> mmas;
  std::vector<bool> weights_copied;
  for (const char* dtype : {"f16", "bf16", "f32"}) {
    const std::string spec = std::string("conv2d:batch=8,in_channels=256,out_channels=256,size=14x14,kernel=3x3,"
                                         "padding=1x1,dtype=") + dtype;
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    std::vector<Sketch> sketches = generate_design_space(func, target, RuleSet::cuda());
    std::vector<const Sketch*> tc;
    for (const Sketch& s : sketches) {
      if (std::any_of(s.applied.begin(), s.applied.end(),
                      [](const std::string& a) { return a.starts_with("multi_level_tiling_tensor_core("); })) {
        tc.push_back(&s);
      }
    }
    ASSERT_EQ(tc.size(), 2u) << spec;
    for (int seed = 0; seed < 2; ++seed) {
      weights_copied.push_back(seed == 0);
      CandidateResult r = sample_candidate(*tc[static_cast<size_t>(seed)], func, target, RuleSet::cuda(), seed);
      ASSERT_TRUE(r.ok()) << spec << " seed " << seed << ": " << r.failure().message;
      labels.push_back(spec + " seed " + std::to_string(seed) + "\n" + r.candidate().trace.to_string());
      mmas.push_back(std::string(dtype) == "f32" ? "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
                                                 : std::string("mma.sync.aligned.m16n8k16.row.col.f32.") + dtype + "." +
                                                       dtype + ".f32");
      ASSERT_NO_THROW(flats.push_back(lower::lower(r.candidate().func, target).func)) << labels.back();
    }
  }
  expect_batch_compiles(flats, labels, target, [&](size_t i, const runtime::CudaBuild& build) {
    const std::string& code = build.source.code;
    EXPECT_NE(code.find(mmas[i]), std::string::npos) << code.substr(build.source.prelude_size);
    // The copies' own buffers are gone (their shared-memory stages keep the name's stem).
    EXPECT_EQ(code.find("X_pad_reindex[", build.source.prelude_size), std::string::npos);
    EXPECT_EQ(code.find("__restrict__ W_reindex", build.source.prelude_size) != std::string::npos, weights_copied[i]);
  });
}

// GEMMs of partial tiles, padded to whole ones (pad_einsum): KernelBench's first conv of
// 3 channels (k = 27, m = 16 * 254 * 254), an irregular f32 matmul through tf32 and an
// f16 matmul of 100 x 60 x 27, by the mma.sync rule; the irregular matmul in f16 by the
// wgmma rule. Two candidates each compile, the padding's guards in the shared-tile copies.
TEST(SearchNvrtc, SampledPaddedGemmCandidatesCompileForSm90a) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  const lower::Target target = lower::Target::cuda_h200();
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> flats;
  std::vector<std::string> instructions;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"conv2d:batch=16,in_channels=3,out_channels=64,size=256x256,kernel=3x3,dtype=f16",
       "multi_level_tiling_tensor_core"},
      {"matmul:m=8205,n=2949,k=5921", "multi_level_tiling_tensor_core"},
      {"matmul:m=100,n=60,k=27,dtype=f16", "multi_level_tiling_tensor_core"},
      {"matmul:m=8205,n=2949,k=5921,dtype=f16", "multi_level_tiling_wgmma"},
  };
  for (const auto& [spec, rule] : cases) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    std::vector<Sketch> sketches = generate_design_space(func, target, RuleSet::cuda());
    const Sketch* sketch = sketch_applying(sketches, rule);
    ASSERT_NE(sketch, nullptr) << spec;
    for (int seed = 0; seed < 2; ++seed) {
      CandidateResult r = sample_candidate(*sketch, func, target, RuleSet::cuda(), seed);
      ASSERT_TRUE(r.ok()) << spec << " seed " << seed << ": " << r.failure().message;
      labels.push_back(spec + " seed " + std::to_string(seed) + "\n" + r.candidate().trace.to_string());
      EXPECT_NE(labels.back().find("PadEinsum("), std::string::npos) << labels.back();
      instructions.push_back(rule == "multi_level_tiling_wgmma" ? "wgmma.mma_async"
                             : spec.find("f16") != std::string::npos ? "mma.sync.aligned.m16n8k16"
                                                                       : "mma.sync.aligned.m16n8k8");
      ASSERT_NO_THROW(flats.push_back(lower::lower(r.candidate().func, target).func)) << labels.back();
    }
  }
  expect_batch_compiles(flats, labels, target, [&](size_t i, const runtime::CudaBuild& build) {
    EXPECT_NE(build.source.code.find(instructions[i]), std::string::npos)
        << build.source.code.substr(build.source.prelude_size);
  });
}

// The same layer at batch 16 (m = 3136, a multiple of 64) through the wgmma rule (sm_90a):
// two candidates of f16 and bf16 compile, with warpgroup MMA fed from shared tiles that
// gather from the input.
TEST(SearchNvrtc, SampledImplicitGemmConvWgmmaCandidatesCompileForSm90a) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  const lower::Target target = lower::Target::cuda_h200();
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> flats;
  for (const char* dtype : {"f16", "bf16"}) {
    const std::string spec = std::string("conv2d:batch=16,in_channels=256,out_channels=256,size=14x14,kernel=3x3,"
                                         "padding=1x1,dtype=") + dtype;
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    std::vector<Sketch> sketches = generate_design_space(func, target, RuleSet::cuda());
    const Sketch* wgmma = sketch_applying(sketches, "multi_level_tiling_wgmma");
    ASSERT_NE(wgmma, nullptr) << spec;
    for (int seed = 0; seed < 2; ++seed) {
      CandidateResult r = sample_candidate(*wgmma, func, target, RuleSet::cuda(), seed);
      ASSERT_TRUE(r.ok()) << spec << " seed " << seed << ": " << r.failure().message;
      labels.push_back(spec + " seed " + std::to_string(seed) + "\n" + r.candidate().trace.to_string());
      ASSERT_NO_THROW(flats.push_back(lower::lower(r.candidate().func, target).func)) << labels.back();
    }
  }
  expect_batch_compiles(flats, labels, target, [](size_t, const runtime::CudaBuild& build) {
    EXPECT_NE(build.source.code.find("wgmma.mma_async.sync.aligned.m64n"), std::string::npos);
    EXPECT_EQ(build.source.code.find("X_pad_reindex[", build.source.prelude_size), std::string::npos);
  });
}

}  // namespace
}  // namespace dragon::search
