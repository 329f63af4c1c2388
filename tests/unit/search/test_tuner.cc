// The tuning loop on the CPU with a hand-made sketch space and a database in a temporary
// file: the budget is kept, every candidate and the default schedule are recorded, a rerun
// resumes where the first stopped, and a task whose space yields nothing says so while the
// other tasks go on.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

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

 public:
  // A task's CPU environment (the "broken" task's postprocessor refuses every candidate).
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


 protected:
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

// Records measured by another build whose code this one prints otherwise (their kernel
// hash differs) are stale: their times are neither the task's best nor the cost model's,
// nor do they count toward the trial budget; the fastest of them are measured again first,
// each recorded anew.
TEST_F(TunerTest, RecordsWhoseCodeThisBuildPrintsOtherwiseAreMeasuredAgain) {
  const ir::PrimFunc func = workload("matmul:m=32,n=32,k=32");
  std::vector<TuningTask> tasks = {{"gemm", "matmul:m=32,n=32,k=32", func, 1}};
  RandomCostModel model(3);
  std::vector<db::Record> first_run;
  std::vector<db::Workload> workloads;
  {
    db::Database database = db::Database::open(path_.string());
    tune(tasks, database, environment, model, options(8));
    for (const db::StoredRecord& r : database.records()) first_run.push_back(r.record);
    workloads = database.workloads();
  }
  ASSERT_EQ(first_run.size(), 9u);
  // The same records as an older build would have left them: other kernel hashes, and
  // times no kernel of today's code reaches.
  const std::filesystem::path older = path_.string() + "-older.db";
  std::set<std::string> stale_scripts;
  {
    db::Database database = db::Database::open(older.string());
    for (const db::Workload& w : workloads) database.add_workload(w);
    for (db::Record r : first_run) {
      if (!r.script.empty()) {
        r.kernel_hash = "older-build-" + *r.kernel_hash;
        r.samples_ms = {1e-6f};
        stale_scripts.insert(r.script);
      }
      database.commit(r);
    }
  }
  TuneOptions o = options(4);  // stale records do not count: one batch of 4 new trials
  o.remeasure_stale = 3;
  o.batch_size = 4;
  o.search.seed_share = 1.0;  // the one batch may be all seeds
  db::Database database = db::Database::open(older.string());
  std::vector<TaskOutcome> outcomes = tune(tasks, database, environment, model, o);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].stale, 8);
  EXPECT_EQ(outcomes[0].new_trials, 4) << "the 8 stale records leave the whole budget to this build";
  ASSERT_TRUE(outcomes[0].best_ms.has_value());
  EXPECT_GT(*outcomes[0].best_ms, 1e-3) << "a stale time is not the task's best";
  int64_t remeasured = 0;
  for (const db::StoredRecord& r : database.records()) {
    if (r.record.kernel_hash && r.record.kernel_hash->rfind("older-build-", 0) == 0) continue;
    remeasured += stale_scripts.count(r.record.script) != 0 ? 1 : 0;
  }
  EXPECT_EQ(remeasured, 3) << "the three fastest stale records, measured again";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(older.string() + suffix);
}

// A record of the default schedule stands for the kernel it measured: when the default
// changes (a new version of the tool), the next run measures the new one and records it
// once, instead of reporting the old kernel's time as today's default.
TEST_F(TunerTest, ADefaultWhoseCodeChangedIsMeasuredAnewAndRecordedOnce) {
  const ir::PrimFunc func = workload("matmul:m=32,n=32,k=32");
  std::vector<TuningTask> tasks = {{"gemm", "matmul:m=32,n=32,k=32", func, 1}};
  RandomCostModel model(3);
  auto default_records = [](const db::Database& database) {
    int64_t n = 0;
    for (const db::StoredRecord& r : database.records()) n += r.record.script.empty() ? 1 : 0;
    return n;
  };
  db::Database database = db::Database::open(path_.string());
  tune(tasks, database, environment, model, options(2));
  ASSERT_EQ(default_records(database), 1);
  // The next version's default: the same loops, the outer one parallel (other code).
  schedule::Schedule changed(func);
  changed.parallel(changed.get_loops(changed.get_block("C")).front());
  auto new_default = [&](const TuningTask& task) {
    TaskEnvironment env = environment(task);
    env.default_schedule = changed.func();
    return env;
  };
  std::vector<TaskOutcome> outcomes = tune(tasks, database, new_default, model, options(4));
  EXPECT_TRUE(outcomes[0].default_ms.has_value());
  EXPECT_EQ(default_records(database), 2) << "the changed default is measured and recorded";
  EXPECT_EQ(outcomes[0].trials, 4) << "default records are not trials";
  tune(tasks, database, new_default, model, options(6));
  EXPECT_EQ(default_records(database), 2) << "the same default code is not recorded again";
}

