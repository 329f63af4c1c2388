// Executables for the CLI, the harness and tests: a function compiled for a target
// (compile.h) that runs on host tensors. Not a timer and not a correctness checker: callers
// compare with the interpreter (interp/) or time elsewhere.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/compile.h"
#include "dragon/support/expected.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::runtime {

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs on `args`, one per parameter of the function in order, each shaped and typed like
  // it; outputs are written in place. CUDA copies every argument to the device (so output
  // elements the function does not write keep their values) and every non-input back.
  virtual Status run(std::vector<tensor::HostTensor>& args) const = 0;

  const ir::PrimFunc& lowered() const { return lowered_; }
  const std::string& source() const { return source_; }
  // Whether the compiled code came from the on-disk cache.
  bool from_cache() const { return from_cache_; }

 protected:
  Executable(ir::PrimFunc lowered, std::string source, bool from_cache)
      : lowered_(std::move(lowered)), source_(std::move(source)), from_cache_(from_cache) {}
  Status check_arguments(const std::vector<tensor::HostTensor>& args) const;

 private:
  ir::PrimFunc lowered_;
  std::string source_;
  bool from_cache_;
};

// compile() wrapped in an Executable. Lowering errors (a schedule the target cannot run)
// are UserErrors and propagate as exceptions; compiler and driver failures are returned.
Expected<std::unique_ptr<Executable>> build(const ir::PrimFunc& scheduled, const lower::Target& target,
                                            const BuildOptions& options = {});
// From the flat form of lower.h.
Expected<std::unique_ptr<Executable>> build_lowered(const ir::PrimFunc& flat, const lower::Target& target,
                                                    const BuildOptions& options = {});
// CPU only: several flat functions in one shared object (one compiler run); if the batch
// fails to compile, every entry carries that failure.
std::vector<Expected<std::unique_ptr<Executable>>> build_cpu_batch(const std::vector<ir::PrimFunc>& flats,
                                                                   const BuildOptions& options = {});

}  // namespace dragon::runtime
