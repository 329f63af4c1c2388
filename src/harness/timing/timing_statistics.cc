// summarize_samples and the stopping rule of gpu_timer.h: plain statistics, no GPU.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "dragon/harness/gpu_timer.h"

namespace dragon::harness {
namespace {

// Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom; beyond, the
// normal 1.96 is within 2%.
double student_t_975(int64_t degrees_of_freedom) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (degrees_of_freedom < 1) return INFINITY;
  if (degrees_of_freedom <= 30) return kTable[degrees_of_freedom - 1];
  return 1.96;
}

}  // namespace

GpuTiming summarize_samples(std::vector<double> samples_ms) {
  GpuTiming t;
  t.samples_ms = std::move(samples_ms);
  const auto n = static_cast<int64_t>(t.samples_ms.size());
  if (n == 0) return t;
  std::vector<double> sorted = t.samples_ms;
  std::sort(sorted.begin(), sorted.end());
  t.min_ms = sorted.front();
  t.max_ms = sorted.back();
  t.median_ms = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  t.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;
    for (double x : sorted) squares += (x - t.mean_ms) * (x - t.mean_ms);
    t.stddev_ms = std::sqrt(squares / static_cast<double>(n - 1));
    t.ci95_half_width_ms = student_t_975(n - 1) * t.stddev_ms / std::sqrt(static_cast<double>(n));
  } else {
    t.ci95_half_width_ms = INFINITY;  // one sample says nothing about its spread
  }
  return t;
}

bool timing_converged(const GpuTiming& timing, const GpuTimerOptions& options) {
  const auto n = static_cast<int64_t>(timing.samples_ms.size());
  return n >= std::max(options.min_calls, 2) && timing.mean_ms > 0 &&
         timing.ci95_half_width_ms <= options.target_relative_ci * timing.mean_ms;
}

bool timing_should_stop(const std::vector<double>& samples_ms, double seconds, const GpuTimerOptions& options) {
  const auto n = static_cast<int>(samples_ms.size());
  if (n >= options.max_calls) return true;
  if (options.abandon_above_ms > 0 && n >= std::max(1, options.abandon_after_calls) &&
      summarize_samples(samples_ms).median_ms > options.abandon_above_ms) {
    return true;
  }
  if (n < options.min_calls) return false;
  return seconds >= options.max_seconds || timing_converged(summarize_samples(samples_ms), options);
}

std::string GpuTiming::describe() const {
  if (samples_ms.empty()) return "no samples";
  const double relative = mean_ms > 0 ? 100.0 * ci95_half_width_ms / mean_ms : 0.0;
  return fmt::format("{:.4g} ms median ({:.4g}..{:.4g}, +-{:.2g}%, {} calls{})", median_ms, min_ms, max_ms, relative,
                     samples_ms.size(), converged ? "" : ", not converged");
}

}  // namespace dragon::harness
