// measure_batches (measurer.h): a round's batches, grouped by their measurers' groups.
#include <map>

#include "dragon/search/measurer.h"

namespace dragon::search {

std::vector<std::vector<MeasureResult>> measure_batches(const std::vector<MeasureBatch>& batches) {
  std::vector<std::vector<MeasureResult>> results(batches.size());
  // Groups in order of their first batch, so the order of work follows the round's.
  std::vector<MeasureGroup*> order;
  std::map<MeasureGroup*, std::vector<size_t>> members;
  for (size_t i = 0; i < batches.size(); ++i) {
    MeasureGroup* group = batches[i].measurer->group();
    if (group == nullptr) {
      results[i] = batches[i].measurer->measure(batches[i].scheduled);
      continue;
    }
    if (members.find(group) == members.end()) order.push_back(group);
    members[group].push_back(i);
  }
  for (MeasureGroup* group : order) {
    std::vector<MeasureBatch> mine;
    for (size_t i : members[group]) mine.push_back(batches[i]);
    std::vector<std::vector<MeasureResult>> measured = group->measure(mine);
    for (size_t k = 0; k < members[group].size(); ++k) results[members[group][k]] = std::move(measured[k]);
  }
  return results;
}

}  // namespace dragon::search
