#include "dragon/db/tuning_curve.h"

#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::db {

TuningCurve tuning_curve(const Database& database, const TuningKey& key) {
  // Per trial (script, by first appearance) its fastest verified record and that median.
  struct Fastest {
    std::optional<StoredRecord> record;
    double ms = 0;
  };
  std::unordered_map<std::string, size_t> trial_of_script;
  std::vector<Fastest> fastest;
  database.for_each_record(RecordFilter::of(key), [&](const StoredRecord& r) {
    if (r.record.script.empty()) return;
    auto [it, fresh] = trial_of_script.emplace(r.record.script, fastest.size());
    if (fresh) fastest.emplace_back();
    Fastest& trial = fastest[it->second];
    const std::optional<double> median = r.record.median_ms();
    if (r.record.status != RecordStatus::kOk || !median) return;
    if (trial.record && *median >= trial.ms) return;  // ties: the earlier record
    trial = Fastest{r, *median};
  });
  TuningCurve curve;
  curve.trials = static_cast<int64_t>(fastest.size());
  for (size_t trial = 0; trial < fastest.size(); ++trial) {
    const Fastest& f = fastest[trial];
    if (!f.record || (!curve.points.empty() && f.ms >= curve.points.back().best_ms)) continue;
    curve.points.push_back(TuningCurve::Point{static_cast<int64_t>(trial) + 1, *f.record, f.ms});
  }
  return curve;
}

std::optional<StoredRecord> TuningCurve::best_within(int64_t budget) const {
  if (budget < 1) throw UserError(fmt::format("best within {} trials: give at least 1", budget));
  const Point* best = nullptr;
  for (const Point& p : points) {
    if (p.trial > budget) break;
    best = &p;
  }
  if (best == nullptr) return std::nullopt;
  return best->best;
}

std::optional<double> TuningCurve::best_ms_within(int64_t budget) const {
  std::optional<StoredRecord> best = best_within(budget);
  if (!best) return std::nullopt;
  return best->record.median_ms();
}

}  // namespace dragon::db
