// LrSchedule::at: warm-up then cosine decay. No libtorch here.
#include "dragon/model/lr_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "dragon/support/error.h"

namespace dragon::model {

double LrSchedule::at(int64_t step) const {
  if (!(peak > 0) || !(floor_ratio >= 0 && floor_ratio <= 1) || warmup < 0 || total < warmup)
    throw UserError(fmt::format("learning rate schedule: peak {} (> 0), floor_ratio {} (in [0, 1]), warmup {} (>= 0), "
                                "total {} (>= warmup) are inconsistent",
                                peak, floor_ratio, warmup, total));
  // (step + 1) / warmup: the first step already moves, the last warm-up step is the peak.
  if (step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double floor = peak * floor_ratio;
  const double span = static_cast<double>(std::max<int64_t>(1, total - warmup));
  const double progress = std::min(1.0, static_cast<double>(step - warmup) / span);
  return floor + 0.5 * (peak - floor) * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace dragon::model