// A default schedule that is a candidate of the space (the tensor-core default) seeds the
// search: measured among the first proposals and recorded with its script, so later runs
// mutate it; not seeded again once measured.
TEST_F(TunerTest, ADefaultThatIsACandidateSeedsTheSearch) {
  RandomCostModel model(3);
  db::Database database = db::Database::open(path_.string());
  const ir::PrimFunc func = workload("matmul:m=32,n=32,k=32");
  std::vector<TuningTask> tasks = {{"gemm", "matmul:m=32,n=32,k=32", func, 1}};
  const schedule::Trace seed = testing::cpu_matmul_sketch(func);
  auto seeded = [&](const TuningTask& task) {
    TaskEnvironment env = environment(task);
    env.default_trace = seed;
    return env;
  };
  TuneOptions o = options(8);
  o.transfer_limit = 0;
  std::vector<TaskOutcome> first = tune(tasks, database, seeded, model, o);
  EXPECT_TRUE(first[0].default_seeded);
  EXPECT_EQ(first[0].trials, 8);
  EXPECT_EQ(first[0].search.seeded, 1) << "the seed is proposed (and so measured and recorded) in this run";
  std::vector<TaskOutcome> again = tune(tasks, database, seeded, model, options(12));
  EXPECT_FALSE(again[0].default_seeded) << "measured already";
  // Without a default trace, nothing is seeded.
  EXPECT_FALSE(tune(tasks, database, environment, model, options(14))[0].default_seeded);
}

