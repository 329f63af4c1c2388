// JobKernel, DeviceBuffers and cuda_failure_reply (runner_cuda_kernel.h).
#include "runner_cuda_kernel.h"

#include <string_view>

namespace dragon::harness::kernel_runner {
namespace {

constexpr int64_t kDefaultSharedLimit = 48 * 1024;  // above this a kernel must opt in

}  // namespace

bool is_device_fault(const RuntimeFailure& failure) {
  for (std::string_view name :
       {"CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_ASSERT", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_LAUNCH_TIMEOUT"}) {
    if (failure.message.find(name) != std::string::npos) return true;
  }
  return false;
}

Expected<JobKernel> JobKernel::load(const Job& job) {
  Expected<runtime::CudaDriver*> got = runtime::CudaDriver::get();
  if (!got) return got.error();
  runtime::CudaDriver* driver = got.value();
  Expected<void*> module = driver->load_module(job.cubin);
  if (!module) return module.error();
  Expected<void*> function = driver->get_function(module.value(), job.entry);
  if (!function) {
    RuntimeFailure failure = function.error();
    failure.message += " (no kernel " + job.entry + ": the entry must be extern \"C\" __global__)";
    return failure;
  }
  if (job.dynamic_shared_bytes > kDefaultSharedLimit) {
    if (Status s = driver->set_max_dynamic_shared_bytes(function.value(), job.dynamic_shared_bytes); !s) {
      return s.error();
    }
  }
  return JobKernel(job, driver, function.value());
}

Status JobKernel::launch(std::vector<runtime::DevicePtr>& pointers) const {
  std::vector<void*> params;
  params.reserve(pointers.size());
  for (runtime::DevicePtr& p : pointers) params.push_back(&p);
  return driver_->launch(function_, job_->grid, job_->block, job_->dynamic_shared_bytes, params.data());
}

Expected<runtime::DevicePtr> DeviceBuffers::add(uint64_t bytes) {
  Expected<runtime::DevicePtr> p = driver->allocate(bytes > 0 ? bytes : 1);
  if (p) ptrs.push_back(p.value());
  return p;
}

Reply cuda_failure_reply(const Job& job, const RuntimeFailure& failure) {
  return failure_reply(job, failure, is_device_fault(failure) ? ReplyStatus::kFaulted : ReplyStatus::kFailed);
}

}  // namespace dragon::harness::kernel_runner
