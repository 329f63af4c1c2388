// Which task of a suite to tune next: MetaSchedule's gradient-based task scheduler. After
// one round over every task, each round goes to the task whose best latency is expected to
// fall most: a blend of its recent improvement per round (a window of rounds) and the
// optimistic guess that another round gains as much as the average round so far, times the
// task's weight. Ties go to the lowest index. Not the search of one task
// (evolutionary_search.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace dragon::search {

// What "gain" means. kTotalLatency is MetaSchedule's: the weighted sum of latencies (a model
// whose layers run in sequence), so slow tasks get most rounds. kGeometricMean measures gain
// in log latency (relative), as a suite's geometric-mean speedup does: a 2x gain on a 10 us
// kernel counts as much as on a 10 ms one.
enum class TaskObjective { kTotalLatency, kGeometricMean };

struct TaskSchedulerOptions {
  TaskObjective objective = TaskObjective::kTotalLatency;
  double alpha = 0.2;  // weight of the measured gain over the window against the optimistic guess
  int window = 3;      // rounds the measured gain is taken over
};

class GradientTaskScheduler {
 public:
  // One weight per task (> 0; MetaSchedule's task weight: how often the kernel runs).
  explicit GradientTaskScheduler(std::vector<double> weights, TaskSchedulerOptions options = {});

  // The task to tune next, or nullopt when every task is finished.
  std::optional<size_t> next();
  // The `count` unfinished tasks next() would rank first (fewer when fewer are left), best
  // first: the tasks of a round whose candidates are measured together.
  std::vector<size_t> next_tasks(size_t count);
  // After a round of `task`: its best verified latency now (nullopt: none yet).
  void report(size_t task, std::optional<double> best_ms);
  // `task` gets no more rounds (its trial budget is spent, or its space yields nothing).
  void finish(size_t task);

  bool finished(size_t task) const { return tasks_.at(task).finished; }
  int64_t rounds(size_t task) const { return static_cast<int64_t>(tasks_.at(task).history.size()); }
  // The expected gain of another round of `task` (what next() maximises); for tests and logs.
  double priority(size_t task) const;

 private:
  struct TaskState {
    double weight = 1;
    bool finished = false;
    std::vector<std::optional<double>> history;  // best latency after each round
  };
  std::vector<TaskState> tasks_;
  TaskSchedulerOptions options_;
};

}  // namespace dragon::search
