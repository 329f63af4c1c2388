// Tuning on the CPU target: a task's environment (the CPU design space of a rule set, the
// CPU measurer, the unscheduled function as the default schedule, the CPU mutators) and
// the search settings that suit a small machine. What `dragon tune --target cpu` uses.
#pragma once

#include <string>
#include <vector>

#include "dragon/search/cpu_measurer.h"
#include "dragon/search/rule_set.h"
#include "dragon/search/rule_space.h"
#include "dragon/search/tuner.h"

namespace dragon::search {

// Keeps every measurer it made, so their costs can be summed.
class CpuTuning {
 public:
  explicit CpuTuning(const RuleSet& rules, CpuMeasurerOptions options = {});
  // Throws UserError when the design space of the task cannot be made.
  TaskEnvironment environment(const TuningTask& task);
  // A population of 128 and three generations: the CPU work of search competes with the
  // compiler and the timed runs for the same cores.
  static EvolutionarySearchOptions search_options();
  // Per-candidate CPU costs over every task so far: lowering + codegen, compile, run.
  std::string costs_summary() const;

 private:
  const RuleSet& rules_;
  CpuMeasurerOptions options_;
  std::vector<std::shared_ptr<const Measurer>> measurers_;
};

// "lower+codegen 0.41 ms, compile 12.3 ms, run 20.1 ms per candidate (312 candidates, 40
// from caches)": the summary `dragon tune` prints.
std::string describe_costs(const std::vector<std::shared_ptr<const Measurer>>& measurers);

}  // namespace dragon::search
