// CudaExecutable (cuda_executable.h): load once, then per run allocate, copy in, launch,
// synchronize, copy out.
#include "cuda_executable.h"

namespace dragon::runtime {
namespace {

// Device buffers freed when the run ends, however it ends.
struct DeviceBuffers {
  CudaDriver* driver;
  std::vector<DevicePtr> ptrs;
  ~DeviceBuffers() {
    for (DevicePtr p : ptrs) driver->release(p);
  }
};

}  // namespace

CudaExecutable::CudaExecutable(ir::PrimFunc lowered, CudaBuild build)
    : Executable(std::move(lowered), build.source.code, build.cubin.from_cache), build_(std::move(build)) {}

Status CudaExecutable::load() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (loaded_ != nullptr) return {};
  Expected<std::unique_ptr<LoadedCudaFunction>> loaded = LoadedCudaFunction::load(build_);
  if (!loaded) return loaded.error();
  loaded_ = std::move(loaded.value());
  return {};
}

Status CudaExecutable::run(std::vector<tensor::HostTensor>& args) const {
  if (Status s = check_arguments(args); !s) return s;
  if (Status s = load(); !s) return s;
  std::lock_guard<std::mutex> lock(run_mutex_);
  CudaDriver* driver = CudaDriver::get().value();
  DeviceBuffers params{driver, {}};
  for (tensor::HostTensor& t : args) {
    Expected<DevicePtr> p = driver->allocate(static_cast<size_t>(t.size_bytes()));
    if (!p) return p.error();
    params.ptrs.push_back(p.value());
    if (Status s = driver->copy_to_device(p.value(), t.data(), static_cast<size_t>(t.size_bytes())); !s) return s;
  }
  if (Status s = loaded_->launch(params.ptrs); !s) return s;
  if (Status s = driver->synchronize(); !s) return s;
  const auto& func_params = lowered()->params;
  for (size_t i = 0; i < args.size(); ++i) {
    if (func_params[i].role == ir::ParamRole::kInput) continue;
    if (Status s = driver->copy_to_host(args[i].data(), params.ptrs[i], static_cast<size_t>(args[i].size_bytes())); !s) {
      return s;
    }
  }
  return {};
}

}  // namespace dragon::runtime
