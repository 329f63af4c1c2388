// `dragon bench SUITE`: every problem of a suite on the GPU at its full shape, side by side
// with its baselines in one process. Per problem: our kernel (the default schedule, or a
// script from a folder), the best tuned kernel of a tuning database when one is given
// (re-verified and re-timed here), the libtorch eager computation KernelBench's reference runs,
// cuBLAS for matmul-like problems and cuDNN for convolutions, pooling and softmax
// (bench/cudnn_plan.h says which); each output checked against an f64 reference (libtorch
// in f64, else our own f64 twin) with the harness's calibrated tolerance; every figure from
// the harness's GPU timer; achieved rates against the measured peaks; times below the
// physics floor rejected.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dragon/bench/peaks.h"
#include "dragon/harness/gpu_timer.h"
#include "dragon/suites/suite.h"

namespace dragon::bench {

struct Measured {
  double median_ms = 0, min_ms = 0, max_ms = 0, ci95_ms = 0;
  int calls = 0;
  bool converged = false;
  static Measured from(const harness::GpuTiming& timing);
};

// One output's agreement with the f64 reference.
struct OutputCheck {
  std::string output;          // the buffer's name
  double normalized_error = 0; // max |error| / max |reference|; inf for NaN/Inf disagreements
  double tolerance = 0;
  bool ok = false;
  std::string detail;          // DeviceComparison::describe()
};

struct Contender {
  // "ours (default schedule)", "torch eager: at::softmax", "cublasGemmEx (f32, ...)",
  // "cudnnPoolingForward (f32, max)"
  std::string name;
  std::string status;          // "ok", "incorrect", "failed", "impossible" (faster than physics)
  std::string error;           // when failed
  std::vector<OutputCheck> checks;
  std::optional<Measured> time;
};

struct ProblemResult {
  std::string id, name, spec, output_shape;
  std::string status;   // ours: "ok", "incorrect", "failed", "impossible", "unsupported"
  std::string message;  // why, when not ok
  std::string schedule; // "default schedule (auto_bind)" or "script DIR/ID.script"
  std::string reference;  // "libtorch eager in f64", "our f64 twin (default schedule)", "none"
  Contender ours;
  // The best record of a tuning database (dragon bench --db), verified and timed here like
  // ours; absent without a database or without a record for the problem.
  std::optional<Contender> tuned;
  std::vector<Contender> baselines;
  double bytes = 0, flops = 0, floor_ms = 0;
  bool compute_bound = false;
  double seconds = 0;   // wall time spent on the problem (build, checks, timing)

  // Baseline median / our median for the named baseline, when both were timed and correct.
  std::optional<double> speedup_over(const Contender& baseline) const;
  // Baseline median / the contender's median, when both were timed and correct.
  static std::optional<double> speedup_of(const Contender& contender, const Contender& baseline);
};

struct SuiteRun;

// A problem's tuned schedule: the scheduled function and where it came from ("record 41,
// 0.123 ms when tuned").
struct TunedSchedule {
  ir::PrimFunc scheduled;
  std::string description;
};

struct SuiteRunOptions {
  std::string problems;     // ids ("1-5,23"); empty: all
  std::string scripts_dir;  // ID.script or NAME.script per problem; others use the default schedule
  bool eager = true;        // libtorch eager baselines (and reference), when the plugin loads
  bool cublas = true;
  bool cudnn = true;        // cuDNN for the problems bench/cudnn_plan.h maps
  uint64_t seed = 0x6472676e;  // inputs are fixed per run so baselines and ours see the same
  harness::GpuTimerOptions timer = {.warmup_calls = 2, .min_calls = 5, .max_calls = 200, .max_seconds = 1.0};
  std::optional<MeasuredPeaks> peaks;  // for achieved fractions; spec sheet floor without
  // The tuned schedule of a problem (the CLI reads it from --db), or nullopt for none.
  std::function<std::optional<TunedSchedule>(const suites::Problem&, const ir::PrimFunc&)> tuned;
  // Provenance copied into the run (the CLI knows its command line and commit).
  std::string command, commit, started_at;
  // Called before each problem (index, count, problem), and after it with its result and
  // the run so far (header and every finished problem: what a results file should hold
  // if the run is interrupted next).
  std::function<void(size_t, size_t, const suites::Problem&)> on_start;
  std::function<void(const ProblemResult&, const SuiteRun&)> on_result;
};

struct SuiteRun {
  std::string suite, command, commit, started_at;
  std::string device;
  harness::GpuState gpu;
  std::string eager_library;  // "libtorch 2.11.0 (CUDA available)" or why there is none
  std::optional<MeasuredPeaks> peaks;
  std::vector<ProblemResult> problems;
};

// Runs the selected problems in order; a problem that fails is recorded and the run goes
// on. Throws UserError only when the suite cannot run at all (no GPU, bad selection).
SuiteRun run_suite(const suites::Suite& suite, const SuiteRunOptions& options);

}  // namespace dragon::bench
