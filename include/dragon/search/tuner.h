// Tuning a set of tasks (one op spec, or the problems of a suite) within a trial budget:
// the task scheduler (task_scheduler.h) picks the task of each round, evolutionary search
// (evolutionary_search.h) proposes a batch, the task's measurer (measurer.h) builds,
// verifies and times it, and every result, failures included, is committed to the tuning
// database before the next round. A rerun resumes: each task's records are read back, its
// measured programs seed the population and the cost model, and the trials they used count
// against the budget. Each run measures the task's default schedule (script "" in the
// database; the kernel cache answers when an earlier run measured the same code, and a
// default whose code changed since is measured anew) so the best is always compared with
// today's default. Not a CLI: tools/dragon/cmd_tune.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dragon/db/database.h"
#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/trace.h"
#include "dragon/search/cost_model.h"
#include "dragon/search/evolutionary_search.h"
#include "dragon/search/measurer.h"
#include "dragon/search/mutator.h"
#include "dragon/search/sketch_space.h"
#include "dragon/search/task_scheduler.h"

namespace dragon::search {

struct TuningTask {
  std::string name;  // "23_Softmax", or the spec
  std::string spec;  // the canonical op spec, when the task has one
  ir::PrimFunc func;
  double weight = 1;
};

// What tuning one task needs on its target, made when the task is first visited.
struct TaskEnvironment {
  lower::Target target;
  std::unique_ptr<SketchSpace> space;
  std::shared_ptr<Measurer> measurer;
  ir::PrimFunc default_schedule;  // what the database's script "" stands for on this target
  // The default schedule's trace when it is a candidate of the space (the tensor-core
  // default: a sketch under rule-of-thumb decisions): the search starts from it as from a
  // transferred trace, so mutations begin at a known good kernel, not only at random draws.
  std::optional<schedule::Trace> default_trace;
  std::vector<WeightedMutator> mutators;
};
// Throws UserError when the task cannot be tuned on the target (it is then reported as
// such and the others go on).
using TaskEnvironmentFactory = std::function<TaskEnvironment(const TuningTask&)>;

struct TuneProgress {
  size_t task = 0;
  std::string task_name;
  int64_t task_trials = 0, task_budget = 0;  // the task's trials so far (earlier runs included)
  std::optional<double> task_best_ms, task_default_ms;
  int64_t trials = 0, budget = 0;            // over every task
  int64_t measured_this_run = 0;             // candidates measured (not from a cache) in this run
  double elapsed_s = 0;
  double candidates_per_second = 0;          // measured_this_run / elapsed_s
  double propose_s = 0, measure_s = 0;       // this run's wall time proposing and measuring
};

struct TuneOptions {
  int64_t trials_per_task = 64;  // measured candidates per task, those of earlier runs included
  int batch_size = 64;           // candidates per task and round
  // Tasks in one round (the scheduler's first picks): their batches are measured together
  // (measure_batches), so measurers of a group build them in one spread of compilers. One
  // task a round is MetaSchedule's loop; many small tasks (a data set's workloads) need
  // several to keep the compilers busy.
  int tasks_per_round = 1;
  std::optional<double> time_budget_s;  // no round starts that, as long as the round before
                                        // it, would end after it (0: no round at all)
  TaskSchedulerOptions scheduler;
  EvolutionarySearchOptions search;
  // Transfer: a task with less than a batch of its own records starts from up to this many
  // traces of other workloads of its op kind tuned on the same target and machine (the two
  // best of each, nearest shapes first), measured at the head of its first batches (0: none).
  int transfer_limit = 16;
  // Stale records: an earlier record whose script this build prints as other code (its
  // kernel hash differs: the code generator changed since) timed a kernel that no longer
  // exists. Its latency stays out of the cost model and the task's best, and the best
  // `remeasure_stale` of them are measured again at the head of the task's batches, so the
  // search does not steer by a schedule family's old times (KernelBench 55's 214 H100
  // records of five commits held balanced warp tiles at 31 ms from before the staged
  // output, and every one of the 99 candidates after it came from one 240 x 16 family).
  // 0: set aside, none measured again; negative: records are taken as they are, unchecked.
  int remeasure_stale = 16;
  std::string commit;                   // recorded with every record
  std::string origin = "search";
  std::function<void(const TuneProgress&)> on_round;  // after every round
  std::function<void(const std::string&)> log;        // one line per notable event
};

struct TaskOutcome {
  std::string name;
  int64_t trials = 0;      // records of the task in the database (this run's and earlier ones)
  int64_t new_trials = 0;  // proposed and measured in this run
  int64_t ok = 0;          // of the new trials, verified and timed
  int64_t cached = 0;      // of the new trials, programs whose kernel was measured before
  int64_t transferred = 0;  // programs from other workloads' best traces that realized here (TuneOptions::transfer_limit)
  bool default_seeded = false;  // the default's trace (TaskEnvironment::default_trace) realized as a seed
  int64_t stale = 0;        // earlier records whose code this build prints otherwise (TuneOptions::remeasure_stale)
  std::optional<double> best_ms;
  std::optional<double> default_ms;
  std::string best_script;  // "" when the best is the default schedule
  std::string note;         // why it stopped: "trial budget", "time budget", "space exhausted: ...", an error
  // The best latency after each round of this run: (task trials so far, best ms).
  std::vector<std::pair<int64_t, double>> curve;
  SearchStatistics search;  // what the task's evolutionary search did in this run
};

// Tunes `tasks`; returns one outcome per task, in order. Throws UserError only when every
// task visited failed to start (every factory call failed); a task's failure is its
// outcome's note.
std::vector<TaskOutcome> tune(const std::vector<TuningTask>& tasks, db::Database& database,
                              const TaskEnvironmentFactory& factory, CostModel& model, const TuneOptions& options);

}  // namespace dragon::search
