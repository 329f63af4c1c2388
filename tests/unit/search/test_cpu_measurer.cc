// The CPU measurer: a correct candidate is verified and timed; a wrong one, one that
// leaves outputs unwritten, one that crashes and one that hangs each get their status and
// reason, and the batch (and the next one) goes on; the same code is measured once.
#include <gtest/gtest.h>

#include <chrono>

#include "dragon/ir/parser.h"
#include "dragon/search/cpu_measurer.h"

namespace dragon::search {
namespace {

using namespace std::chrono_literals;

// B = A * 2 over 64 elements, with the loop body `body` and the loop extent `extent`.
ir::PrimFunc scale(const std::string& body, int extent = 64, const std::string& extra_loops = "") {
  std::string close(std::count(extra_loops.begin(), extra_loops.end(), '{'), '}');
  return ir::parse_function(
      "func scale(in A: f32[64], out B: f32[64]) {\n"
      "  block root {\n"
      "    for i in " + std::to_string(extent) + " {\n" + extra_loops + "\n" + body + "\n" + close + "\n"
      "    }\n"
      "  }\n"
      "}\n",
      "<test>");
}

const std::string kCorrect =
    "block B [vi: S 64 = i] { reads A[vi] writes B[vi] B[vi] = A[vi] * 2f32 }";

CpuMeasurerOptions fast_options() {
  CpuMeasurerOptions options;
  options.verify.seed = 42;
  options.timer.max_seconds = 0.02;
  options.run_timeout = 2000ms;
  return options;
}

TEST(CpuMeasurer, VerifiesThenTimesAndReportsEachFailureWithItsReason) {
  ir::PrimFunc task = scale(kCorrect);
  std::unique_ptr<Measurer> measurer = make_cpu_measurer(task, fast_options());
  std::vector<ir::PrimFunc> batch = {
      task,
      scale("block B [vi: S 64 = i] { reads A[vi] writes B[vi] B[vi] = A[vi] * 3f32 }"),
      scale(kCorrect, 32),  // half the outputs never written
      scale("block B [vi: S 64 = i] { reads A[vi] writes B[vi * 100000000] B[vi * 100000000] = A[vi] }"),
      scale("block B [vi: S 64 = i, r: R 1000000000 = j, s: R 1000000000 = k] { reads A[vi], B[vi] writes B[vi] "
            "init { B[vi] = 0f32 } B[vi] = B[vi] + A[vi] }",
            64, "for j in 1000000000 { for k in 1000000000 {"),
      task,
  };
  std::vector<MeasureResult> results = measurer->measure(batch);
  ASSERT_EQ(results.size(), batch.size());

  EXPECT_EQ(results[0].status, MeasureStatus::kOk) << results[0].error;
  EXPECT_FALSE(results[0].samples_ms.empty());
  EXPECT_GT(*results[0].median_ms(), 0);
  EXPECT_FALSE(results[0].kernel_hash.empty());

  EXPECT_EQ(results[1].status, MeasureStatus::kWrongResult);
  EXPECT_NE(results[1].error.find("beyond the tolerance"), std::string::npos) << results[1].error;
  EXPECT_TRUE(results[1].samples_ms.empty()) << "no latency for an unverified kernel";

  EXPECT_EQ(results[2].status, MeasureStatus::kWrongResult);
  EXPECT_NE(results[2].error.find("never written"), std::string::npos) << results[2].error;

  EXPECT_EQ(results[3].status, MeasureStatus::kCrashed) << results[3].error;
  EXPECT_EQ(results[4].status, MeasureStatus::kTimedOut) << results[4].error;
  // With a verified time in hand (results[0]'s microseconds), a run is cut at the floor of
  // the relative limit, not at run_timeout: a candidate that slow only teaches the cost
  // model what a failure does, and waiting seconds for it held the tuner back.
  EXPECT_NE(results[4].error.find("within 200 ms"), std::string::npos) << results[4].error;

  EXPECT_EQ(results[5].status, MeasureStatus::kOk);
  EXPECT_TRUE(results[5].from_cache);
  EXPECT_EQ(results[5].kernel_hash, results[0].kernel_hash);
  EXPECT_EQ(measurer->costs().cached, 1);
  EXPECT_EQ(measurer->costs().candidates, 6);

  // The worker was replaced after the crash and the hang: the next batch runs.
  std::vector<MeasureResult> again = measurer->measure({scale(kCorrect, 64, "")});
  EXPECT_TRUE(again[0].from_cache);
  std::vector<MeasureResult> other = measurer->measure(
      {scale("block B [vi: S 64 = i] { reads A[vi] writes B[vi] B[vi] = A[vi] + A[vi] }")});
  EXPECT_EQ(other[0].status, MeasureStatus::kOk) << other[0].error;
  EXPECT_FALSE(other[0].from_cache);
}

// A 16-bit output of many elements meets the repeated run's garbage by the dozen: a bf16
// value has 128 mantissa steps per binade, so a correct element often equals the garbage
// at its place. Those elements are written, not skipped (bf16 batch norm 1x24x60x60 on the
// CPU failed every candidate, its own default schedule included, before this).
TEST(CpuMeasurer, SixteenBitOutputsEqualToTheGarbageCountAsWritten) {
  const ir::PrimFunc task = ir::parse_function(
      "func halve(in A: bf16[65536], out B: bf16[65536]) {\n"
      "  block root {\n"
      "    for i in 65536 {\n"
      "      block B [vi: S 65536 = i] { reads A[vi] writes B[vi] B[vi] = A[vi] * 0.5bf16 }\n"
      "    }\n"
      "  }\n"
      "}\n",
      "<test>");
  for (uint64_t seed : {1, 2, 3}) {
    CpuMeasurerOptions options = fast_options();
    options.verify.seed = seed;
    std::vector<MeasureResult> results = make_cpu_measurer(task, options)->measure({task});
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].status, MeasureStatus::kOk) << "seed " << seed << ": " << results[0].error;
  }
}

