// Sketch quotas (sketch_quota.h).
#include "dragon/search/sketch_quota.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace dragon::search {

std::vector<size_t> pick_with_sketch_quotas(const std::vector<uint64_t>& ranked,
                                            const std::map<uint64_t, SketchStanding>& standing, int count,
                                            const SketchQuotaOptions& options) {
  std::vector<size_t> out;
  if (count <= 0 || ranked.empty()) return out;
  std::optional<double> overall;
  for (const auto& [key, s] : standing) {
    if (s.best_ms && (!overall || *s.best_ms < *overall)) overall = s.best_ms;
  }
  auto deserves_quota = [&](uint64_t key) {
    auto it = standing.find(key);
    if (it == standing.end() || it->second.measured < options.explore_trials) return true;
    return it->second.best_ms && overall && *it->second.best_ms <= options.competitive_ratio * *overall;
  };
  std::vector<uint64_t> sketches;  // in order of first appearance in the ranking
  std::unordered_set<uint64_t> seen;
  for (uint64_t key : ranked) {
    if (seen.insert(key).second) sketches.push_back(key);
  }
  // Quotas only matter when the ranking holds more than one sketch.
  std::unordered_map<uint64_t, int> quota;
  if (sketches.size() > 1) {
    const int per_sketch = std::max(
        1, static_cast<int>(std::floor(options.quota_share * count / static_cast<double>(sketches.size()))));
    for (uint64_t key : sketches) {
      if (deserves_quota(key)) quota[key] = per_sketch;
    }
  }
  std::vector<bool> taken(ranked.size(), false);
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < count; ++i) {
    auto it = quota.find(ranked[i]);
    if (it == quota.end() || it->second == 0) continue;
    --it->second;
    taken[i] = true;
    out.push_back(i);
  }
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < count; ++i) {
    if (!taken[i]) out.push_back(i);
  }
  return out;
}

}  // namespace dragon::search
