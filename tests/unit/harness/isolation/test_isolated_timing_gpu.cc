// Timing isolated CUDA kernels on the GPU (label gpu; [SKIP] without a device): an honest
// kernel is timed with every call's outputs checked; a kernel that skips work after its
// first launches, one that caches results under buffer addresses, one that caches them
// under a sample of the inputs (caught on a sibling; without siblings, the physics floor
// catches it as impossibly fast), one that reads past the end of a buffer (a page-end
// group faults) and one that writes there (guards) are each rejected with the reason that
// names them; a device fault is a run failure. Then the same through
// `dragon verify --time --json`.
#include <gtest/gtest.h>

#include <array>
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

// A kernel of the exploit catalog (tests/harness_exploits/cuda), relu:shape=4x256.
IsolatedKernel catalog_relu_kernel(const std::string& file, std::array<int64_t, 3> grid) {
  IsolatedKernel kernel = read_isolated_kernel(std::string(DRAGON_SOURCE_DIR) + "/tests/harness_exploits/cuda/" + file);
  kernel.grid = grid;
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
  ASSERT_EQ(t.variants.size(), 9u);
  for (size_t c = 0; c < t.calls.size(); ++c) {
    EXPECT_TRUE(t.calls[c].ok) << "call " << c << ": " << t.calls[c].problem;
    EXPECT_EQ(t.calls[c].variant, static_cast<int>(c % 9));
    EXPECT_GT(t.timing.samples_ms[c], 0);
  }
  EXPECT_EQ(t.red_zone_violations, "");
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

// Groups 0..3 are first used by calls 0..3; call 4 is group 0's second use, with variant 4
// (a sibling of set 1) where its first use had set 0: the copy it returns is set 0's result.
TEST(IsolatedTimingGpu, ResultsCachedUnderBufferAddressesAreAnotherSetsResult) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t = time_isolated_kernel(relu_kernel("relu_pointer_cache.cu"), op_function(kRelu), request());
  ASSERT_EQ(t.outcome, TimingOutcome::kWrongOutput) << t.describe();
  EXPECT_EQ(t.first_wrong_call, 4);
  for (int c = 0; c < 4; ++c) EXPECT_TRUE(t.calls[static_cast<size_t>(c)].ok) << t.calls[static_cast<size_t>(c)].problem;
  EXPECT_NE(t.calls[4].problem.find("beyond the tolerance"), std::string::npos) << t.calls[4].problem;
}

// The held-out kernel of issue 23: outputs cached on the device under 8 of the 1024 input
// elements. The rotation's sets never share those 8; a set's sibling does, and gets the
// set's outputs: a wrong output on a sibling's call.
TEST(IsolatedTimingGpu, ResultsCachedUnderASampleOfTheInputsAreWrongOnASibling) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t =
      time_isolated_kernel(catalog_relu_kernel("sparse_key_cache.cu", {1, 1, 1}), op_function(kRelu), request());
  ASSERT_EQ(t.outcome, TimingOutcome::kWrongOutput) << t.describe();
  ASSERT_GE(t.first_wrong_call, 3) << "the three sets themselves are right";
  const CallCheck& wrong = t.calls[static_cast<size_t>(t.first_wrong_call)];
  EXPECT_GE(wrong.variant, 3) << "a sibling";
  EXPECT_NE(t.reason.find("sibling"), std::string::npos) << t.reason;
}

// The same class with a sparse key per row (first and last element of each of 8192 rows):
// caught on a sibling too, before the floor is needed.
TEST(IsolatedTimingGpu, RowSumsCachedUnderASampleOfEachRowAreWrongOnASibling) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t =
      time_isolated_kernel(row_sum_kernel("row_sum_content_cache.cu"), op_function(kBigRowSum), big_request());
  ASSERT_EQ(t.outcome, TimingOutcome::kWrongOutput) << t.describe();
  EXPECT_GE(t.calls[static_cast<size_t>(t.first_wrong_call)].variant, 2) << t.reason;
}

// Without siblings in the rotation (the timing of earlier versions), the same kernel's
// outputs are right on every call, but after a set's first call each call reads 16 bytes
// a row instead of 64 KiB: far below the floor, so impossible. The floor stays a second
// line behind the siblings.
TEST(IsolatedTimingGpu, ResultsCachedUnderTheInputsContentsAreImpossiblyFast) {
  SKIP_WITHOUT_GPU();
  TimingRequest without_siblings = big_request();
  without_siblings.siblings_per_set = 0;
  IsolatedTiming t =
      time_isolated_kernel(row_sum_kernel("row_sum_content_cache.cu"), op_function(kBigRowSum), without_siblings);
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

// A load past the end of X whose value is never used: harmless in the guard groups, a
// fault in the first page-end group (group 1, timed call 1). A run failure.
TEST(IsolatedTimingGpu, ReadPastTheEndFaultsInAPageEndGroup) {
  SKIP_WITHOUT_GPU();
  IsolatedTiming t =
      time_isolated_kernel(catalog_relu_kernel("discarded_read_past_end.cu", {4, 1, 1}), op_function(kRelu), request());
  EXPECT_EQ(t.outcome, TimingOutcome::kRunFailed) << t.describe();
  EXPECT_EQ(t.run.status, RunStatus::kCrashed) << t.reason;
  EXPECT_NE(t.reason.find("CUDA_ERROR_"), std::string::npos) << t.reason;
  // Guards alone do not see it: the reads are of NaN, and NaN is never used.
  TimingRequest guards_only = request();
  guards_only.page_end_groups = false;
  IsolatedTiming unseen = time_isolated_kernel(catalog_relu_kernel("discarded_read_past_end.cu", {4, 1, 1}),
                                               op_function(kRelu), guards_only);
  EXPECT_EQ(unseen.outcome, TimingOutcome::kOk) << unseen.describe();
}

// A write past the end of Y: found in the guard bytes after the last call (with page-end
// groups it faults first, a run failure).
TEST(IsolatedTimingGpu, WritePastTheEndIsAnOutOfBoundsWrite) {
  SKIP_WITHOUT_GPU();
  TimingRequest guards_only = request();
  guards_only.page_end_groups = false;
  IsolatedTiming t =
      time_isolated_kernel(catalog_relu_kernel("write_past_end.cu", {4, 1, 1}), op_function(kRelu), guards_only);
  ASSERT_EQ(t.outcome, TimingOutcome::kOutOfBoundsWrite) << t.describe();
  EXPECT_NE(t.red_zone_violations.find("past the end of parameter 1"), std::string::npos) << t.red_zone_violations;
  IsolatedTiming paged =
      time_isolated_kernel(catalog_relu_kernel("write_past_end.cu", {4, 1, 1}), op_function(kRelu), request());
  EXPECT_EQ(paged.outcome, TimingOutcome::kRunFailed) << paged.describe();
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
