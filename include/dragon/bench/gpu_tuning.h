// Tuning on the GPU (`dragon tune --target cuda`): the task environments whose measurer
// judges candidates exactly as `dragon bench` judges our kernels: at the problem's full
// shape, on the device, against the f64 reference (libtorch eager in f64, else our f64
// twin) with the eager-calibrated tolerance, then timed by the harness's GPU timer.
//
// Processes: this one lowers and prints candidates (on threads) and never touches the GPU;
// NVRTC compiles batches of candidates (several per program) in forked children, one per
// core, started with the tuning and kept for every round (nvrtc_children.h); a forked GPU
// worker holds the CUDA context and the current problem's buffers and
// reference, and runs one candidate per request, so a crash or a hang costs that candidate
// only (the worker is started again, and sets the problem up again, for the next one).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dragon/bench/nvrtc_children.h"
#include "dragon/harness/gpu_timer.h"
#include "dragon/runtime/compile.h"
#include "dragon/search/rule_set.h"
#include "dragon/search/tuner.h"

namespace dragon::bench {

struct GpuTuningOptions {
  // How each verified candidate is timed: fewer calls than a benchmark (search ranks, the
  // final `dragon bench --db` measures), the L2 flushed as always.
  // min_calls 6: the fewest samples whose median has a confidence interval (db/record.h).
  harness::GpuTimerOptions timer = {.warmup_calls = 1, .min_calls = 6, .max_calls = 50, .max_seconds = 0.2,
                                    .target_relative_ci = 0.02, .flush_l2 = true};
  // A verified candidate whose checked call took more than this times the task's best
  // median so far is not timed further: that call is its one sample.
  double cutoff_factor = 5;
  // A candidate whose first timed calls' median is above this times the best so far is
  // not timed further (GpuTimerOptions::abandon_above_ms): it ranks below the best anyway.
  double abandon_factor = 2;
  // A candidate whose first checked run took more than this times the task's best median
  // (and more than min_slow_run_ms) is not checked again or timed: it is recorded as timed
  // out, which the cost model learns as it would a time that far from the best. At
  // KernelBench's sizes slow candidates held the tuner: checked calls were 475 of the
  // 773 ms a candidate cost on an H100 (bench/results/2026-12-06-h100-kernelbench-l1-tuned.md).
  double slow_run_factor = 20;
  double min_slow_run_ms = 50;  // above a first launch's lazy module load
  int functions_per_program = 16;  // candidates per NVRTC program
  int compile_processes = 0;       // NVRTC children at once (0: the cores less one)
  int lowering_threads = 0;        // (0: hardware concurrency)
  // One candidate in the worker: load, two checked runs, timing. A problem's setup
  // (buffers, inputs, the reference) has its own, longer limit. Once the task has a best
  // time the limit shrinks to what a candidate within the slow-run limit can take (three
  // slow runs and the timer's max_seconds) plus candidate_timeout_margin.
  std::chrono::milliseconds candidate_timeout{30000};
  std::chrono::milliseconds candidate_timeout_margin{5000};
  std::chrono::milliseconds setup_timeout{600000};
  // The inputs' seed; different from `dragon bench`'s, so the bench checks a tuned kernel
  // on inputs search never saw.
  uint64_t seed = 0x74756e65;
};

// Why a candidate's scratch memory is out of proportion, if it is: its workspaces take more
// than 1 GiB and more than 4 times the problem's own buffers. Such a schedule (say, an
// intermediate computed at a thread loop, one private copy per thread: 16 GiB for an
// embedding bag on the H200) cannot be the fast one, and allocating it can take the device
// from the other problems the worker holds. The GPU measurers reject it before compiling.
std::optional<std::string> excessive_workspaces(const runtime::Generated& generated, const ir::PrimFunc& scheduled);

// A scheduled function lowered for a CUDA target, or why not: what the GPU measurers do to
// a candidate before compiling it, and all that can be checked without a GPU.
struct CudaLowering {
  std::optional<runtime::Generated> generated;  // set when it lowered
  search::MeasureStatus failure = search::MeasureStatus::kOk;  // else kRejected or kBuildFailed
  std::string why;
};
// kRejected: a schedule the GPU cannot run (its structure, its resources, its scratch
// memory); kBuildFailed: the lowering itself failed (an internal error).
CudaLowering lower_for_cuda(const ir::PrimFunc& scheduled, const lower::Target& target);

class GpuTuning {
 public:
  // Forks the NVRTC children and the GPU worker and asks the worker for the device; throws
  // UserError when there is no CUDA GPU. Call before this process has other threads.
  explicit GpuTuning(const search::RuleSet& rules, GpuTuningOptions options = {});
  ~GpuTuning();
  GpuTuning(const GpuTuning&) = delete;
  GpuTuning& operator=(const GpuTuning&) = delete;

  // Throws UserError when the task has no op spec (the worker builds the problem from it)
  // or no design space.
  search::TaskEnvironment environment(const search::TuningTask& task);
  // MetaSchedule's population of 512 is more CPU work per batch than the GPU needs to
  // measure a batch; 256 with 3 generations keeps both busy.
  static search::EvolutionarySearchOptions search_options();
  std::string costs_summary() const;
  const std::string& device() const;
  const std::string& driver() const;

  struct Worker;

 private:
  const search::RuleSet& rules_;
  GpuTuningOptions options_;
  std::unique_ptr<NvrtcChildren> compilers_;
  std::shared_ptr<Worker> worker_;
  std::unique_ptr<search::MeasureGroup> group_;  // every task's measurer is in it
  std::vector<std::shared_ptr<const search::Measurer>> measurers_;
};

}  // namespace dragon::bench
