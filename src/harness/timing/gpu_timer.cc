// time_gpu (gpu_timer.h): the measuring loop on the CUDA driver.
#include <chrono>

#include "dragon/harness/gpu_timer.h"

namespace dragon::harness {
namespace {

using runtime::CudaDriver;
using runtime::DevicePtr;

// Events and the flush buffer, released however timing ends.
struct TimerResources {
  CudaDriver* driver;
  void* start = nullptr;
  void* end = nullptr;
  DevicePtr flush = 0;
  size_t flush_bytes = 0;
  ~TimerResources() {
    driver->destroy_event(start);
    driver->destroy_event(end);
    driver->release(flush);
  }
};

}  // namespace

Expected<GpuTiming> time_gpu(const TimedCall& timed_call, const GpuTimerOptions& options, const TimedCall& after_call) {
  Expected<CudaDriver*> driver_or = CudaDriver::get();
  if (!driver_or) return driver_or.error();
  CudaDriver* driver = driver_or.value();
  TimerResources r{driver};
  if (options.flush_l2) {
    Expected<CudaDriver::Properties> props = driver->properties();
    if (!props) return props.error();
    // Writing twice the L2's size evicts every line the previous call left behind, so each
    // call reads its inputs from HBM as a cold first call would.
    r.flush_bytes = static_cast<size_t>(2 * std::max<int64_t>(props.value().l2_bytes, 1 << 20));
    Expected<DevicePtr> flush = driver->allocate(r.flush_bytes);
    if (!flush) return flush.error();
    r.flush = flush.value();
  }
  for (void** event : {&r.start, &r.end}) {
    Expected<void*> e = driver->create_event();
    if (!e) return e.error();
    *event = e.value();
  }

  for (int i = 0; i < options.warmup_calls; ++i) {
    if (Status s = timed_call(-1 - i); !s) return s.error();
  }
  if (Status s = driver->synchronize(); !s) return s.error();

  std::vector<double> samples;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < options.max_calls; ++i) {
    if (options.flush_l2) {
      if (Status s = driver->fill_bytes(r.flush, static_cast<unsigned char>(i), r.flush_bytes); !s) return s.error();
    }
    if (Status s = driver->record_event(r.start); !s) return s.error();
    if (Status s = timed_call(i); !s) return s.error();
    if (Status s = driver->synchronize(); !s) return s.error();
    if (Status s = driver->record_event(r.end); !s) return s.error();
    if (Status s = driver->wait_event(r.end); !s) return s.error();
    Expected<float> ms = driver->elapsed_ms(r.start, r.end);
    if (!ms) return ms.error();
    samples.push_back(ms.value());
    if (after_call) {
      if (Status s = after_call(i); !s) return s.error();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (static_cast<int>(samples.size()) >= options.min_calls) {
      if (timing_converged(summarize_samples(samples), options) || seconds >= options.max_seconds) break;
    }
  }
  GpuTiming timing = summarize_samples(std::move(samples));
  timing.converged = timing_converged(timing, options);
  return timing;
}

}  // namespace dragon::harness
