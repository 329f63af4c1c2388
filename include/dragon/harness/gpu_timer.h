// The one GPU timer every figure comes from (candidates, baselines, benchmarks): CUDA events
// around each call with a device-wide synchronize inside the window, so work on other
// streams cannot escape; the L2 flushed before every timed call; warm-up apart from
// measurement; repetitions until the 95% confidence interval of the mean is within a
// target of it or a time cap; median and spread reported. Not a correctness check: the
// caller checks outputs (timed_call returns a Status the timer passes on).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dragon/runtime/cuda_driver.h"
#include "dragon/support/expected.h"

namespace dragon::harness {

struct GpuTimerOptions {
  int warmup_calls = 3;
  int min_calls = 10;
  int max_calls = 1000;
  double max_seconds = 2.0;            // wall-clock cap on the measuring phase
  double target_relative_ci = 0.01;    // stop when the 95% CI half-width <= 1% of the mean
  bool flush_l2 = true;                // write a buffer of 2x the L2 before each timed call
  // Search's early exit (0: none): once `abandon_after_calls` calls are timed and their
  // median is above this, timing stops. A candidate far slower than the best so far needs
  // no precise time to be ranked below it.
  double abandon_above_ms = 0;
  int abandon_after_calls = 3;
};

struct GpuTiming {
  std::vector<double> samples_ms;  // one per timed call, in call order
  double median_ms = 0;
  double mean_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double stddev_ms = 0;
  double ci95_half_width_ms = 0;   // of the mean
  bool converged = false;          // the CI target was met before a cap
  std::string describe() const;    // "0.412 ms median (0.409..0.431, +-0.3%, 57 calls)"
};

// Times `timed_call(i)`: i counts timed calls from 0 (warm-up calls get -1, -2, ...), so
// the caller can rotate input sets. `after_call(i)`, when given, runs after each timed
// call's window has closed (outside the measurement): that is where the caller checks the
// call's output. A failure of either callback or of the driver stops timing and is
// returned. Each window is: L2 flush (outside), start event, the call, a device-wide
// synchronize, end event; the synchronize keeps work the call left on other streams inside.
using TimedCall = std::function<Status(int call_index)>;
Expected<GpuTiming> time_gpu(const TimedCall& timed_call, const GpuTimerOptions& options = {},
                                      const TimedCall& after_call = {});

// The timer's device resources (the L2 flush buffer, two events), made once and reused:
// a search worker times thousands of candidates, and allocating twice the L2 per
// candidate costs more than timing a small kernel. time_gpu makes one per call.
class GpuTimer {
 public:
  static Expected<std::unique_ptr<GpuTimer>> create(bool flush_l2 = true);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  // As time_gpu; options.flush_l2 needs a timer created with a flush buffer.
  Expected<GpuTiming> time(const TimedCall& timed_call, const GpuTimerOptions& options = {},
                                    const TimedCall& after_call = {});

 private:
  explicit GpuTimer(runtime::CudaDriver* driver) : driver_(driver) {}
  runtime::CudaDriver* driver_;
  void* start_ = nullptr;
  void* end_ = nullptr;
  runtime::DevicePtr flush_ = 0;
  size_t flush_bytes_ = 0;
};

// Summary statistics of samples (exposed for tests and for CPU-side timings). The 95%
// confidence interval of the mean uses Student's t for the sample count.
GpuTiming summarize_samples(std::vector<double> samples_ms);
// Whether `timing` meets the options' stopping rule (at least min_calls, CI within target).
bool timing_converged(const GpuTiming& timing, const GpuTimerOptions& options);
// Whether the timer stops after these samples (in call order) and `seconds` of measuring:
// converged, a cap reached (max_calls, max_seconds once min_calls are in), or abandoned
// (abandon_above_ms).
bool timing_should_stop(const std::vector<double>& samples_ms, double seconds, const GpuTimerOptions& options);

// The GPU's state for a results file: name, SM and memory clocks (current and max),
// temperature, driver version; read through NVML when present, otherwise "unknown".
struct GpuState {
  std::string name;
  int sm_clock_mhz = 0, max_sm_clock_mhz = 0, memory_clock_mhz = 0, temperature_c = 0;
  std::string driver_version;
  std::string describe() const;
};
GpuState read_gpu_state();

}  // namespace dragon::harness
