// dragon tune SPEC | --suite NAME: search for faster schedules (search/tuner.h) and commit
// every measured candidate to the tuning database; a rerun with the same --db resumes.
// A progress line per round (trials, the task's best, candidates per second) and a final
// table. Argument parsing and printing only.
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/tuner.h"
#include "dragon/suites/suite.h"
#include "dragon/support/error.h"
#include "progress_line.h"
#include "run_provenance.h"
#include "tune_environments.h"

namespace dragon::cli {
namespace {

struct TuneCliOptions {
  std::string spec;
  std::string suite;
  std::string problems;
  std::string suites_dir = suites::default_suites_dir();
  std::string target = "cpu";
  int64_t trials = 64;
  std::string db;
  double time_budget = 0;  // 0: none
  int batch = 0;  // 0: the target's default (cpu 16, cuda 64)
  int population = 0;  // 0: the strategy's default for the target
  int64_t seed = 1;
  std::string rules;
  std::string cost_model = "xgb";
  std::string curve_out;
  bool quiet = false;
};

std::string ms(const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : "-"; }

std::vector<search::TuningTask> tasks_of(const TuneCliOptions& o) {
  const ops::OpRegistry& registry = ops::OpRegistry::global();
  std::vector<search::TuningTask> tasks;
  if (!o.suite.empty()) {
    suites::Suite suite = suites::load_suite(o.suite, o.suites_dir);
    for (const suites::Problem& p : suites::select_problems(suite, o.problems)) {
      if (!p.supported()) {
        std::fprintf(stderr, "%s: unsupported (%s), skipped\n", p.name.c_str(), p.output.c_str());
        continue;
      }
      ops::Workload w = registry.make_workload(p.spec);
      tasks.push_back({p.name, w.spec, w.func, 1.0});
    }
  } else {
    ops::Workload w = registry.make_workload(o.spec);
    tasks.push_back({w.spec, w.spec, w.func, 1.0});
  }
  if (tasks.empty()) throw UserError("dragon tune: no supported problem selected");
  return tasks;
}

// The progress line of a tuning run.
std::string progress_text(const search::TuneProgress& p) {
  return fmt::format("{} {}/{} trials  {:.1f} candidates/s  {} {}/{}: best {} ms (default {} ms)",
                     ProgressLine::bar(p.trials, p.budget), p.trials, p.budget, p.candidates_per_second, p.task_name,
                     p.task_trials, p.task_budget, ms(p.task_best_ms), ms(p.task_default_ms));
}

void print_table(const std::vector<search::TaskOutcome>& outcomes) {
  std::printf("%-44s %7s %6s %12s %12s %8s  %s\n", "task", "trials", "ok", "default ms", "best ms", "speedup", "note");
  for (const search::TaskOutcome& o : outcomes) {
    std::string speedup = o.best_ms && o.default_ms ? fmt::format("{:.2f}x", *o.default_ms / *o.best_ms) : "-";
    std::printf("%-44s %7lld %6lld %12s %12s %8s  %s\n", o.name.substr(0, 44).c_str(), static_cast<long long>(o.trials),
                static_cast<long long>(o.ok), ms(o.default_ms).c_str(), ms(o.best_ms).c_str(), speedup.c_str(),
                o.note.c_str());
  }
}

void write_curves(const std::string& path, const std::vector<search::TaskOutcome>& outcomes) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const search::TaskOutcome& o : outcomes) {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& [trials, best] : o.curve) curve.push_back({trials, best});
    tasks.push_back({{"task", o.name}, {"trials", o.trials}, {"ok", o.ok}, {"default_ms", o.default_ms ? nlohmann::json(*o.default_ms) : nlohmann::json()},
                     {"best_ms", o.best_ms ? nlohmann::json(*o.best_ms) : nlohmann::json()}, {"note", o.note}, {"curve", curve}});
  }
  std::ofstream out(path);
  out << nlohmann::json{{"tasks", tasks}}.dump(1) << "\n";
  if (!out) throw UserError("cannot write " + path);
}

