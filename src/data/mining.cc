// The mining rules of mining.h, in the order the header numbers them.
#include "dragon/data/mining.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::data {
namespace {

// A script's fastest kOk record.
struct Measured {
  const db::StoredRecord* stored = nullptr;
  Latency latency;

  const std::string& script() const { return stored->record.script; }
  // Faster first; ties: the earlier record.
  bool before(const Measured& other) const {
    if (latency.median_ms != other.latency.median_ms) return latency.median_ms < other.latency.median_ms;
    return stored->id < other.stored->id;
  }
};

struct Candidate {
  const Measured* measured = nullptr;
  double ratio = 0;  // its median / the best's
};

Example example_of(const CorpusEntry& entry, ExampleKind kind, const Measured& target) {
  Example e;
  e.kind = kind;
  e.spec = entry.spec;
  e.hash = entry.hash;
  e.family = entry.family;
  e.split = entry.split;
  e.script = target.script();
  e.target_latency = target.latency;
  return e;
}

// Rule 5: up to `count` of `candidates` (sorted by ratio), nearest in log ratio to points
// spaced evenly in log over [low, high], each used once.
std::vector<Candidate> spread(const std::vector<Candidate>& candidates, int count, double low, double high) {
  if (static_cast<int64_t>(candidates.size()) <= count) return candidates;
  std::vector<bool> used(candidates.size(), false);
  std::vector<Candidate> chosen;
  for (int i = 0; i < count; ++i) {
    const double t = count == 1 ? 0.5 : static_cast<double>(i) / (count - 1);
    const double point = std::log(low) + t * (std::log(high) - std::log(low));
    size_t pick = candidates.size();
    double distance = 0;
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (used[c]) continue;
      const double d = std::abs(std::log(candidates[c].ratio) - point);
      if (pick == candidates.size() || d < distance) {  // strict: ties keep the lower ratio
        pick = c;
        distance = d;
      }
    }
    used[pick] = true;
    chosen.push_back(candidates[pick]);
  }
  std::sort(chosen.begin(), chosen.end(), [](const Candidate& a, const Candidate& b) {
    return a.ratio != b.ratio ? a.ratio < b.ratio : a.measured->script() < b.measured->script();
  });
  return chosen;
}

}  // namespace

void validate(const MiningOptions& options) {
  if (!(options.min_ratio >= 1 && options.min_ratio <= options.max_ratio && std::isfinite(options.max_ratio))) {
    throw UserError(fmt::format("the refinement ratio range [{}, {}] must satisfy 1 <= min <= max", options.min_ratio,
                                options.max_ratio));
  }
  if (options.refinements_per_workload < 0) {
    throw UserError(fmt::format("refinements per workload must not be negative (got {})",
                                options.refinements_per_workload));
  }
}

MinedWorkload mine_workload(const CorpusEntry& entry, std::span<const db::StoredRecord> records,
                            const MiningOptions& options) {
  validate(options);
  MinedWorkload mined;
  // Rule 1: each script's fastest kOk record.
  std::map<std::string, Measured> by_script;
  for (const db::StoredRecord& stored : records) {
    const db::Record& r = stored.record;
    DRAGON_CHECK(r.key.workload == entry.hash, "a record of workload {} mined for {}",
                 db::format_workload_hash(r.key.workload), db::format_workload_hash(entry.hash));
    DRAGON_CHECK(r.key == records.front().record.key, "records of several keys mined together");
    if (r.status != db::RecordStatus::kOk) continue;
    std::optional<Latency> latency = Latency::of(r);
    if (!latency) continue;
    Measured m{&stored, *latency};
    auto [it, inserted] = by_script.try_emplace(r.script, m);
    if (!inserted && m.before(it->second)) it->second = m;
  }
  mined.ok_scripts = static_cast<int64_t>(by_script.size());
  if (by_script.empty()) return mined;

  // Rule 2: the best.
  const Measured* best = nullptr;
  for (const auto& [script, m] : by_script) {
    if (best == nullptr || m.before(*best)) best = &m;
  }
  if (best->script().empty()) {
    mined.outcome = MiningOutcome::kDefaultBest;
    return mined;
  }
  mined.outcome = MiningOutcome::kExamples;

  // Rule 3: construction.
  Example construction = example_of(entry, ExampleKind::kConstruction, *best);
  if (auto it = by_script.find(""); it != by_script.end()) construction.prompt_latency = it->second.latency;
  mined.construction = std::move(construction);

  // Rule 4: refinement prompts, in ratio order (ties: by script, for determinism).
  std::vector<Candidate> qualifying;
  for (const auto& [script, m] : by_script) {
    if (script.empty() || &m == best) continue;
    const double ratio = m.latency.median_ms / best->latency.median_ms;
    if (ratio < options.min_ratio || ratio > options.max_ratio) continue;
    ++mined.in_ratio_range;
    if (!m.latency.ci95 || !best->latency.ci95) continue;
    if (!(m.latency.ci95->low_ms > best->latency.ci95->high_ms)) continue;
    ++mined.significant;
    qualifying.push_back({&m, ratio});
  }
  std::sort(qualifying.begin(), qualifying.end(), [](const Candidate& a, const Candidate& b) {
    return a.ratio != b.ratio ? a.ratio < b.ratio : a.measured->script() < b.measured->script();
  });

  // Rule 5: at most the cap, spread over the range.
  for (const Candidate& c :
       spread(qualifying, options.refinements_per_workload, options.min_ratio, options.max_ratio)) {
    Example refinement = example_of(entry, ExampleKind::kRefinement, *best);
    refinement.existing_script = c.measured->script();
    refinement.prompt_latency = c.measured->latency;
    mined.refinements.push_back(std::move(refinement));
  }
  return mined;
}

}  // namespace dragon::data
