// Tuning on the CPU target (cpu_tuning.h).
#include "dragon/search/cpu_tuning.h"

#include <fmt/format.h>

#include "dragon/search/mutator.h"

namespace dragon::search {

CpuTuning::CpuTuning(const RuleSet& rules, CpuMeasurerOptions options) : rules_(rules), options_(std::move(options)) {}

TaskEnvironment CpuTuning::environment(const TuningTask& task) {
  TaskEnvironment env;
  env.target = lower::Target::cpu();
  env.space = make_rule_space(task.func, env.target, rules_);
  env.measurer = make_cpu_measurer(task.func, options_);
  env.default_schedule = task.func;  // the CPU backend runs the unscheduled function as it is
  env.mutators = default_mutators(env.target);
  measurers_.push_back(env.measurer);
  return env;
}

EvolutionarySearchOptions CpuTuning::search_options() {
  EvolutionarySearchOptions o;
  o.population = 128;
  o.init_min_unmeasured = 32;
  o.genetic_num_iters = 3;
  return o;
}

std::string CpuTuning::costs_summary() const { return describe_costs(measurers_); }

std::string describe_costs(const std::vector<std::shared_ptr<const Measurer>>& measurers) {
  MeasureCosts total;
  for (const auto& m : measurers) {
    const MeasureCosts& c = m->costs();
    total.lower_and_codegen += c.lower_and_codegen;
    total.compile += c.compile;
    total.run += c.run;
    total.run_load += c.run_load;
    total.run_check += c.run_check;
    total.run_time += c.run_time;
    total.timed_calls += c.timed_calls;
    total.candidates += c.candidates;
    total.built += c.built;
    total.cached += c.cached;
  }
  auto per = [](double seconds, int64_t n) { return n > 0 ? 1000 * seconds / static_cast<double>(n) : 0.0; };
  std::string text = fmt::format(
      "measurement: {} candidates ({} built, {} from caches); per candidate: lower+codegen {:.3f} ms, compile {:.2f} "
      "ms, verify+time {:.2f} ms (wall)",
      total.candidates, total.built, total.cached, per(total.lower_and_codegen, total.candidates),
      per(total.compile, total.built), per(total.run, total.built));
  if (total.run_load + total.run_check + total.run_time > 0) {
    text += fmt::format(" = load {:.2f} + checked calls {:.2f} + timing {:.2f} ({:.1f} calls) + the rest",
                        per(total.run_load, total.built), per(total.run_check, total.built),
                        per(total.run_time, total.built),
                        total.built > 0 ? static_cast<double>(total.timed_calls) / static_cast<double>(total.built) : 0.0);
  }
  return text;
}

}  // namespace dragon::search