int tune(const TuneCliOptions& o) {
  if (o.db.empty()) throw UserError("dragon tune: give --db FILE (the tuning database; a rerun resumes from it)");
  if (o.spec.empty() == o.suite.empty()) throw UserError("dragon tune: give an op spec or --suite NAME (one of them)");
  if (o.trials < 0) throw UserError("dragon tune: --trials must not be negative");
  std::vector<search::TuningTask> tasks = tasks_of(o);

  TuneEnvironmentOptions env_options;
  env_options.target = o.target;
  env_options.rules_file = o.rules;
  // Started before anything else runs: the measurers' workers are forked from here.
  std::unique_ptr<TuneEnvironments> environments = make_tune_environments(env_options);

  db::Database database = db::Database::open(o.db);
  std::unique_ptr<search::CostModel> model = environments->cost_model(o.cost_model, static_cast<uint64_t>(o.seed));

  ProgressLine progress(o.quiet);
  search::TuneOptions options;
  options.trials_per_task = o.trials;
  options.batch_size = o.batch > 0 ? o.batch : environments->default_batch_size();
  if (o.time_budget > 0) options.time_budget_s = o.time_budget;
  options.scheduler.objective = tasks.size() > 1 ? search::TaskObjective::kGeometricMean : search::TaskObjective::kTotalLatency;
  options.search = environments->search_options();
  if (o.population > 0) options.search.population = o.population;
  options.search.seed = o.seed;
  options.commit = current_provenance().commit;
  options.on_round = [&](const search::TuneProgress& p) { progress.show(progress_text(p)); };
  options.log = [&](const std::string& line) { progress.log(line); };

  std::vector<search::TaskOutcome> outcomes = search::tune(
      tasks, database, [&](const search::TuningTask& task) { return environments->environment(task); }, *model,
      options);
  progress.finish();
  print_table(outcomes);
  search::SearchStatistics total;
  for (const search::TaskOutcome& t : outcomes) {
    total.realized += t.search.realized;
    total.realize_seconds += t.search.realize_seconds;
    total.seconds += t.search.seconds;
  }
  std::printf("search: %lld programs replayed and postprocessed, %.3f ms of CPU each; %.1f s proposing\n",
              static_cast<long long>(total.realized),
              total.realized ? 1000 * total.realize_seconds / static_cast<double>(total.realized) : 0.0, total.seconds);
  std::printf("%s\n", environments->costs_summary().c_str());
  if (!o.curve_out.empty()) write_curves(o.curve_out, outcomes);
  return 0;
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "tune", "Search for faster schedules of an op spec or a suite's problems; every candidate goes to --db");
  sub->add_option("spec", o->spec, "An op spec, e.g. matmul:m=512,n=512,k=512");
  sub->add_option("--suite", o->suite, "Tune a suite's problems instead: kernelbench-l1, dlrm, models");
  sub->add_option("--problems", o->problems, "With --suite: only these ids and ranges, e.g. 1-5,23");
  sub->add_option("--target", o->target, "cpu (g++ and this machine's cores) or cuda (NVRTC and the GPU)")
      ->check(CLI::IsMember(lower::Target::names()))
      ->capture_default_str();
  sub->add_option("--trials", o->trials, "Measured candidates per task, those in --db from earlier runs included")
      ->capture_default_str();
  sub->add_option("--db", o->db, "The tuning database (SQLite); created if missing, resumed if not");
  sub->add_option("--time-budget", o->time_budget, "Seconds; no round starts after them (0: none)");
  sub->add_option("--batch", o->batch,
                  "Candidates per round (0: 16 on the CPU, whose rounds take seconds; 64 on the GPU)")
      ->capture_default_str();
  sub->add_option("--population", o->population, "Evolutionary search's population (0: the target's default)");
  sub->add_option("--seed", o->seed, "Seed of the search's draws")->capture_default_str();
  sub->add_option("--rules", o->rules, "A rule-set file extending the target's design space (docs/design-space.md)");
  sub->add_option("--cost-model", o->cost_model, "xgb (gradient-boosted trees) or random")
      ->check(CLI::IsMember({"xgb", "random"}))
      ->capture_default_str();
  sub->add_option("--curve", o->curve_out, "Write each task's best latency after every round here (JSON)");
  sub->add_option("--suites-dir", o->suites_dir, "Where the suite files are ($DRAGON_SUITES_DIR)")->capture_default_str();
  sub->add_flag("--quiet", o->quiet, "No progress line");
  return [o] { return tune(*o); };
}

}  // namespace dragon::cli
