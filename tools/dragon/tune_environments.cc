#include "tune_environments.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "dragon/bench/gpu_tuning.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/search/cpu_tuning.h"
#include "dragon/search/rule_set.h"
#include "dragon/support/error.h"

namespace dragon::cli {
namespace {

class CpuEnvironments final : public TuneEnvironments {
 public:
  explicit CpuEnvironments(search::RuleSet rules) : rules_(std::move(rules)), tuning_(rules_) {}
  search::TaskEnvironment environment(const search::TuningTask& task) override { return tuning_.environment(task); }
  search::EvolutionarySearchOptions search_options() const override { return search::CpuTuning::search_options(); }
  int default_batch_size() const override { return 16; }
  std::string costs_summary() const override { return tuning_.costs_summary(); }

 private:
  search::RuleSet rules_;
  search::CpuTuning tuning_;
};

class CudaEnvironments final : public TuneEnvironments {
 public:
  explicit CudaEnvironments(search::RuleSet rules) : rules_(std::move(rules)), tuning_(rules_) {}
  search::TaskEnvironment environment(const search::TuningTask& task) override { return tuning_.environment(task); }
  search::EvolutionarySearchOptions search_options() const override { return bench::GpuTuning::search_options(); }
  int default_batch_size() const override { return 64; }
  std::string costs_summary() const override { return tuning_.costs_summary(); }

 private:
  search::RuleSet rules_;
  bench::GpuTuning tuning_;
};

}  // namespace

std::unique_ptr<search::CostModel> TuneEnvironments::cost_model(const std::string& name, uint64_t seed) const {
  if (name == "random") return std::make_unique<search::RandomCostModel>(seed);
  if (name == "xgb") {
    // One XGBoost thread: an OpenMP thread pool in this process would be inherited, broken,
    // by the workers forked from it later (a measurer started again after a crash), and
    // kernels there run OpenMP too. The training sets of a tuning run are small.
    search::XgbCostModelOptions options;
    options.threads = 1;
    return std::make_unique<search::XgbCostModel>(options);
  }
  throw UserError("unknown cost model '" + name + "' (xgb or random)");
}

std::string resolve_target(const std::string& name) {
  if (name != "auto") return name;
  const pid_t child = ::fork();
  if (child < 0) throw UserError("cannot start a process to look for a CUDA device (fork failed)");
  if (child == 0) ::_exit(runtime::cuda_device_available() ? 0 : 1);
  int status = 0;
  if (::waitpid(child, &status, 0) != child) throw UserError("cannot wait for the process looking for a CUDA device");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "cuda" : "cpu";
}

std::unique_ptr<TuneEnvironments> make_tune_environments(const TuneEnvironmentOptions& options) {
  const std::optional<lower::Target> named = lower::Target::from_name(options.target);
  if (!named) throw UserError("dragon tune: unknown target '" + options.target + "'");
  const lower::Target& target = *named;
  search::RuleSet rules =
      options.rules_file.empty() ? search::RuleSet::for_target(target) : search::RuleSet::load(options.rules_file);
  if (rules.target != target.kind) {
    throw UserError("--rules " + options.rules_file + " is a rule set for the other target");
  }
  if (target.is_gpu()) return std::make_unique<CudaEnvironments>(std::move(rules));
  return std::make_unique<CpuEnvironments>(std::move(rules));
}

void add_search_run_flags(CLI::App& command, SearchRunFlags& flags, const std::string& trials_per) {
  command.add_option("--target", flags.target, "cpu (g++ and this machine's cores) or cuda (NVRTC and the GPU)")
      ->check(CLI::IsMember(lower::Target::names()))
      ->capture_default_str();
  command
      .add_option("--trials", flags.trials,
                  fmt::format("Measured candidates per {}, those in --db from earlier runs included", trials_per))
      ->capture_default_str();
  command.add_option("--time-budget", flags.time_budget, "Seconds; no tuning round starts after them (0: none)");
  command
      .add_option("--batch", flags.batch,
                  "Candidates per round (0: 16 on the CPU, whose rounds take seconds; 64 on the GPU)")
      ->capture_default_str();
  command
      .add_option("--tasks-per-round", flags.tasks_per_round,
                  "Tasks whose batches are measured together in a round: on the GPU their candidates compile in one "
                  "spread over the cores, which small tasks alone leave idle")
      ->capture_default_str();
  command.add_option("--population", flags.population, "Evolutionary search's population (0: the target's default)");
  command.add_option("--seed", flags.seed, "Seed of the search's draws")->capture_default_str();
  command.add_option("--rules", flags.rules,
                     "A rule-set file extending the target's design space (docs/design-space.md)");
  command.add_option("--cost-model", flags.cost_model, "xgb (gradient-boosted trees) or random")
      ->check(CLI::IsMember({"xgb", "random"}))
      ->capture_default_str();
  command.add_flag("--quiet", flags.quiet, "No progress line");
}

SearchRun start_search_run(const SearchRunFlags& flags, const std::string& db_path, const std::string& command) {
  if (flags.trials < 0) throw UserError(command + ": --trials must not be negative");
  if (flags.batch < 0) throw UserError(command + ": --batch must not be negative");
  if (flags.population < 0) throw UserError(command + ": --population must not be negative");
  if (flags.tasks_per_round < 1) throw UserError(command + ": --tasks-per-round must be at least 1");
  if (flags.time_budget < 0) throw UserError(command + ": --time-budget must not be negative");
  TuneEnvironmentOptions env_options;
  env_options.target = flags.target;
  env_options.rules_file = flags.rules;
  // Started before anything else runs: the measurers' workers are forked from here.
  std::unique_ptr<TuneEnvironments> environments = make_tune_environments(env_options);
  db::Database database = db::Database::open(db_path);
  std::unique_ptr<search::CostModel> model = environments->cost_model(flags.cost_model, static_cast<uint64_t>(flags.seed));
  search::EvolutionarySearchOptions search = environments->search_options();
  if (flags.population > 0) search.population = flags.population;
  search.seed = flags.seed;
  const int batch = flags.batch > 0 ? flags.batch : environments->default_batch_size();
  return SearchRun{std::move(environments), std::move(database), std::move(model), batch, search};
}

}  // namespace dragon::cli
