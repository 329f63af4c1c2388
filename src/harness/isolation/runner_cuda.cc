// The runner's CUDA run job (runner_jobs.h): load the CUBIN, copy every argument's zone (the
// tensor and its red zone, red_zones.h) to a device allocation of its own, launch once,
// synchronise, copy every zone back (inputs too, so that a kernel that mutates its inputs
// is seen doing so, and guards, so that the parent sees writes past the ends), and only
// then succeed.
#include <vector>

#include "runner_cuda_kernel.h"

namespace dragon::harness::kernel_runner {

Reply run_cuda_job(const Job& job, unsigned char* region) {
  Expected<JobKernel> kernel = JobKernel::load(job);
  if (!kernel) return cuda_failure_reply(job, kernel.error());
  runtime::CudaDriver* driver = kernel.value().driver();
  std::vector<DeviceZone> zones;
  std::vector<runtime::DevicePtr> pointers;
  for (size_t i = 0; i < job.arguments.size(); ++i) {
    const ArgumentSlice& a = job.arguments[i];
    const ArgumentSlice zone = job.zones.empty() ? a : job.zones[i];
    Expected<DeviceZone> z = DeviceZone::allocate(driver, zone.bytes, job.red_zones);
    if (!z) return cuda_failure_reply(job, z.error());
    if (zone.bytes > 0) {
      if (Status s = driver->copy_to_device(z.value().zone(), region + zone.offset, zone.bytes); !s) {
        return cuda_failure_reply(job, s.error());
      }
    }
    pointers.push_back(z.value().zone() + (a.offset - zone.offset));
    zones.push_back(std::move(z.value()));
  }
  if (Status s = kernel.value().launch(pointers); !s) return cuda_failure_reply(job, s.error());
  if (Status s = driver->synchronize(); !s) return cuda_failure_reply(job, s.error());
  for (size_t i = 0; i < job.arguments.size(); ++i) {
    const ArgumentSlice zone = job.zones.empty() ? job.arguments[i] : job.zones[i];
    if (zone.bytes == 0) continue;
    if (Status s = driver->copy_to_host(region + zone.offset, zones[i].zone(), zone.bytes); !s) {
      return cuda_failure_reply(job, s.error());
    }
  }
  return success_reply(job);
}

}  // namespace dragon::harness::kernel_runner
