// The reward on the GPU (label gpu; [SKIP] without a device): our own CUDA kernel (the
// default GPU schedule, built by lower -> codegen -> NVRTC) is verified with a latency and
// its confidence interval, on the pool and on fresh draws; a CUDA kernel file is too, and
// the held-out exploit of issue 23 (outputs cached under 8 input elements) is rejected by
// the timed rotation's siblings. Prints what a call costs, for the report.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>

#include "dragon/harness/reward.h"
#include "dragon/lower/lower.h"
#include "dragon/runtime/cuda_driver.h"
#include "unit/codegen/default_gpu_schedule.h"
#include "unit/harness/harness_test_util.h"

namespace dragon::harness {
namespace {

using testing::op_function;

#define SKIP_WITHOUT_GPU()                                                                        \
  do {                                                                                            \
    if (!runtime::cuda_device_available()) GTEST_SKIP() << "no CUDA device: the reward on the GPU not tested"; \
  } while (0)

RewardOptions gpu_options() {
  RewardOptions options;
  options.target = lower::Target::cuda_h200();
  options.build.cache = &testing::test_cache();
  options.isolation.runner_path = DRAGON_KERNEL_RUNNER_PATH;
  options.isolation.cache = &testing::test_cache();
  options.isolation.timeout = std::chrono::milliseconds(20000);  // a CUDA context takes a while
  options.timing.timer.max_seconds = 0.5;
  return options;
}

IsolatedKernel catalog_kernel(const std::string& file, std::array<int64_t, 3> grid, std::array<int64_t, 3> block) {
  IsolatedKernel kernel = read_isolated_kernel(std::string(DRAGON_SOURCE_DIR) + "/tests/harness_exploits/cuda/" + file);
  kernel.grid = grid;
  kernel.block = block;
  return kernel;
}

void expect_latency(const Reward& reward) {
  ASSERT_TRUE(reward.verified()) << reward.to_text();
  ASSERT_TRUE(reward.latency.has_value()) << reward.to_text();
  const LatencyEstimate& l = *reward.latency;
  EXPECT_GT(l.median_ms, 0);
  EXPECT_LE(l.ci95_low_ms, l.mean_ms);
  EXPECT_GE(l.ci95_high_ms, l.mean_ms);
  EXPECT_GE(l.calls, 10);
  ASSERT_NE(reward.timing, nullptr);
  for (const CallCheck& c : reward.timing->calls) EXPECT_TRUE(c.ok) << c.problem;
}

TEST(RewardGpu, OwnCudaKernelIsVerifiedWithALatency) {
  SKIP_WITHOUT_GPU();
  ir::PrimFunc problem = op_function("softmax:shape=64x256,axis=1");
  RewardEvaluator evaluator(problem, gpu_options());
  RewardCandidate candidate = RewardCandidate::scheduled(codegen::testing::default_gpu_schedule(problem), "autobind");
  Reward screened = evaluator.evaluate(candidate);
  std::printf("own CUDA kernel, screening: %s\n", screened.to_text().c_str());
  expect_latency(screened);
  EXPECT_FALSE(screened.fresh_draw);
  Reward rechecked = evaluator.recheck(candidate);
  std::printf("own CUDA kernel, recheck: %s\n", rechecked.to_text().c_str());
  expect_latency(rechecked);
  EXPECT_TRUE(rechecked.fresh_draw);
  EXPECT_NE(rechecked.seed, screened.seed);
  EXPECT_NE(rechecked.timing->seed, screened.timing->seed) << "the timed rotation is drawn afresh too";
}

TEST(RewardGpu, CudaKernelFilesAreTimedAndTheSparseKeyCacheIsRejected) {
  SKIP_WITHOUT_GPU();
  RewardEvaluator evaluator(op_function("relu:shape=4x256"), gpu_options());
  Reward honest = evaluator.evaluate(RewardCandidate::external(catalog_kernel("honest_relu.cu", {4, 1, 1}, {256, 1, 1})));
  std::printf("CUDA kernel file: %s\n", honest.to_text().c_str());
  expect_latency(honest);
  Reward cached =
      evaluator.evaluate(RewardCandidate::external(catalog_kernel("sparse_key_cache.cu", {1, 1, 1}, {256, 1, 1})));
  EXPECT_EQ(cached.status, RewardStatus::kRejected) << cached.to_text();
  ASSERT_TRUE(cached.timing_rejection.has_value()) << cached.to_text();
  EXPECT_EQ(*cached.timing_rejection, TimingOutcome::kWrongOutput) << cached.to_text();
  EXPECT_TRUE(cached.failures.empty()) << "verification cannot see it; the timed rotation does";
}

// The GPU-side figure of the report: what one call costs for our own prebuilt CUDA kernel
// (verification with every check, then a timing of up to 0.2 s).
TEST(RewardGpu, CostPerCandidate) {
  SKIP_WITHOUT_GPU();
  ir::PrimFunc problem = op_function("softmax:shape=64x256,axis=1");
  RewardOptions options = gpu_options();
  options.timing.timer.max_seconds = 0.2;
  RewardEvaluator evaluator(problem, options);
  std::vector<Expected<runtime::CudaBuild>> builds = runtime::compile_cuda_all(
      {lower::lower(codegen::testing::default_gpu_schedule(problem), options.target).func}, options.target,
      options.build);
  RewardCandidate candidate = RewardCandidate::cuda_build(std::move(builds.at(0).value()), "autobind");
  ASSERT_TRUE(evaluator.evaluate(candidate).verified());  // warm: context, pool references
  for (bool time : {false, true}) {
    options.time = time;
    RewardEvaluator timed_or_not(problem, options);
    timed_or_not.evaluate(candidate);
    constexpr int kCalls = 20;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(timed_or_not.evaluate(candidate).verified());
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / kCalls;
    std::printf("reward cost on the GPU: own prebuilt CUDA kernel, softmax 64x256, %s: %.1f ms per candidate\n",
                time ? "verified and timed" : "verified only", ms);
  }
}

}  // namespace
}  // namespace dragon::harness
