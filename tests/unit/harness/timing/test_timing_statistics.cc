// The timer's statistics and stopping rule, and its clean failure without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "dragon/harness/gpu_timer.h"

namespace dragon::harness {
namespace {

TEST(TimingStatistics, MedianMeanAndSpreadOfOddAndEvenCounts) {
  GpuTiming odd = summarize_samples({3.0, 1.0, 2.0});
  EXPECT_DOUBLE_EQ(odd.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(odd.mean_ms, 2.0);
  EXPECT_DOUBLE_EQ(odd.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(odd.max_ms, 3.0);
  EXPECT_DOUBLE_EQ(odd.stddev_ms, 1.0);
  // t(0.975, 2 degrees of freedom) = 4.303; half-width = t * s / sqrt(n).
  EXPECT_NEAR(odd.ci95_half_width_ms, 4.303 / std::sqrt(3.0), 1e-9);
  // Samples keep their call order.
  EXPECT_EQ(odd.samples_ms, (std::vector<double>{3.0, 1.0, 2.0}));

  GpuTiming even = summarize_samples({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(even.median_ms, 2.5);
}

TEST(TimingStatistics, OneSampleHasNoConfidence) {
  GpuTiming one = summarize_samples({1.5});
  EXPECT_DOUBLE_EQ(one.median_ms, 1.5);
  EXPECT_TRUE(std::isinf(one.ci95_half_width_ms));
  EXPECT_FALSE(timing_converged(one, GpuTimerOptions{.min_calls = 1}));
}

TEST(TimingStatistics, ConvergesOnlyWithEnoughTightSamples) {
  GpuTimerOptions options{.min_calls = 10, .target_relative_ci = 0.01};
  std::vector<double> tight(10, 1.0);
  tight[3] = 1.001;
  EXPECT_TRUE(timing_converged(summarize_samples(tight), options));
  // Too few calls, however tight.
  EXPECT_FALSE(timing_converged(summarize_samples({1.0, 1.0, 1.0}), options));
  // A 10% spread does not meet a 1% target with 10 calls.
  std::vector<double> noisy = {1.0, 1.1, 0.9, 1.0, 1.1, 0.9, 1.0, 1.1, 0.9, 1.0};
  EXPECT_FALSE(timing_converged(summarize_samples(noisy), options));
  EXPECT_TRUE(timing_converged(summarize_samples(noisy), GpuTimerOptions{.min_calls = 10, .target_relative_ci = 0.1}));
}

TEST(TimingStatistics, DescribeNamesMedianRangeAndCount) {
  GpuTiming t = summarize_samples({1.0, 2.0, 3.0});
  EXPECT_EQ(t.describe(), "2 ms median (1..3, +-1.2e+02%, 3 calls, not converged)");
  EXPECT_EQ(GpuTiming{}.describe(), "no samples");
}

TEST(TimingStopRule, StopsAtConvergenceOrACapButNotBeforeMinCalls) {
  GpuTimerOptions o;
  o.min_calls = 4;
  o.max_calls = 6;
  o.max_seconds = 1.0;
  o.target_relative_ci = 0.01;
  const std::vector<double> steady = {2.0, 2.0, 2.0, 2.0};
  EXPECT_FALSE(timing_should_stop({2.0, 2.0, 2.0}, 0.0, o)) << "fewer than min_calls";
  EXPECT_FALSE(timing_should_stop({2.0, 2.0, 2.0}, 5.0, o)) << "the time cap waits for min_calls";
  EXPECT_TRUE(timing_should_stop(steady, 0.0, o)) << "converged";
  EXPECT_FALSE(timing_should_stop({1.0, 3.0, 1.0, 3.0}, 0.0, o)) << "noisy, under both caps";
  EXPECT_TRUE(timing_should_stop({1.0, 3.0, 1.0, 3.0}, 1.0, o)) << "the time cap";
  EXPECT_TRUE(timing_should_stop({1.0, 3.0, 1.0, 3.0, 1.0, 3.0}, 0.0, o)) << "max_calls";
}

TEST(TimingStopRule, AbandonsACandidateWhoseFirstCallsAreFarAboveTheBar) {
  GpuTimerOptions o;
  o.min_calls = 6;
  o.abandon_above_ms = 5.0;
  o.abandon_after_calls = 3;
  EXPECT_FALSE(timing_should_stop({9.0, 9.0}, 0.0, o)) << "too few calls to judge";
  EXPECT_TRUE(timing_should_stop({9.0, 9.0, 9.0}, 0.0, o));
  EXPECT_FALSE(timing_should_stop({9.0, 4.0, 4.0}, 0.0, o)) << "the median, not one slow call, decides";
  o.abandon_above_ms = 0;
  EXPECT_FALSE(timing_should_stop({9.0, 9.0, 9.0}, 0.0, o)) << "0 turns abandoning off";
}

TEST(GpuTimer, WithoutAGpuReturnsTheDriversFailure) {
  if (runtime::cuda_device_available()) GTEST_SKIP() << "a CUDA device is present: tests/gpu times real kernels";
  int calls = 0;
  Expected<GpuTiming> timing = time_gpu([&](int) -> Status {
    ++calls;
    return {};
  });
  ASSERT_FALSE(timing.ok());
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(timing.error().api.empty());
  EXPECT_FALSE(GpuTimer::create().ok());
}

TEST(GpuState, UnknownFieldsSayUnknown) {
  GpuState state = read_gpu_state();
  EXPECT_FALSE(state.name.empty());
  EXPECT_NE(state.describe().find(state.name), std::string::npos);
  if (!runtime::cuda_device_available()) {
    EXPECT_EQ(state.name, "unknown");
  }
}

}  // namespace
}  // namespace dragon::harness
