// CudaExecutable (cuda_executable.h): load, allocate, copy in, launch in order, copy out.
#include "cuda_executable.h"

#include "dragon/runtime/cuda_driver.h"

namespace dragon::runtime {
namespace {

constexpr int64_t kDefaultSharedLimit = 48 * 1024;  // above this a kernel must opt in

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

CudaExecutable::~CudaExecutable() {
  if (module_ != nullptr) {
    if (Expected<CudaDriver*> driver = CudaDriver::get()) driver.value()->unload_module(module_);
  }
}

Status CudaExecutable::load() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (module_ != nullptr) return {};
  Expected<CudaDriver*> driver = CudaDriver::get();
  if (!driver) return driver.error();
  Expected<void*> module = driver.value()->load_module(build_.cubin.bytes);
  if (!module) return module.error();
  std::vector<void*> functions;
  for (const codegen::KernelLaunch& k : build_.source.kernels) {
    Expected<void*> f = driver.value()->get_function(module.value(), k.name);
    if (!f) {
      driver.value()->unload_module(module.value());
      return f.error();
    }
    if (k.dynamic_shared_bytes > kDefaultSharedLimit) {
      if (Status s = driver.value()->set_max_dynamic_shared_bytes(f.value(), k.dynamic_shared_bytes); !s) {
        driver.value()->unload_module(module.value());
        return s;
      }
    }
    functions.push_back(f.value());
  }
  module_ = module.value();
  functions_ = std::move(functions);
  return {};
}

Status CudaExecutable::run(std::vector<interp::HostTensor>& args) const {
  if (Status s = check_arguments(args); !s) return s;
  if (Status s = load(); !s) return s;
  CudaDriver* driver = CudaDriver::get().value();
  DeviceBuffers params{driver, {}}, workspaces{driver, {}};
  for (interp::HostTensor& t : args) {
    Expected<DevicePtr> p = driver->allocate(static_cast<size_t>(t.size_bytes()));
    if (!p) return p.error();
    params.ptrs.push_back(p.value());
    if (Status s = driver->copy_to_device(p.value(), t.data(), static_cast<size_t>(t.size_bytes())); !s) return s;
  }
  for (const codegen::Workspace& w : build_.source.workspaces) {
    Expected<DevicePtr> p = driver->allocate(static_cast<size_t>(w.bytes));
    if (!p) return p.error();
    workspaces.ptrs.push_back(p.value());
  }
  for (size_t k = 0; k < build_.source.kernels.size(); ++k) {
    const codegen::KernelLaunch& launch = build_.source.kernels[k];
    std::vector<DevicePtr> values;
    for (const codegen::KernelArg& a : launch.args) {
      values.push_back(a.kind == codegen::KernelArg::Kind::kParam ? params.ptrs[a.index] : workspaces.ptrs[a.index]);
    }
    std::vector<void*> pointers;
    for (DevicePtr& v : values) pointers.push_back(&v);
    if (Status s = driver->launch(functions_[k], launch.grid, launch.block, launch.dynamic_shared_bytes,
                                  pointers.data());
        !s) {
      return s;
    }
  }
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
