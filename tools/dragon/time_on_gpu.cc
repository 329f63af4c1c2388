// `dragon run --target cuda --time` (time_on_gpu.h): compile, load, copy the inputs once,
// then the harness's timer.
#include "time_on_gpu.h"

#include "dragon/runtime/compile.h"
#include "dragon/runtime/cuda_function.h"
#include "dragon/support/error.h"

namespace dragon::cli {
namespace {

// Device copies of the arguments, freed however timing ends.
struct DeviceCopies {
  runtime::CudaDriver* driver;
  std::vector<runtime::DevicePtr> ptrs;
  ~DeviceCopies() {
    for (runtime::DevicePtr p : ptrs) driver->release(p);
  }
};

template <typename T>
T value_or_throw(Expected<T> e, const char* what) {
  if (!e.ok()) throw UserError(std::string("--time: ") + what + ": " + e.error().describe());
  return std::move(e.value());
}

}  // namespace

harness::GpuTiming time_on_gpu(const ir::PrimFunc& scheduled, const lower::Target& target,
                               const std::vector<tensor::HostTensor>& args) {
  runtime::CudaDriver* driver = value_or_throw(runtime::CudaDriver::get(), "no CUDA device");
  runtime::Compiled compiled = value_or_throw(runtime::compile(scheduled, target), "NVRTC");
  auto kernels = value_or_throw(runtime::LoadedCudaFunction::load(std::move(compiled.cuda())), "loading the kernels");
  DeviceCopies copies{driver, {}};
  for (const tensor::HostTensor& t : args) {
    copies.ptrs.push_back(value_or_throw(driver->allocate(static_cast<size_t>(t.size_bytes())), "allocating"));
    Status s = driver->copy_to_device(copies.ptrs.back(), t.data(), static_cast<size_t>(t.size_bytes()));
    if (!s.ok()) throw UserError("--time: copying inputs: " + s.error().describe());
  }
  return value_or_throw(harness::time_gpu([&](int) { return kernels->launch(copies.ptrs); }), "timing");
}

}  // namespace dragon::cli
