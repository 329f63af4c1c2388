// Timing isolated CUDA kernels on the GPU (label gpu; [SKIP] without a device): an honest
// kernel is timed with every call's outputs checked; a kernel that skips work after its
// first launches, one that caches results under buffer addresses, and one that caches them
// under the inputs' contents (right outputs, impossible speed) are each rejected with the
// reason that names them; a device fault is a run failure. Then the same through
// `dragon verify --time --json`.
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "dragon/harness/isolated_timing.h"
#include "dragon/runtime/cuda_driver.h"
#include "error/cli_runner.h"
#include "isolation_test_util.h"
#include "unit/harness/harness_test_util.h"

namespace dragon::harness {
namespace {

using testing::kernel_path;
using testing::op_function;
using testing::test_options;

#define SKIP_WITHOUT_GPU()                                                                                    \
  do {                                                                                                        \
    if (!runtime::cuda_device_available()) GTEST_SKIP() << "no CUDA device: isolated CUDA timing not tested"; \
  } while (0)

constexpr const char* kRelu = "relu:shape=4x256";
// 512 MiB of input: a floor of 0.11 ms at 4.8 TB/s, far above a timed call's launch overhead.
constexpr const char* kBigRowSum = "sum:shape=8192x16384,axis=1";

IsolatedKernel relu_kernel(const std::string& file) {
  IsolatedKernel kernel = read_isolated_kernel(kernel_path(file), "relu");
  kernel.grid = {4, 1, 1};
  kernel.block = {256, 1, 1};
  return kernel;
}

IsolatedKernel row_sum_kernel(const std::string& file) {
  IsolatedKernel kernel = read_isolated_kernel(kernel_path(file), "row_sum");
  kernel.grid = {8192, 1, 1};
  kernel.block = {256, 1, 1};
  return kernel;
}

TimingRequest request() {
  TimingRequest r;
  r.isolation = test_options();
  r.timer.warmup_calls = 3;  // the skipping kernel counts on these
  r.timer.min_calls = 10;
  r.timer.max_seconds = 0.5;
  return r;
}

// Two sets and the compiled reference: the interpreter cannot afford 134M elements.
TimingRequest big_request() {
  TimingRequest r = request();
  r.distributions = {interp::Distribution::kNormal, interp::Distribution::kUniform};
  r.reference.engine = ReferenceEngine::kCompiledCpu;
  return r;
}

TEST(IsolatedTimingGpu, HonestKernelIsTimedWithEveryCallChecked) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t = time_isolated_kernel(relu_kernel("relu.cu"), op_function(kRelu), request());
  std::printf("%s\n", t.describe().c_str());  // the figures, for the device log
  ASSERT_EQ(t.outcome, TimingOutcome::kOk) << t.describe();
  ASSERT_GE(t.timing.samples_ms.size(), 10u);
  ASSERT_EQ(t.calls.size(), t.timing.samples_ms.size());
  for (size_t c = 0; c < t.calls.size(); ++c) {
    EXPECT_TRUE(t.calls[c].ok) << "call " << c << ": " << t.calls[c].problem;
    EXPECT_EQ(t.calls[c].input_set, static_cast<int>(c % 3));
    EXPECT_GT(t.timing.samples_ms[c], 0);
  }
  EXPECT_GT(t.timing.median_ms, 0);
  EXPECT_NE(t.gpu_state.name, "");
  EXPECT_EQ(t.describe().rfind("OK ", 0), 0u) << t.describe();
}

// Honest on launches 0-3 (three warm-ups and timed call 0), silent from timed call 1 on.
TEST(IsolatedTimingGpu, SkippingWorkAfterTheFirstCallsIsCaughtOnTheFirstSkippedCall) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t = time_isolated_kernel(relu_kernel("relu_skips_later_calls.cu"), op_function(kRelu), request());
  ASSERT_EQ(t.outcome, TimingOutcome::kWrongOutput) << t.describe();
  EXPECT_EQ(t.first_wrong_call, 1);
  ASSERT_GE(t.calls.size(), 2u);
  EXPECT_TRUE(t.calls[0].ok) << t.calls[0].problem;
  EXPECT_NE(t.calls[1].problem.find("never written"), std::string::npos) << t.calls[1].problem;
  for (size_t c = 1; c < t.calls.size(); ++c) EXPECT_FALSE(t.calls[c].ok) << "call " << c;
  EXPECT_NE(t.reason.find("timed call 1 "), std::string::npos) << t.reason;
}

// Groups 0..3 are first used by calls 0..3; call 4 is group 0's second use, with set 1
// where its first use had set 0: the copy it returns is set 0's result.
TEST(IsolatedTimingGpu, ResultsCachedUnderBufferAddressesAreAnotherSetsResult) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t = time_isolated_kernel(relu_kernel("relu_pointer_cache.cu"), op_function(kRelu), request());
  ASSERT_EQ(t.outcome, TimingOutcome::kWrongOutput) << t.describe();
  EXPECT_EQ(t.first_wrong_call, 4);
  for (int c = 0; c < 4; ++c) EXPECT_TRUE(t.calls[static_cast<size_t>(c)].ok) << t.calls[static_cast<size_t>(c)].problem;
  EXPECT_NE(t.calls[4].problem.find("beyond the tolerance"), std::string::npos) << t.calls[4].problem;
}

