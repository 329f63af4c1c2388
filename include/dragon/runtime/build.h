// The build driver used by the CLI, the harness and tests: a scheduled PrimFunc is
// lowered for a target (lower/lower.h), printed (codegen/), compiled (CPU: the system C++
// compiler; CUDA: NVRTC to a CUBIN, no GPU needed) and returned as an Executable that runs
// on host tensors. Not a timer and not a correctness checker: callers compare with the
// interpreter (interp/) or time elsewhere.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dragon/codegen/cuda_codegen.h"
#include "dragon/interp/host_tensor.h"
#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/cpu_module.h"
#include "dragon/runtime/expected.h"
#include "dragon/runtime/nvrtc_compiler.h"

namespace dragon::runtime {

struct BuildOptions {
  CpuCompileOptions cpu;
  NvrtcOptions nvrtc;             // arch defaults to the target's
  CompileCache* cache = nullptr;  // nullptr: CompileCache::global()
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs on `args`, one per parameter of the function in order, each shaped and typed like
  // it; outputs are written in place. CUDA copies every argument to the device (so output
  // elements the function does not write keep their values) and every non-input back.
  virtual Status run(std::vector<interp::HostTensor>& args) const = 0;

  const ir::PrimFunc& lowered() const { return lowered_; }
  const std::string& source() const { return source_; }
  // Whether the compiled code came from the on-disk cache.
  bool from_cache() const { return from_cache_; }

 protected:
  Executable(ir::PrimFunc lowered, std::string source, bool from_cache)
      : lowered_(std::move(lowered)), source_(std::move(source)), from_cache_(from_cache) {}
  Status check_arguments(const std::vector<interp::HostTensor>& args) const;

 private:
  ir::PrimFunc lowered_;
  std::string source_;
  bool from_cache_;
};

// lower + build_lowered. Lowering errors (a schedule the target cannot run) are UserErrors
// and propagate as exceptions; compiler and driver failures are returned.
Expected<std::unique_ptr<Executable>> build(const ir::PrimFunc& scheduled, const lower::Target& target,
                                            const BuildOptions& options = {});
// From the flat form of lower.h.
Expected<std::unique_ptr<Executable>> build_lowered(const ir::PrimFunc& flat, const lower::Target& target,
                                                    const BuildOptions& options = {});
// CPU only: several flat functions in one shared object (one compiler run); if the batch
// fails to compile, every entry carries that failure.
std::vector<Expected<std::unique_ptr<Executable>>> build_cpu_batch(const std::vector<ir::PrimFunc>& flats,
                                                                   const BuildOptions& options = {});

// A CUDA function compiled to a CUBIN (what a CUDA Executable runs).
struct CudaBuild {
  codegen::CudaSource source;
  Cubin cubin;
};
// CUDA only: flat function -> CUDA source -> CUBIN, on NVRTC threads; no GPU needed.
std::vector<Expected<CudaBuild>> compile_cuda_all(const std::vector<ir::PrimFunc>& flats, const lower::Target& target,
                                                  const BuildOptions& options = {});

}  // namespace dragon::runtime
