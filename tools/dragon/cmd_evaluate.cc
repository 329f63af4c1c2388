// dragon evaluate: how the little dragon does on a data set's examples it was not trained
// on (the held-out split unless told otherwise), measured as issue 20 states its targets.
// For a construction example, K attempts are measured beside the default schedule and the
// search's best script (the example's target) in one batch on the target; for a
// refinement example, K refinements of its existing script beside that script and the
// target. Both references are measured again here, on this machine, so no ratio mixes
// two GPUs or two runs. Each example's result is a JSON line appended to --out as soon as
// it is measured: a run that stops is resumed by running it again (examples already in
// the file are skipped, and a file of other settings is refused), and the summary is
// computed from the whole file. With --lower-only nothing runs: each attempt is applied
// and lowered for CUDA (no GPU needed), the checks the GPU measurers make before compiling.
// Argument parsing, orchestration and printing only.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/bench/gpu_tuning.h"
#include "dragon/data/corpus.h"
#include "dragon/data/data_set_reader.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "model_attempts.h"
#include "tune_environments.h"

namespace dragon::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A refinement counts as an improvement when its best verified attempt's median is this
// much below the given script's median, measured in the same batch: a margin over the
// run-to-run noise of a median, not a significance test.
constexpr double kImprovementMargin = 0.01;
// Construction's target: best of K within 10% of the search's best.
constexpr double kNearSearchRatio = 1.10;

struct EvaluateOptions {
  std::string data_dir;
  std::string model;  // empty: $DRAGON_MODEL, else the shipped model
  ModelQuestion question;
  std::string split = "held_out";
  std::string task = "both";
  int64_t limit = 0;  // examples per task; 0: all
  int64_t per_workload = 0;  // examples per task and workload; 0: no cap
  double max_workload_mib = 0;  // leave out workloads whose buffers take more; 0: none left out
  std::string target = "auto";
  std::string out = "evaluation.jsonl";
  bool summary_only = false;  // print what --out holds, measure nothing
  bool lower_only = false;    // apply and lower each attempt for CUDA; run nothing
};

// What must match for lines of --out to be summed with this run's.
json settings_of(const EvaluateOptions& o, const std::string& model_path, const std::string& target) {
  return json{{"model", fs::path(model_path).filename().string()},
              {"attempts", o.question.attempts},
              {"temperature", o.question.temperature},
              {"top_p", o.question.top_p},
              {"seed", o.question.seed},
              {"constrained", !o.question.unconstrained},
              {"ends", o.question.unconstrained || o.question.free_ends || target != "cuda" ? "free" : "where it lowers"},
              {"prompt", o.question.prompt},
              {"target", target}};
}

// One attempt's fate without running it: kApplyFailed, kRejected or kBuildFailed from the
// lowering, or kOk when it lowered.
search::MeasureResult lower_only_result(const Attempt& a) {
  if (!a.scheduled) return *a.result;
  const bench::CudaLowering lowering = bench::lower_for_cuda(*a.scheduled, lower::Target::cuda_h200());
  if (lowering.generated) return search::MeasureResult{};
  return search::MeasureResult::failure(lowering.failure, lowering.why);
}

// "shard-2-of-512.jsonl.zst:17": an example's place in its data set, the key a resumed run
// skips by.
std::string source_of(const data::LocatedExample& e) {
  return fmt::format("{}:{}", fs::path(e.file).filename().string(), e.line);
}

json ms_or_null(const std::optional<double>& ms) { return ms ? json(*ms) : json(nullptr); }

// The statuses of an example's attempts, what the first of each status said, and the
// sampling's totals, into its line.
void add_attempt_fields(const std::vector<Attempt>& attempts, json& line) {
  json statuses = json::object();
  json first_errors = json::object();  // per status, what the first attempt with it said
  int applied = 0;
  int64_t tokens = 0;
  double model_seconds = 0;  // the attempts are sampled side by side: the last one's time
  double constraint_seconds = 0;  // summed over the attempts
  int64_t ends_refused = 0;       // ends refused because the script did not lower yet
  for (const Attempt& a : attempts) {
    ends_refused += a.proposal.ends_refused;
    applied += a.scheduled ? 1 : 0;
    const std::string status(search::measure_status_id(a.result->status));
    statuses[status] = statuses.value(status, 0) + 1;
    if (!a.result->error.empty() && !first_errors.contains(status)) first_errors[status] = a.result->error.substr(0, 400);
    tokens += a.proposal.tokens;
    model_seconds = std::max(model_seconds, a.proposal.seconds);
    constraint_seconds += a.proposal.constraint_seconds;
  }
  line.update(json{{"attempts", static_cast<int>(attempts.size())},
                   {"applied", applied},
                   {"statuses", statuses},
                   {"errors", first_errors},
                   {"tokens", tokens},
                   {"model_seconds", model_seconds},
                   {"constraint_seconds", constraint_seconds},
                   {"ends_refused", ends_refused}});
}

