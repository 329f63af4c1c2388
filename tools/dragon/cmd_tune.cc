// dragon tune SPEC | --suite NAME: search for faster schedules (search/tuner.h) and commit
// every measured candidate to the tuning database; a rerun with the same --db resumes.
// A progress line per round (trials, the task's best, candidates per second) and a final
// table. Argument parsing and printing only.
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
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
  std::string db;
  SearchRunFlags search;
  std::string curve_out;
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
  return fmt::format("{} {}/{} trials  {:.1f} candidates/s  {:.0f} s  {} {}/{}: best {} ms (default {} ms)",
                     ProgressLine::bar(p.trials, p.budget), p.trials, p.budget, p.candidates_per_second, p.elapsed_s,
                     p.task_name, p.task_trials, p.task_budget, ms(p.task_best_ms), ms(p.task_default_ms));
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
  std::vector<search::TuningTask> tasks = tasks_of(o);
  SearchRun run = start_search_run(o.search, o.db, "dragon tune");

  ProgressLine progress(o.search.quiet);
  search::TuneOptions options;
  options.trials_per_task = o.search.trials;
  options.batch_size = run.batch_size;
  options.tasks_per_round = o.search.tasks_per_round;
  if (o.search.time_budget > 0) options.time_budget_s = o.search.time_budget;
  options.scheduler.objective = tasks.size() > 1 ? search::TaskObjective::kGeometricMean : search::TaskObjective::kTotalLatency;
  options.search = run.search;
  options.commit = current_provenance().commit;
  options.on_round = [&](const search::TuneProgress& p) { progress.show(progress_text(p)); };
  options.log = [&](const std::string& line) { progress.log(line); };

  std::vector<search::TaskOutcome> outcomes = search::tune(tasks, run.database, run.environment(), *run.cost_model, options);
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
  std::printf("%s\n", run.environments->costs_summary().c_str());
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
  sub->add_option("--db", o->db, "The tuning database (SQLite); created if missing, resumed if not");
  add_search_run_flags(*sub, o->search, "task");
  sub->add_option("--curve", o->curve_out, "Write each task's best latency after every round here (JSON)");
  sub->add_option("--suites-dir", o->suites_dir, "Where the suite files are ($DRAGON_SUITES_DIR)")->capture_default_str();
  return [o] { return tune(*o); };
}

}  // namespace dragon::cli
