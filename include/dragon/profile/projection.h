// Amdahl's law for a profile: how much of the end-to-end time per-category kernel
// speedups can save, given each category's share of the wall window.
#pragma once

#include <string>
#include <vector>

#include "dragon/profile/profile_report.h"

namespace dragon::profile {

struct CategorySpeedup {
  std::string category;
  double speedup = 1;       // time of the old kernels over the new, where they win
  double win_fraction = 1;  // share of the category's time where the new kernels win
};

struct Projection {
  double time_saved_fraction = 0;  // 1 - new time / old time
  double end_to_end_speedup = 1;   // old time / new time
};

// For each part with share f, win fraction w and speedup s, the new time is
// 1 - sum f * w * (1 - 1/s). Shares must sum to at most 1; speedups must be > 0.
Projection project(const std::vector<std::pair<double, CategorySpeedup>>& parts);
// The same with shares taken from `report` (UserError for an unknown category).
Projection project(const ProfileReport& report, const std::vector<CategorySpeedup>& speedups);
// Parses "CATEGORY=SPEEDUP" or "CATEGORY=SPEEDUP@WIN_FRACTION"; UserError otherwise.
CategorySpeedup parse_category_speedup(const std::string& text);

}  // namespace dragon::profile
