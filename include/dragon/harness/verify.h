// Verification of a candidate kernel against the unscheduled function (ARCHITECTURE.md,
// "Correctness is judged, never assumed"). The candidate runs on several input sets from
// different distributions with secret seeds; each run's outputs are judged against the f64
// reference under a scale-invariant, calibrated tolerance, and the run itself for partial
// writes, NaN/Inf, input mutation, ignoring its inputs, nondeterminism, and how it ended.
// Timing is not judged here (gpu_timer.h), nor is the candidate isolated (isolation/).
#pragma once

#include <cstdint>
#include <optional>
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
  // Two more input sets: the first two with one element of one real-valued input changed.
  // Their outputs must differ where the reference's do (caches keyed on part of the input).
  bool check_perturbed_inputs = true;
  // Judge trivial outputs (trivial_outputs.h) with the same check; a pass makes the
  // problem weak (Verdict::weak_because). Costs one more reference computation per set.
  bool audit_trivial_outputs = true;
  // How verify(func, ...) computes the reference (the interpreter unless told otherwise).
  ReferenceOptions reference;
};

// Verifies `candidate` against the unscheduled `reference` function. The candidate sees
// only its own argument tensors (the same buffers for every run, refilled in place); the
// reference runs on the harness's copies. Exceptions come only from the harness itself
// (a function the interpreter cannot run); the candidate's misbehaviour is in the verdict.
Verdict verify(const ir::PrimFunc& reference, Candidate& candidate, const VerifyOptions& options = {});
// With a reference compiled once, for many candidates of one problem.
Verdict verify(const Reference& reference, Candidate& candidate, const VerifyOptions& options = {});

}  // namespace dragon::harness
