// The one path from a scheduled function to what a target runs: lowered (lower/lower.h),
// printed (codegen/) and compiled, by NVRTC to a CUBIN (no GPU needed) or by the system C++
// compiler to a loaded shared object, through the compile cache. Runs nothing: build.h and
// cuda_function.h do.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  // The hash a tuning record files this CUDA code under (db::Record::kernel_hash): two
  // schedules that print the same kernel for `arch` share it.
  std::string cuda_kernel_hash(std::string_view arch) const;
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
// and then every member's kernels, each distinct kernel once: a member whose kernel is
// another's but for its name launches the other's entry. A member's result holds its own
// source (its code alone, under the batch's entry names, its launches naming the entries
// it runs) and the CUBIN of the whole program, which also holds the other members'
// kernels. A batch NVRTC rejects is compiled again member by member, so a bad function
// fails alone, with its own log, and the others still build. A batch of one
// is exactly compile_cuda_all's compile. Results in input order.
std::vector<Expected<CudaBuild>> compile_cuda_batch(const std::vector<ir::PrimFunc>& flats,
                                                    const lower::Target& target, const BuildOptions& options = {},
                                                    int functions_per_program = 4);

// compile_cuda_batch's programs, for a caller that runs NVRTC itself (bench::NvrtcChildren
// compiles them in persistent children): flats cut into the consecutive `ranges` given,
// each range one program. Programs are printed when first asked for, so a caller can send
// the first out while it prints the next; printing a program may add programs (members
// whose prelude does not fit theirs, alone), and so may a failed program of several
// members (each member alone). Every flat's build is handed out exactly once, by finish().
class CudaProgramBatch {
 public:
  struct Range {
    size_t begin = 0, end = 0;  // flats[begin, end)
    bool operator==(const Range&) const = default;
  };
  // share_kernels false: every member's kernels printed, none launched under another's
  // entry (to measure what sharing saves).
  CudaProgramBatch(std::vector<ir::PrimFunc> flats, lower::Target target, const std::vector<Range>& ranges,
                   bool share_kernels = true);

  // How many programs there are so far; grows as programs are printed and finished.
  size_t size() const { return programs_.size(); }
  // Program `program`'s CUDA source, printed on the first call. Throws what code
  // generation throws; the program then stays unprinted, to be finished with a failure.
  const std::string& code(size_t program);
  // Program `program`'s result: NVRTC's (or why it was not compiled: a failure may finish
  // a program never printed). Its members' builds (index in flats, build), or nothing when
  // a failed program of several members was split into programs of one.
  std::vector<std::pair<size_t, Expected<CudaBuild>>> finish(size_t program, Expected<Cubin> cubin);
  // Over the programs printed so far: the kernel definitions their code holds, and the
  // kernels their members launch (more where members share kernels).
  size_t kernels_defined() const { return kernels_defined_; }
  size_t kernels_launched() const { return kernels_launched_; }

 private:
  struct Program {
    std::vector<size_t> members;
    std::optional<std::string> code;
    // Per member (index in flats) whose kernels another member's definitions serve: the
    // entry of each of its kernels, empty where the kernel is its own.
    std::map<size_t, std::vector<std::string>> launch_names;
  };
  // Flat i's source, printed on first use: as member "b<p>_<name>" when its range has
  // several functions (p its place there), under its own name otherwise.
  const codegen::CudaSource& source(size_t i);

  std::vector<ir::PrimFunc> flats_;
  lower::Target target_;
  std::vector<std::optional<codegen::CudaSource>> sources_;  // per flat, once printed
  std::vector<std::optional<size_t>> batch_position_;        // per flat
  std::vector<bool> handed_out_;                             // per flat
  std::vector<Program> programs_;
  bool share_kernels_ = true;
  size_t kernels_defined_ = 0, kernels_launched_ = 0;
};

}  // namespace dragon::runtime
