// GPU tuning's measurer on the device: the default schedule is verified and timed, a
// kernel computing something else is rejected as wrong without a time, a program beyond
// the GPU's limits is rejected before it is built, the same kernel is measured once; and a
// short tuning run of a small op commits its records and finds nothing slower than the
// default; a candidate far slower than the best stops after one run, also when the best
// came from the database; one past its limit is killed and the next measured by a fresh
// worker. Skips, saying so, without a GPU. GpuTuning is made first: its worker must be
// forked before this process touches the GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "dragon/bench/gpu_tuning.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/cost_model.h"
#include "dragon/support/error.h"

namespace dragon::bench {
namespace {

std::unique_ptr<GpuTuning> tuning_or_null(GpuTuningOptions options = {}) {
  try {
    return std::make_unique<GpuTuning>(search::RuleSet::cuda(), std::move(options));
  } catch (const UserError&) {
    return nullptr;
  }
}

// GpuTuning with `...` (GpuTuningOptions, default ones when empty) as `t`, or a skip.
#define REQUIRE_GPU_TUNING(t, ...)                                  \
  std::unique_ptr<GpuTuning> t = tuning_or_null(__VA_ARGS__); \
  if (!t) GTEST_SKIP() << "[SKIP] no CUDA device on this machine"

ir::PrimFunc bound(const ir::PrimFunc& func, int64_t threads) {
  schedule::Schedule sch(func);
  search::AutoBindOptions options;
  options.max_threads_per_block = threads;
  search::auto_bind(sch, options);
  return sch.func();
}

TEST(GpuTuning, TellsRightFromWrongAndTimesOnlyTheRight) {
  REQUIRE_GPU_TUNING(tuning);
  ops::Workload relu = ops::OpRegistry::global().make_workload("relu:shape=1024x1024");
  ops::Workload sigmoid = ops::OpRegistry::global().make_workload("sigmoid:shape=1024x1024");
  search::TaskEnvironment env = tuning->environment({"relu", relu.spec, relu.func, 1});
  std::vector<search::MeasureResult> r = env.measurer->measure(
      {env.default_schedule, bound(sigmoid.func, 256), bound(relu.func, 4096), env.default_schedule});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].status, search::MeasureStatus::kOk) << r[0].error;
  EXPECT_GT(r[0].median_ms().value_or(0), 0);
  EXPECT_EQ(r[1].status, search::MeasureStatus::kWrongResult) << r[1].error;
  EXPECT_TRUE(r[1].samples_ms.empty());
  EXPECT_EQ(r[2].status, search::MeasureStatus::kRejected) << r[2].error;
  EXPECT_TRUE(r[3].from_cache);
  EXPECT_FALSE(tuning->device().empty());
}

// One thread walks every element: a kernel far slower than the task's best (the default
// schedule, microseconds) is stopped after its first checked run and recorded as timed
// out, neither checked again nor timed.
// relu over `func`'s elements walked by one thread.
ir::PrimFunc one_thread(const ir::PrimFunc& func) {
  schedule::Schedule sch(func);
  schedule::LoopRV all = sch.fuse(sch.get_loops(sch.get_block("relu")));
  std::vector<schedule::LoopRV> parts = sch.split(all, {int64_t{1}, schedule::None{}});
  sch.bind(parts[0], "blockIdx.x");
  return sch.func();
}

// 16M elements: one thread takes far more than the 50 ms slow-run floor (4M elements
// came within it once one thread's loop was compiled well).
TEST(GpuTuning, ACandidateFarSlowerThanTheBestStopsAfterOneRun) {
  REQUIRE_GPU_TUNING(tuning);
  ops::Workload relu = ops::OpRegistry::global().make_workload("relu:shape=16384x1024");
  search::TaskEnvironment env = tuning->environment({"relu", relu.spec, relu.func, 1});
  std::vector<search::MeasureResult> r = env.measurer->measure({env.default_schedule, one_thread(relu.func)});
  ASSERT_EQ(r.size(), 2u);
  ASSERT_EQ(r[0].status, search::MeasureStatus::kOk) << r[0].error;
  EXPECT_EQ(r[1].status, search::MeasureStatus::kTimedOut) << r[1].error;
  EXPECT_NE(r[1].error.find("not checked or timed further"), std::string::npos) << r[1].error;
  EXPECT_TRUE(r[1].samples_ms.empty());
  std::printf("default %.4g ms; one thread: %s\n", r[0].median_ms().value_or(0), r[1].error.c_str());
}

