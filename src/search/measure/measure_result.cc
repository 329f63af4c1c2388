// MeasureResult (measure_result.h).
#include "dragon/search/measure_result.h"

#include <algorithm>

namespace dragon::search {

std::string_view measure_status_id(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk: return "ok";
    case MeasureStatus::kApplyFailed: return "apply_failed";
    case MeasureStatus::kRejected: return "rejected";
    case MeasureStatus::kBuildFailed: return "build_failed";
    case MeasureStatus::kRunFailed: return "run_failed";
    case MeasureStatus::kCrashed: return "crashed";
    case MeasureStatus::kTimedOut: return "timed_out";
    case MeasureStatus::kWrongResult: return "wrong_result";
  }
  return "unknown";
}

std::optional<double> MeasureResult::median_ms() const {
  if (!ok() || samples_ms.empty()) return std::nullopt;
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

MeasureResult MeasureResult::failure(MeasureStatus status, std::string error, std::string kernel_hash) {
  MeasureResult r;
  r.status = status;
  r.error = std::move(error);
  r.kernel_hash = std::move(kernel_hash);
  return r;
}

}  // namespace dragon::search
