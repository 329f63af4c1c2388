// dragon optimize: the product's main job. The little dragon proposes K scripts for a
// workload (or K refinements of a given script); each is replayed, built, verified and
// timed on the target beside the default schedule, every attempt goes to the tuning
// database, and the fastest verified one is printed with its speedup. Argument parsing,
// orchestration and printing only: the model runs in dragon-model (model_binary.h), the
// measuring is search's measurer for the target (tune_environments.h).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.h"
#include "dragon/db/database.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/search/result_record.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "model_attempts.h"
#include "run_provenance.h"
#include "tune_environments.h"

namespace dragon::cli {
namespace {

namespace fs = std::filesystem;

struct OptimizeOptions {
  std::string spec;
  std::string model;  // empty: $DRAGON_MODEL, else the shipped model
  ModelQuestion question;
  std::string refine_file;
  std::string target = "auto";
  std::string db = "dragon.db";
  bool no_db = false;
};

int run_optimize(const OptimizeOptions& o) {
  const ops::Workload workload = ops::OpRegistry::global().make_workload(o.spec);
  const std::string model_path = o.model.empty() ? default_model_path() : o.model;
  if (!fs::is_regular_file(model_path)) {
    throw UserError(fmt::format(
        "optimize: no model at {}{}; give --model PATH (a model.safetensors written by `dragon train sft`)", model_path,
        o.model.empty() ? " (the model the repository ships is missing)" : ""));
  }
  ModelQuestion question = o.question;
  question.spec = o.spec;
  question.model_path = model_path;
  if (!o.refine_file.empty()) {
    question.refine_script = read_text_file(o.refine_file);
    script::decode(*question.refine_script);  // a bad script fails before sampling
  }

  const std::string target = resolve_target(o.target);
  question.target = target;
  std::fprintf(stderr, "asking the model (%s) for %d %s of %s...\n", model_path.c_str(), question.attempts,
               o.refine_file.empty() ? "scripts" : "refinements", workload.spec.c_str());
  const std::vector<model::Proposal> proposals = ask_model(question);

  const std::unique_ptr<TuneEnvironments> environments = make_tune_environments({.target = target, .rules_file = ""});
  search::TaskEnvironment env = environments->environment({workload.spec, workload.spec, workload.func, 1});
  search::Measurer& measurer = *env.measurer;
  std::optional<db::Database> database;
  db::TuningKey key{0, {measurer.target_name(), measurer.target_arch()}, {measurer.device(), measurer.driver()}};
  if (!o.no_db) {
    database.emplace(db::Database::open(o.db));
    const db::Workload stored = db::Workload::of(workload.func, workload.spec);
    database->add_workload(stored);
    key.workload = stored.hash;
    measurer.set_known([&](const std::string& kernel_hash) -> std::optional<search::MeasureResult> {
      std::optional<db::StoredRecord> r = database->find_kernel(key, kernel_hash);
      if (!r) return std::nullopt;
      return search::result_of(r->record);
    });
  }

  // The default schedule first, then every attempt that replays, in one measured batch.
  std::vector<Attempt> attempts;
  for (const model::Proposal& p : proposals) attempts.push_back(prepare_attempt(p, workload.func));
  std::vector<ir::PrimFunc> batch = {env.default_schedule};
  for (const Attempt& a : attempts) {
    if (a.scheduled) batch.push_back(*a.scheduled);
  }
  std::fprintf(stderr, "measuring the default schedule and %zu attempts on %s (target %s)...\n", batch.size() - 1,
               measurer.device().c_str(), target.c_str());
  const std::vector<search::MeasureResult> results = measurer.measure(batch);
  size_t next = 1;
  for (Attempt& a : attempts) {
    if (a.scheduled) a.result = results.at(next++);
  }
  const search::MeasureResult& default_result = results.at(0);

  if (database) {
    const search::RecordProvenance provenance{current_provenance().commit, "model"};
    std::vector<db::Record> records = {search::record_of(key, "", default_result, {provenance.commit, "default"})};
    for (const Attempt& a : attempts) {
      if (!a.script.empty()) records.push_back(search::record_of(key, a.script, *a.result, provenance));
    }
    database->commit(records);
  }

  const std::optional<double> default_ms = default_result.median_ms();
  std::printf("%-8s %-14s %10s %8s %7s  %s\n", "attempt", "status", "ms", "speedup", "tokens", "note");
  const Attempt* best = nullptr;
  int ok = 0, applied = 0;
  for (const Attempt& a : attempts) {
    const std::optional<double> ms = a.result->median_ms();
    applied += a.scheduled ? 1 : 0;
    ok += ms ? 1 : 0;
    if (ms && (best == nullptr || *ms < *best->result->median_ms())) best = &a;
    std::printf("%-8d %-14s %10s %8s %7lld  %s\n", a.proposal.attempt + 1,
                std::string(search::measure_status_id(a.result->status)).c_str(),
                ms ? fmt::format("{:.4f}", *ms).c_str() : "-",
                ms && default_ms ? fmt::format("{:.2f}x", *default_ms / *ms).c_str() : "-",
                static_cast<long long>(a.proposal.tokens), a.result->error.substr(0, 100).c_str());
  }
  std::printf("default schedule: %s\n", default_ms ? fmt::format("{:.4f} ms", *default_ms).c_str()
                                                   : ("failed: " + default_result.error).c_str());
  std::printf("%d of %d attempts replayed, %d verified and timed\n", applied, static_cast<int>(attempts.size()), ok);
  if (database) std::printf("every attempt stored in %s (origin \"model\")\n", o.db.c_str());
  if (best == nullptr) {
    std::printf("no attempt was verified: keep the default schedule\n");
    return 0;
  }
  const double best_ms = *best->result->median_ms();
  if (default_ms && best_ms >= *default_ms) {
    // Say so plainly: a slower script is no optimization, whatever the model wrote.
    std::printf("no attempt beat the default schedule (%.4f ms): keep the default schedule; the fastest attempt, "
                "%d, ran %.4f ms (%.2fx the default):\n%s\n",
                *default_ms, best->proposal.attempt + 1, best_ms, *default_ms / best_ms, best->script.c_str());
    return 0;
  }
  std::printf("best: attempt %d, %.4f ms%s\n%s\n", best->proposal.attempt + 1, best_ms,
              default_ms ? fmt::format(", {:.2f}x the default schedule", *default_ms / best_ms).c_str() : "",
              best->script.c_str());
  return 0;
}

}  // namespace

Command add_optimize_command(CLI::App& app) {
  auto o = std::make_shared<OptimizeOptions>();
  CLI::App* sub = app.add_subcommand(
      "optimize", "Ask the little dragon for scripts, verify and time them, keep the fastest (every attempt to --db)");
  sub->add_option("spec", o->spec, "Op spec, e.g. matmul:m=128,n=128,k=128")->required();
  sub->add_option("--model", o->model, "The model's weights (default: $DRAGON_MODEL, else the shipped model)");
  sub->add_option("--refine", o->refine_file, "A script file to improve instead of writing one from scratch");
  sub->add_option("--target", o->target, "cpu, cuda or auto (cuda where a CUDA device can be used, else cpu)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  sub->add_option("--db", o->db, "The tuning database every attempt is stored in")->capture_default_str();
  sub->add_flag("--no-db", o->no_db, "Store nothing");
  add_sampling_flags(sub, o->question);
  return [o]() { return run_optimize(*o); };
}

}  // namespace dragon::cli