// Measures one example (or, without `environments`, lowers its attempts) and returns its line.
json evaluate_example(const data::LocatedExample& located, const ModelQuestion& base,
                      TuneEnvironments* environments, const json& settings) {
  const data::Example& example = located.example;
  const bool refinement = example.kind == data::ExampleKind::kRefinement;
  const ops::Workload workload = ops::OpRegistry::global().make_workload(example.spec);
  ModelQuestion question = base;
  question.spec = example.spec;
  question.refine_script = example.existing_script;
  json line{{"source", source_of(located)},
            {"task", refinement ? "refinement" : "construction"},
            {"workload", example.spec},
            {"family", example.family},
            {"settings", settings}};
  std::vector<model::Proposal> proposals;
  try {
    proposals = ask_model(question);
  } catch (const UserError& e) {
    // The model could not be asked (its prompt longer than its context, say): the example
    // is reported as not asked, with why, rather than ending the run.
    line["not_asked"] = e.what();
    return line;
  }
  std::vector<Attempt> attempts;
  for (const model::Proposal& p : proposals) attempts.push_back(prepare_attempt(p, workload.func));

  if (environments == nullptr) {
    int lowered = 0;
    for (Attempt& a : attempts) {
      a.result = lower_only_result(a);
      lowered += a.result->ok() ? 1 : 0;
    }
    add_attempt_fields(attempts, line);
    line["lowered"] = lowered;
    return line;
  }

  search::TaskEnvironment env = environments->environment({workload.spec, workload.spec, workload.func, 1});
  // One batch: the prompt's program (default schedule or the existing script), the
  // search's best, then every attempt that replays.
  auto replayed = [&](const std::string& script) {
    return schedule::replay(script::decode(script), workload.func).func();
  };
  std::vector<ir::PrimFunc> batch = {refinement ? replayed(*example.existing_script) : env.default_schedule,
                                     replayed(example.script)};
  for (const Attempt& a : attempts) {
    if (a.scheduled) batch.push_back(*a.scheduled);
  }
  const std::vector<search::MeasureResult> results = env.measurer->measure(batch);
  size_t next = 2;
  for (Attempt& a : attempts) {
    if (a.scheduled) a.result = results.at(next++);
  }
  int verified = 0;
  std::optional<double> best_ms;
  for (const Attempt& a : attempts) {
    if (const std::optional<double> ms = a.result->median_ms()) {
      ++verified;
      best_ms = best_ms ? std::min(*best_ms, *ms) : *ms;
    }
  }
  add_attempt_fields(attempts, line);
  const std::optional<double> prompt_ms = results.at(0).median_ms();
  const std::optional<double> target_ms = results.at(1).median_ms();
  line.update(json{{"verified", verified},
                   {"best_ms", ms_or_null(best_ms)},
                   {"prompt_ms", ms_or_null(prompt_ms)},
                   {"target_ms", ms_or_null(target_ms)}});
  if (!prompt_ms) line["prompt_error"] = results.at(0).error;
  if (!target_ms) line["target_error"] = results.at(1).error;
  return line;
}

// An example's line in words, for the progress lines.
std::string outcome_of(const json& line) {
  if (line.contains("not_asked")) return "not asked: " + line.at("not_asked").get<std::string>();
  if (line.contains("lowered")) {
    return fmt::format("{} of {} applied, {} lowered", line.at("applied").get<int>(), line.at("attempts").get<int>(),
                       line.at("lowered").get<int>());
  }
  return fmt::format("{} of {} verified, best {} ms, search's {} ms", line.at("verified").get<int>(),
                     line.at("attempts").get<int>(), line.at("best_ms").dump(), line.at("target_ms").dump());
}

