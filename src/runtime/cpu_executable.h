// A flat function compiled for the CPU: its entry in a loaded shared object (build.h).
#pragma once

#include "dragon/runtime/build.h"

namespace dragon::runtime {

class CpuExecutable final : public Executable {
 public:
  CpuExecutable(ir::PrimFunc lowered, std::string source, std::shared_ptr<CpuModule> module, CpuEntry entry)
      : Executable(std::move(lowered), std::move(source), module->from_cache()),
        module_(std::move(module)),
        entry_(entry) {}

  Status run(std::vector<tensor::HostTensor>& args) const override {
    if (Status s = check_arguments(args); !s) return s;
    std::vector<void*> pointers;
    for (tensor::HostTensor& t : args) pointers.push_back(t.data());
    entry_(pointers.data());
    return {};
  }

 private:
  std::shared_ptr<CpuModule> module_;  // keeps the shared object loaded
  CpuEntry entry_;
};

}  // namespace dragon::runtime
