// The fastest verified median a task's measurer has seen, the base of its cutoffs and time
// limits (a candidate far slower than it is stopped early). Results the tuning database or
// the measurer's cache answer count as much as fresh runs: a task resumed from its records
// has a best before it measures anything, so the first batch of a resumed task is held to
// the same limits as the rest. Without it, the first batch had no slow-run limit and 30 s
// per candidate: KernelBench's 1.6G-element softmax, resumed from 16 records on an H100,
// held its first round minutes past the tuning budget.
#pragma once

#include <optional>

#include "dragon/search/measure_result.h"

namespace dragon::search {

class BestSoFar {
 public:
  void consider(const MeasureResult& result) {
    if (std::optional<double> ms = result.median_ms(); ms && (!ms_ || *ms < *ms_)) ms_ = ms;
  }
  const std::optional<double>& ms() const { return ms_; }

 private:
  std::optional<double> ms_;
};

}  // namespace dragon::search
