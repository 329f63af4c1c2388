#include "dragon/harness/candidate.h"

namespace dragon::harness {

std::string_view run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::kOk: return "ok";
    case RunStatus::kFailed: return "failed";
    case RunStatus::kCrashed: return "crashed";
    case RunStatus::kTimedOut: return "timed out";
    case RunStatus::kNoHandshake: return "no success handshake";
    case RunStatus::kWroteOutOfBounds: return "wrote out of bounds";
  }
  return "unknown";
}

namespace {

class FunctionCandidate final : public Candidate {
 public:
  FunctionCandidate(std::string name, CandidateFunction function)
      : name_(std::move(name)), function_(std::move(function)) {}
  std::string name() const override { return name_; }
  RunOutcome run(std::vector<tensor::HostTensor>& args) override { return function_(args); }

 private:
  std::string name_;
  CandidateFunction function_;
};

}  // namespace

std::unique_ptr<Candidate> make_function_candidate(std::string name, CandidateFunction function) {
  return std::make_unique<FunctionCandidate>(std::move(name), std::move(function));
}

}  // namespace dragon::harness
