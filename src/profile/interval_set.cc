// Interval union and intersection by sweeping sorted endpoints.
#include "dragon/profile/interval_set.h"

#include <algorithm>

namespace dragon::profile {

std::vector<Interval> interval_union(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& i : intervals) {
    if (!merged.empty() && i.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, i.end);
    } else {
      merged.push_back(i);
    }
  }
  return merged;
}

uint64_t total_length(const std::vector<Interval>& disjoint) {
  uint64_t total = 0;
  for (const Interval& i : disjoint) total += i.end - i.start;
  return total;
}

std::vector<Interval> intersect(const std::vector<Interval>& disjoint, const std::vector<Interval>& windows) {
  std::vector<Interval> out;
  size_t a = 0, b = 0;
  while (a < disjoint.size() && b < windows.size()) {
    uint64_t start = std::max(disjoint[a].start, windows[b].start);
    uint64_t end = std::min(disjoint[a].end, windows[b].end);
    if (start < end) out.push_back({start, end});
    if (disjoint[a].end < windows[b].end) {
      ++a;
    } else {
      ++b;
    }
  }
  return out;
}

}  // namespace dragon::profile
