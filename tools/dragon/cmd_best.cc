// dragon best SPEC --db FILE: the fastest verified record of the op spec in a tuning
// database, per target and machine it was tuned on: its script, its measured time (median
// of its samples and their spread), the default schedule's time and the trials spent.
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "dragon/db/database.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::cli {
namespace {

struct BestOptions {
  std::string spec;
  std::string db;
  std::string target;  // empty: every target
  bool script_only = false;
};

std::string describe(const db::Record& r) {
  std::optional<db::LatencySummary> s = r.latency();
  if (!s) return "no samples";
  std::string text = fmt::format("{:.4g} ms median of {} samples (min {:.4g}, max {:.4g})", s->median_ms, s->samples,
                                 s->min_ms, s->max_ms);
  if (s->median_ci95) text += fmt::format(", 95% CI of the median {:.4g}..{:.4g}", s->median_ci95->low_ms, s->median_ci95->high_ms);
  return text;
}

int best(const BestOptions& o) {
  if (o.db.empty()) throw UserError("dragon best: give --db FILE");
  ops::Workload workload = ops::OpRegistry::global().make_workload(o.spec);
  db::Database database = db::Database::open(o.db, {.read_only = true});
  db::Workload w = db::Workload::of(workload.func, workload.spec);
  int shown = 0;
  for (const db::TuningKey& key : database.keys()) {
    if (key.workload != w.hash || (!o.target.empty() && key.target.name != o.target)) continue;
    std::optional<db::StoredRecord> top = database.best(key);
    if (o.script_only) {
      if (!top) continue;
      std::printf("%s", top->record.script.c_str());
      return 0;
    }
    db::RecordFilter all = db::RecordFilter::of(key);
    int64_t records = database.count(all);
    all.status = db::RecordStatus::kOk;
    int64_t ok = database.count(all);
    std::printf("%s on %s: %lld records, %lld verified\n", key.target.describe().c_str(), key.hardware.describe().c_str(),
                static_cast<long long>(records), static_cast<long long>(ok));
    std::optional<double> default_ms;
    for (const db::StoredRecord& r : database.records(db::RecordFilter::of(key))) {
      // The latest default measured (records come in commit order).
      if (r.record.script.empty() && r.record.status == db::RecordStatus::kOk) default_ms = r.record.median_ms();
    }
    if (!top) {
      std::printf("  no verified record\n");
    } else if (top->record.script.empty()) {
      // The default changes between versions: say which one this record measured.
      std::printf("  best: the default schedule as of commit %s, %s\n", top->record.commit.value_or("unknown").c_str(),
                  describe(top->record).c_str());
    } else {
      std::printf("  best: record %lld, %s", static_cast<long long>(top->id), describe(top->record).c_str());
      if (default_ms) std::printf("; %.3gx the default schedule's %.4g ms", *default_ms / *top->record.median_ms(), *default_ms);
      std::printf("\n  script:\n");
      std::string script = top->record.script;
      size_t start = 0;
      while (start < script.size()) {
        size_t end = script.find('\n', start);
        if (end == std::string::npos) end = script.size();
        std::printf("    %s\n", script.substr(start, end - start).c_str());
        start = end + 1;
      }
    }
    ++shown;
  }
  if (shown == 0) {
    throw UserError(fmt::format("{} has no record of {}{}", o.db, workload.spec,
                                o.target.empty() ? "" : " for target " + o.target));
  }
  return 0;
}

}  // namespace

Command add_best_command(CLI::App& app) {
  auto o = std::make_shared<BestOptions>();
  CLI::App* sub = app.add_subcommand("best", "The best tuned script of an op spec in a tuning database, and its time");
  sub->add_option("spec", o->spec, "The op spec, as tuned")->required();
  sub->add_option("--db", o->db, "The tuning database")->required();
  sub->add_option("--target", o->target, "Only this target: cpu or cuda")->check(CLI::IsMember(lower::Target::names()));
  sub->add_flag("--script", o->script_only, "Print only the best script (for `dragon apply` or `--script`)");
  return [o] { return best(*o); };
}

}  // namespace dragon::cli
