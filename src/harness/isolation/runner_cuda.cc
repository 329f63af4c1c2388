// The runner's CUDA run job (runner_jobs.h): load the CUBIN, copy every tensor to the
// device, launch once, synchronise, copy every tensor back (inputs too, so that a kernel
// that mutates its inputs is seen doing so), and only then succeed.
#include <vector>

#include "runner_cuda_kernel.h"

namespace dragon::harness::kernel_runner {

Reply run_cuda_job(const Job& job, unsigned char* region) {
  Expected<JobKernel> kernel = JobKernel::load(job);
  if (!kernel) return cuda_failure_reply(job, kernel.error());
  runtime::CudaDriver* driver = kernel.value().driver();
  DeviceBuffers buffers(driver);
  for (const ArgumentSlice& a : job.arguments) {
    Expected<runtime::DevicePtr> p = buffers.add(a.bytes);
    if (!p) return cuda_failure_reply(job, p.error());
    if (Status s = driver->copy_to_device(p.value(), region + a.offset, a.bytes); !s) {
      return cuda_failure_reply(job, s.error());
    }
  }
  std::vector<runtime::DevicePtr> pointers = buffers.ptrs;
  if (Status s = kernel.value().launch(pointers); !s) return cuda_failure_reply(job, s.error());
  if (Status s = driver->synchronize(); !s) return cuda_failure_reply(job, s.error());
  for (size_t i = 0; i < job.arguments.size(); ++i) {
    const ArgumentSlice& a = job.arguments[i];
    if (Status s = driver->copy_to_host(region + a.offset, buffers.ptrs[i], a.bytes); !s) {
      return cuda_failure_reply(job, s.error());
    }
  }
  return success_reply(job);
}

}  // namespace dragon::harness::kernel_runner
