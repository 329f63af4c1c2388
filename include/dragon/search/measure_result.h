// What measuring one candidate of a tuning task gave: verified latency samples, or the
// stage that refused it and why. A latency exists only for a candidate the harness's checks
// passed (kOk). The statuses spell as the tuning database's (db/record.h). Not the
// measuring itself (measurer.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::search {

enum class MeasureStatus {
  kOk,           // verified correct, then timed
  kApplyFailed,  // the script did not replay on the workload (a schedule precondition)
  kRejected,     // a postprocessor or a limit check refused the program
  kBuildFailed,  // lowering, code generation or the compiler failed
  kRunFailed,    // the kernel reported an error or could not be launched
  kCrashed,      // its process died (a signal, an illegal address)
  kTimedOut,     // no answer within the time limit
  kWrongResult,  // ran, and the checks rejected its outputs
};
// "ok", "apply_failed", "rejected", "build_failed", "run_failed", "crashed", "timed_out",
// "wrong_result".
std::string_view measure_status_id(MeasureStatus status);

struct MeasureResult {
  MeasureStatus status = MeasureStatus::kOk;
  std::string error;        // why, unless kOk
  std::string kernel_hash;  // of the generated code; empty when nothing was generated
  std::vector<double> samples_ms;  // kOk only: one per timed call, in call order
  bool from_cache = false;  // the same kernel was measured before (no new measurement)

  bool ok() const { return status == MeasureStatus::kOk; }
  // The median of the samples; nullopt unless kOk.
  std::optional<double> median_ms() const;

  static MeasureResult failure(MeasureStatus status, std::string error, std::string kernel_hash = "");
};

}  // namespace dragon::search
