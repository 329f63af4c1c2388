#include "dragon/db/tuning_curve.h"

#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::db {

TuningCurve tuning_curve(const Database& database, const TuningKey& key) {
  // Per trial (script, by first appearance) its fastest verified record.
  std::unordered_map<std::string, int64_t> trial_of_script;
  std::vector<std::optional<StoredRecord>> fastest;
  std::vector<double> fastest_ms;
  database.for_each_record(RecordFilter::of(key), [&](const StoredRecord& r) {
    if (r.record.script.empty()) return;
    auto [it, fresh] = trial_of_script.emplace(r.record.script, static_cast<int64_t>(fastest.size()));
    if (fresh) {
      fastest.emplace_back();
      fastest_ms.push_back(0);
    }
    const size_t trial = static_cast<size_t>(it->second);
    const std::optional<double> median = r.record.median_ms();
    if (r.record.status != RecordStatus::kOk || !median) return;
    if (fastest[trial] && *median >= fastest_ms[trial]) return;  // ties: the earlier record
    fastest[trial] = r;
    fastest_ms[trial] = *median;
  });
  TuningCurve curve;
  curve.trials = static_cast<int64_t>(fastest.size());
  for (size_t trial = 0; trial < fastest.size(); ++trial) {
    if (!fastest[trial]) continue;
    if (!curve.points.empty() && fastest_ms[trial] >= curve.points.back().best_ms) continue;
    curve.points.push_back(TuningCurve::Point{static_cast<int64_t>(trial) + 1, *fastest[trial], fastest_ms[trial]});
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
