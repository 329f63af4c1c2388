// Unions of time intervals: busy time across concurrent streams is the length of the
// union of kernel intervals, never their sum.
#pragma once

#include <cstdint>
#include <vector>

namespace dragon::profile {

struct Interval {
  uint64_t start = 0;  // inclusive
  uint64_t end = 0;    // exclusive; an interval with end <= start is empty
};

// Sorted, disjoint, non-empty intervals covering exactly the input's union.
std::vector<Interval> interval_union(std::vector<Interval> intervals);
// Total length of a union (input must be disjoint, e.g. from interval_union).
uint64_t total_length(const std::vector<Interval>& disjoint);
// The parts of `disjoint` inside `windows` (both disjoint and sorted).
std::vector<Interval> intersect(const std::vector<Interval>& disjoint, const std::vector<Interval>& windows);

}  // namespace dragon::profile