// Right outputs on every call, but after a set's first call each call reads 16 bytes a
// row instead of 64 KiB: far below the floor, so impossible.
TEST(IsolatedTimingGpu, ResultsCachedUnderTheInputsContentsAreImpossiblyFast) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t =
      time_isolated_kernel(row_sum_kernel("row_sum_content_cache.cu"), op_function(kBigRowSum), big_request());
  std::printf("%s\n", t.describe().c_str());
  ASSERT_EQ(t.outcome, TimingOutcome::kImpossiblyFast) << t.describe();
  EXPECT_GT(t.floor.floor_ms, 0.1);
  EXPECT_FALSE(t.floor.compute_bound);
  for (const CallCheck& c : t.calls) EXPECT_TRUE(c.ok) << "call " << c.call << ": " << c.problem;
  // Only set 1's first appearance (timed call 1) computes; set 0 was cached in the warm-up.
  EXPECT_GE(t.calls_below_floor, static_cast<int>(t.calls.size()) - 1);
  EXPECT_LT(t.timing.median_ms, 0.9 * t.floor.floor_ms);
  EXPECT_NE(t.reason.find("physics floor"), std::string::npos) << t.reason;
}

// The same problem computed honestly is slower than the floor on every call: the floor
// rejects no honest kernel.
TEST(IsolatedTimingGpu, HonestKernelOnTheSameProblemIsAboveTheFloor) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t = time_isolated_kernel(row_sum_kernel("row_sum.cu"), op_function(kBigRowSum), big_request());
  std::printf("%s\n", t.describe().c_str());
  ASSERT_EQ(t.outcome, TimingOutcome::kOk) << t.describe();
  EXPECT_EQ(t.calls_below_floor, 0);
  EXPECT_GT(t.timing.min_ms, 0.9 * t.floor.floor_ms);
}

TEST(IsolatedTimingGpu, DeviceFaultIsARunFailure) {
  SKIP_WITHOUT_GPU();
  IsolatedKernel kernel = read_isolated_kernel(kernel_path("illegal_address.cu"), "illegal_address");
  kernel.grid = {4, 1, 1};
  kernel.block = {256, 1, 1};
  IsolatedTiming t = time_isolated_kernel(kernel, op_function(kRelu), request());
  EXPECT_EQ(t.outcome, TimingOutcome::kRunFailed);
  EXPECT_EQ(t.run.status, RunStatus::kCrashed) << t.reason;
  EXPECT_NE(t.reason.find("CUDA_ERROR_"), std::string::npos) << t.reason;
  EXPECT_TRUE(t.calls.empty());
}

nlohmann::json verify_time_json(const std::string& file, int& status) {
  dragon::testing::CliResult r = dragon::testing::run_dragon(
      std::string("verify ") + kRelu + " --kernel " + kernel_path(file) + " --entry relu --grid 4 --block 256 --time --json");
  status = r.status;
  size_t start = r.output.rfind("\n{");
  start = start == std::string::npos ? 0 : start + 1;
  nlohmann::json j = nlohmann::json::parse(r.output.substr(start), nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(j.is_object()) << r.output;
  return j;
}

TEST(IsolatedTimingGpu, VerifyTimeReportsTheTimingOfAnHonestKernel) {
  SKIP_WITHOUT_GPU();
  int status = -1;
  nlohmann::json j = verify_time_json("relu.cu", status);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(status, 0) << j.dump(2);
  const nlohmann::json& timing = j.at("timing");
  EXPECT_EQ(timing.at("outcome"), "ok") << timing.dump(2);
  EXPECT_GE(timing.at("calls").get<int>(), 10);
  EXPECT_EQ(timing.at("calls_checked"), timing.at("calls"));
  EXPECT_GT(timing.at("median_ms").get<double>(), 0);
  EXPECT_TRUE(timing.at("gpu").contains("sm_clock_mhz"));
  EXPECT_TRUE(timing.at("floor").contains("ms"));
}

// Verification runs each call in a new process, so the skipping kernel passes it; timing,
// with its many calls in one process, rejects it, and the command fails.
TEST(IsolatedTimingGpu, VerifyTimeRejectsWhatOnlyTimingCanSee) {
  SKIP_WITHOUT_GPU();
  int status = -1;
  nlohmann::json j = verify_time_json("relu_skips_later_calls.cu", status);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(status, 1);
  EXPECT_TRUE(j.at("passed").get<bool>()) << j.dump(2);
  EXPECT_EQ(j.at("timing").at("outcome"), "wrong_output") << j.at("timing").dump(2);
  EXPECT_EQ(j.at("timing").at("first_wrong_call"), 1);
}

}  // namespace
}  // namespace dragon::harness
