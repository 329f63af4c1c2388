// The one path from a scheduled function to what a target runs: lowered (lower/lower.h),
// printed (codegen/) and compiled, by NVRTC to a CUBIN (no GPU needed) or by the system C++
// compiler to a loaded shared object, through the compile cache. Runs nothing: build.h and
// cuda_function.h do.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "dragon/codegen/cpu_codegen.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/cpu_module.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/support/expected.h"

namespace dragon::runtime {

struct BuildOptions {
  CpuCompileOptions cpu;
  NvrtcOptions nvrtc;             // arch defaults to the target's
  CompileCache* cache = nullptr;  // nullptr: CompileCache::global()
  // CUDA: how many NVRTC programs compile at once (nvrtc_compile_all's pool, at most 8).
  int nvrtc_threads = 8;

  // `cache`, or the global cache when none was given.
  CompileCache& compile_cache() const;
};

// One function lowered for a target and printed, not compiled.
struct Generated {
  ir::PrimFunc lowered;  // the flat form (lower.h): the entry takes its parameters in order
  std::variant<codegen::CpuSource, codegen::CudaSource> source;
  const std::string& code() const;
};

// A CUDA function compiled to a CUBIN (what LoadedCudaFunction and a CUDA Executable run).
struct CudaBuild {
  codegen::CudaSource source;
  Cubin cubin;
};

// A CPU function compiled into a shared object, loaded, with its entry.
struct CpuBuild {
  codegen::CpuSource source;
  std::shared_ptr<CpuModule> module;  // keeps the shared object loaded
  CpuEntry entry = nullptr;
};

// One function compiled for one target.
struct Compiled {
  ir::PrimFunc lowered;  // as in Generated
  std::variant<CpuBuild, CudaBuild> build;

  const std::string& source() const;  // the generated C++ or CUDA C++
  bool from_cache() const;            // whether the compiler's output came from the cache
  // The build for the target it was compiled for; asking for the other one is our bug
  // (InternalError).
  CudaBuild& cuda();
  const CudaBuild& cuda() const;
  const CpuBuild& cpu() const;
};

// Lowers `scheduled` for `target` and prints it. Lowering and printing errors (a schedule
// the target cannot run) are UserErrors and propagate as exceptions.
Generated generate(const ir::PrimFunc& scheduled, const lower::Target& target);

// generate(), then the compiler: NVRTC for CUDA, the system C++ compiler for the CPU.
// Lowering errors propagate as generate()'s; compiler failures are returned. One function,
// one compiler run on the calling thread: for many functions at once, compile_cuda_all or
// compile_cuda_batch take their lowered forms.
Expected<Compiled> compile(const ir::PrimFunc& scheduled, const lower::Target& target,
                           const BuildOptions& options = {});

// CUDA only: flat functions -> CUDA source -> CUBINs, on NVRTC threads; no GPU needed.
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
