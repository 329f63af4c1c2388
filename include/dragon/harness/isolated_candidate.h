// A Candidate (candidate.h) whose kernel runs in a child process, dragon-kernel-runner,
// started afresh for every run: it sees the current run's argument tensors through a
// shared memory region and nothing else of ours (no reference outputs, no seeds, no
// environment beyond what its driver needs). A crash, a hang, an error of its own or an
// exit without the success handshake becomes the run's outcome; the caller goes on.
//
// Where the runner is: IsolationOptions::runner_path, else $DRAGON_KERNEL_RUNNER, else
// dragon-kernel-runner next to the running executable (the build puts it beside dragon).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "dragon/harness/candidate.h"
#include "dragon/harness/isolated_kernel.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/cpu_module.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/support/expected.h"

namespace dragon::harness {

// Whether CPU kernels run in namespaces of their own (user, PID and mount, with a fresh
// /proc), where they see no other process: no command line, environment or open file of
// the harness or of whatever started it. CUDA kernels need none: their code runs on the
// GPU, which reaches no file and no other process.
enum class RunnerNamespaces {
  kOff,             // never (the harness's own memory stays hidden: hide_parent_memory)
  kWhereAvailable,  // when this machine allows them (most do; containers often do not)
  kRequired,        // always: a run on a machine without them is the harness's failure
};
// The default of IsolationOptions::namespaces: kWhereAvailable, unless the environment
// variable DRAGON_RUNNER_NAMESPACES says off, auto or required (read once).
RunnerNamespaces default_runner_namespaces();

struct IsolationOptions {
  // One run, from fork to exit (CUDA: context creation included); past it the child's
  // whole process group is killed and the run is kTimedOut.
  std::chrono::milliseconds timeout{10000};
  // Compiling a CPU kernel (itself in a child: the result is loaded there to check its entry).
  std::chrono::milliseconds compile_timeout{120000};
  size_t output_limit = 4096;  // bytes of the child's stdout + stderr attached to a reason (the last ones)
  std::string runner_path;     // empty: find_kernel_runner()
  // Make this process non-dumpable before starting a runner, which drops its capabilities:
  // together they keep a kernel from reading our memory (the reference's outputs, the
  // seeds) through /proc/PID/mem or ptrace. Costs this process its core dumps and
  // unprivileged debugger attach; turn off only to debug the harness itself.
  bool hide_parent_memory = true;
  RunnerNamespaces namespaces = default_runner_namespaces();
  // Red zones around every argument (red_zones.h), guards and page ends by turns from run
  // to run; a write into one is the run's kWroteOutOfBounds. Off only to show what they
  // catch.
  bool red_zones = true;
  runtime::CpuCompileOptions cpu;
  runtime::NvrtcOptions nvrtc;
  runtime::CompileCache* cache = nullptr;  // nullptr: CompileCache::global()
};

// Where dragon-kernel-runner is (see above); a failure says where it looked.
Expected<std::string> find_kernel_runner(const IsolationOptions& options);

// Whether runs of `language` kernels under `options` start in namespaces of their own on
// this machine (probed once per process), and the isolation they get, in words: "own
// user, PID and mount namespaces with a fresh /proc" or why not ("no namespaces on this
// machine (mounting a fresh /proc: Operation not permitted); ...").
bool uses_runner_namespaces(const IsolationOptions& options, KernelLanguage language);
std::string describe_runner_isolation(const IsolationOptions& options, KernelLanguage language);

// A kernel ready to run in a child: the CPU shared object in the compile cache, or the CUBIN.
struct CompiledKernel {
  KernelLanguage language = KernelLanguage::kCpu;
  std::string entry;
  std::string module_path;  // CPU
  std::string cubin;        // CUDA
  std::string log;          // the compiler's warnings, if any
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t dynamic_shared_bytes = 0;
};

// Compiles without running: CPU in a runner child (the parent never loads untrusted code),
// CUDA with NVRTC in this process (no GPU needed). A compile error returns the log.
Expected<CompiledKernel> compile_isolated_kernel(const IsolatedKernel& kernel,
                                                          const IsolationOptions& options);

// Compiles on the first run (a compile failure is then every run's kFailed outcome, with
// the compiler's log) and runs each call in a new child. Candidate::run throws only for
// the harness's own failures (no runner, no memory for the region).
std::unique_ptr<Candidate> make_isolated_candidate(IsolatedKernel kernel, IsolationOptions options = {});

}  // namespace dragon::harness
