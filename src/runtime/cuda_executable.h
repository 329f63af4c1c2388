// A flat function compiled for CUDA (build.h): the CUBIN is loaded on the first run, so
// building needs no GPU; running needs one and says so when there is none.
#pragma once

#include <mutex>

#include "dragon/runtime/build.h"

namespace dragon::runtime {

class CudaExecutable final : public Executable {
 public:
  CudaExecutable(ir::PrimFunc lowered, CudaBuild build);
  ~CudaExecutable() override;
  Status run(std::vector<interp::HostTensor>& args) const override;

 private:
  // Loads the module and its kernels once.
  Status load() const;

  CudaBuild build_;
  mutable std::mutex mutex_;
  mutable void* module_ = nullptr;
  mutable std::vector<void*> functions_;
};

}  // namespace dragon::runtime
