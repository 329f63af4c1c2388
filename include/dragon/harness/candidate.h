// A kernel under test as the verifier sees it: something that runs once on a full set of
// argument tensors and writes its outputs in place, and says how the run ended. In-process
// callables (our own built kernels, exploits planted in tests) and a child-process runner
// (isolated_candidate.h, for anything we did not generate) implement it. Not the verifier.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dragon/tensor/host_tensor.h"

namespace dragon::harness {

enum class RunStatus {
  kOk,           // returned normally (its outputs are still to be judged)
  kFailed,       // reported an error itself (a CUDA error, a failed launch)
  kCrashed,      // died: a signal, an illegal address, an exit without answering
  kTimedOut,     // did not answer within its time limit (a hang, an endless loop)
  kNoHandshake,  // exited "successfully" without the success handshake (os._exit-style)
  kWroteOutOfBounds,  // returned, but wrote outside its buffers (a red zone around one changed)
};
std::string_view run_status_name(RunStatus status);

struct RunOutcome {
  RunStatus status = RunStatus::kOk;
  std::string reason;  // empty for kOk: the signal, the limit, the kernel's own message
  bool ok() const { return status == RunStatus::kOk; }
  static RunOutcome success() { return {}; }
  static RunOutcome failure(RunStatus status, std::string reason) { return {status, std::move(reason)}; }
};

class Candidate {
 public:
  virtual ~Candidate() = default;
  // For verdicts and logs: "kernel.cc:my_relu", "dragon relu (default schedule)".
  virtual std::string name() const = 0;
  // `args` holds one tensor per parameter of the reference function, in parameter order:
  // inputs filled, outputs pre-filled by the verifier (sentinels). The candidate writes its
  // outputs in place. Misbehaviour of the candidate is an outcome, never an exception;
  // exceptions are the harness's own failures.
  virtual RunOutcome run(std::vector<tensor::HostTensor>& args) = 0;
};

// An in-process candidate from a callable. For our own kernels and for tests; anything
// untrusted runs isolated.
using CandidateFunction = std::function<RunOutcome(std::vector<tensor::HostTensor>& args)>;
std::unique_ptr<Candidate> make_function_candidate(std::string name, CandidateFunction function);

}  // namespace dragon::harness