// Transfer: a task with no records of its own starts from the best traces of the other
// workloads of its op kind in the database (same target and machine); the first task has
// none to start from.
TEST_F(TunerTest, ANewTaskStartsFromTheBestTracesOfItsOpKindsOtherWorkloads) {
  RandomCostModel model(3);
  db::Database database = db::Database::open(path_.string());
  std::vector<TuningTask> first = {{"gemm", "matmul:m=32,n=32,k=32", workload("matmul:m=32,n=32,k=32"), 1}};
  std::vector<TaskOutcome> a = tune(first, database, environment, model, options(8));
  EXPECT_EQ(a[0].transferred, 0);
  std::vector<TuningTask> second = {{"gemm", "matmul:m=32,n=32,k=64", workload("matmul:m=32,n=32,k=64"), 1}};
  std::vector<TaskOutcome> b = tune(second, database, environment, model, options(8));
  EXPECT_GE(b[0].transferred, 1);
  EXPECT_LE(b[0].transferred, 2) << "the two best of the one other workload";
  EXPECT_EQ(b[0].trials, 8);
  // Resumed with a batch of its own records: no transfer.
  std::vector<TaskOutcome> again = tune(second, database, environment, model, options(12));
  EXPECT_EQ(again[0].transferred, 0);
  // None when turned off.
  TuneOptions off = options(8);
  off.transfer_limit = 0;
  std::vector<TuningTask> third = {{"gemm", "matmul:m=32,n=32,k=48", workload("matmul:m=32,n=32,k=48"), 1}};
  EXPECT_EQ(tune(third, database, environment, model, off)[0].transferred, 0);
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

// A group that measures each batch with its measurer's own measure() and remembers how
// many batches each call brought.
class CountingGroup final : public MeasureGroup {
 public:
  std::vector<size_t> batches_per_call;
  std::vector<size_t> functions_per_call;
  std::chrono::milliseconds delay{0};  // added to every call, as a slow GPU's would be
  std::vector<std::vector<MeasureResult>> measure(const std::vector<MeasureBatch>& batches) override;
};

// The CPU measurer of a task, in a group.
class GroupedMeasurer final : public Measurer {
 public:
  GroupedMeasurer(std::shared_ptr<Measurer> inner, CountingGroup* group) : inner_(std::move(inner)), group_(group) {}
  std::vector<MeasureResult> measure(const std::vector<ir::PrimFunc>& scheduled) override {
    return inner_->measure(scheduled);
  }
  std::string target_name() const override { return inner_->target_name(); }
  std::string target_arch() const override { return inner_->target_arch(); }
  std::string device() const override { return inner_->device(); }
  std::string driver() const override { return inner_->driver(); }
  const MeasureCosts& costs() const override { return inner_->costs(); }
  void set_known(KnownResult known) override { inner_->set_known(std::move(known)); }
  MeasureGroup* group() override { return group_; }
  std::optional<std::string> kernel_hash(const ir::PrimFunc& scheduled) const override {
    return inner_->kernel_hash(scheduled);
  }

 private:
  std::shared_ptr<Measurer> inner_;
  CountingGroup* group_;
};

// Each task's environment with its measurer in `group`.
TaskEnvironmentFactory grouped_environments(CountingGroup& group) {
  return [&group](const TuningTask& task) {
    TaskEnvironment env = TunerTest::environment(task);
    env.measurer = std::make_shared<GroupedMeasurer>(env.measurer, &group);
    return env;
  };
}

std::vector<std::vector<MeasureResult>> CountingGroup::measure(const std::vector<MeasureBatch>& batches) {
  std::this_thread::sleep_for(delay);
  batches_per_call.push_back(batches.size());
  size_t functions = 0;
  for (const MeasureBatch& b : batches) functions += b.scheduled.size();
  functions_per_call.push_back(functions);
  std::vector<std::vector<MeasureResult>> results;
  for (const MeasureBatch& b : batches) {
    EXPECT_EQ(b.measurer->group(), this);
    results.push_back(static_cast<GroupedMeasurer*>(b.measurer)->measure(b.scheduled));
  }
  return results;
}

TEST_F(TunerTest, SeveralTasksARoundAreMeasuredTogetherAndEachKeepsItsBudget) {
  std::vector<TuningTask> tasks = {{"a", "matmul:m=16,n=16,k=16", workload("matmul:m=16,n=16,k=16"), 1},
                                   {"b", "matmul:m=32,n=32,k=32", workload("matmul:m=32,n=32,k=32"), 1},
                                   {"c", "matmul:m=32,n=16,k=32", workload("matmul:m=32,n=16,k=32"), 1}};
  CountingGroup group;
  TaskEnvironmentFactory grouped = grouped_environments(group);
  RandomCostModel model(3);
  db::Database database = db::Database::open(path_.string());
  TuneOptions o = options(8);
  o.batch_size = 4;
  o.tasks_per_round = 3;
  std::vector<TaskOutcome> outcomes = tune(tasks, database, grouped, model, o);
  ASSERT_EQ(outcomes.size(), 3u);
  for (const TaskOutcome& outcome : outcomes) {
    EXPECT_EQ(outcome.trials, 8) << outcome.name;
    EXPECT_EQ(outcome.note, "trial budget") << outcome.name;
  }
  // The three default schedules together when the tasks start (batches of one), then two
  // rounds of three batches of 4.
  EXPECT_EQ(group.batches_per_call, (std::vector<size_t>{3, 3, 3}));
  EXPECT_EQ(group.functions_per_call, (std::vector<size_t>{3, 12, 12}));
  EXPECT_EQ(database.count(), 3 * 9);
  EXPECT_THROW(
      {
        TuneOptions bad = options(8);
        bad.tasks_per_round = 0;
        tune(tasks, database, grouped, model, bad);
      },
      UserError);
}

// A round as long as the last one would end past the budget: it does not start. Each
// measuring call takes 150 ms here, a round two calls (the defaults, then the batches), so
// the first round ends near 0.3 s and a second, started before the 0.5 s budget, would
// have ended near 0.6 s.
TEST_F(TunerTest, NoRoundStartsThatWouldEndPastTheTimeBudget) {
  std::vector<TuningTask> tasks = {{"a", "matmul:m=16,n=16,k=16", workload("matmul:m=16,n=16,k=16"), 1}};
  CountingGroup group;
  group.delay = std::chrono::milliseconds(150);
  TaskEnvironmentFactory grouped = grouped_environments(group);
  RandomCostModel model(3);
  db::Database database = db::Database::open(path_.string());
  TuneOptions o = options(64);
  o.batch_size = 4;
  o.time_budget_s = 0.5;
  std::vector<TaskOutcome> outcomes = tune(tasks, database, grouped, model, o);
  EXPECT_EQ(outcomes[0].new_trials, 4) << "one round";
  EXPECT_EQ(outcomes[0].note, "time budget");
  EXPECT_EQ(group.batches_per_call.size(), 2u);
}

}  // namespace
}  // namespace dragon::search
