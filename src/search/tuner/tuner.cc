// The tuning loop (tuner.h): per task its environment, key, search and budget; rounds
// chosen by the task scheduler; every measured candidate committed before the next round.
#include "dragon/search/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/search/result_record.h"
#include "dragon/support/error.h"
#include "strategy/parallel_for.h"

namespace dragon::search {
namespace {

using Clock = std::chrono::steady_clock;

// "matmul" of "matmul:m=64,n=64,k=64".
std::string op_kind_of(const std::string& spec) { return spec.substr(0, spec.find(':')); }

// How far apart two specs of one op kind are: |log(a / b)| summed over the numeric
// parameters both give (a shape "64x128" counts each extent), plus 8 for each other
// parameter that differs (a dtype, a transpose). Near shapes share good tilings. The
// database holds canonical specs (every parameter, "k=v" joined by ','), so the text is
// read as it is: the tuner does not depend on the op registry.
double spec_distance(const std::string& a, const std::string& b) {
  auto params = [](const std::string& spec) {
    std::map<std::string, std::string> out;
    size_t at = spec.find(':');
    while (at != std::string::npos && at + 1 < spec.size()) {
      const size_t next = spec.find(',', at + 1);
      const std::string item = spec.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
      const size_t eq = item.find('=');
      if (eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
      at = next;
    }
    return out;
  };
  auto numbers = [](const std::string& v) {
    std::vector<double> out;
    size_t start = 0;
    while (start <= v.size()) {
      const size_t x = v.find('x', start);
      const std::string part = v.substr(start, x == std::string::npos ? std::string::npos : x - start);
      char* end = nullptr;
      const double d = std::strtod(part.c_str(), &end);
      if (part.empty() || end != part.c_str() + part.size() || !(d > 0)) return std::vector<double>{};
      out.push_back(d);
      if (x == std::string::npos) break;
      start = x + 1;
    }
    return out;
  };
  const std::map<std::string, std::string> pa = params(a), pb = params(b);
  double distance = 0;
  for (const auto& [name, va] : pa) {
    auto it = pb.find(name);
    if (it == pb.end() || it->second == va) continue;
    const std::vector<double> na = numbers(va), nb = numbers(it->second);
    if (na.empty() || na.size() != nb.size()) {
      distance += 8;
      continue;
    }
    for (size_t i = 0; i < na.size(); ++i) distance += std::abs(std::log(na[i] / nb[i]));
  }
  return distance;
}

struct TaskState {
  const TuningTask* task = nullptr;
  bool started = false;
  std::optional<TaskEnvironment> env;
  std::unique_ptr<EvolutionarySearch> search;
  db::TuningKey key;
  int64_t trials = 0;  // records (not counting the default's) plus this run's proposals
  // The kernels earlier runs recorded for the default schedule (script ""). The default
  // changes between versions of the tool, so a record of it is only trusted for the kernel
  // it measured: every run measures today's default, answered from the kernel cache when
  // an earlier run measured the same code (KernelBench 62's record said 76 ms while that
  // version's default ran 390 ms).
  std::unordered_set<std::string> default_kernels;
  TaskOutcome outcome;
};

class Tuning {
 public:
  Tuning(const std::vector<TuningTask>& tasks, db::Database& database, const TaskEnvironmentFactory& factory,
         CostModel& model, const TuneOptions& options)
      : database_(database), factory_(factory), model_(model), options_(options) {
    if (options.trials_per_task < 0) throw UserError("tune: the trial budget must not be negative");
    if (options.batch_size < 1) throw UserError("tune: the batch size must be at least 1");
    if (options.tasks_per_round < 1) throw UserError("tune: a round needs at least 1 task");
    std::vector<double> weights;
    for (const TuningTask& t : tasks) {
      TaskState s;
      s.task = &t;
      s.outcome.name = t.name;
      states_.push_back(std::move(s));
      weights.push_back(t.weight);
    }
    scheduler_ = std::make_unique<GradientTaskScheduler>(weights, options.scheduler);
  }

  std::vector<TaskOutcome> run() {
    start_ = Clock::now();
    double last_round_s = 0;
    for (;;) {
      std::vector<size_t> picked = scheduler_->next_tasks(static_cast<size_t>(options_.tasks_per_round));
      if (picked.empty()) break;
      // A round takes about as long as the one before it (rounds of a data set's workloads
      // take minutes): none starts that would end past the budget, so what a caller does
      // after tuning (mining, writing a shard) still fits.
      if (options_.time_budget_s && elapsed() + last_round_s > *options_.time_budget_s) {
        for (TaskState& t : states_) {
          if (t.outcome.note.empty()) t.outcome.note = "time budget";
        }
        break;
      }
      const double round_start = elapsed();
      std::vector<size_t> round_tasks, starting;
      for (size_t index : picked) {
        TaskState& s = states_[index];
        if (!s.started) {
          if (!start_task(s)) {
            scheduler_->finish(index);
            continue;
          }
          starting.push_back(index);
        }
        round_tasks.push_back(index);
      }
      measure_defaults(starting);
      round(round_tasks);
      last_round_s = elapsed() - round_start;
    }
    int64_t started = 0, failed = 0;
    std::vector<TaskOutcome> outcomes;
    for (TaskState& s : states_) {
      started += s.started ? 1 : 0;
      failed += s.started && !s.env ? 1 : 0;
      if (s.search) s.outcome.search = s.search->statistics();
      outcomes.push_back(s.outcome);
    }
    if (started > 0 && failed == started) {
      throw UserError("tune: no task could be tuned; the first: " + states_.front().outcome.note);
    }
    return outcomes;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  void log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  db::Record record_of(const TaskState& s, std::string script, const MeasureResult& result) const {
    return search::record_of(s.key, std::move(script), result, {options_.commit, options_.origin});
  }

  // The environment, the key, the records of earlier runs and the default schedule's
  // time; false (with the outcome's note) when the task cannot be tuned.
  bool start_task(TaskState& s) {
    s.started = true;
    const TuningTask& task = *s.task;
    try {
      s.env.emplace(factory_(task));
    } catch (const Error& e) {
      s.outcome.note = std::string("cannot tune: ") + e.what();
      log(task.name + ": " + s.outcome.note);
      s.env.reset();
      return false;
    }
    Measurer& measurer = *s.env->measurer;
    db::Workload workload =
        db::Workload::of(task.func, task.spec.empty() ? std::nullopt : std::optional<std::string>(task.spec));
    database_.add_workload(workload);
    s.key = db::TuningKey{workload.hash, {measurer.target_name(), measurer.target_arch()},
                          {measurer.device(), measurer.driver()}};
    const db::TuningKey key = s.key;
    measurer.set_known([this, key](const std::string& hash) -> std::optional<MeasureResult> {
      std::optional<db::StoredRecord> r = database_.find_kernel(key, hash);
      if (!r) return std::nullopt;
      return result_of(r->record);
    });

    EvolutionarySearchOptions search_options = options_.search;
    search_options.seed = options_.search.seed ^ static_cast<int64_t>(workload.hash & 0x7fffffff);
    s.search = std::make_unique<EvolutionarySearch>(*s.env->space, s.env->target, db::format_workload_hash(workload.hash),
                                                    model_, s.env->mutators, search_options);
    std::vector<EvolutionarySearch::MeasuredTrace> earlier;
    std::vector<std::optional<std::string>> earlier_hashes;
    for (const db::StoredRecord& stored : database_.records(db::RecordFilter::of(key))) {
      const db::Record& r = stored.record;
      if (r.script.empty()) {
        if (r.kernel_hash) s.default_kernels.insert(*r.kernel_hash);
        continue;
      }
      ++s.trials;
      try {
        earlier.push_back({script::decode(r.script), r.status == db::RecordStatus::kOk ? r.median_ms() : std::nullopt});
        earlier_hashes.push_back(r.kernel_hash);
      } catch (const Error& e) {
        log(fmt::format("{}: record {} does not decode, left out: {}", task.name, stored.id, e.what()));
      }
    }
    std::vector<schedule::Trace> stale = set_aside_stale(task, measurer, earlier, earlier_hashes);
    s.outcome.stale = static_cast<int64_t>(stale.size());
    // Stale records measured other code: the trial budget counts what this build measured,
    // so a rerun after a change of the code generator searches again (DLRM R11, R9d and
    // R9e had filled their budgets with stale records and tuned nothing new).
    s.trials -= s.outcome.stale;
    int64_t added = s.search->add_measured(earlier);
    if (!earlier.empty() || !stale.empty()) {
      log(fmt::format("{}: resumed from {} records ({} replayed), best {}", task.name, s.trials, added,
                      s.search->best_ms() ? fmt::format("{:.4g} ms", *s.search->best_ms()) : "none"));
    }
    if (!stale.empty()) {
      const size_t remeasured = std::min(stale.size(), static_cast<size_t>(std::max(0, options_.remeasure_stale)));
      stale.resize(remeasured);
      const int64_t seeded = remeasured == 0 ? 0 : s.search->add_seeds(stale);
      log(fmt::format("{}: {} earlier records print other code under this build (stale): their times are left out; "
                      "their {} best are measured again first",
                      task.name, s.outcome.stale, seeded));
    }
    if (s.env->default_trace) {
      // Skipped by add_seeds when an earlier run measured it as a candidate already.
      s.outcome.default_seeded = s.search->add_seeds({*s.env->default_trace}) > 0;
      if (s.outcome.default_seeded) log(task.name + ": the default schedule's trace seeds the search");
    }
    s.outcome.trials = s.trials;
    s.outcome.best_ms = s.search->best_ms();
    if (s.trials < options_.batch_size) {
      std::vector<schedule::Trace> donors = transfer_traces(key, task);
      s.outcome.transferred = donors.empty() ? 0 : s.search->add_seeds(donors);
      if (s.outcome.transferred > 0) {
        log(fmt::format("{}: {} of {} best traces of other {} workloads apply here, measured first", task.name,
                        s.outcome.transferred, donors.size(), op_kind_of(task.spec)));
      }
    }
    return true;
  }

  // Moves the records of `earlier` whose code this build prints otherwise (their stored
  // kernel hash differs from the measurer's for their replayed script) out of it, and
  // returns their traces, the fastest (by their old times) first. Records without a stored
  // hash, and scripts that no longer replay or lower, stay as they are.
  std::vector<schedule::Trace> set_aside_stale(const TuningTask& task, const Measurer& measurer,
                                               std::vector<EvolutionarySearch::MeasuredTrace>& earlier,
                                               const std::vector<std::optional<std::string>>& hashes) const {
    if (options_.remeasure_stale < 0) return {};
    std::vector<char> is_stale(earlier.size(), 0);
    parallel_for(earlier.size(), options_.search.threads, [&](size_t i) {
      if (!hashes[i]) return;
      try {
        std::optional<std::string> now = measurer.kernel_hash(schedule::replay(earlier[i].trace, task.func).func());
        is_stale[i] = now && *now != *hashes[i];
      } catch (const Error&) {
        // The record's own measurement said what this script does; nothing to compare.
      }
    });
    std::vector<EvolutionarySearch::MeasuredTrace> current, stale;
    for (size_t i = 0; i < earlier.size(); ++i) (is_stale[i] ? stale : current).push_back(std::move(earlier[i]));
    earlier = std::move(current);
    std::stable_sort(stale.begin(), stale.end(), [](const auto& a, const auto& b) {
      return a.latency_ms.value_or(INFINITY) < b.latency_ms.value_or(INFINITY);
    });
    std::vector<schedule::Trace> out;
    for (EvolutionarySearch::MeasuredTrace& m : stale) out.push_back(std::move(m.trace));
    return out;
  }

  // The best traces of other workloads of the task's op kind, tuned on the same target and
  // machine: the two best of each, nearest shapes first, up to transfer_limit. A task with
  // few trials of its own starts from what worked on its neighbours (the search's own
  // sampling found a 4096^3 f32 GEMM 27% slower than one of the rule's candidates within
  // 32 trials).
  std::vector<schedule::Trace> transfer_traces(const db::TuningKey& key, const TuningTask& task) const {
    std::vector<schedule::Trace> out;
    if (options_.transfer_limit <= 0 || task.spec.empty()) return out;
    const std::string kind = op_kind_of(task.spec);
    std::vector<std::pair<double, db::TuningKey>> donors;
    for (const db::TuningKey& other : database_.keys()) {
      if (other.workload == key.workload || !(other.target == key.target) || !(other.hardware == key.hardware)) continue;
      std::optional<db::Workload> w = database_.find_workload(other.workload);
      if (!w || !w->spec || op_kind_of(*w->spec) != kind) continue;
      donors.emplace_back(spec_distance(task.spec, *w->spec), other);
    }
    std::stable_sort(donors.begin(), donors.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [distance, donor] : donors) {
      int from_donor = 0;
      for (const db::StoredRecord& r : database_.top_k(donor, 4)) {
        if (r.record.script.empty()) continue;
        try {
          out.push_back(script::decode(r.record.script));
        } catch (const Error&) {
          continue;
        }
        if (++from_donor == 2 || static_cast<int>(out.size()) >= options_.transfer_limit) break;
      }
      if (static_cast<int>(out.size()) >= options_.transfer_limit) break;
    }
    return out;
  }

  // The default schedules of the tasks a round starts, measured together (one spread of
  // the compilers, as the round's batches are) rather than one task at a time.
  void measure_defaults(const std::vector<size_t>& tasks) {
    if (tasks.empty()) return;
    std::vector<MeasureBatch> batches;
    for (size_t index : tasks) {
      const TaskState& s = states_[index];
      batches.push_back({s.env->measurer.get(), {s.env->default_schedule}});
    }
    const Clock::time_point measuring_start = Clock::now();
    std::vector<std::vector<MeasureResult>> results = measure_batches(batches);
    measure_s_ += std::chrono::duration<double>(Clock::now() - measuring_start).count();
    for (size_t k = 0; k < tasks.size(); ++k) {
      TaskState& s = states_[tasks[k]];
      const MeasureResult& result = results[k].at(0);
      // Recorded once per kernel: a default whose code an earlier run measured as the
      // default adds nothing.
      if (result.kernel_hash.empty() || s.default_kernels.insert(result.kernel_hash).second) {
        database_.commit(record_of(s, "", result));
      }
      if (result.ok()) {
        s.outcome.default_ms = result.median_ms();
      } else {
        log(fmt::format("{}: the default schedule failed ({}): {}", s.task->name, measure_status_id(result.status),
                        result.error));
      }
    }
  }

  // One round: a batch proposed for each task that has trials left, the batches measured
  // together, every result committed before the scheduler hears of the round.
  void round(const std::vector<size_t>& tasks) {
    std::vector<size_t> proposing;
    std::vector<std::vector<SearchCandidate>> batches;
    std::vector<MeasureBatch> measure;
    const Clock::time_point proposing_start = Clock::now();
    for (size_t index : tasks) {
      TaskState& s = states_[index];
      std::vector<SearchCandidate> batch = propose(index, s);
      if (batch.empty()) continue;
      MeasureBatch m{s.env->measurer.get(), {}};
      for (const SearchCandidate& c : batch) m.scheduled.push_back(c.scheduled);
      proposing.push_back(index);
      batches.push_back(std::move(batch));
      measure.push_back(std::move(m));
    }
    const Clock::time_point measuring_start = Clock::now();
    propose_s_ += std::chrono::duration<double>(measuring_start - proposing_start).count();
    if (measure.empty()) return;
    std::vector<std::vector<MeasureResult>> results = measure_batches(measure);
    measure_s_ += std::chrono::duration<double>(Clock::now() - measuring_start).count();
    for (size_t k = 0; k < proposing.size(); ++k) record(proposing[k], states_[proposing[k]], batches[k], results[k]);
  }

  // The task's next batch; empty (and the task finished, saying why) when its budget is
  // spent or its space yields nothing new.
  std::vector<SearchCandidate> propose(size_t index, TaskState& s) {
    const int64_t left = options_.trials_per_task - s.trials;
    if (left <= 0) {
      if (s.outcome.note.empty()) s.outcome.note = "trial budget";
      scheduler_->finish(index);
      return {};
    }
    std::vector<SearchCandidate> batch = s.search->propose(static_cast<int>(std::min<int64_t>(left, options_.batch_size)));
    if (batch.empty()) {
      const SearchStatistics& st = s.search->statistics();
      s.outcome.note = fmt::format("space exhausted: no new valid candidate ({} samples failed, {} measured)",
                                   st.sample_failures, s.search->measured_count());
      log(s.task->name + ": " + s.outcome.note);
      scheduler_->finish(index);
      scheduler_->report(index, s.search->best_ms());
    }
    return batch;
  }

  void record(size_t index, TaskState& s, const std::vector<SearchCandidate>& batch,
              const std::vector<MeasureResult>& results) {
    std::vector<db::Record> records;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (results[i].ok()) ++s.outcome.ok;
      // A program whose kernel was measured before (another program printed the same
      // code) is recorded too, with that measurement: it is this script's kernel.
      if (results[i].from_cache) {
        ++s.outcome.cached;
      } else {
        ++measured_;
      }
      records.push_back(record_of(s, script::encode(batch[i].trace), results[i]));
    }
    if (!records.empty()) database_.commit(records);
    s.search->report(batch, results);
    s.trials += static_cast<int64_t>(batch.size());
    s.outcome.trials = s.trials;
    s.outcome.new_trials += static_cast<int64_t>(batch.size());
    s.outcome.best_ms = s.search->best_ms();
    if (s.outcome.best_ms) s.outcome.curve.emplace_back(s.trials, *s.outcome.best_ms);
    scheduler_->report(index, best_overall(s));
    if (options_.on_round) options_.on_round(progress(index, s));
  }

  // What the task scheduler tracks: the best of search and the default schedule.
  static std::optional<double> best_overall(const TaskState& s) {
    std::optional<double> best = s.outcome.best_ms;
    if (s.outcome.default_ms && (!best || *s.outcome.default_ms < *best)) best = s.outcome.default_ms;
    return best;
  }

  TuneProgress progress(size_t index, const TaskState& s) const {
    TuneProgress p;
    p.task = index;
    p.task_name = s.task->name;
    p.task_trials = s.trials;
    p.task_budget = options_.trials_per_task;
    p.task_best_ms = s.outcome.best_ms;
    p.task_default_ms = s.outcome.default_ms;
    for (const TaskState& t : states_) p.trials += std::min(t.trials, options_.trials_per_task);
    p.budget = options_.trials_per_task * static_cast<int64_t>(states_.size());
    p.measured_this_run = measured_;
    p.elapsed_s = elapsed();
    p.candidates_per_second = p.elapsed_s > 0 ? static_cast<double>(measured_) / p.elapsed_s : 0;
    p.propose_s = propose_s_;
    p.measure_s = measure_s_;
    return p;
  }

  db::Database& database_;
  const TaskEnvironmentFactory& factory_;
  CostModel& model_;
  const TuneOptions& options_;
  std::vector<TaskState> states_;
  std::unique_ptr<GradientTaskScheduler> scheduler_;
  Clock::time_point start_;
  int64_t measured_ = 0;
  double propose_s_ = 0, measure_s_ = 0;
};

}  // namespace

std::vector<TaskOutcome> tune(const std::vector<TuningTask>& tasks, db::Database& database,
                              const TaskEnvironmentFactory& factory, CostModel& model, const TuneOptions& options) {
  return Tuning(tasks, database, factory, model, options).run();
}

}  // namespace dragon::search
