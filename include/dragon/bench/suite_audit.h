// `dragon audit SUITE`: for every problem at its full shape on the GPU, would a trivial
// output pass KernelBench's check (torch.allclose against the libtorch eager result on
// torch.rand inputs, at HEAD's tolerance and at the paper's atol = rtol = 1e-2), and would
// it pass ours (the calibrated tolerance against the f64 reference, on N(0,1) and on
// torch.rand inputs)? The trivial outputs: zeros, ones, the reference's mean (a constant
// a cheat could know in advance) and, for single-output problems, each input of the
// output's size passed through. Needs the libtorch eager plugin on a CUDA GPU.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dragon/harness/gpu_timer.h"
#include "dragon/harness/problem_audit.h"
#include "dragon/suites/suite.h"

namespace dragon::bench {

struct AuditedProblem;
struct SuiteAudit;

struct SuiteAuditOptions {
  std::string problems;        // ids; empty: all
  int kernelbench_trials = 3;  // torch.rand draws, all of which a trivial output must pass
  uint64_t seed = 0x61756474;
  // Provenance copied into the audit (the CLI knows its command line and commit).
  std::string command, commit, started_at;
  // Called before each problem, and after it with the audit so far (what a results file
  // should hold if the run is interrupted next).
  std::function<void(size_t, size_t, const suites::Problem&)> on_start;
  std::function<void(const AuditedProblem&, const SuiteAudit&)> on_result;
};

struct AuditedProblem {
  std::string id, name, spec;
  std::string status;   // "ok", "unsupported", "failed"
  std::string message;
  double rand_reference_scale = 0;  // max |eager output| on torch.rand inputs (first output)
  double seconds = 0;               // wall time the problem's audit took
  harness::ProblemAudit audit;      // one row per trivial output
};

struct SuiteAudit {
  std::string suite, command, commit, started_at, device, eager_library;
  harness::GpuState gpu;
  std::vector<AuditedProblem> problems;

  std::string to_markdown() const;
  std::string to_json(int indent = 2) const;
};

// Throws UserError when there is no GPU or no eager plugin with CUDA; a problem that fails
// is recorded and the audit goes on.
SuiteAudit audit_suite(const suites::Suite& suite, const SuiteAuditOptions& options);

}  // namespace dragon::bench
