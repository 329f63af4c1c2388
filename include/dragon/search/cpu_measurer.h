// The CPU measurer (measurer.h): generated C++ compiled by the system compiler, several
// candidates per shared object and several compilers at once; every candidate verified
// (task_verifier.h) and timed in a forked worker process (worker_process.h), so a crash or
// a hang costs one result; the worker is restarted for the next candidate.
#pragma once

#include <chrono>
#include <memory>

#include "dragon/runtime/cpu_module.h"
#include "dragon/search/measurer.h"
#include "dragon/search/task_verifier.h"

namespace dragon::search {

// How one candidate is timed: wall-clock around each call, warm-up calls first, then calls
// until the 95% confidence interval of the mean is within target_relative_ci of it, or a
// cap. Samples are reported; the median is what search ranks by.
struct CpuTimerOptions {
  int warmup_calls = 1;  // verification already ran the kernel three times
  // 6: the fewest samples whose median has a 95% confidence interval (db/record.h), which
  // the data set's refinement examples need to call a speedup significant.
  int min_calls = 6;
  int max_calls = 200;
  double max_seconds = 0.25;
  double target_relative_ci = 0.03;
};

struct CpuMeasurerOptions {
  TaskVerifierOptions verify;
  CpuTimerOptions timer;
  runtime::CpuCompileOptions compiler;    // -O2 by default, as the runtime builds
  runtime::CompileCache* cache = nullptr;  // nullptr: CompileCache::global()
  int functions_per_module = 8;            // candidates per compiler run
  int parallel_compiles = 2;               // compiler runs at once
  std::chrono::milliseconds run_timeout{10000};  // one run, one timing, or one load in the worker
  // Once the task has a verified time, one verification run may take at most this times the
  // best median (but at least min_run_timeout): beyond it the candidate is timed out. The
  // cost model learns a failure as its worst label, which is what a time 50x the best
  // amounts to. On the 2-core VM a CPU softmax's space has such candidates in about half
  // its draws (compute locations that recompute quadratically), and a floor of 1 s let each
  // cost seconds: 16 trials in a 40-s budget; with 200 ms, 64 in 20 s.
  double slow_run_factor = 50;
  std::chrono::milliseconds min_run_timeout{200};
  // A verified candidate whose first timed call takes more than this times the task's best
  // median so far is not timed further: that call is its one sample.
  double cutoff_factor = 5;
};

// Draws the task's input sets and references (TaskVerifier) and starts the worker. Throws
// what TaskVerifier throws.
std::unique_ptr<Measurer> make_cpu_measurer(const ir::PrimFunc& func, CpuMeasurerOptions options = {});

}  // namespace dragon::search
