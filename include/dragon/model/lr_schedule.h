// The learning rate of each optimizer step: linear warm-up to the peak, then cosine decay
// to a floor at the last step (and the floor after it). A pure function of the step, so a
// resumed run continues on the same curve. Not the optimizer.
#pragma once

#include <cstdint>

namespace dragon::model {

struct LrSchedule {
  double peak = 3e-4;       // reached at the end of warm-up
  double floor_ratio = 0.1; // the floor is peak * floor_ratio
  int64_t warmup = 100;     // steps 0..warmup-1 rise linearly to the peak
  int64_t total = 1000;     // the cosine reaches the floor at this step

  // The rate for 0-based step `step`; throws UserError when the settings are inconsistent
  // (peak <= 0, floor_ratio outside [0, 1], warmup < 0, total < warmup).
  double at(int64_t step) const;
};

}  // namespace dragon::model
