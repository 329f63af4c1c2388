// What `dragon tune` and `dragon data build` tune with on its target: the task environments (design space,
// measurer, default schedule, mutators) of search/cpu_tuning.h or bench/gpu_tuning.h, the
// search's defaults for the target, and the cost model by name; and the flags both commands
// take for them, with what those flags start (SearchRun), written once. A dispatcher only.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "dragon/db/database.h"
#include "dragon/search/cost_model.h"
#include "dragon/search/tuner.h"

namespace dragon::cli {

struct TuneEnvironmentOptions {
  std::string target = "cpu";  // "cpu" or "cuda"
  std::string rules_file;      // extends the target's rule set; empty: the built-in set
};

class TuneEnvironments {
 public:
  virtual ~TuneEnvironments() = default;
  virtual search::TaskEnvironment environment(const search::TuningTask& task) = 0;
  virtual search::EvolutionarySearchOptions search_options() const = 0;
  // Candidates per round: 16 on the CPU, whose rounds take seconds; 64 on the GPU.
  virtual int default_batch_size() const = 0;
  // "lower+codegen 0.41 ms/candidate, ..." over every task's measurer.
  virtual std::string costs_summary() const = 0;
  // "xgb" or "random".
  std::unique_ptr<search::CostModel> cost_model(const std::string& name, uint64_t seed) const;
};

// "auto" becomes "cuda" where a CUDA device can be used, else "cpu"; other names are
// returned as they are. The device is probed in a child process, so that this one has not
// touched the GPU when the measurer's workers are forked from it.
std::string resolve_target(const std::string& name);

// Starts what the target needs (for cuda: the GPU worker process, before anything else of
// this process touches the GPU).
std::unique_ptr<TuneEnvironments> make_tune_environments(const TuneEnvironmentOptions& options);

// The flags of a command that runs search: --target, --trials, --batch, --population,
// --seed, --rules, --cost-model, --time-budget, --tasks-per-round, --quiet.
struct SearchRunFlags {
  std::string target = "cpu";
  int64_t trials = 64;
  int batch = 0;       // 0: the target's default (cpu 16, cuda 64)
  int population = 0;  // 0: the target's default
  int tasks_per_round = 1;  // a caller may set its own default before add_search_run_flags
  int64_t seed = 1;
  std::string rules;
  std::string cost_model = "xgb";
  double time_budget = 0;  // seconds; 0: none
  bool quiet = false;
};
// Adds them to `command`; `trials_per` names what a trial budget is per ("task", "workload").
void add_search_run_flags(CLI::App& command, SearchRunFlags& flags, const std::string& trials_per);

// What the flags start, in the order it must happen: the environments (a GPU worker is
// forked before anything else), the tuning database at `db_path` (created or resumed),
// the cost model.
struct SearchRun {
  std::unique_ptr<TuneEnvironments> environments;
  db::Database database;
  std::unique_ptr<search::CostModel> cost_model;
  int batch_size = 0;                             // the flag's, or the target's default
  search::EvolutionarySearchOptions search;       // the target's, with --population and --seed
  search::TaskEnvironmentFactory environment() {  // for search::tune and data::build_shard
    return [this](const search::TuningTask& task) { return environments->environment(task); };
  }
};
// `command` names the caller in errors ("dragon tune"). Throws UserError for a bad flag.
SearchRun start_search_run(const SearchRunFlags& flags, const std::string& db_path, const std::string& command);

}  // namespace dragon::cli
