// The harness as a reward for search and reinforcement learning: one call takes a
// candidate kernel and returns whether it is verified, or why not, and (CUDA) its latency
// with a confidence interval. Every check of the harness runs on every call: the input
// sets and their siblings (verify.h), the NaN pre-fill, the repeated run with garbage,
// red zones around the buffers, and for a latency the timed rotation with every call's
// outputs checked and the physics floor (isolated_timing.h). Kernels we did not write run
// isolated, each run in a runner child that sees no secret (isolated_candidate.h).
//
// What makes it cheap enough for thousands of candidates a minute: one RewardEvaluator per
// problem builds the reference once and draws a screening pool once (secret input sets,
// their siblings, their reference outputs, the trivial-output audit, the timing
// variants), against which every candidate is judged without computing a reference again.
// What keeps the pool from being learnt: a candidate sees only its own run's tensors, and
// recheck() judges a top result on a fresh secret draw every time it is called; report
// a result as verified only after a recheck (Reward::fresh_draw).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "dragon/harness/isolated_candidate.h"
#include "dragon/harness/isolated_kernel.h"
#include "dragon/harness/isolated_timing.h"
#include "dragon/harness/reference.h"
#include "dragon/harness/verdict.h"
#include "dragon/harness/verify.h"
#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/build.h"

namespace dragon::harness {

// A candidate: one of our kernels (a scheduled function to build, or one built already) or
// a kernel file we did not write.
class RewardCandidate {
 public:
  // Lowered, generated and compiled for the evaluator's target (runtime::compile: the C++
  // compiler or NVRTC, through the compile cache). A schedule the target cannot run or a
  // compile error is Reward's kBuildFailed.
  static RewardCandidate scheduled(ir::PrimFunc scheduled, std::string name = "");
  // A CPU build (runtime::build), run in this process.
  static RewardCandidate cpu_executable(std::shared_ptr<const runtime::Executable> executable, std::string name);
  // A CUDA build (runtime::compile_cuda_all / compile_cuda_batch), loaded and run in this
  // process on buffers in red zones.
  static RewardCandidate cuda_build(runtime::CudaBuild build, std::string name);
  // A kernel file (isolated_kernel.h): every run in a runner child.
  static RewardCandidate external(IsolatedKernel kernel);

  const std::string& name() const { return name_; }

  struct Scheduled {
    ir::PrimFunc func;
  };
  using Kernel = std::variant<Scheduled, std::shared_ptr<const runtime::Executable>, std::shared_ptr<runtime::CudaBuild>,
                              IsolatedKernel>;
  const Kernel& kernel() const { return kernel_; }

 private:
  RewardCandidate(Kernel kernel, std::string name) : kernel_(std::move(kernel)), name_(std::move(name)) {}
  Kernel kernel_;
  std::string name_;
};

enum class RewardStatus {
  kVerified,     // every check passed, and the timing (when there is one) was right on every call and possible
  kRejected,     // a check failed: Reward::failures and Reward::timing_rejection say which, message why
  kBuildFailed,  // the candidate did not lower, compile or load: message has the compiler's or driver's words
};
std::string_view reward_status_name(RewardStatus status);  // "verified", "rejected", "build failed"

struct LatencyEstimate {
  double median_ms = 0;
  double mean_ms = 0;
  double ci95_low_ms = 0;   // the 95% confidence interval of the mean (Student's t)
  double ci95_high_ms = 0;
  double min_ms = 0;
  int calls = 0;            // timed calls, every one checked
  bool converged = false;   // the interval reached the timer's target before a cap
};

struct Reward {
  RewardStatus status = RewardStatus::kRejected;
  std::string message;                         // "" when verified; else the first reason, in words
  std::vector<FailureKind> failures;           // verification's, distinct, in order of first occurrence
  std::optional<TimingOutcome> timing_rejection;  // when the timing rejected it
  std::optional<LatencyEstimate> latency;      // verified and timed (CUDA)
  uint64_t seed = 0;                           // of the input sets it was judged on
  bool fresh_draw = false;                     // judged on sets drawn for this call (recheck), not the pool
  bool problem_weak = false;                   // trivial outputs pass this problem too: a pass proves little
  double seconds = 0;                          // wall time of the call
  std::shared_ptr<const Verdict> verdict;      // the full verdict (nullptr when the build failed)
  std::shared_ptr<const IsolatedTiming> timing;  // the full timing, when there is one

  bool verified() const { return status == RewardStatus::kVerified; }
  std::string to_text() const;  // "verified: 0.0412 ms [0.0409, 0.0415] (57 calls)" or "rejected: ..."
};

struct RewardOptions {
  // Where scheduled candidates are built and run: the CPU, or CUDA (which needs a GPU).
  lower::Target target = lower::Target::cpu();
  // The screening pool's input sets. A seed makes screening reproducible; recheck() draws
  // a secret seed whatever this says.
  VerifyOptions verify;
  // CUDA candidates get a latency (timing.seed: as verify.seed). Page-end red zones and
  // own-kernel faults: see own_kernels.h (off for our own kernels, on for external ones).
  bool time = true;
  TimingRequest timing;
  // Kernel files: the runner, its time limits, red zones, namespaces.
  IsolationOptions isolation;
  // Builds of scheduled candidates.
  runtime::BuildOptions build;
  // Run our own CPU kernels in a runner child too (red zones, and a crash that cannot take
  // the search down), at the cost of a process per run.
  bool isolate_own_cpu_kernels = false;
};

// One problem's reward. evaluate() and recheck() may be called from several threads; GPU
// runs and timings take turns.
class RewardEvaluator {
 public:
  // Builds the reference and draws the screening pool (UserError for a function the
  // reference cannot run, bad options).
  RewardEvaluator(ir::PrimFunc problem, RewardOptions options = {});

  // Judged on the screening pool.
  Reward evaluate(const RewardCandidate& candidate);
  // Judged on a fresh secret draw of input sets, siblings and timing variants, every call.
  Reward recheck(const RewardCandidate& candidate);

  // Trivial outputs that pass the problem (audited once, on the pool).
  const std::vector<std::string>& weak_because() const { return screening_.weak_because(); }
  const ir::PrimFunc& problem() const { return problem_; }

 private:
  struct Built;  // a candidate ready to run (reward.cc)
  Expected<Built> build(const RewardCandidate& candidate) const;
  std::unique_ptr<Candidate> own_cpu_candidate(std::shared_ptr<const runtime::Executable> executable,
                                               const std::string& name) const;
  Expected<Built> own_cuda_candidate(const runtime::CudaBuild& build, const std::string& name) const;
  Reward judge(const RewardCandidate& candidate, bool fresh);

  ir::PrimFunc problem_;
  RewardOptions options_;
  Reference reference_;
  PreparedInputs screening_;
  std::optional<TimingInputs> timing_pool_;  // drawn on the first timing, under gpu_mutex_
  std::mutex gpu_mutex_;                     // GPU runs and timings take turns
};

}  // namespace dragon::harness
