// Verification of a candidate kernel against the unscheduled function (ARCHITECTURE.md,
// "Correctness is judged, never assumed"). The candidate runs on several input sets from
// different distributions with secret seeds, and on siblings of them that differ in a few
// elements; each run's outputs are judged against the f64 reference under a
// scale-invariant, calibrated tolerance, and the run itself for partial writes, NaN/Inf,
// input mutation, ignoring (part of) its inputs, nondeterminism, and how it ended.
// Timing is not judged here (gpu_timer.h), nor is the candidate isolated (isolation/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dragon/harness/candidate.h"
#include "dragon/harness/reference.h"
#include "dragon/harness/verdict.h"
#include "dragon/interp/input_generator.h"
#include "dragon/ir/function.h"

namespace dragon::harness {

struct VerifyOptions {
  // One input set per entry, in this order. Signed and offset sets catch kernels that
  // only work on torch.rand's [0, 1) (ReLU as identity); edge values catch special cases.
  std::vector<interp::Distribution> distributions = {interp::Distribution::kNormal, interp::Distribution::kUniform,
                                                     interp::Distribution::kOffset, interp::Distribution::kEdge,
                                                     interp::Distribution::kRand};
  // nullopt: a secret seed from std::random_device, different for every verification
  // (and reported in the verdict). A value: reproducible input sets.
  std::optional<uint64_t> seed;
  // Rerun every input set with garbage in the outputs instead of the NaN sentinel: the two
  // runs must agree, and elements the rerun leaves alone were never written by it.
  bool check_determinism = true;
  // How far the two runs may differ, normalised like the error; 0: bitwise (NaN = NaN).
  double determinism_tolerance = 0;
  // Siblings of the first two sets (input_siblings.h): that many more sets (or two per
  // input, where that is more), each equal to its base but for a few elements of
  // one input. Their outputs must be right and must differ from the base's where the
  // references do: a kernel that does not read all of its input (a cache keyed on a
  // sample of it) is caught. 0: none.
  int sibling_sets = 4;
  // Judge trivial outputs (trivial_outputs.h) with the same check; a pass makes the
  // problem weak (Verdict::weak_because). Costs one more reference computation per set.
  bool audit_trivial_outputs = true;
  // How verify(func, ...) computes the reference (the interpreter unless told otherwise).
  ReferenceOptions reference;
};

// One input set as verification prepares it: its arguments (inputs filled, outputs as
// make_arguments leaves them) and the reference's outputs for them.
struct PreparedSet {
  std::string label;  // "normal", "normal, sibling 1 (1 element of X changed)"
  interp::Distribution distribution = interp::Distribution::kNormal;
  uint64_t seed = 0;
  bool sibling = false;  // judged after its base; repeated only where the first run left the sentinel
  std::vector<tensor::HostTensor> args;
  std::vector<ReferenceOutput> reference;
};

// Everything verification computes before it runs a candidate: the input sets drawn from
// one seed (secret unless VerifyOptions::seed is given), their reference outputs, and the
// audit of trivial outputs. Prepared once, it judges any number of candidates of one
// problem, each with every check, without computing a reference again: a search screens
// thousands of candidates against one draw, and re-checks the best on a fresh one
// (reward.h). The Reference must outlive it.
class PreparedInputs {
 public:
  PreparedInputs(const Reference& reference, const VerifyOptions& options);

  const Reference& reference() const { return *reference_; }
  const VerifyOptions& options() const { return options_; }
  uint64_t seed() const { return seed_; }
  const std::vector<PreparedSet>& sets() const { return sets_; }
  // Seeds the repeated run's garbage pre-fill of each set.
  uint64_t garbage_seed() const { return garbage_seed_; }
  // Trivial outputs that pass on every set (empty without the audit).
  const std::vector<std::string>& weak_because() const { return weak_because_; }

 private:
  const Reference* reference_;
  VerifyOptions options_;
  uint64_t seed_ = 0;
  uint64_t garbage_seed_ = 0;
  std::vector<PreparedSet> sets_;
  std::vector<std::string> weak_because_;
};

// Verifies `candidate` against the unscheduled `reference` function. The candidate sees
// only its own argument tensors (the same buffers for every run, refilled in place); the
// reference runs on the harness's copies. Exceptions come only from the harness itself
// (a function the interpreter cannot run); the candidate's misbehaviour is in the verdict.
Verdict verify(const ir::PrimFunc& reference, Candidate& candidate, const VerifyOptions& options = {});
// With a reference compiled once, for many candidates of one problem.
Verdict verify(const Reference& reference, Candidate& candidate, const VerifyOptions& options = {});
// With input sets and references prepared once (the options are the prepared ones).
Verdict verify(const PreparedInputs& inputs, Candidate& candidate);

}  // namespace dragon::harness
