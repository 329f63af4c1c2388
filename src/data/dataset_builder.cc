// Tuning a shard's workloads, then mining and writing the shard (dataset_builder.h).
#include "dragon/data/dataset_builder.h"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "dragon/support/compressed_jsonl.h"
#include "dragon/data/example.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/tokenizer.h"
#include "dragon/support/error.h"

namespace dragon::data {
namespace {

using Clock = std::chrono::steady_clock;

db::TuningKey key_of(const CorpusEntry& entry, const db::Target& target, const db::Hardware& hardware) {
  return db::TuningKey{entry.hash, target, hardware};
}

// Trials a workload has under `key`: its records other than the default schedule's, as
// search::tune counts them against the budget.
int64_t trials_of(const db::Database& database, const db::TuningKey& key) {
  int64_t trials = 0;
  database.for_each_record(db::RecordFilter::of(key), [&](const db::StoredRecord& r) {
    if (!r.record.script.empty()) ++trials;
  });
  return trials;
}

int64_t examples_of(const MinedWorkload& mined) {
  return (mined.construction ? 1 : 0) + static_cast<int64_t>(mined.refinements.size());
}

// Progress of a build: which workloads are done, how many examples they gave.
class BuildTracker {
 public:
  BuildTracker(const std::vector<CorpusEntry>& entries, const db::Database& database, const BuildOptions& options)
      : entries_(entries), database_(database), options_(options), done_(entries.size(), false) {}

  void set_key(const db::Target& target, const db::Hardware& hardware) {
    if (target_) return;
    target_ = target;
    hardware_ = hardware;
  }
  bool has_key() const { return target_.has_value(); }
  const db::Target& target() const { return *target_; }
  const db::Hardware& hardware() const { return *hardware_; }

  // Marks workload `index` done (once) and mines it to count its examples.
  void finish(size_t index) {
    if (done_[index] || !target_) return;
    done_[index] = true;
    ++progress_.workloads_done;
    const CorpusEntry& entry = entries_[index];
    std::vector<db::StoredRecord> records = database_.records(db::RecordFilter::of(key_of(entry, *target_, *hardware_)));
    progress_.examples += examples_of(mine_workload(entry, records, options_.mining));
  }
  bool done(size_t index) const { return done_[index]; }

  void report(double candidates_per_second, double elapsed_s) {
    progress_.workloads = static_cast<int64_t>(entries_.size());
    progress_.candidates_per_second = candidates_per_second;
    progress_.elapsed_s = elapsed_s;
    if (options_.on_progress) options_.on_progress(progress_);
  }
  const BuildProgress& progress() const { return progress_; }
  void set_phases(double propose_s, double measure_s) {
    progress_.propose_s = propose_s;
    progress_.measure_s = measure_s;
  }