TEST(CpuMeasurer, AKnownKernelIsNotMeasuredAgain) {
  ir::PrimFunc task = scale(kCorrect);
  std::unique_ptr<Measurer> measurer = make_cpu_measurer(task, fast_options());
  int asked = 0;
  measurer->set_known([&](const std::string&) -> std::optional<MeasureResult> {
    ++asked;
    MeasureResult r;
    r.samples_ms = {1.5};
    return r;
  });
  std::vector<MeasureResult> results = measurer->measure({task});
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(results[0].from_cache);
  EXPECT_EQ(results[0].median_ms(), 1.5);
}

// A task resumed from the database has a best time before it measures anything: its
// known default sets the relative limit, so the first slow candidate is cut at its floor,
// not at run_timeout.
TEST(CpuMeasurer, AKnownResultSetsTheLimitOfTheFirstFreshCandidate) {
  ir::PrimFunc task = scale(kCorrect);
  std::unique_ptr<Measurer> measurer = make_cpu_measurer(task, fast_options());
  int asked = 0;
  measurer->set_known([&](const std::string&) -> std::optional<MeasureResult> {
    if (++asked > 1) return std::nullopt;  // only the first kernel was measured before
    MeasureResult r;
    r.samples_ms = {0.001};
    return r;
  });
  ASSERT_TRUE(measurer->measure({task})[0].from_cache);
  std::vector<MeasureResult> slow = measurer->measure(
      {scale("block B [vi: S 64 = i, r: R 1000000000 = j] { reads A[vi], B[vi] writes B[vi] "
             "init { B[vi] = 0f32 } B[vi] = B[vi] + A[vi] }",
             64, "for j in 1000000000 {")});
  EXPECT_EQ(slow[0].status, MeasureStatus::kTimedOut) << slow[0].error;
  EXPECT_NE(slow[0].error.find("within 200 ms"), std::string::npos) << slow[0].error;
}

TEST(CpuMeasurer, ACompilerThatFailsIsABuildFailure) {
  CpuMeasurerOptions options = fast_options();
  options.compiler.compiler = "/nonexistent/dragon-test-compiler";
  ir::PrimFunc task = scale(kCorrect);
  std::unique_ptr<Measurer> measurer = make_cpu_measurer(task, options);
  std::vector<MeasureResult> results = measurer->measure({task, scale("block B [vi: S 64 = i] { reads A[vi] writes B[vi] B[vi] = A[vi] }")});
  for (const MeasureResult& r : results) {
    EXPECT_EQ(r.status, MeasureStatus::kBuildFailed);
    EXPECT_FALSE(r.error.empty());
  }
}

}  // namespace
}  // namespace dragon::search
