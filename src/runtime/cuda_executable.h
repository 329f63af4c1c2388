// A flat function compiled for CUDA (build.h): the CUBIN is loaded on the first run, so
// building needs no GPU; running needs one and says so when there is none.
#pragma once

#include <memory>
#include <mutex>

#include "dragon/runtime/build.h"
#include "dragon/runtime/cuda_function.h"

namespace dragon::runtime {

class CudaExecutable final : public Executable {
 public:
  CudaExecutable(ir::PrimFunc lowered, CudaBuild build);
  Status run(std::vector<tensor::HostTensor>& args) const override;

 private:
  // Loads the module and its kernels once.
  Status load() const;

  CudaBuild build_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<LoadedCudaFunction> loaded_;
  // The workspaces are allocated once per load, so runs from several threads take turns.
  mutable std::mutex run_mutex_;
};

}  // namespace dragon::runtime
