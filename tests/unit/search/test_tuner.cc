// The tuning loop on the CPU with a hand-made sketch space and a database in a temporary
// file: the budget is kept, every candidate and the default schedule are recorded, a rerun
// resumes where the first stopped, and a task whose space yields nothing says so while the
// other tasks go on.
#include <gtest/gtest.h>

#include <filesystem>

#include "dragon/search/cpu_measurer.h"
#include "dragon/search/rewrite_unroll.h"
#include "dragon/search/tuner.h"
#include "search_test_sketches.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::search {
namespace {

using schedule::testing::workload;

class TunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("dragon-tuner-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }

  static TaskEnvironment environment(const TuningTask& task) {
    TaskEnvironment env;
    env.target = lower::Target::cpu();
    if (task.name == "broken") {
      // Every candidate is refused by its postprocessor.
      env.space = make_trace_space(task.func, {schedule::Schedule(task.func).trace()},
                                   {[](schedule::Schedule&) { throw UserError("refused"); }});
    } else {
      env.space = make_trace_space(task.func, {testing::cpu_matmul_sketch(task.func)},
                                   {[](schedule::Schedule& sch) { rewrite_unroll(sch); }});
    }
    CpuMeasurerOptions options;
    options.timer.max_seconds = 0.02;
    env.measurer = make_cpu_measurer(task.func, options);
    env.default_schedule = task.func;
    env.mutators = default_mutators(env.target);
    return env;
  }

  static TuneOptions options(int64_t trials) {
    TuneOptions o;
    o.trials_per_task = trials;
    o.batch_size = 8;
    o.search.population = 16;
    o.search.init_min_unmeasured = 8;
    o.search.genetic_num_iters = 1;
    o.search.threads = 1;
    return o;
  }

  std::filesystem::path path_;
};

TEST_F(TunerTest, KeepsTheBudgetRecordsEverythingAndResumes) {
  std::vector<TuningTask> tasks = {{"gemm", "matmul:m=32,n=32,k=32", workload("matmul:m=32,n=32,k=32"), 1}};
  RandomCostModel model(3);
  {
    db::Database database = db::Database::open(path_.string());
    std::vector<TaskOutcome> outcomes = tune(tasks, database, environment, model, options(8));
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_EQ(outcomes[0].trials, 8);
    EXPECT_EQ(outcomes[0].new_trials, 8);
    EXPECT_TRUE(outcomes[0].best_ms.has_value());
    EXPECT_TRUE(outcomes[0].default_ms.has_value());
    EXPECT_EQ(outcomes[0].note, "trial budget");
    EXPECT_FALSE(outcomes[0].curve.empty());
    // 8 candidates (every proposal a new program; one whose code another printed first is
    // recorded with that kernel's measurement) and the default.
    EXPECT_EQ(database.count(), 9);
  }
  {
    db::Database database = db::Database::open(path_.string());
    std::vector<TaskOutcome> outcomes = tune(tasks, database, environment, model, options(12));
    EXPECT_EQ(outcomes[0].trials, 12);
    EXPECT_EQ(outcomes[0].new_trials, 4) << "the first run's 8 trials count";
    EXPECT_EQ(database.count(), 13) << "the default is not measured again";
  }
}

TEST_F(TunerTest, ATaskWhoseSpaceYieldsNothingSaysSoAndTheOthersGoOn) {
  std::vector<TuningTask> tasks = {{"broken", "matmul:m=16,n=16,k=16", workload("matmul:m=16,n=16,k=16"), 1},
                                   {"gemm", "matmul:m=32,n=32,k=32", workload("matmul:m=32,n=32,k=32"), 1}};
  RandomCostModel model(3);
  db::Database database = db::Database::open(path_.string());
  std::vector<TaskOutcome> outcomes = tune(tasks, database, environment, model, options(4));
  EXPECT_NE(outcomes[0].note.find("space exhausted"), std::string::npos) << outcomes[0].note;
  EXPECT_FALSE(outcomes[0].best_ms.has_value());
  EXPECT_EQ(outcomes[1].trials, 4);
}

TEST_F(TunerTest, NoRoundStartsAfterTheTimeBudget) {
  std::vector<TuningTask> tasks = {{"gemm", "matmul:m=32,n=32,k=32", workload("matmul:m=32,n=32,k=32"), 1}};
  RandomCostModel model(3);
  db::Database database = db::Database::open(path_.string());
  TuneOptions o = options(64);
  o.time_budget_s = 0.0;
  std::vector<TaskOutcome> outcomes = tune(tasks, database, environment, model, o);
  EXPECT_EQ(outcomes[0].new_trials, 0);
  EXPECT_EQ(outcomes[0].note, "time budget");
}

}  // namespace
}  // namespace dragon::search
