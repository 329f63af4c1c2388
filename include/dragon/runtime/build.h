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
#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/cpu_module.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/support/expected.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::runtime {

struct BuildOptions {
  CpuCompileOptions cpu;
  NvrtcOptions nvrtc;             // arch defaults to the target's
  CompileCache* cache = nullptr;  // nullptr: CompileCache::global()
  // CUDA: how many NVRTC programs compile at once (nvrtc_compile_all's pool, at most 8).
  int nvrtc_threads = 8;
};

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
// CUDA only, like compile_cuda_all but with up to `functions_per_program` functions (in input
// order) in one NVRTC program: NVRTC's fixed cost per program (starting up, parsing the
// fp16/bf16 headers) is paid once per batch. In a batch of two or more, member p is
// generated as if named "b<p>_<name>", so its kernels ("b<p>_<name>_kernel<k>") are unique
// in the program; the program is one prelude (the longest of the members', cuda_codegen.h)
// and then every member's kernels. A member's result holds its own source (its code alone,
// under the batch's entry names) and the CUBIN of the whole program, which also holds the
// other members' kernels. A batch NVRTC rejects is compiled again member by member, so a
// bad function fails alone, with its own log, and the others still build. A batch of one
// is exactly compile_cuda_all's compile. Results in input order.
std::vector<Expected<CudaBuild>> compile_cuda_batch(const std::vector<ir::PrimFunc>& flats,
                                                    const lower::Target& target, const BuildOptions& options = {},
                                                    int functions_per_program = 4);

}  // namespace dragon::runtime