struct TaskSummary {
  int examples = 0, attempts = 0, applied = 0, verified = 0;
  std::vector<double> ratios;  // best / target (infinity where no attempt verified)
  int near_target = 0;         // construction: ratio <= kNearSearchRatio
  int improved = 0, judged = 0;  // refinement: best below the existing script by the margin
  int unmeasured_references = 0;
  int not_asked = 0;  // examples the model could not be asked about (line "not_asked")
  int lowered = 0;    // --lower-only lines: attempts that lowered for CUDA
  bool lower_only = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void add_to_summary(const json& line, std::map<std::string, TaskSummary>& summaries) {
  TaskSummary& s = summaries[line.at("task").get<std::string>()];
  ++s.examples;
  if (line.contains("not_asked")) {
    ++s.not_asked;
    return;
  }
  s.attempts += line.at("attempts").get<int>();
  s.applied += line.at("applied").get<int>();
  if (line.contains("lowered")) {  // nothing was run
    s.lower_only = true;
    s.lowered += line.at("lowered").get<int>();
    return;
  }
  s.verified += line.at("verified").get<int>();
  const json& best = line.at("best_ms");
  const json& target = line.at("target_ms");
  const json& prompt = line.at("prompt_ms");
  if (target.is_null()) {
    ++s.unmeasured_references;
  } else {
    const double ratio = best.is_null() ? INFINITY : best.get<double>() / target.get<double>();
    s.ratios.push_back(ratio);
    s.near_target += ratio <= kNearSearchRatio ? 1 : 0;
  }
  if (line.at("task") == "refinement" && !prompt.is_null()) {
    ++s.judged;
    s.improved += !best.is_null() && best.get<double>() < prompt.get<double>() * (1 - kImprovementMargin) ? 1 : 0;
  }
}

std::string percent(int part, int whole) {
  return whole == 0 ? "-" : fmt::format("{:.1f}% ({} of {})", 100.0 * part / whole, part, whole);
}

void print_summary(const std::map<std::string, TaskSummary>& summaries, const json& settings) {
  std::printf("settings: %s\n", settings.dump().c_str());
  for (const auto& [task, s] : summaries) {
    std::printf("%s: %d examples\n", task.c_str(), s.examples);
    if (s.not_asked > 0) {
      std::printf("  %d examples not asked (their lines say why: a prompt longer than the model's context, say), "
                  "left out below\n", s.not_asked);
    }
    if (s.lower_only) {
      std::printf("  per-attempt: applied %s, lowered for CUDA %s (nothing run)\n", percent(s.applied, s.attempts).c_str(),
                  percent(s.lowered, s.attempts).c_str());
      continue;
    }
    std::printf("  per-attempt: applied %s, verified %s\n", percent(s.applied, s.attempts).c_str(),
                percent(s.verified, s.attempts).c_str());
    if (!s.ratios.empty()) {
      const double m = median(s.ratios);
      std::printf("  best of K / search's best: median %s; within %.0f%%: %s\n",
                  std::isinf(m) ? "none verified" : fmt::format("{:.3f}", m).c_str(), (kNearSearchRatio - 1) * 100,
                  percent(s.near_target, static_cast<int>(s.ratios.size())).c_str());
    }
    if (s.unmeasured_references > 0) {
      std::printf("  %d examples whose search script did not verify here (left out of the ratio)\n",
                  s.unmeasured_references);
    }
    if (task == "refinement") {
      std::printf("  improved on the given script by more than %.0f%%: %s\n", kImprovementMargin * 100,
                  percent(s.improved, s.judged).c_str());
    }
  }
}

int run_evaluate(const EvaluateOptions& o) {
  if (o.lower_only && o.target == "cpu")
    throw UserError("evaluate --lower-only lowers for CUDA (the CPU backend runs any schedule that applies); "
                    "leave out --target or give cuda");
  const std::string model_path = o.model.empty() ? default_model_path() : o.model;
  if (!fs::is_regular_file(model_path)) throw UserError(fmt::format("evaluate: no model at {}", model_path));
  std::optional<data::Split> split;
  for (data::Split s : {data::Split::kTrain, data::Split::kValidation, data::Split::kHeldOut}) {
    if (data::split_id(s) == o.split) split = s;
  }
  if (!split) throw UserError(fmt::format("evaluate: unknown split '{}' (train, validation or held_out)", o.split));
  const data::DataSetContents contents = data::read_data_set(o.data_dir);

  // The examples asked for: of the split, per task, the first --limit in data-set order.
  std::vector<const data::LocatedExample*> chosen;
  std::map<data::ExampleKind, int64_t> per_task;
  std::map<std::pair<data::ExampleKind, std::string>, int64_t> per_task_workload;
  for (const data::LocatedExample& e : contents.examples) {
    if (e.example.split != *split) continue;
    if (o.task != "both" && o.task != data::example_kind_id(e.example.kind)) continue;
    if (o.limit > 0 && per_task[e.example.kind] >= o.limit) continue;
    if (o.per_workload > 0 && per_task_workload[{e.example.kind, e.example.spec}] >= o.per_workload) continue;
    if (o.max_workload_mib > 0 &&
        static_cast<double>(data::workload_bytes(ops::OpRegistry::global().make_workload(e.example.spec).func)) >
            o.max_workload_mib * 1024 * 1024) {
      continue;
    }
    ++per_task[e.example.kind];
    ++per_task_workload[{e.example.kind, e.example.spec}];
    chosen.push_back(&e);
  }
  if (chosen.empty()) throw UserError(fmt::format("evaluate: {} has no {} examples of that task", o.data_dir, o.split));

  const std::string target = o.lower_only ? "cuda" : resolve_target(o.target);
  json settings = settings_of(o, model_path, target);
  if (o.lower_only) settings["lower_only"] = true;
  // What --out already holds: resumed, if measured under these settings.
  std::set<std::string> done;
  std::map<std::string, TaskSummary> summaries;
  if (fs::exists(o.out)) {
    int number = 0;
    std::ifstream in(o.out);
    for (std::string text; std::getline(in, text);) {
      ++number;
      if (text.empty()) continue;
      json line;
      try {
        line = json::parse(text);
        if (line.at("settings") != settings) {
          throw UserError(fmt::format("{}:{}: measured with other settings ({}) than this run's ({}); give another --out",
                                      o.out, number, line.at("settings").dump(), settings.dump()));
        }
        done.insert(line.at("source").get<std::string>());
        add_to_summary(line, summaries);
      } catch (const json::exception& e) {
        throw UserError(fmt::format("{}:{}: not a line of dragon evaluate: {}", o.out, number, e.what()));
      }
    }
  }

  if (o.summary_only) {
    print_summary(summaries, settings);
    return 0;
  }
  const std::unique_ptr<TuneEnvironments> environments =
      o.lower_only ? nullptr : make_tune_environments({.target = target, .rules_file = ""});
  ModelQuestion base = o.question;
  base.model_path = model_path;
  base.target = target;
  std::ofstream out(o.out, std::ios::app);
  if (!out) throw UserError(fmt::format("evaluate: cannot append to {}", o.out));
  size_t index = 0;
  for (const data::LocatedExample* e : chosen) {
    ++index;
    const std::string source = source_of(*e);
    if (done.contains(source)) continue;
    const json line = evaluate_example(*e, base, environments.get(), settings);
    out << line.dump() << '\n';
    out.flush();
    add_to_summary(line, summaries);
    std::fprintf(stderr, "[%zu/%zu] %s %s: %s\n", index, chosen.size(), line.at("task").get<std::string>().c_str(),
                 e->example.spec.c_str(), outcome_of(line).c_str());
  }
  print_summary(summaries, settings);
  return 0;
}

}  // namespace