// A task resumed from the database has a best before it measures anything (its default's
// record): the first fresh candidate, one thread over 16M elements, is held to the
// slow-run limit too.
TEST(GpuTuning, AResumedTasksFirstCandidateIsHeldToTheSlowRunLimit) {
  REQUIRE_GPU_TUNING(tuning);
  ops::Workload relu = ops::OpRegistry::global().make_workload("relu:shape=16384x1024");
  search::TaskEnvironment env = tuning->environment({"relu", relu.spec, relu.func, 1});
  int asked = 0;
  env.measurer->set_known([&](const std::string&) -> std::optional<search::MeasureResult> {
    if (++asked > 1) return std::nullopt;  // only the default was measured before
    search::MeasureResult r;
    r.samples_ms = {0.05};
    return r;
  });
  ASSERT_TRUE(env.measurer->measure({env.default_schedule})[0].from_cache);
  std::vector<search::MeasureResult> r = env.measurer->measure({one_thread(relu.func)});
  EXPECT_EQ(r[0].status, search::MeasureStatus::kTimedOut) << r[0].error;
  EXPECT_NE(r[0].error.find("not checked or timed further"), std::string::npos) << r[0].error;
}

// Once the task has a best time, a candidate's limit is what a kernel within the slow-run
// limit needs (here 3 x 50 ms + the timer's 50 ms): one thread over 128M elements (seconds)
// is killed then, not after candidate_timeout, and the next candidate is measured by a
// fresh worker that sets the problem up again.
TEST(GpuTuning, ACandidatePastItsLimitIsKilledAndTheNextIsMeasured) {
  GpuTuningOptions options;
  options.timer.max_seconds = 0.05;
  options.candidate_timeout_margin = std::chrono::milliseconds(0);
  REQUIRE_GPU_TUNING(tuning, options);
  ops::Workload relu = ops::OpRegistry::global().make_workload("relu:shape=32768x4096");
  search::TaskEnvironment env = tuning->environment({"relu", relu.spec, relu.func, 1});
  auto start = std::chrono::steady_clock::now();
  std::vector<search::MeasureResult> r =
      env.measurer->measure({env.default_schedule, one_thread(relu.func), bound(relu.func, 128)});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.size(), 3u);
  ASSERT_EQ(r[0].status, search::MeasureStatus::kOk) << r[0].error;
  EXPECT_EQ(r[1].status, search::MeasureStatus::kTimedOut) << r[1].error;
  EXPECT_EQ(r[1].error.find("not checked or timed further"), std::string::npos) << r[1].error;
  EXPECT_EQ(r[2].status, search::MeasureStatus::kOk) << r[2].error;
  EXPECT_FALSE(r[2].from_cache);
  std::printf("default %.4g ms, 128 threads a block %.4g ms, %.1f s in all; one thread: %s\n",
              r[0].median_ms().value_or(0), r[2].median_ms().value_or(0), seconds, r[1].error.c_str());
}

TEST(GpuTuning, AShortRunRecordsEveryCandidate) {
  REQUIRE_GPU_TUNING(tuning);
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("dragon-gpu-tune-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(path);
  ops::Workload softmax = ops::OpRegistry::global().make_workload("softmax:shape=256x1024");
  std::vector<search::TuningTask> tasks = {{"softmax", softmax.spec, softmax.func, 1}};
  db::Database database = db::Database::open(path.string());
  search::RandomCostModel model(1);
  search::TuneOptions options;
  options.trials_per_task = 32;
  options.batch_size = 16;
  options.search = GpuTuning::search_options();
  options.search.population = 64;
  std::vector<search::TaskOutcome> outcomes = search::tune(
      tasks, database, [&](const search::TuningTask& t) { return tuning->environment(t); }, model, options);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].trials, 32);
  ASSERT_TRUE(outcomes[0].default_ms.has_value());
  EXPECT_GT(outcomes[0].ok, 0);
  std::printf("softmax 256x1024: default %.4g ms, best %.4g ms after 32 trials (%lld verified)\n", *outcomes[0].default_ms,
              outcomes[0].best_ms.value_or(0), static_cast<long long>(outcomes[0].ok));
  EXPECT_GE(database.count(), 17);  // the default and the candidates not answered from a cache
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

}  // namespace
}  // namespace dragon::bench
