// time_isolated_kernel without a GPU: requests it cannot honour are refused with a reason
// (a CPU kernel, one input set, too few calls, a budget too small for min_calls), and a
// well-formed request goes all the way to the runner child, which accepts the timing job
// and fails at the CUDA driver (a run failure, not a malformed job). The timing kernels of
// the GPU tests compile with NVRTC here, and the rotation's variants (sets, then siblings)
// are what they say. The GPU half is test_isolated_timing_gpu.cc.
#include <gtest/gtest.h>

#include <cmath>

#include "dragon/harness/isolated_timing.h"
#include "dragon/harness/output_comparison.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/support/error.h"
#include "unit/harness/harness_test_util.h"
#include "isolation_test_util.h"

namespace dragon::harness {
namespace {

using testing::kernel_path;
using testing::op_function;
using testing::test_options;

IsolatedKernel cuda_relu() {
  IsolatedKernel kernel = read_isolated_kernel(kernel_path("relu.cu"), "relu");
  kernel.grid = {4, 1, 1};
  kernel.block = {256, 1, 1};
  return kernel;
}

TimingRequest quick_request() {
  TimingRequest request;
  request.isolation = test_options();
  request.timer.max_seconds = 0.5;
  return request;
}

// The request is refused with a UserError whose message holds `why`.
void expect_refused(const IsolatedKernel& kernel, const std::string& spec, const TimingRequest& request,
                    const std::string& why) {
  try {
    time_isolated_kernel(kernel, op_function(spec), request);
    ADD_FAILURE() << "not refused; expected: " << why;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(IsolatedTiming, RefusesCpuKernels) {
  IsolatedKernel cpu = read_isolated_kernel(kernel_path("relu.cc"), "relu");
  expect_refused(cpu, "relu:shape=4x256", quick_request(), "CPU timing is not offered");
}

TEST(IsolatedTiming, RefusesFewerThanTwoInputSets) {
  TimingRequest request = quick_request();
  request.distributions = {interp::Distribution::kNormal};
  expect_refused(cuda_relu(), "relu:shape=4x256", request, "at least two are needed");
}

TEST(IsolatedTiming, RefusesTimerSettingsOutOfRange) {
  TimingRequest one_call = quick_request();
  one_call.timer.min_calls = 1;
  expect_refused(cuda_relu(), "relu:shape=4x256", one_call, "2 <= min_calls");
  TimingRequest inverted = quick_request();
  inverted.timer.max_calls = inverted.timer.min_calls - 1;
  expect_refused(cuda_relu(), "relu:shape=4x256", inverted, "<= max_calls");
  TimingRequest endless = quick_request();
  endless.timer.max_seconds = 0;
  expect_refused(cuda_relu(), "relu:shape=4x256", endless, "positive and finite");
}

// relu:shape=4x256 writes 4096 bytes a call: 10 calls need 40960 bytes.
TEST(IsolatedTiming, RefusesABudgetThatCannotHoldEveryCallsOutputs) {
  TimingRequest request = quick_request();
  request.recorded_output_budget_bytes = 4096 * 9;
  expect_refused(cuda_relu(), "relu:shape=4x256", request, "raise TimingRequest::recorded_output_budget_bytes to at least 40960");
}

// Without a device the whole parent side runs: sets, region, job, runner; the runner
// decodes the timing job (an inconsistent one would be "malformed") and reports that it
// has no CUDA driver, which is the run's failure.
TEST(IsolatedTiming, WithoutAGpuTheRunnerAcceptsTheJobAndTheRunFails) {
  if (runtime::cuda_device_available()) GTEST_SKIP() << "a CUDA device is present: test_isolated_timing_gpu.cc times for real";
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "this build has no NVRTC";
  TimingRequest request = quick_request();
  request.seed = 11;
  IsolatedTiming timing = time_isolated_kernel(cuda_relu(), op_function("relu:shape=4x256"), request);
  EXPECT_EQ(timing.outcome, TimingOutcome::kRunFailed);
  EXPECT_EQ(timing.run.status, RunStatus::kFailed) << timing.reason;
  EXPECT_EQ(timing.reason.find("malformed"), std::string::npos) << timing.reason;
  // The driver's own words: no libcuda here, or a driver without a device.
  EXPECT_TRUE(timing.reason.find("libcuda") != std::string::npos || timing.reason.find("CUDA_ERROR") != std::string::npos)
      << timing.reason;
  EXPECT_EQ(timing.seed, 11u);
  EXPECT_EQ(timing.input_sets, (std::vector<std::string>{"normal", "uniform", "offset"}));
  ASSERT_EQ(timing.variants.size(), 9u) << "three sets and two siblings of each";
  EXPECT_EQ(timing.variants[3], "normal, sibling 1 (1 element of X changed)");
  EXPECT_EQ(timing.call_limit, request.timer.max_calls);
  EXPECT_TRUE(timing.calls.empty());
  EXPECT_TRUE(timing.timing.samples_ms.empty());
  EXPECT_GT(timing.floor.bytes, 0);  // the floor is the reference's, known before any run
  EXPECT_NE(timing.describe().find("REJECTED (run failed)"), std::string::npos) << timing.describe();
}

TEST(IsolatedTiming, OutcomesHaveNamesAndIds) {
  EXPECT_EQ(timing_outcome_name(TimingOutcome::kImpossiblyFast), "impossibly fast");
  EXPECT_EQ(timing_outcome_id(TimingOutcome::kImpossiblyFast), "impossibly_fast");
  EXPECT_EQ(timing_outcome_id(TimingOutcome::kWrongOutput), "wrong_output");
  EXPECT_EQ(timing_outcome_id(TimingOutcome::kRunFailed), "run_failed");
  EXPECT_EQ(timing_outcome_id(TimingOutcome::kOk), "ok");
  EXPECT_EQ(timing_outcome_id(TimingOutcome::kOutOfBoundsWrite), "out_of_bounds_write");
}

// The rotation's variants: the sets first, then siblings of each in turn; a sibling is its
// base set with the few elements its patches name changed, outputs still the sentinel; the
// references, computed on request, are each variant's own.
TEST(IsolatedTiming, VariantsAreTheSetsThenTheirSiblings) {
  ir::PrimFunc func = op_function("softmax:shape=4x16,axis=1");
  TimingRequest request = quick_request();
  request.seed = 5;
  TimingInputs inputs = draw_timing_inputs(func, request);
  ASSERT_EQ(inputs.sets.size(), 3u);
  EXPECT_EQ(inputs.variant_bases, (std::vector<size_t>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  ASSERT_EQ(inputs.siblings.size(), 6u);
  EXPECT_TRUE(inputs.references.empty()) << "references wait until they are needed";
  Reference reference(func);
  compute_timing_references(inputs, reference);
  ASSERT_EQ(inputs.references.size(), 9u);
  for (size_t v = 3; v < 9; ++v) {
    std::vector<tensor::HostTensor> args = inputs.sets[inputs.variant_bases[v]];
    EXPECT_TRUE(std::isnan(args[1].get(0))) << "outputs hold the sentinel";
    apply_sibling(inputs.siblings[v - 3], args);
    std::vector<ReferenceOutput> expected = reference.compute(args);
    EXPECT_EQ(normalized_difference(inputs.references[v][0].exact, expected[0].exact), 0.0) << v;
    EXPECT_GT(normalized_difference(inputs.references[v][0].exact, inputs.references[inputs.variant_bases[v]][0].exact),
              0.0)
        << "a sibling's softmax differs from its base's where the change is";
  }
  EXPECT_EQ(draw_timing_inputs(func, request).siblings[4].changes[0].index, inputs.siblings[4].changes[0].index);
}

// Every kernel the GPU timing tests run compiles (so a typo shows here, not on the H200).
TEST(IsolatedTiming, TimingTestKernelsCompile) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "this build has no NVRTC";
  for (const char* file : {"relu_skips_later_calls.cu", "relu_pointer_cache.cu"}) {
    IsolatedKernel kernel = read_isolated_kernel(kernel_path(file), "relu");
    Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel, test_options());
    EXPECT_TRUE(compiled.ok()) << file << ": " << (compiled.ok() ? "" : compiled.error().describe());
  }
  for (const char* file : {"row_sum.cu", "row_sum_content_cache.cu"}) {
    IsolatedKernel kernel = read_isolated_kernel(kernel_path(file), "row_sum");
    Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel, test_options());
    EXPECT_TRUE(compiled.ok()) << file << ": " << (compiled.ok() ? "" : compiled.error().describe());
  }
  for (const char* file : {"sparse_key_cache.cu", "write_past_end.cu", "discarded_read_past_end.cu"}) {
    IsolatedKernel kernel =
        read_isolated_kernel(std::string(DRAGON_SOURCE_DIR) + "/tests/harness_exploits/cuda/" + file);
    Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel, test_options());
    EXPECT_TRUE(compiled.ok()) << file << ": " << (compiled.ok() ? "" : compiled.error().describe());
  }
}

}  // namespace
}  // namespace dragon::harness