 private:
  const std::vector<CorpusEntry>& entries_;
  const db::Database& database_;
  const BuildOptions& options_;
  std::vector<bool> done_;
  std::optional<db::Target> target_;
  std::optional<db::Hardware> hardware_;
  BuildProgress progress_;
};

// One directory holds one data set: a shard of another corpus, sharding, target or
// hardware is refused before anything is written (target and hardware when known).
void refuse_another_data_set(const std::string& dir, const std::string& corpus, int64_t count,
                             const db::Target* target, const db::Hardware* hardware) {
  if (!std::filesystem::exists(std::filesystem::path(dir) / "manifest.json")) return;
  const Manifest there = read_manifest(dir);
  if (there.shards.empty()) return;
  if (there.corpus != corpus || there.shard_count != count || (target && there.target != *target) ||
      (hardware && there.hardware != *hardware)) {
    throw UserError(fmt::format(
        "{} holds shards of corpus '{}', {}, {}, {} shards; this is corpus '{}', {}, {}, {} shards (one directory "
        "holds one data set: give another --out)",
        dir, there.corpus, there.target.describe(), there.hardware.describe(), there.shard_count, corpus,
        target ? target->describe() : "?", hardware ? hardware->describe() : "?", count));
  }
}

}  // namespace

ShardSummary write_shard(const std::vector<CorpusEntry>& entries, const db::Database& database, ShardSummary header,
                         const std::string& dir) {
  ShardSummary s = std::move(header);
  refuse_another_data_set(dir, s.corpus, s.count, &s.target, &s.hardware);
  s.workloads = static_cast<int64_t>(entries.size());
  s.tokenizer = std::string(script::Tokenizer::standard().version());
  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  std::vector<std::string> lines;
  for (const CorpusEntry& entry : entries) {
    std::vector<db::StoredRecord> records = database.records(db::RecordFilter::of(key_of(entry, s.target, s.hardware)));
    if (!records.empty()) ++s.tuned;
    MinedWorkload mined = mine_workload(entry, records, s.mining);
    s.refinements_in_range += mined.in_ratio_range;
    s.refinements_significant += mined.significant;
    switch (mined.outcome) {
      case MiningOutcome::kExamples: ++s.with_examples; break;
      case MiningOutcome::kDefaultBest: ++s.default_best; break;
      case MiningOutcome::kNoOkRecord: ++s.no_ok_record; break;
    }
    if (mined.outcome != MiningOutcome::kExamples) continue;
    const std::string prompt = prompt_text(entry.spec);
    auto add = [&](const Example& example) {
      lines.push_back(to_json_line(example));
      KindCounts& counts = s.examples[example.split];
      (example.kind == ExampleKind::kConstruction ? counts.construction : counts.refinement) += 1;
      s.tokens.add(static_cast<int64_t>(tokenizer.encode_example(tokenizer_example(example, prompt)).size()));
    };
    add(*mined.construction);
    for (const Example& refinement : mined.refinements) add(refinement);
  }
  std::filesystem::create_directories(dir);
  support::write_compressed_jsonl((std::filesystem::path(dir) / s.file_name()).string(), lines);
  write_shard_summary(dir, s);
  rebuild_manifest(dir);
  return s;
}

namespace {

// The shard's workloads, after checking the options a build or a mining run takes.
std::vector<CorpusEntry> checked_shard(const Corpus& corpus, const BuildOptions& options) {
  validate(options.mining);
  if (options.shard_count < 1 || options.shard_index < 0 || options.shard_index >= options.shard_count) {
    throw UserError(fmt::format("shard {} of {}: need 0 <= K < N", options.shard_index, options.shard_count));
  }
  if (options.trials_per_workload < 0) throw UserError("the trials per workload must not be negative");
  std::vector<CorpusEntry> entries = shard_of(corpus, options.shard_index, options.shard_count);
  if (entries.empty()) {
    throw UserError(fmt::format("shard {} of {} of corpus '{}' has no workloads (the corpus has {}); use fewer shards",
                                options.shard_index, options.shard_count, corpus.name, corpus.entries.size()));
  }
  return entries;
}

// A shard's identity and provenance, its counts left to write_shard.
ShardSummary shard_header(const Corpus& corpus, const db::Target& target, const db::Hardware& hardware,
                          const BuildOptions& options) {
  ShardSummary header;
  header.index = options.shard_index;
  header.count = options.shard_count;
  header.corpus = corpus.name;
  header.target = target;
  header.hardware = hardware;
  header.commit = options.commit;
  header.built_at = db::format_time(std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now()));
  header.trials_per_workload = options.trials_per_workload;
  header.mining = options.mining;
  return header;
}

}  // namespace

std::pair<db::Target, db::Hardware> records_key(const db::Database& database, const std::string& target_name,
                                                const std::string& device, const std::string& driver) {
  std::vector<std::pair<db::Target, db::Hardware>> matching;
  std::string there;
  for (const db::DatabaseStats::KeyCount& key : database.stats().by_target_hardware) {
    there += fmt::format("\n  {} on {} ({} workloads)", key.target.describe(), key.hardware.describe(), key.workloads);
    if (key.target.name != target_name || (!device.empty() && key.hardware.device != device) ||
        (!driver.empty() && key.hardware.driver != driver)) {
      continue;
    }
    matching.emplace_back(key.target, key.hardware);
  }
  if (matching.size() == 1) return matching.front();
  const std::string wanted = fmt::format("{} records{}{}", target_name, device.empty() ? "" : " on " + device,
                                         driver.empty() ? "" : " (driver " + driver + ")");
  if (matching.empty()) {
    throw UserError(fmt::format("the database has no {}; it holds:{}", wanted, there.empty() ? " nothing" : there));
  }
  throw UserError(fmt::format("the database has {} keys of {}: name the device (and driver) to mine; it holds:{}",
                              matching.size(), wanted, there));
}

