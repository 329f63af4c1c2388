// The weak-problem audit: would a trivial output (zeros, ones, the reference's mean,
// another input's output, an input passed through) pass our check, and would it pass
// KernelBench's (torch.allclose on torch.rand inputs)? A problem that one of them passes
// under our check is weak: a pass there proves nothing. Feeds `dragon audit`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/harness/reference.h"
#include "dragon/interp/input_generator.h"
#include "dragon/ir/function.h"

namespace dragon::harness {

struct AuditOptions {
  // Our check: each distribution, a calibration set (what a cheater knows in advance:
  // the mean, another input's output) and a test set.
  std::vector<interp::Distribution> distributions = {interp::Distribution::kNormal, interp::Distribution::kUniform,
                                                     interp::Distribution::kOffset, interp::Distribution::kEdge,
                                                     interp::Distribution::kRand};
  // KernelBench's check: this many torch.rand trials, all of which must pass (its script
  // runs 5).
  int kernelbench_trials = 3;
  ReferenceOptions reference;
  // Fixed: the audit judges the problem, not a candidate, and its table must reproduce.
  uint64_t seed = 0x6b65726e656c;
};

struct TrivialOutputAudit {
  std::string name;                       // "zeros", "input X passed through", ...
  bool passes_ours = false;               // within our calibrated tolerance on every distribution
  bool passes_kernelbench = false;        // allclose at KernelBench HEAD's tolerance (1e-4 fp32, 1e-2 16-bit)
  bool passes_kernelbench_paper = false;  // allclose at the paper's atol = rtol = 1e-2
};

struct ProblemAudit {
  std::string function;
  std::vector<TrivialOutputAudit> trivial_outputs;

  // Some trivial output passes our check: the problem must get other inputs or shapes.
  bool weak() const;
  // Some trivial output passes KernelBench's check at HEAD's tolerance.
  bool weak_under_kernelbench() const;
  const TrivialOutputAudit* find(std::string_view name) const;

  // A table: one row per trivial output, a column per check.
  std::string to_text() const;
  std::string to_json(int indent = 2) const;
};

// Runs the reference (unscheduled, and in f64) on every input set: with the interpreter
// keep shapes small, or choose the compiled CPU engine. Throws UserError for a function
// the reference cannot run.
ProblemAudit audit_problem(const ir::PrimFunc& func, const AuditOptions& options = {});

}  // namespace dragon::harness
