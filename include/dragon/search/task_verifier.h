// The harness's output checks for the many candidates of one tuning task, with the
// reference computed once per task instead of once per candidate (harness::verify draws
// fresh input sets and recomputes the reference on every call, seconds per candidate at
// tuning shapes). The input sets are drawn once from a secret seed; each candidate runs on
// every set with the NaN sentinel pre-filled and is judged by harness::compare_output under
// the calibrated tolerance (wrong values, NaN/Inf, unwritten elements), its inputs must
// come back unchanged, and a rerun of the first set with garbage pre-filled must agree
// bitwise and write every element. Outputs that ignore the inputs are caught because the
// sets differ. What it leaves to a full harness::verify of the final kernel: the perturbed
// sets and the weak-problem audit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dragon/harness/candidate.h"
#include "dragon/harness/reference.h"
#include "dragon/tensor/host_tensor.h"
#include "dragon/interp/input_generator.h"
#include "dragon/ir/function.h"
#include "dragon/search/measure_result.h"

namespace dragon::search {

struct TaskVerifierOptions {
  // One input set per entry. Signed normals and a large common offset (cancellation).
  std::vector<interp::Distribution> distributions = {interp::Distribution::kNormal, interp::Distribution::kOffset};
  std::optional<uint64_t> seed;  // nullopt: a secret seed (harness::secret_seed)
  // The compiled CPU reference by default: the interpreter costs seconds at tuning shapes.
  harness::ReferenceOptions reference = {.engine = harness::ReferenceEngine::kCompiledCpu, .build = {}};
  bool check_determinism = true;
};

// kOk, or the status (kWrongResult, kRunFailed, kCrashed, kTimedOut) and why.
struct CheckResult {
  MeasureStatus status = MeasureStatus::kOk;
  std::string error;
  bool ok() const { return status == MeasureStatus::kOk; }
};

class TaskVerifier {
 public:
  // Draws the input sets and computes their references. Throws what harness::Reference
  // throws (a function the reference engine cannot run).
  explicit TaskVerifier(ir::PrimFunc func, TaskVerifierOptions options = {});

  const ir::PrimFunc& func() const { return func_; }
  uint64_t seed() const { return seed_; }
  size_t input_sets() const { return sets_.size(); }
  // Set `index` as a candidate receives it: inputs drawn, outputs holding the sentinel.
  std::vector<tensor::HostTensor> arguments(size_t index) const;

  // Runs `candidate` on every set and judges it; stops at the first failure.
  CheckResult verify(harness::Candidate& candidate) const;
  // Judges `args` as a run on set `index` left them (the outputs of a timed call).
  CheckResult check(size_t index, const std::vector<tensor::HostTensor>& args) const;

 private:
  struct InputSet {
    std::string label;
    std::vector<tensor::HostTensor> args;  // inputs drawn, outputs the sentinel
    std::vector<harness::ReferenceOutput> reference;
  };
  // With `earlier` (a run's arguments on the same set), garbage equal to what that run
  // wrote is not taken for an unwritten element (harness::keep_garbage_off).
  CheckResult run_and_check(harness::Candidate& candidate, size_t index, bool garbage,
                            std::vector<tensor::HostTensor>& args,
                            const std::vector<tensor::HostTensor>* earlier = nullptr) const;
  CheckResult judge(const InputSet& set, const std::vector<tensor::HostTensor>& args,
                    const std::vector<tensor::HostTensor>& prefill, std::string_view which) const;

  ir::PrimFunc func_;
  TaskVerifierOptions options_;
  uint64_t seed_ = 0;
  std::vector<InputSet> sets_;
};

}  // namespace dragon::search
