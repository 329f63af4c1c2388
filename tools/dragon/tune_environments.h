// What `dragon tune` and `dragon data build` tune with on its target: the task environments (design space,
// measurer, default schedule, mutators) of search/cpu_tuning.h or bench/gpu_tuning.h, the
// search's defaults for the target, and the cost model by name. A dispatcher only.
#pragma once

#include <memory>
#include <string>

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

// Starts what the target needs (for cuda: the GPU worker process, before anything else of
// this process touches the GPU).
std::unique_ptr<TuneEnvironments> make_tune_environments(const TuneEnvironmentOptions& options);

}  // namespace dragon::cli
