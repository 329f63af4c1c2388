#include "tune_environments.h"

#include "dragon/bench/gpu_tuning.h"
#include "dragon/lower/target.h"
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

}  // namespace dragon::cli
