// What the runner's two CUDA jobs share: the job's kernel loaded from its CUBIN (opted in
// to its dynamic shared memory), launched on a list of device pointers; device buffers
// freed however a job ends; and the reply for a driver failure, which tells the kernel's
// device faults from failures to start it.
#pragma once

#include <string>
#include <vector>

#include "dragon/harness/red_zones.h"
#include "dragon/runtime/cuda_driver.h"
#include "runner_jobs.h"

namespace dragon::harness::kernel_runner {

// What launches a kernel on a list of device pointers: a kernel file's entry (JobKernel)
// or, in this process, one of our own compiled CUDA functions (own_kernels.h).
class KernelLauncher {
 public:
  virtual ~KernelLauncher() = default;
  virtual runtime::CudaDriver* driver() const = 0;
  // One launch on the default stream; `pointers` holds one device pointer per parameter.
  virtual Status launch(std::vector<runtime::DevicePtr>& pointers) const = 0;
};

class JobKernel final : public KernelLauncher {
 public:
  // Loads `job.cubin` and finds `job.entry` (a failure says the entry must be extern "C").
  static Expected<JobKernel> load(const Job& job);
  runtime::CudaDriver* driver() const override { return driver_; }
  // One launch of the job's grid, block and dynamic shared memory on the default stream;
  // `pointers` holds one device pointer per parameter and must outlive the call.
  Status launch(std::vector<runtime::DevicePtr>& pointers) const override;

 private:
  JobKernel(const Job& job, runtime::CudaDriver* driver, void* function)
      : job_(&job), driver_(driver), function_(function) {}
  const Job* job_;
  runtime::CudaDriver* driver_;
  void* function_;
};

// Device allocations released when the job ends, whichever way.
struct DeviceBuffers {
  runtime::CudaDriver* driver;
  std::vector<runtime::DevicePtr> ptrs;
  DeviceBuffers(runtime::CudaDriver* d) : driver(d) {}  // NOLINT(google-explicit-constructor)
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers() {
    for (runtime::DevicePtr p : ptrs) driver->release(p);
  }
  // A new buffer of `bytes` (at least one byte: empty tensors still get a distinct pointer).
  Expected<runtime::DevicePtr> add(uint64_t bytes);
};

// A timing job (JobKind::kTimeCuda) carried out with `launcher` on the job's region: the
// rotation, the patches, the red zones of the buffer groups and every call's outputs
// recorded into its slot (runner_cuda_timing.cc). The runner wraps it in a reply; our own
// kernels' timing (own_kernels.h) calls it in the harness's process.
struct TimingJobResult {
  std::vector<double> samples_ms;   // one per timed call, in call order
  std::string red_zone_violations;  // "" when every group's guard bytes are intact
};
Expected<TimingJobResult> run_timing_job(const Job& job, unsigned char* region,
                                                  const KernelLauncher& launcher);

// Whether a driver failure is the kernel's fault at run time (an illegal address, a trap,
// a misaligned access), which leaves the context unusable.
bool is_device_fault(const RuntimeFailure& failure);

// kFaulted for errors that are the kernel's fault at run time (an illegal address, a trap),
// which leave the context unusable; kFailed for the rest.
Reply cuda_failure_reply(const Job& job, const RuntimeFailure& failure);

}  // namespace dragon::harness::kernel_runner
