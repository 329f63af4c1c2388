// GpuTimer and time_gpu (gpu_timer.h): the measuring loop on the CUDA driver.
#include <algorithm>
#include <chrono>

#include "dragon/harness/gpu_timer.h"

namespace dragon::harness {

using runtime::CudaDriver;
using runtime::DevicePtr;

Expected<std::unique_ptr<GpuTimer>> GpuTimer::create(bool flush_l2) {
  Expected<CudaDriver*> driver = CudaDriver::get();
  if (!driver) return driver.error();
  std::unique_ptr<GpuTimer> timer(new GpuTimer(driver.value()));
  if (flush_l2) {
    Expected<CudaDriver::Properties> props = timer->driver_->properties();
    if (!props) return props.error();
    // Writing twice the L2's size evicts every line the previous call left behind, so each
    // call reads its inputs from HBM as a cold first call would.
    timer->flush_bytes_ = static_cast<size_t>(2 * std::max<int64_t>(props.value().l2_bytes, 1 << 20));
    Expected<DevicePtr> flush = timer->driver_->allocate(timer->flush_bytes_);
    if (!flush) return flush.error();
    timer->flush_ = flush.value();
  }
  for (void** event : {&timer->start_, &timer->end_}) {
    Expected<void*> e = timer->driver_->create_event();
    if (!e) return e.error();
    *event = e.value();
  }
  return timer;
}

GpuTimer::~GpuTimer() {
  driver_->destroy_event(start_);
  driver_->destroy_event(end_);
  driver_->release(flush_);
}

Expected<GpuTiming> GpuTimer::time(const TimedCall& timed_call, const GpuTimerOptions& options,
                                   const TimedCall& after_call) {
  if (options.flush_l2 && flush_ == 0) {
    return DRAGON_RUNTIME_FAILURE("GpuTimer", "flushing the L2 needs a timer created with its flush buffer", "");
  }
  for (int i = 0; i < options.warmup_calls; ++i) {
    if (Status s = timed_call(-1 - i); !s) return s.error();
  }
  if (Status s = driver_->synchronize(); !s) return s.error();

  std::vector<double> samples;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    if (options.flush_l2) {
      if (Status s = driver_->fill_bytes(flush_, static_cast<unsigned char>(i), flush_bytes_); !s) return s.error();
    }
    if (Status s = driver_->record_event(start_); !s) return s.error();
    if (Status s = timed_call(i); !s) return s.error();
    if (Status s = driver_->synchronize(); !s) return s.error();
    if (Status s = driver_->record_event(end_); !s) return s.error();
    if (Status s = driver_->wait_event(end_); !s) return s.error();
    Expected<float> ms = driver_->elapsed_ms(start_, end_);
    if (!ms) return ms.error();
    samples.push_back(ms.value());
    if (after_call) {
      if (Status s = after_call(i); !s) return s.error();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (timing_should_stop(samples, seconds, options)) break;
  }
  GpuTiming timing = summarize_samples(std::move(samples));
  timing.converged = timing_converged(timing, options);
  return timing;
}

Expected<GpuTiming> time_gpu(const TimedCall& timed_call, const GpuTimerOptions& options, const TimedCall& after_call) {
  Expected<std::unique_ptr<GpuTimer>> timer = GpuTimer::create(options.flush_l2);
  if (!timer) return timer.error();
  return timer.value()->time(timed_call, options, after_call);
}

}  // namespace dragon::harness