Command add_evaluate_command(CLI::App& app) {
  auto o = std::make_shared<EvaluateOptions>();
  CLI::App* sub = app.add_subcommand(
      "evaluate",
      "Measure the little dragon on a data set's examples: per-attempt correctness, best of K against the search's "
      "best, refinements that improve (resumable: one JSON line per example in --out)");
  sub->add_option("--data", o->data_dir, "A data set's folder (manifest.json and shards)")->required();
  sub->add_option("--model", o->model, "The model's weights (default: $DRAGON_MODEL, else the shipped model)");
  sub->add_option("--split", o->split, "train, validation or held_out")->capture_default_str();
  sub->add_option("--task", o->task, "construction, refinement or both")
      ->check(CLI::IsMember({"construction", "refinement", "both"}))
      ->capture_default_str();
  sub->add_option("--limit", o->limit, "At most this many examples per task, in data-set order (0: all)")
      ->capture_default_str();
  sub->add_option("--per-workload", o->per_workload,
                  "At most this many examples per task and workload (a data set holds several refinements of one "
                  "workload in a row; 1 spreads --limit over workloads; 0: no cap)")
      ->capture_default_str();
  sub->add_option("--max-workload-mib", o->max_workload_mib,
                  "Leave out workloads whose inputs and outputs take more MiB (the CPU backend verifies on the "
                  "interpreter, minutes for GPU-sized workloads; 0: none left out)")
      ->capture_default_str();
  sub->add_option("--target", o->target, "cpu, cuda or auto (cuda where a CUDA device can be used, else cpu)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  sub->add_option("--out", o->out, "JSON lines, one per example, appended; an existing file is resumed")
      ->capture_default_str();
  sub->add_flag("--summary-only", o->summary_only, "Print the summary of what --out holds; measure nothing");
  sub->add_flag("--lower-only", o->lower_only,
                "Run nothing: apply each attempt and lower it for CUDA (no GPU needed), the checks the GPU "
                "measurers make before compiling; per-attempt applied and lowered");
  add_sampling_flags(sub, o->question);
  return [o]() { return run_evaluate(*o); };
}

}  // namespace dragon::cli
