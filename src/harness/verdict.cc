// Verdict queries and renderings.
#include "dragon/harness/verdict.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "dragon/support/error.h"

namespace dragon::harness {

std::string_view failure_kind_name(FailureKind kind) {
  switch (kind) {
    case FailureKind::kWrongValues: return "wrong values";
    case FailureKind::kUnwrittenOutput: return "unwritten output";
    case FailureKind::kNanOrInf: return "NaN or Inf";
    case FailureKind::kInputMutated: return "input mutated";
    case FailureKind::kIgnoresInput: return "output ignores input";
    case FailureKind::kNondeterministic: return "nondeterministic";
    case FailureKind::kArgumentsAltered: return "arguments altered";
    case FailureKind::kFailed: return "failed";
    case FailureKind::kCrashed: return "crashed";
    case FailureKind::kTimedOut: return "timed out";
    case FailureKind::kNoHandshake: return "no success handshake";
    case FailureKind::kOutOfBoundsWrite: return "out-of-bounds write";
  }
  DRAGON_UNREACHABLE("failure kind {}", static_cast<int>(kind));
}

std::string_view failure_kind_id(FailureKind kind) {
  switch (kind) {
    case FailureKind::kWrongValues: return "wrong_values";
    case FailureKind::kUnwrittenOutput: return "unwritten_output";
    case FailureKind::kNanOrInf: return "nan_or_inf";
    case FailureKind::kInputMutated: return "input_mutated";
    case FailureKind::kIgnoresInput: return "ignores_input";
    case FailureKind::kNondeterministic: return "nondeterministic";
    case FailureKind::kArgumentsAltered: return "arguments_altered";
    case FailureKind::kFailed: return "failed";
    case FailureKind::kCrashed: return "crashed";
    case FailureKind::kTimedOut: return "timed_out";
    case FailureKind::kNoHandshake: return "no_handshake";
    case FailureKind::kOutOfBoundsWrite: return "out_of_bounds_write";
  }
  DRAGON_UNREACHABLE("failure kind {}", static_cast<int>(kind));
}

bool Verdict::has(FailureKind kind) const {
  return std::any_of(failures.begin(), failures.end(), [&](const Failure& f) { return f.kind == kind; });
}

std::vector<FailureKind> Verdict::failure_kinds() const {
  std::vector<FailureKind> kinds;
  for (const Failure& f : failures) {
    if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end()) kinds.push_back(f.kind);
  }
  return kinds;
}

std::string Verdict::to_text() const {
  std::string text;
  if (passed) {
    text = fmt::format("PASS {} on {} ({} input sets, seed {})", candidate, function, input_sets.size(), seed);
  } else {
    std::vector<std::string> names;
    for (FailureKind kind : failure_kinds()) names.emplace_back(failure_kind_name(kind));
    text = fmt::format("FAIL {} on {}: {} (seed {})", candidate, function, fmt::join(names, ", "), seed);
  }
  if (problem_weak()) {
    text += fmt::format("\n  WEAK PROBLEM: {} pass{} this check too; a pass is not trusted",
                        fmt::join(weak_because, ", "), weak_because.size() == 1 ? "es" : "");
  }
  for (const Failure& f : failures) {
    text += fmt::format("\n  {} [{}]: {}", failure_kind_name(f.kind), f.input_set, f.message);
  }
  for (const InputSetReport& set : input_sets) {
    text += fmt::format("\n  input set {} (seed {}){}", set.label, set.seed, set.ran ? "" : ": did not run");
    for (const OutputReport& out : set.outputs) {
      text += fmt::format("\n    {}: error {:.3g} of tolerance {:.3g} (reference's own error {:.3g}){}", out.name,
                          out.normalized_error, out.tolerance, out.reference_error, out.ok ? "" : " FAIL");
    }
  }
  return text;
}

std::string Verdict::to_json(int indent) const {
  nlohmann::json j;
  j["candidate"] = candidate;
  j["function"] = function;
  j["seed"] = seed;
  j["passed"] = passed;
  j["trusted"] = trusted();
  j["weak_because"] = weak_because;
  j["failures"] = nlohmann::json::array();
  for (const Failure& f : failures) {
    j["failures"].push_back({{"kind", failure_kind_id(f.kind)}, {"input_set", f.input_set}, {"message", f.message}});
  }
  j["input_sets"] = nlohmann::json::array();
  for (const InputSetReport& set : input_sets) {
    nlohmann::json outputs = nlohmann::json::array();
    for (const OutputReport& out : set.outputs) {
      outputs.push_back({{"name", out.name},
                         {"normalized_error", out.normalized_error},
                         {"tolerance", out.tolerance},
                         {"reference_error", out.reference_error},
                         {"ok", out.ok}});
    }
    j["input_sets"].push_back({{"label", set.label},
                               {"distribution", set.distribution},
                               {"seed", set.seed},
                               {"ran", set.ran},
                               {"outputs", std::move(outputs)}});
  }
  return j.dump(indent);
}

}  // namespace dragon::harness
