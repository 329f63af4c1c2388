// What verification concludes about one candidate: passed or not, every failure with its
// kind and reason, the errors measured on each input set, and whether the problem itself
// is weak (a trivial output passes it too). Rendered as text for people and JSON for tools.
// Not the checks (verify.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::harness {

enum class FailureKind {
  kWrongValues,       // finite values beyond the tolerance
  kUnwrittenOutput,   // output elements still holding the harness's pre-fill (partial write, skipped work)
  kNanOrInf,          // NaN or Inf where the reference is finite
  kInputMutated,      // an input's bytes changed during the run
  kIgnoresInput,      // the same output for different inputs whose references differ (stale or cached output)
  kNondeterministic,  // two runs on the same inputs, with different garbage pre-filled, disagree
  kArgumentsAltered,  // an argument tensor was replaced, resized or retyped
  kFailed,            // the candidate reported an error itself
  kCrashed,           // a signal, an illegal address, an exit without answering
  kTimedOut,          // no answer within the time limit
  kNoHandshake,       // exited "successfully" without the success handshake
  kOutOfBoundsWrite,  // wrote into a red zone around one of its buffers
};
// "wrong values", "unwritten output", ...
std::string_view failure_kind_name(FailureKind kind);
// "wrong_values", "unwritten_output", ... (JSON)
std::string_view failure_kind_id(FailureKind kind);

struct Failure {
  FailureKind kind = FailureKind::kWrongValues;
  std::string input_set;  // the label of the input set it happened on
  std::string message;
};

struct OutputReport {
  std::string name;
  double normalized_error = 0;  // max |error| over the reference's scale
  double tolerance = 0;
  double reference_error = 0;   // the native reference's own error against f64
  bool ok = false;
};

struct InputSetReport {
  std::string label;            // "normal", "edge", "normal, one element changed"
  std::string distribution;
  uint64_t seed = 0;
  bool ran = false;             // the candidate's first run ended normally
  std::vector<OutputReport> outputs;
};

struct Verdict {
  std::string candidate;
  std::string function;
  uint64_t seed = 0;            // the base seed; verify with it again to reproduce
  bool passed = false;
  std::vector<Failure> failures;
  std::vector<InputSetReport> input_sets;
  // Trivial outputs ("zeros", "the reference's mean", ...) that pass this check too: a
  // pass is then not evidence of a correct kernel, and the problem is reported as weak.
  std::vector<std::string> weak_because;

  bool has(FailureKind kind) const;
  std::vector<FailureKind> failure_kinds() const;  // distinct, in order of first occurrence
  bool problem_weak() const { return !weak_because.empty(); }
  // Passed, on a problem that trivial outputs do not pass.
  bool trusted() const { return passed && !problem_weak(); }

  // "PASS ..." or "FAIL ..." then one line per failure and per input set.
  std::string to_text() const;
  std::string to_json(int indent = 2) const;
};

}  // namespace dragon::harness
