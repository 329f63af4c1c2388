// A search's progress as its records tell it: per tuning key, the best verified latency
// against the number of trials. A trial is a distinct script (the default schedule's records,
// script "", are none), numbered by its first record in commit order; a script measured again
// later (its code changed since) stays the same trial, and its best record counts there.
// `dragon bench --max-trials` (the best within a trial budget) and `dragon db curve` (issue
// 17's search efficiency: the best after 64 trials against the best after 1,000) read it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dragon/db/database.h"

namespace dragon::db {

struct TuningCurve {
  // Where the best improves: after `trial` trials the best verified record is `best`.
  struct Point {
    int64_t trial = 0;
    StoredRecord best;
    double best_ms = 0;  // best's median
  };
  std::vector<Point> points;  // trial increasing, best_ms decreasing
  int64_t trials = 0;         // distinct scripts under the key, verified or not

  // The best record of the first `trials` trials; nullopt when none of them verified.
  // Throws UserError for trials < 1.
  std::optional<StoredRecord> best_within(int64_t trials) const;
  // Its median; nullopt the same way.
  std::optional<double> best_ms_within(int64_t trials) const;
};

// One scan of the key's records.
TuningCurve tuning_curve(const Database& database, const TuningKey& key);

}  // namespace dragon::db
