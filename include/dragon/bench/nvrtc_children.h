// NVRTC in persistent forked children, for GPU tuning's candidates. Forked once (a fork of
// a large process and NVRTC's start in the child cost about 70 ms, more than a small
// candidate's compile: bench_nvrtc_throughput's "forked per wave" row), they compile one
// program at a time for as long as the pool lives. A program's source travels to a child
// and its CUBIN back; the parent prints the programs (runtime::CudaProgramBatch) while the
// children compile, and hands every build to its caller the moment its program returns, so
// a GPU can run the first candidates while the last still compile. A child that crashes or
// hangs fails its program alone and is replaced. No GPU is needed.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/compile.h"
#include "dragon/search/worker_process.h"
#include "dragon/support/expected.h"

namespace dragon::bench {

// A build for the caller: the index of its function in the flats given, and the result.
using TakeBuild = std::function<void(size_t index, Expected<runtime::CudaBuild> build)>;

class NvrtcChildren {
 public:
  // Forks `count` children (at least one) that compile for `target` through the global
  // compile cache. Call while this process runs no other thread (worker_process.h).
  // `timeout` bounds one program's compile: a child past it is killed.
  NvrtcChildren(size_t count, lower::Target target, std::chrono::milliseconds timeout);
  ~NvrtcChildren();
  NvrtcChildren(const NvrtcChildren&) = delete;
  NvrtcChildren& operator=(const NvrtcChildren&) = delete;

  size_t size() const { return children_.size(); }
  // Children started to replace ones that crashed or hung, since the pool began.
  int restarts() const { return restarts_; }
  // During build(), for `take`: the programs of the build not back yet (sent or not).
  size_t programs_unfinished() const { return unfinished_; }
  // Over every build so far: the kernel definitions the children were given, and the
  // kernels the builds launch (CudaProgramBatch defines a kernel members share once).
  size_t kernels_defined() const { return kernels_defined_; }
  size_t kernels_launched() const { return kernels_launched_; }
  // Over every build so far: the CPU time the children spent on the programs they
  // answered (NVRTC's work, measured in each child; a crashed or killed child's is lost),
  // and those programs. Beside the builds' wall time it tells the compiler's work from
  // waiting on busy cores or on the last program of a wave.
  struct Work {
    double cpu_seconds = 0;
    size_t programs = 0;
  };
  const Work& work() const { return work_; }

  // Compiles `flats` cut into `ranges` (consecutive, covering every function) and calls
  // `take` once per function, on this thread, as soon as its program is back: between
  // two replies, so the children keep compiling while `take` works.
  void build(const std::vector<ir::PrimFunc>& flats, const std::vector<runtime::CudaProgramBatch::Range>& ranges,
             const TakeBuild& take);

 private:
  std::unique_ptr<search::WorkerProcess> start_child() const;

  lower::Target target_;
  std::chrono::milliseconds timeout_;
  std::vector<std::unique_ptr<search::WorkerProcess>> children_;
  int restarts_ = 0;
  size_t unfinished_ = 0;
  size_t kernels_defined_ = 0, kernels_launched_ = 0;
  Work work_;
};

}  // namespace dragon::bench