BuildResult mine_shard(const Corpus& corpus, const db::Database& database, const db::Target& target,
                       const db::Hardware& hardware, const std::string& dir, const BuildOptions& options) {
  const std::vector<CorpusEntry> entries = checked_shard(corpus, options);
  const Clock::time_point start = Clock::now();
  ShardSummary header = shard_header(corpus, target, hardware, options);
  for (const CorpusEntry& entry : entries) {
    if (trials_of(database, key_of(entry, target, hardware)) < options.trials_per_workload) header.partial = true;
  }
  BuildResult result;
  result.shard = write_shard(entries, database, header, dir);
  result.manifest = read_manifest(dir);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

BuildResult build_shard(const Corpus& corpus, db::Database& database, const search::TaskEnvironmentFactory& factory,
                        search::CostModel& model, const std::string& dir, const BuildOptions& options) {
  const std::vector<CorpusEntry> entries = checked_shard(corpus, options);
  refuse_another_data_set(dir, corpus.name, options.shard_count, nullptr, nullptr);
  std::filesystem::create_directories(dir);

  std::vector<search::TuningTask> tasks;
  const ops::OpRegistry& registry = ops::OpRegistry::global();
  for (const CorpusEntry& entry : entries) {
    ops::Workload w = registry.make_workload(entry.spec);
    tasks.push_back({w.spec, w.spec, w.func, 1.0});
  }

  const Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  BuildTracker tracker(entries, database, options);
  double candidates_per_second = 0;

  // The key of every record comes from the environments: capture it from the first, and
  // mark a workload whose budget earlier runs used up as done when tune starts it.
  search::TaskEnvironmentFactory keyed_factory = [&](const search::TuningTask& task) {
    search::TaskEnvironment env = factory(task);
    const search::Measurer& m = *env.measurer;
    tracker.set_key({m.target_name(), m.target_arch()}, {m.device(), m.driver()});
    const size_t index = static_cast<size_t>(&task - tasks.data());
    const db::TuningKey key = key_of(entries[index], tracker.target(), tracker.hardware());
    if (trials_of(database, key) >= options.trials_per_workload) {
      tracker.finish(index);
      tracker.report(candidates_per_second, elapsed());
    }
    return env;
  };

  search::TuneOptions tuning;
  tuning.trials_per_task = options.trials_per_workload;
  tuning.batch_size = options.batch_size;
  tuning.tasks_per_round = options.tasks_per_round;
  tuning.time_budget_s = options.time_budget_s;
  tuning.scheduler.objective =
      tasks.size() > 1 ? search::TaskObjective::kGeometricMean : search::TaskObjective::kTotalLatency;
  tuning.search = options.search;
  tuning.commit = options.commit;
  tuning.log = options.log;
  tuning.on_round = [&](const search::TuneProgress& p) {
    candidates_per_second = p.candidates_per_second;
    tracker.set_phases(p.propose_s, p.measure_s);
    if (p.task_trials >= p.task_budget) tracker.finish(p.task);
    tracker.report(candidates_per_second, elapsed());
  };

  BuildResult result;
  result.outcomes = search::tune(tasks, database, keyed_factory, model, tuning);
  if (!tracker.has_key()) {
    // No task started (the time budget ended first): the key of an environment anyway.
    search::TaskEnvironment env = factory(tasks.front());
    tracker.set_key({env.measurer->target_name(), env.measurer->target_arch()},
                    {env.measurer->device(), env.measurer->driver()});
  }

  ShardSummary header = shard_header(corpus, tracker.target(), tracker.hardware(), options);
  for (size_t i = 0; i < result.outcomes.size(); ++i) {
    const search::TaskOutcome& o = result.outcomes[i];
    // Cut short: stopped by the time budget with trials left. A task that ended for
    // another reason (space exhausted, cannot be tuned) is as done as it will be.
    if (o.note == "time budget" && o.trials < options.trials_per_workload) header.partial = true;
    result.measured += o.new_trials - o.cached;
  }
  result.shard = write_shard(entries, database, header, dir);
  result.manifest = read_manifest(dir);
  result.seconds = elapsed();

  // The final word: every workload that is as tuned as it will be counts as done.
  for (size_t i = 0; i < entries.size(); ++i) {
    const search::TaskOutcome& o = result.outcomes[i];
    if (!(o.note == "time budget" && o.trials < options.trials_per_workload)) tracker.finish(i);
  }
  BuildProgress final_progress = tracker.progress();
  final_progress.examples = result.shard.example_count();
  final_progress.workloads = static_cast<int64_t>(entries.size());
  final_progress.candidates_per_second = result.seconds > 0 ? static_cast<double>(result.measured) / result.seconds : 0;
  final_progress.elapsed_s = result.seconds;
  if (options.on_progress) options.on_progress(final_progress);
  return result;
}

}  // namespace dragon::data
