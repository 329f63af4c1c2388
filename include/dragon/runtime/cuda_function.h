// A compiled CUDA function (compile.h's CudaBuild) loaded on the device and launched on
// device buffers the caller owns. What the timer, baselines and benchmarks use: launching
// copies nothing and does not synchronize, so a timed window holds only the kernels.
// Executable::run (build.h) is the host-tensor convenience built on it. Needs a GPU.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "dragon/runtime/compile.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::runtime {

class LoadedCudaFunction {
 public:
  // Loads the CUBIN, resolves every kernel (opting in to large dynamic shared memory where
  // a kernel needs it) and allocates the function's workspaces, once.
  static Expected<std::unique_ptr<LoadedCudaFunction>> load(CudaBuild build);
  ~LoadedCudaFunction();
  LoadedCudaFunction(const LoadedCudaFunction&) = delete;
  LoadedCudaFunction& operator=(const LoadedCudaFunction&) = delete;

  // Launches the kernels in order on the default stream; `params` holds one device pointer
  // per parameter of the function, in order. Returns once launched, not once finished.
  Status launch(std::span<const DevicePtr> params) const;

  const CudaBuild& build() const { return build_; }

 private:
  LoadedCudaFunction(CudaDriver* driver, CudaBuild build) : driver_(driver), build_(std::move(build)) {}

  CudaDriver* driver_;
  CudaBuild build_;
  void* module_ = nullptr;
  std::vector<void*> kernels_;
  std::vector<DevicePtr> workspaces_;
};

}  // namespace dragon::runtime
