// One checked timing (isolated_timing.h), whoever carries out the job: the draw of its
// variants, the region and the job, then, after the job, the references, the check of
// every call's outputs, the red zones and the physics floor. A runner child carries out
// the job for an external kernel (isolated_timing.cc); this process does for our own
// compiled functions (own_kernels.cc). Private to isolation.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dragon/harness/isolated_timing.h"
#include "dragon/harness/kernel_runner_protocol.h"
#include "shared_arguments.h"

namespace dragon::harness::isolation {

// How a timing job went.
struct TimingExecution {
  RunOutcome outcome;               // kOk: samples_ms holds one time per timed call
  std::vector<double> samples_ms;
  GpuState gpu_state;
  std::string red_zone_violations;  // from the job's buffer groups
};
// Carries out `job` on `region` (the job's kernel fields are the executor's to fill).
using TimingExecutor = std::function<TimingExecution(kernel_runner::Job& job, SharedArguments& region)>;

// UserError for a request that cannot be honoured (fewer than two sets, timer settings out
// of range, a non-positive time limit); `name` names the kernel in the message.
void check_timing_request(const TimingRequest& request, const std::string& name);

class TimingRun {
 public:
  // `inputs`: drawn once by the caller (references computed here if missing), or nullptr
  // to draw them here. Throws UserError for a function with no outputs or a budget that
  // cannot hold the timer's min_calls calls.
  TimingRun(const Reference& reference, const TimingRequest& request, TimingInputs* inputs, std::string name);
  IsolatedTiming run(const TimingExecutor& execute);

 private:
  kernel_runner::Job timing_job(const kernel_runner::ArgumentLayout& layout) const;
  std::string samples_problem(const std::vector<double>& samples) const;
  void check_every_call(const SharedArguments& region);
  void judge();
  size_t params() const { return reference_.func()->params.size(); }

  const Reference& reference_;
  const TimingRequest& request_;
  std::string name_;
  TimingInputs own_inputs_;
  TimingInputs* inputs_;
  std::vector<uint64_t> recorded_params_;
  std::vector<uint64_t> recorded_bytes_;
  IsolatedTiming result_;
};

}  // namespace dragon::harness::isolation
