// LoadedCudaFunction (cuda_function.h).
#include "dragon/runtime/cuda_function.h"

namespace dragon::runtime {
namespace {

constexpr int64_t kDefaultSharedLimit = 48 * 1024;  // above this a kernel must opt in

}  // namespace

Expected<std::unique_ptr<LoadedCudaFunction>> LoadedCudaFunction::load(CudaBuild build) {
  Expected<CudaDriver*> driver = CudaDriver::get();
  if (!driver) return driver.error();
  std::unique_ptr<LoadedCudaFunction> loaded(new LoadedCudaFunction(driver.value(), std::move(build)));
  // From here the destructor releases whatever was acquired, however loading ends.
  Expected<void*> module = loaded->driver_->load_module(loaded->build_.cubin.bytes);
  if (!module) return module.error();
  loaded->module_ = module.value();
  for (const codegen::KernelLaunch& k : loaded->build_.source.kernels) {
    Expected<void*> f = loaded->driver_->get_function(loaded->module_, k.name);
    if (!f) return f.error();
    if (k.dynamic_shared_bytes > kDefaultSharedLimit) {
      if (Status s = loaded->driver_->set_max_dynamic_shared_bytes(f.value(), k.dynamic_shared_bytes); !s) {
        return s.error();
      }
    }
    loaded->kernels_.push_back(f.value());
  }
  for (const codegen::Workspace& w : loaded->build_.source.workspaces) {
    Expected<DevicePtr> p = loaded->driver_->allocate(static_cast<size_t>(w.bytes));
    if (!p) return p.error();
    loaded->workspaces_.push_back(p.value());
  }
  return loaded;
}

LoadedCudaFunction::~LoadedCudaFunction() {
  for (DevicePtr p : workspaces_) driver_->release(p);
  if (module_ != nullptr) driver_->unload_module(module_);
}

Status LoadedCudaFunction::launch(std::span<const DevicePtr> params) const {
  for (size_t k = 0; k < build_.source.kernels.size(); ++k) {
    const codegen::KernelLaunch& launch = build_.source.kernels[k];
    std::vector<DevicePtr> values;
    values.reserve(launch.args.size());
    for (const codegen::KernelArg& a : launch.args) {
      if (a.kind == codegen::KernelArg::Kind::kParam) {
        if (static_cast<size_t>(a.index) >= params.size()) {
          return DRAGON_RUNTIME_FAILURE("launch", "kernel " + launch.name + " reads parameter " +
                                                      std::to_string(a.index) + " but only " +
                                                      std::to_string(params.size()) + " were given",
                                        "");
        }
        values.push_back(params[a.index]);
      } else {
        values.push_back(workspaces_[a.index]);
      }
    }
    std::vector<void*> pointers;
    pointers.reserve(values.size());
    for (DevicePtr& v : values) pointers.push_back(&v);
    if (Status s = driver_->launch(kernels_[k], launch.grid, launch.block, launch.dynamic_shared_bytes,
                                   pointers.data());
        !s) {
      return s;
    }
  }
  return {};
}

}  // namespace dragon::runtime
